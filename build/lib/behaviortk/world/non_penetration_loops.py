"""``world.non_penetration``'s relaxation passes compiled: every pass of a tick in one call.

The NumPy constraint (the reference) runs each pass as some thirty array
operations over the candidate lists; here one kernel runs the passes, with the
same rules and the same arithmetic: a pass measures the pairs (all of them
first, then only those of agents the previous pass moved), pushes each
overlapping pair apart along its centre line, then agents out of obstacles
(the candidates of agents not yet settled, measured after the pair pushes),
then off walls. Pair moves go onto the positions in the reference's order
(its ``np.add.at``: pair after pair in list order, ``i``'s move then ``j``'s);
an obstacle or wall stage's moves of an agent add up from 0.0 in order (its
``np.bincount``), so the positions are the reference's to the last bit. The
kernel stops when nothing moved, after ``passes``, or when a push may have
taken an agent half the skin from where the lists were built: then it returns
and the caller builds the lists again (:func:`candidates`) and calls it for
the passes left, measuring everything.

Where the time goes, and how it is kept down (evade_or_flock at 50,000 agents:
some 110,000 candidate pairs, 29,000 of them overlapping before the first pass,
a quarter of that before the second, a handful after the fifth):

- A pass first finds the pairs closer than contact, compacting their indices
  and offsets without a branch, then pushes only those. Offsets skip the
  rounding of the minimum image where agents are close (``shortest_near``).
- The first pass of a call also notes the pairs within ``NEAR * skin`` of
  contact (about half); later passes measure only those while no agent has
  moved half that since (a second Verlet list, good for one call), the agents
  just moved having fewer pairs still: then their pairs are picked through a
  per-agent index of the list (:func:`pairs_by_agent`, made once per list),
  marked and read back in list order 8 marks at a time.
- The lists hold int32 rows and nothing else: a pair's contact and share are
  worked out from its agents' radius and inverse mass, the same arithmetic as
  ``pair_constants``, read through each agent's kind (:func:`kinds`: a byte per
  agent into a table of the distinct values) rather than from two arrays of
  doubles, so a pass reads a third of the memory. A pass writes the rows of the
  pairs it found (hits, near pairs) beside their offsets, so the next loops
  stream them instead of looking them up.
- The candidate search (:func:`close_pairs`) bins the agents on its own grid,
  cells as wide as the search (the spatial index's, capped at 65,535 cells, is
  nearly twice as wide there), visits each pair of neighbouring cells once and sorts
  the pairs by ``(i, j)`` by counting.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from behaviortk.jit.compile import inline, kernel
from behaviortk.vec import EPS, coincident_xy
from behaviortk.world.spatial import shortest, shortest_near

#: A pass after the first picks the pairs of the agents just moved through the per-agent
#: index when they are fewer than this fraction of the list (and sorts them into list
#: order); more, and scanning the list for them is cheaper. In evade_or_flock at 50,000
#: agents the second and third passes scan, the later ones (a few hundred agents) pick.
PICK_BELOW = 0.5

#: The first pass notes the pairs within ``NEAR * skin`` of contact; the later passes
#: of the call measure only those while no agent has moved ``0.49 * NEAR * skin`` since
#: (then nothing else can have come closer than contact), the whole list after. In
#: evade_or_flock at 50,000 agents (skin 40) no agent moves 2 units in a tick's passes, and
#: the pairs within 4 of contact are about half the list.
NEAR = 0.1


def run(
    world: Any, radius: np.ndarray, kinds: tuple[np.ndarray, ...], x: np.ndarray, y: np.ndarray,
    old_x: np.ndarray, old_y: np.ndarray, pairs: tuple[np.ndarray, ...],
    obstacles: tuple[np.ndarray, np.ndarray], walls: tuple[np.ndarray, np.ndarray],
    slack: float, skin: float, passes: int, over_relaxation: float, margin: float,
    touched: np.ndarray, scratch: dict[str, Any],
) -> tuple[int, bool]:  # fmt: skip
    """:func:`relax` on a world's arrays: ``(passes run, rebuild)``. ``kinds`` are the
    pairs' agents' radius and inverse mass (:func:`kinds`). ``scratch`` (the caller's,
    kept between ticks) holds the work arrays, grown when too small, and the per-agent
    index of the pairs, made again when the list changes."""
    ao, oo, aw, ww = (np.ascontiguousarray(v) for v in (*obstacles, *walls))
    n = int(x.shape[0])
    if scratch.get("indexed") is not pairs[0] or scratch["index"][0].shape[0] != n + 1:
        scratch["index"] = pair_index(pairs[0], pairs[1], n)
        scratch["indexed"] = pairs[0]
    upper, lower, lower_pairs, i, j = scratch["index"]
    npairs = int(i.shape[0])
    longest = max(npairs, int(ao.shape[0]), int(aw.shape[0]), 1)
    if scratch.get("acc", np.zeros((2, 0))).shape[1] != n:
        scratch["acc"] = np.zeros((2, n))
        scratch["marks"] = np.zeros((3, n), dtype=np.bool_)
        scratch["lists"] = np.empty((3, n), dtype=np.int64)
    if scratch.get("who", np.zeros(0)).shape[0] < longest:
        scratch["who"] = np.empty(2 * longest, dtype=np.int64)
        scratch["moves"] = np.empty((2, 2 * longest))
        scratch["picks"] = np.empty(2 * longest + 1, dtype=np.int64)
        scratch["hits"] = np.empty((2, 2 * longest + 1))
        scratch["chosen"] = np.zeros(16 * (longest // 8 + 1), dtype=np.uint8)
        scratch["rows"] = np.empty((4, 2 * longest + 1), dtype=np.int32)
    if scratch.get("origin", np.zeros((2, 0))).shape[1] != n:
        scratch["origin"] = np.empty((2, n))
    ran, rebuild = relax(
        x, y, old_x, old_y, np.ascontiguousarray(radius, dtype=np.float64),
        i, j, kinds[0], kinds[1], kinds[2], upper, lower, lower_pairs,
        ao, oo, aw, ww,
        np.ascontiguousarray(world.obstacle_pos, dtype=np.float64).reshape(-1, 2),
        np.ascontiguousarray(world.obstacle_radius, dtype=np.float64).reshape(-1),
        np.ascontiguousarray(world.wall_a, dtype=np.float64).reshape(-1, 2),
        np.ascontiguousarray(world.wall_b, dtype=np.float64).reshape(-1, 2),
        np.ascontiguousarray(world.wall_normal, dtype=np.float64).reshape(-1, 2),
        float(world.width), float(world.height), world.edges == "wrap",
        float(slack), int(passes), float(over_relaxation),
        float(margin), float(PICK_BELOW), touched, scratch["acc"], scratch["marks"],
        scratch["lists"], scratch["who"], scratch["moves"], scratch["picks"], scratch["hits"],
        scratch["chosen"], scratch["chosen"].view(np.uint64), float(NEAR * skin),
        scratch["rows"], scratch["origin"],
    )  # fmt: skip
    return int(ran), bool(rebuild)


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
    kind: np.ndarray,
    kind_radius: np.ndarray,
    kind_inv_mass: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
    lower_pairs: np.ndarray,
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
    slack: float,
    passes: int,
    over_relaxation: float,
    margin: float,
    pick_below: float,
    touched: np.ndarray,
    acc: np.ndarray,
    marks: np.ndarray,
    lists: np.ndarray,
    who: np.ndarray,
    moves: np.ndarray,
    picks: np.ndarray,
    hits: np.ndarray,
    chosen: np.ndarray,
    chosen_words: np.ndarray,
    near: float,
    pair_rows: np.ndarray,
    origin: np.ndarray,
) -> tuple[int, bool]:
    """Up to ``passes`` passes moving ``x``/``y`` in place, marking moved rows in ``touched``.

    Returns ``(passes run, whether the lists must be built again)``: they must once a
    push took an agent ``slack`` from where it was when the call began (the caller
    passes half the skin less the farthest any agent then was from where the lists
    were built: a bound, so this may come a little before the reference's exact
    test; the positions do not depend on it). ``upper``,
    ``lower`` and ``lower_pairs`` index the pairs by agent (:func:`pairs_by_agent`).
    A pass after the first picks the pairs of the agents the previous pass moved
    through that index (marks, read back in list order) when they are fewer than
    ``pick_below`` of the list; otherwise it scans the list for them. Scratch kept
    by the caller between ticks (allocating it every tick costs more than the
    passes): ``acc`` (2, n) zeros, ``marks`` (3, n) False, both left so; ``lists``
    (3, n) int; ``who`` and ``moves`` (2, ...) as long as the longest candidate
    list; ``picks`` (pairs + 1,) int, ``hits`` (2, pairs + 1) and ``pair_rows`` (4, pairs
    + 1) int32 (the hits' and the near pairs' rows), ``chosen`` (pairs rounded up to 8,)
    uint8 zeros, left so, with ``chosen_words`` the same memory as uint64.
    """
    bounded = not wrap
    acc_x, acc_y = acc[0], acc[1]
    now, dirty, staged = marks[0], marks[1], marks[2]  # moved: this pass, the last one; staged
    rows, dirty_rows, stage_rows = lists[0], lists[1], lists[2]
    mx, my = moves[0], moves[1]
    hit_k, hit_x, hit_y = picks, hits[0], hits[1]
    hit_a, hit_b, near_a, near_b = pair_rows[0], pair_rows[1], pair_rows[2], pair_rows[3]
    kr, kw = kind_radius, kind_inv_mass
    n_dirty = 0
    everything = True
    npairs = pi.shape[0]
    near_n = 0
    near_ok = False
    drift = 0.49 * near  # a pair not near moved less than 2 * drift closer: not a hit
    ran = 0
    far = False
    for _ in range(passes):
        ran += 1
        count = 0
        # ------------------------------------------------------------ pairs
        # which pairs to measure: all (first pass), those of the agents just moved
        # picked through the index (few), or the pairs that were near in the first pass
        # (while no agent has moved half the near margin since), or the whole list
        use_near = not everything and near_ok
        scan = near_n if use_near else npairs
        picked = False
        # the pairs of the agents just moved, about (each has 2 npairs / n), few enough to pick?
        if not everything and n_dirty * 2 * npairs < pick_below * scan * x.shape[0]:
            picked = True
            for m in range(n_dirty):
                r = dirty_rows[m]
                for k in range(upper[r], upper[r + 1]):
                    chosen[k] = 1
                for h in range(lower[r], lower[r + 1]):
                    chosen[lower_pairs[h]] = 1
            scan = 0  # in list order, so the moves add up in the reference's order:
            for w in range(chosen_words.shape[0]):  # the marks read 8 at a time
                if chosen_words[w] == 0:
                    continue
                for k in range(8 * w, 8 * w + 8):  # without a branch to guess wrong
                    hit_k[scan] = k
                    scan += chosen[k]
                chosen_words[w] = 0
        # the pairs closer than contact, in list order (compacted without a branch)
        nh = 0
        if everything:  # every pair, noting those within the near margin of contact
            near_n = 0
            for k in range(npairs):
                a, b = pi[k], pj[k]
                nh, d2, trigger = _measure(a, b, x, y, width, height, wrap, kind, kr, nh, hits,
                                           hit_a, hit_b)  # fmt: skip
                near_a[near_n], near_b[near_n] = a, b
                trigger += near
                near_n += 1 if d2 < trigger * trigger else 0
            for r in range(x.shape[0]):
                origin[0, r] = x[r]
                origin[1, r] = y[r]
            near_ok = True
        else:
            src_a = near_a if (use_near and not picked) else pi
            src_b = near_b if (use_near and not picked) else pj
            for q in range(scan):
                if picked:
                    k = hit_k[q]
                    a, b = pi[k], pj[k]
                else:
                    a, b = src_a[q], src_b[q]
                nh, _, _ = _measure(a, b, x, y, width, height, wrap, kind, kr, nh, hits,
                                    hit_a, hit_b)  # fmt: skip
        for h in range(nh):  # each pair's two moves straight onto the positions, in the
            a, b = hit_a[h], hit_b[h]  # reference's order (``np.add.at``: i's move, then j's)
            dx, dy = hit_x[h], hit_y[h]
            dist = math.sqrt(dx * dx + dy * dy)
            if dist > EPS:
                inv = 1.0 / dist
                ux, uy = dx * inv, dy * inv
            else:  # vec.coincident_direction
                ux, uy = coincident_xy(a, b)
            push = (kr[kind[a]] + kr[kind[b]]) * (1.0 + margin) - dist
            push *= over_relaxation
            wa = kw[kind[a]]
            part = wa / (wa + kw[kind[b]])
            si = push * part
            if part > 0.0:
                x[a] += -ux * si
                y[a] += -uy * si
                if not now[a]:
                    now[a] = True
                    rows[count] = a
                    count += 1
            if part < 1.0:
                sj = push - si
                x[b] += ux * sj
                y[b] += uy * sj
                if not now[b]:
                    now[b] = True
                    rows[count] = b
                    count += 1
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
            if not d2 < touch * touch:
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
        count = _stage(who, mx, my, nh, acc_x, acc_y, staged, stage_rows, now, rows, count, x, y)
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
            if not (back or dist < radius[a]):
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
        count = _stage(who, mx, my, nh, acc_x, acc_y, staged, stage_rows, now, rows, count, x, y)
        # ------------------------------------------------------- after a pass
        for m in range(n_dirty):
            dirty[dirty_rows[m]] = False
        n_dirty = 0
        if count == 0:
            break
        for m in range(count):
            r = rows[m]
            now[r] = False
            dirty[r] = True
            dirty_rows[m] = r
            touched[r] = True
            if bounded:
                x[r] = min(max(x[r], 0.0), width)
                y[r] = min(max(y[r], 0.0), height)
            dx = x[r] - origin[0, r]  # not folded between passes: no wrap here
            dy = y[r] - origin[1, r]
            dx = dx * dx + dy * dy
            far |= dx >= slack * slack
            near_ok &= dx < drift * drift
        n_dirty = count
        everything = False
        if far:
            break
    for m in range(n_dirty):
        dirty[dirty_rows[m]] = False
    return ran, far


@inline
def _measure(
    a: int, b: int, x: np.ndarray, y: np.ndarray, width: float, height: float, wrap: bool,
    kind: np.ndarray, kr: np.ndarray, nh: int, hits: np.ndarray, hit_a: np.ndarray,
    hit_b: np.ndarray,
) -> tuple[int, float, float]:  # fmt: skip
    """Measure pair ``(a, b)`` into hit slot ``nh`` (kept only when it overlaps: compacted
    without a branch): ``(hits now, squared distance, contact distance)``."""
    dx = shortest_near(x[b] - x[a], width, wrap)  # nearly always close
    dy = shortest_near(y[b] - y[a], height, wrap)
    d2 = dx * dx + dy * dy
    trigger = kr[kind[a]] + kr[kind[b]]
    hit_a[nh], hit_b[nh] = a, b
    hits[0, nh], hits[1, nh] = dx, dy
    return nh + (1 if d2 < trigger * trigger else 0), d2, trigger


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
def _stage(
    who: np.ndarray, mx: np.ndarray, my: np.ndarray, nh: int, acc_x: np.ndarray,
    acc_y: np.ndarray, staged: np.ndarray, stage_rows: np.ndarray, now: np.ndarray,
    rows: np.ndarray, count: int, x: np.ndarray, y: np.ndarray,
) -> int:  # fmt: skip
    """An obstacle or wall stage's ``nh`` moves (rows ``who``) summed per row, then applied;
    the new count of the pass's moved rows."""
    seen = 0
    for h in range(nh):
        seen, count = _one(who[h], mx[h], my[h], acc_x, acc_y, staged, stage_rows, seen, now,
                           rows, count)  # fmt: skip
    _apply(stage_rows, seen, acc_x, acc_y, staged, x, y)
    return count


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
    """``world.spatial.displacement``'s ``d - size * round(d / size)``: the same bits
    (but for the sign of a zero), without its division where ``|d| < size / 2``."""
    if not wrap:
        return d
    if abs(d) < 0.5 * size:
        return d
    return d - size * np.rint(d / size)


