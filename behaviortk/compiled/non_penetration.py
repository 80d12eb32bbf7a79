"""``world.non_penetration``'s relaxation passes compiled: every pass of a tick in one call.

The NumPy constraint (the reference) runs each pass as some thirty array
operations over the candidate lists; here one kernel runs the passes, with the
same rules and the same arithmetic: a pass measures the pairs (all of them
first, then only those of agents the previous pass moved), pushes each
overlapping pair apart along its centre line, then agents out of obstacles
(the candidates of agents not yet settled, measured after the pair pushes),
then off walls. Moves of an agent add up in the reference's order (its
``np.bincount``: the ``i`` sides in list order, then the ``j`` sides), from
0.0, so the positions are the reference's to the last bit. The kernel stops
when nothing moved, after ``passes``, or when a push took an agent half the
skin from where the lists were built: then it returns and the caller builds
the lists again (NumPy code) and calls it for the passes left, measuring
everything.
"""

from __future__ import annotations

import math

import numpy as np

from behaviortk.compiled.jit import inline, kernel
from behaviortk.compiled.vec import EPS, shortest


@inline
def _sign(v: float) -> float:
    return 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)


@kernel
def relax(
    x: np.ndarray,
    y: np.ndarray,
    old_x: np.ndarray,
    old_y: np.ndarray,
    radius: np.ndarray,
    pi: np.ndarray,
    pj: np.ndarray,
    contact: np.ndarray,
    share: np.ndarray,
    ao: np.ndarray,
    oo: np.ndarray,
    aw: np.ndarray,
    ww: np.ndarray,
    obstacle_pos: np.ndarray,
    obstacle_radius: np.ndarray,
    wall_a: np.ndarray,
    wall_b: np.ndarray,
    wall_normal: np.ndarray,
    width: float,
    height: float,
    wrap: bool,
    anchor_x: np.ndarray,
    anchor_y: np.ndarray,
    skin: float,
    passes: int,
    over_relaxation: float,
    margin: float,
    touched: np.ndarray,
    acc: np.ndarray,
    marks: np.ndarray,
    lists: np.ndarray,
    who: np.ndarray,
    moves: np.ndarray,
) -> tuple[int, bool]:
    """Up to ``passes`` passes moving ``x``/``y`` in place, marking moved rows in ``touched``.

    Returns ``(passes run, whether the lists must be built again)``. Scratch kept by
    the caller between ticks (allocating it every tick costs more than the passes):
    ``acc`` (2, n) zeros, ``marks`` (3, n) False, both left so; ``lists`` (3, n) int;
    ``who`` and ``moves`` (2, ...) as long as the longest candidate list.
    """
    bounded = not wrap
    acc_x, acc_y = acc[0], acc[1]
    now, dirty, staged = marks[0], marks[1], marks[2]  # moved: this pass, the last one; staged
    rows, dirty_rows, stage_rows = lists[0], lists[1], lists[2]
    mx, my = moves[0], moves[1]
    n_dirty = 0
    everything = True
    npairs = pi.shape[0]
    trigger_factor = 1.0 + 0.5 * margin
    wall_factor = (1.0 + 0.5 * margin) / (1.0 + margin)
    ran = 0
    far = False
    for _ in range(passes):
        ran += 1
        count = 0
        # ------------------------------------------------------------ pairs
        seen = 0
        nj = 0
        for k in range(npairs):
            a, b = pi[k], pj[k]
            if not everything and not (dirty[a] or dirty[b]):
                continue
            dx = shortest(x[b] - x[a], width, wrap)
            dy = shortest(y[b] - y[a], height, wrap)
            d2 = dx * dx + dy * dy
            trigger = contact[k] * trigger_factor
            if not d2 < trigger * trigger:
                continue
            dist = math.sqrt(d2)
            if dist > EPS:
                inv = 1.0 / dist
                ux, uy = dx * inv, dy * inv
            else:  # vec.coincident_direction
                lo, hi = min(a, b), max(a, b)
                angle = (lo * 2.399963229728653 + hi * 0.7071067811865476) % (2.0 * np.pi)
                sign = 1.0 if a < b else -1.0
                ux, uy = math.cos(angle) * sign, math.sin(angle) * sign
            push = contact[k] * (1.0 + margin) - dist
            push *= over_relaxation
            si = push * share[k]
            if share[k] > 0.0:  # i sides now, in list order; j sides after (np.bincount's order)
                seen, count = _one(a, -ux * si, -uy * si, acc_x, acc_y, staged, stage_rows,
                                   seen, now, rows, count)  # fmt: skip
            if share[k] < 1.0:
                sj = push - si
                who[nj], mx[nj], my[nj] = b, ux * sj, uy * sj
                nj += 1
        for h in range(nj):
            seen, count = _one(who[h], mx[h], my[h], acc_x, acc_y, staged, stage_rows, seen,
                               now, rows, count)  # fmt: skip
        _apply(stage_rows, seen, acc_x, acc_y, staged, x, y)
        # -------------------------------------------------------- obstacles
        nh = 0
        for k in range(ao.shape[0]):
            a, o = ao[k], oo[k]
            if not everything and not (dirty[a] or now[a]):
                continue
            dx = shortest(x[a] - obstacle_pos[o, 0], width, wrap)
            dy = shortest(y[a] - obstacle_pos[o, 1], height, wrap)
            touch = obstacle_radius[o] + radius[a]
            d2 = dx * dx + dy * dy
            t = touch * trigger_factor
            if not d2 < t * t:
                continue
            limit = touch * (1.0 + margin)
            dist = math.sqrt(d2)
            who[nh] = a
            if dist > EPS:
                push = (limit - dist) / dist
                mx[nh], my[nh] = dx * push, dy * push
            else:
                mx[nh], my[nh] = limit, 0.0
            nh += 1
        seen = 0
        for h in range(nh):
            seen, count = _one(who[h], mx[h], my[h], acc_x, acc_y, staged, stage_rows, seen,
                               now, rows, count)  # fmt: skip
        _apply(stage_rows, seen, acc_x, acc_y, staged, x, y)
        # ------------------------------------------------------------ walls
        nh = 0
        for k in range(aw.shape[0]):
            a, w = aw[k], ww[k]
            if not everything and not (dirty[a] or now[a]):
                continue
            wax, way = wall_a[w, 0], wall_a[w, 1]
            ex, ey = wall_b[w, 0] - wax, wall_b[w, 1] - way
            nx, ny = wall_normal[w, 0], wall_normal[w, 1]
            cx, cy = wax + 0.5 * ex, way + 0.5 * ey
            px = cx + shortest(x[a] - cx, width, wrap)
            py = cy + shortest(y[a] - cy, height, wrap)
            qx = px - shortest(x[a] - old_x[a], width, wrap)
            qy = py - shortest(y[a] - old_y[a], height, wrap)
            r = radius[a] * (1.0 + margin)
            e2 = ex * ex + ey * ey
            s_new = (px - wax) * nx + (py - way) * ny
            s_old = (qx - wax) * nx + (qy - way) * ny
            lam = s_old / (s_old - s_new if s_old != s_new else 1.0)
            at = ((qx + lam * (px - qx) - wax) * ex + (qy + lam * (py - qy) - way) * ey) / e2
            crossed = (s_old * s_new < 0.0) and (at >= 0.0) and (at <= 1.0)
            t = min(max(((px - wax) * ex + (py - way) * ey) / e2, 0.0), 1.0)
            ox, oy = px - (wax + t * ex), py - (way + t * ey)
            dist = math.sqrt(ox * ox + oy * oy)
            back = crossed or (dist <= EPS)
            if not (back or dist < r * wall_factor):
                continue
            if s_old != 0.0:
                side = _sign(s_old)
            elif s_new != 0.0:
                side = _sign(s_new)
            else:
                side = 1.0
            who[nh] = a
            if back:
                across = side * (r - side * s_new)
                mx[nh], my[nh] = across * nx, across * ny
            else:
                out = (r - dist) / dist
                mx[nh], my[nh] = out * ox, out * oy
            nh += 1
        seen = 0
        for h in range(nh):
            seen, count = _one(who[h], mx[h], my[h], acc_x, acc_y, staged, stage_rows, seen,
                               now, rows, count)  # fmt: skip
        _apply(stage_rows, seen, acc_x, acc_y, staged, x, y)
        # ------------------------------------------------------- after a pass
        for m in range(n_dirty):
            dirty[dirty_rows[m]] = False
        n_dirty = 0
        if count == 0:
            break
        limit = 0.5 * skin
        for m in range(count):
            r = rows[m]
            now[r] = False
            dirty[r] = True
            dirty_rows[m] = r
            touched[r] = True
            if bounded:
                x[r] = min(max(x[r], 0.0), width)
                y[r] = min(max(y[r], 0.0), height)
            dx = shortest(x[r] - anchor_x[r], width, wrap)
            dy = shortest(y[r] - anchor_y[r], height, wrap)
            dx *= dx
            dy *= dy
            dx += dy
            if dx >= limit * limit:
                far = True
        n_dirty = count
        everything = False
        if far:
            break
    for m in range(n_dirty):
        dirty[dirty_rows[m]] = False
    return ran, far


@inline
def _one(
    r: int, mx: float, my: float, acc_x: np.ndarray, acc_y: np.ndarray, staged: np.ndarray,
    stage_rows: np.ndarray, seen: int, now: np.ndarray, rows: np.ndarray, count: int,
) -> tuple[int, int]:  # fmt: skip
    """Add one move of row ``r`` to its sum for this stage (from 0.0, in order: ``np.bincount``);
    list ``r`` among the stage's rows and the pass's moved rows. The new counts."""
    if not staged[r]:
        staged[r] = True
        stage_rows[seen] = r
        seen += 1
    acc_x[r] += mx
    acc_y[r] += my
    if not now[r]:
        now[r] = True
        rows[count] = r
        count += 1
    return seen, count


@inline
def _apply(
    stage_rows: np.ndarray, seen: int, acc_x: np.ndarray, acc_y: np.ndarray, staged: np.ndarray,
    x: np.ndarray, y: np.ndarray,
) -> None:  # fmt: skip
    """Apply a stage's summed moves and clear its sums and marks."""
    for m in range(seen):
        r = stage_rows[m]
        x[r] += acc_x[r]
        y[r] += acc_y[r]
        acc_x[r] = 0.0
        acc_y[r] = 0.0
        staged[r] = False


@inline
def _exact_short(d: float, size: float, wrap: bool) -> float:
    """``world.spatial.displacement``'s ``d - size * round(d / size)`` (a division)."""
    if not wrap:
        return d
    return d - size * np.rint(d / size)