_FORWARD = np.array([[0, 0], [1, 0], [-1, 1], [0, 1], [1, 1]], dtype=np.int64)
"""The cell itself, then its forward neighbours: each neighbouring pair of cells once."""


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
    inv_mass: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``world.overlap.close_pairs``: pairs ``i < j`` closer than ``r_i + r_j + reach``
    (minimum image), sorted by ``(i, j)``, from a grid of ``nx`` x ``ny`` cells at least
    as wide as the search (``2 max r + reach``); on wrapped worlds ``nx, ny >= 3``. Only
    the pairs that can move (``inv_mass`` not 0 on both), as
    ``world.non_penetration.pair_constants`` keeps them; rows as int32.

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
    # each pair of cells once: a cell with itself and its 4 forward neighbours (a half
    # stencil: no test of which row is lower, which cost more than the distances)
    cap = max(16, 4 * n)
    lo_rows = np.empty(cap, dtype=np.int32)
    hi_rows = np.empty(cap, dtype=np.int32)
    found = 0
    for c in range(nx * ny):
        s0, s1 = start[c], start[c + 1]
        if s0 == s1:
            continue
        cx, cy = c % nx, c // nx  # once per occupied cell
        for t in range(5):
            ox, oy = _FORWARD[t]
            gx, gy = cx + ox, cy + oy
            if gx < 0 or gx >= nx or gy >= ny:
                if not wrap:
                    continue
                gx += nx if gx < 0 else (-nx if gx >= nx else 0)
                gy -= ny if gy >= ny else 0
            g = gy * nx + gx
            g0, g1 = start[g], start[g + 1]
            if g0 == g1:
                continue
            if found + (s1 - s0) * (g1 - g0) > cap:
                cap = 2 * cap + (s1 - s0) * (g1 - g0)
                grown_lo = np.empty(cap, dtype=np.int32)
                grown_hi = np.empty(cap, dtype=np.int32)
                for k in range(found):  # not a slice copy: its shape check's message
                    grown_lo[k] = lo_rows[k]  # (numba's string formatting) would double
                    grown_hi[k] = hi_rows[k]  # this kernel's compile time
                lo_rows, hi_rows = grown_lo, grown_hi
            for m in range(s0, s1):
                p = members[m]
                for q in range(g0 + (m - s0 + 1 if t == 0 else 0), g1):
                    o = members[q]
                    i, j = min(p, o), max(p, o)  # no branch: the order is a coin toss
                    dx = _exact_short(x[j] - x[i], width, wrap)
                    dy = _exact_short(y[j] - y[i], height, wrap)
                    limit = radius[i] + radius[j] + reach
                    lo_rows[found], hi_rows[found] = i, j
                    close = dx * dx + dy * dy < limit * limit
                    free = inv_mass[i] + inv_mass[j] > 0.0  # both never moving: dropped
                    found += 1 if close & free else 0
    return _sorted(lo_rows, hi_rows, found, n)


@inline
def _sorted(
    lo_rows: np.ndarray, hi_rows: np.ndarray, found: int, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The first ``found`` pairs ``(lo, hi)`` (``lo < hi``) sorted by ``(lo, hi)``: counted by
    ``lo``, then each ``lo``'s few ``hi`` by insertion."""
    first = np.zeros(n + 1, dtype=np.int64)
    for k in range(found):
        first[lo_rows[k] + 1] += 1
    for r in range(n):
        first[r + 1] += first[r]
    fill = first[:-1].copy()
    out_i = np.empty(found, dtype=np.int32)
    out_j = np.empty(found, dtype=np.int32)
    for k in range(found):
        i = lo_rows[k]
        out_i[fill[i]] = i
        out_j[fill[i]] = hi_rows[k]
        fill[i] += 1
    for r in range(n):
        for a in range(first[r] + 1, first[r + 1]):
            v = out_j[a]
            b = a - 1
            while b >= first[r] and out_j[b] > v:
                out_j[b + 1] = out_j[b]
                b -= 1
            out_j[b + 1] = v
    return out_i, out_j


@kernel
def renumbered(
    pi: np.ndarray, pj: np.ndarray, new_row: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(pi, pj)`` after the agents changed rows (``new_row[old] = new``),
    ``i < j`` again and sorted by ``(i, j)``, as :func:`close_pairs` leaves them."""
    found = pi.shape[0]
    lo_rows = np.empty(found, dtype=np.int32)
    hi_rows = np.empty(found, dtype=np.int32)
    for k in range(found):
        a, b = new_row[pi[k]], new_row[pj[k]]
        lo_rows[k], hi_rows[k] = min(a, b), max(a, b)
    return _sorted(lo_rows, hi_rows, found, new_row.shape[0])


@kernel
def pairs_by_agent(
    pi: np.ndarray, pj: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of each agent: ``(upper, lower, lower_pairs)``. Agent ``r``'s pairs
    ``(r, j)`` are ``upper[r]:upper[r + 1]`` (the list is sorted by ``i``); its pairs
    ``(i, r)`` are ``lower_pairs[lower[r]:lower[r + 1]]``, in list order."""
    upper = np.zeros(n + 1, dtype=np.int64)
    lower = np.zeros(n + 1, dtype=np.int64)
    for k in range(pi.shape[0]):
        upper[pi[k] + 1] += 1
        lower[pj[k] + 1] += 1
    for r in range(n):
        upper[r + 1] += upper[r]
        lower[r + 1] += lower[r]
    fill = lower[:-1].copy()
    lower_pairs = np.empty(pj.shape[0], dtype=np.int32)
    for k in range(pj.shape[0]):
        lower_pairs[fill[pj[k]]] = k
        fill[pj[k]] += 1
    return upper, lower, lower_pairs


def kinds(radius: np.ndarray, inv_mass: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(kind, kind_radius, kind_inv_mass)``: agent ``r``'s radius is
    ``kind_radius[kind[r]]`` and its inverse mass ``kind_inv_mass[kind[r]]``, the same
    values. A byte per agent when there are at most 256 distinct pairs of values (groups
    share them), else one kind per agent."""
    r = np.ascontiguousarray(radius, dtype=np.float64)
    w = np.ascontiguousarray(inv_mass, dtype=np.float64)
    kind, table_r, table_w, found = _kinds(r, w)
    if found < 0:
        return np.arange(r.shape[0], dtype=np.int32), r.copy(), w.copy()
    return kind, table_r[:found].copy(), table_w[:found].copy()


@kernel
def _kinds(
    radius: np.ndarray, inv_mass: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """:func:`kinds` as bytes, or a count of -1 past 256 kinds."""
    kind = np.empty(radius.shape[0], dtype=np.uint8)
    table_r = np.empty(256)
    table_w = np.empty(256)
    found = 0
    last = -1
    for a in range(radius.shape[0]):
        r, w = radius[a], inv_mass[a]
        if last >= 0 and table_r[last] == r and table_w[last] == w:  # runs: groups are rows
            kind[a] = last
            continue
        last = -1
        for k in range(found):
            if table_r[k] == r and table_w[k] == w:
                last = k
                break
        if last < 0:
            if found == 256:
                return kind, table_r, table_w, -1
            table_r[found], table_w[found] = r, w
            last = found
            found += 1
        kind[a] = last
    return kind, table_r, table_w, found


def pair_index(pi: np.ndarray, pj: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
    """``(upper, lower, lower_pairs, i, j)``: :func:`pairs_by_agent` of the pairs, then
    the pairs' rows as contiguous int32 (what :func:`run` keeps in its scratch)."""
    i, j = (np.ascontiguousarray(v, dtype=np.int32) for v in (pi, pj))
    return (*pairs_by_agent(i, j, n), i, j)


@kernel
def fold(pos: np.ndarray, moved: np.ndarray, width: float, height: float) -> None:
    """``world.non_penetration._fold`` of the ``moved`` rows of ``pos`` (N, 2), in place."""
    for r in range(pos.shape[0]):
        if moved[r]:
            pos[r, 0] = _fold(pos[r, 0], width)
            pos[r, 1] = _fold(pos[r, 1], height)


@inline
def _fold(v: float, size: float) -> float:
    """One coordinate folded into ``[0, size)``."""
    v = v - size * np.floor(v * (1.0 / size))
    return 0.0 if (v >= size or v < 0.0) else v


@kernel
def drift(
    x: np.ndarray,
    y: np.ndarray,
    anchor_x: np.ndarray,
    anchor_y: np.ndarray,
    width: float,
    height: float,
    wrap: bool,
) -> float:
    """The largest distance (minimum image) of a row from its anchor."""
    most = 0.0
    for r in range(x.shape[0]):
        dx = shortest_near(x[r] - anchor_x[r], width, wrap)
        dy = shortest_near(y[r] - anchor_y[r], height, wrap)
        most = max(most, dx * dx + dy * dy)
    return math.sqrt(most)


#: The candidate search's grid has cells at least as wide as the search and at most this
#: many cells per agent: narrow cells hold few agents to measure in packed flocks (the
#: spatial index's grid, capped at 65,535 cells, has cells twice as wide at 50,000 agents
#: and measures three to four times as many).
CELLS_PER_AGENT = 4


def candidates(
    world: Any, x: np.ndarray, y: np.ndarray, radius: np.ndarray, reach: float,
    inv_mass: np.ndarray,
) -> tuple[np.ndarray, np.ndarray] | None:  # fmt: skip
    """The rows ``(i, j)`` (int32, sorted by ``(i, j)``) of ``world.non_penetration``'s
    candidate pairs (``close_pairs`` then ``pair_constants``; the kernel works out the
    constants itself); None where the grid does not fit (fewer than 3 cells across a
    wrapped world: NumPy)."""
    n = int(x.shape[0])
    if n < 2:
        return None
    search = 2.0 * float(radius.max()) + float(reach)
    if not search > 0.0:
        return None
    w, h = float(world.width), float(world.height)
    side = max(search, math.sqrt(w * h / (CELLS_PER_AGENT * n)))
    nx, ny = max(1, int(w // side)), max(1, int(h // side))
    wrap = world.edges == "wrap"
    if wrap and min(nx, ny) < 3:
        return None
    found: tuple[np.ndarray, np.ndarray] = close_pairs(
        np.ascontiguousarray(x, dtype=np.float64),
        np.ascontiguousarray(y, dtype=np.float64),
        np.ascontiguousarray(radius, dtype=np.float64),
        float(reach), w, h, wrap, nx, ny,
        np.ascontiguousarray(inv_mass, dtype=np.float64),
    )  # fmt: skip
    return found


def _tiny() -> tuple[np.ndarray, ...]:
    """Tiny inputs of the real types: positions as columns of an (N, 2) array, as
    ``NonPenetration`` passes them, and int32 pairs."""
    pos = np.array([[1.0, 1.0], [2.0, 1.5], [3.0, 2.0], [1.5, 3.0]])
    i64 = np.arange(pos.shape[0], dtype=np.int64)
    return pos, np.ones(pos.shape[0]), i64, i64[:2].astype(np.int32), i64[1:3].astype(np.int32)


def warm_passes() -> None:
    """Compile (or load from the cache) the passes and what every tick runs with them: the
    agents' kinds, the pairs' per-agent index, the drift since the lists were built."""
    pos, f, i64, pi, pj = _tiny()
    x, y = pos[:, 0], pos[:, 1]
    touched = np.zeros(pos.shape[0], dtype=np.bool_)
    run(
        _Warm(), f, kinds(f, f), x, y, x, y, (pi, pj), (i64[:1], i64[:1]), (i64[:1], i64[:1]),
        1.0, 3.0, 3, 1.6, 0.02, touched, {},
    )  # fmt: skip
    drift(x, y, np.ascontiguousarray(x), np.ascontiguousarray(y), 10.0, 10.0, True)


def warm_candidates() -> None:
    """Compile (or load) :func:`close_pairs`, the candidate search."""
    pos, f, *_ = _tiny()
    xs, ys = np.ascontiguousarray(pos[:, 0]), np.ascontiguousarray(pos[:, 1])
    close_pairs(xs, ys, f, 1.0, 10.0, 10.0, True, 3, 3, f)


def warm_fold() -> None:
    """Compile (or load) :func:`fold` (wrapped worlds only)."""
    pos, *_ = _tiny()
    fold(pos, np.zeros(pos.shape[0], dtype=np.bool_), 10.0, 10.0)


def warm_renumbered() -> None:
    """Compile (or load) :func:`renumbered` (agents that change rows)."""
    _, _, i64, pi, pj = _tiny()
    renumbered(pi, pj, i64)


class _Warm:
    """A world of the types :func:`run` reads: one obstacle and one wall."""

    width, height, edges = 10.0, 10.0, "wrap"
    obstacle_pos, obstacle_radius = np.ones((1, 2)), np.ones(1)
    wall_a, wall_b, wall_normal = np.ones((1, 2)), np.full((1, 2), 2.0), np.ones((1, 2))