@kernel
def close_pairs(
    x: np.ndarray,
    y: np.ndarray,
    radius: np.ndarray,
    reach: float,
    width: float,
    height: float,
    wrap: bool,
    nx: int,
    ny: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``world.overlap.close_pairs``: pairs ``i < j`` closer than ``r_i + r_j + reach``
    (minimum image), sorted by ``(i, j)``, from a grid of ``nx`` x ``ny`` cells at least
    as wide as the search (``2 max r + reach``); on wrapped worlds ``nx, ny >= 3``.

    A position outside the world (pushed past an edge between passes) is binned in
    the cell it wraps into, or the nearest edge cell of a bounded world.
    """
    n = x.shape[0]
    cw, ch = width / nx, height / ny
    cell = np.empty(n, dtype=np.int64)
    start = np.zeros(nx * ny + 1, dtype=np.int64)
    for p in range(n):
        px, py = x[p], y[p]
        if wrap:  # a row pushed past an edge and not yet folded back: the cell it wraps into
            px -= width * math.floor(px / width)
            py -= height * math.floor(py / height)
        cx = min(max(int(px / cw), 0), nx - 1)
        cy = min(max(int(py / ch), 0), ny - 1)
        cell[p] = cy * nx + cx
        start[cell[p] + 1] += 1
    for c in range(nx * ny):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    members = np.empty(n, dtype=np.int64)
    for p in range(n):  # ascending rows within each cell
        members[fill[cell[p]]] = p
        fill[cell[p]] += 1
    cap = max(16, 4 * n)
    out_i = np.empty(cap, dtype=np.int64)
    out_j = np.empty(cap, dtype=np.int64)
    found = 0
    mine = np.empty(n, dtype=np.int64)
    for i in range(n):
        cx, cy = cell[i] % nx, cell[i] // nx
        k = 0
        for oy in range(-1, 2):
            gy = cy + oy
            if wrap:
                gy = (gy + ny) % ny
            elif gy < 0 or gy >= ny:
                continue
            for ox in range(-1, 2):
                gx = cx + ox
                if wrap:
                    gx = (gx + nx) % nx
                elif gx < 0 or gx >= nx:
                    continue
                g = gy * nx + gx
                for m in range(start[g + 1] - 1, start[g] - 1, -1):  # rows descending
                    j = members[m]
                    if j <= i:
                        break
                    dx = _exact_short(x[j] - x[i], width, wrap)
                    dy = _exact_short(y[j] - y[i], height, wrap)
                    limit = radius[i] + radius[j] + reach
                    if dx * dx + dy * dy < limit * limit:
                        mine[k] = j
                        k += 1
        for a in range(1, k):  # insertion sort: a few candidates per agent
            v = mine[a]
            b = a - 1
            while b >= 0 and mine[b] > v:
                mine[b + 1] = mine[b]
                b -= 1
            mine[b + 1] = v
        if found + k > cap:
            cap = max(2 * cap, found + k)
            grown_i = np.empty(cap, dtype=np.int64)
            grown_j = np.empty(cap, dtype=np.int64)
            grown_i[:found] = out_i[:found]
            grown_j[:found] = out_j[:found]
            out_i, out_j = grown_i, grown_j
        for a in range(k):
            out_i[found] = i
            out_j[found] = mine[a]
            found += 1
    return out_i[:found].copy(), out_j[:found].copy()


@kernel
def moved_too_far(
    x: np.ndarray,
    y: np.ndarray,
    anchor_x: np.ndarray,
    anchor_y: np.ndarray,
    width: float,
    height: float,
    wrap: bool,
    limit: float,
) -> bool:
    """``NonPenetration._moved_too_far`` over every row: has one moved ``limit`` or more?"""
    for r in range(x.shape[0]):
        dx = shortest(x[r] - anchor_x[r], width, wrap)
        dy = shortest(y[r] - anchor_y[r], height, wrap)
        dx *= dx
        dy *= dy
        dx += dy
        if dx >= limit * limit:
            return True
    return False
