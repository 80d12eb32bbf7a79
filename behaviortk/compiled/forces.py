"""Kernels of the built-in steering primitives and combiners: one loop over the rows that asked.

Each primitive kernel writes ``weight * force`` for its rows into ``out`` and
follows its NumPy twin in ``steering/kernels.py`` and ``steering/primitives.py``
operation by operation (comments name it), including ``steer``'s rules: rows
whose target is invalid get zero, non-finite numbers become zero. ``rows`` are
global agent rows (state arrays), ``local`` the same agents' rows within their
group (target facts and neighbour offsets are per group).

Flocking reads the neighbour pairs in CSR form (``sense.Neighbours``): an
agent's pairs are one contiguous run, so no pair is filtered twice and
separation, alignment and cohesion of one ``blend`` share a single pass
(:func:`flock`). Sums run over the pairs in ``(i, j)`` order, as
``np.bincount`` does.
"""

from __future__ import annotations

import math

import numpy as np

from behaviortk.compiled.vec import (
    EPS,
    accumulate,
    finite_or_zero,
    length,
    normalize,
    separation_term,
    truncate,
)
from behaviortk.jit.compile import inline, kernel
from behaviortk.steering.formulas import arrive_buckland
from behaviortk.steering.kernels import LJ_MIN_D


# ----------------------------------------------------------------- helpers
@inline
def _put(out: np.ndarray, r: int, fx: float, fy: float, weight: float) -> None:
    """``steer``'s clean-up (non-finite -> 0), then the leaf's weight."""
    out[r, 0] = finite_or_zero(fx) * weight
    out[r, 1] = finite_or_zero(fy) * weight


@inline
def _seek(px: float, py: float, vx: float, vy: float, tx: float, ty: float, top: float):
    """``kernels.seek_force``: ``normalize(target - pos) * max_speed - vel``."""
    ux, uy = normalize(tx - px, ty - py)
    return ux * top - vx, uy * top - vy


# -------------------------------------------------------------- primitives
@kernel
def wander(
    rows, pos, vel, heading, max_speed, radius_of, memory, rand,
    in_radii, radius, distance, jitter, dt, displacement, weight, out,
):  # fmt: skip
    """``primitives.wander``: jitter the remembered circle target, then seek it (or displacement).
    ``rand``: the two random numbers of each row (``rows`` order)."""
    for r in range(rows.shape[0]):
        i = rows[r]
        scale = radius_of[i] if in_radii else 1.0
        rad = radius * scale
        lx, ly = memory[i, 0], memory[i, 1]
        if not (math.isfinite(lx) and math.isfinite(ly)):
            lx, ly = rad, 0.0
        step = jitter * scale * dt
        mx = lx + (2.0 * rand[r, 0] - 1.0) * step
        my = ly + (2.0 * rand[r, 1] - 1.0) * step
        ux, uy = normalize(mx, my)
        if length(mx, my) <= EPS:
            ux, uy = 1.0, 0.0
        lx, ly = ux * rad, uy * rad
        memory[i, 0], memory[i, 1] = lx, ly
        hx, hy = normalize(heading[i, 0], heading[i, 1])
        ax = lx + distance * scale
        px, py = pos[i, 0], pos[i, 1]
        gx = hx * ax + -hy * ly + px
        gy = hy * ax + hx * ly + py
        if displacement:
            fx, fy = gx - px, gy - py
        else:
            fx, fy = _seek(px, py, vel[i, 0], vel[i, 1], gx, gy, max_speed[i])
        _put(out, r, fx, fy, weight)


@kernel
def flock(
    rows, local, offsets, nb_j, nb_d, pos, vel, max_speed,
    w_sep, w_ali, w_coh, out_sep, out_ali, out_coh,
):  # fmt: skip
    """Separation, alignment and cohesion in one pass over each row's neighbour pairs.

    A weight below zero skips that force (its ``out`` is not written).
    Separation: Buckland's sum of ``-d / max(|d|^2, MIN_SEPARATION^2)``,
    coincident pairs pushed along ``coincident_direction``; alignment: mean
    neighbour velocity minus own; cohesion: seek the neighbours' centre.
    """
    sep, ali, coh = w_sep >= 0.0, w_ali >= 0.0, w_coh >= 0.0
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        sx = sy = ax = ay = cx = cy = 0.0
        lo, hi = offsets[g], offsets[g + 1]
        for p in range(lo, hi):
            dx, dy = nb_d[p, 0], nb_d[p, 1]
            j = nb_j[p]
            if sep:
                tx, ty = separation_term(i, j, dx, dy)
                sx += tx
                sy += ty
            if ali:
                ax += vel[j, 0]
                ay += vel[j, 1]
            if coh:
                cx += dx
                cy += dy
        _flock_out(
            r, i, hi - lo, sx, sy, ax, ay, cx, cy, pos, vel, max_speed,
            w_sep, w_ali, w_coh, out_sep, out_ali, out_coh,
        )  # fmt: skip


@inline
def _flock_forces(count, sx, sy, ax, ay, cx, cy, px, py, vx, vy, top):  # fmt: skip
    """Separation, alignment and cohesion of one agent from its pair sums, each with
    ``steer``'s non-finite clean-up (``kernels.separation_force``, ``alignment_force``,
    ``cohesion_force``; zero without neighbours)."""
    c = max(float(count), 1.0)
    if count > 0:
        fax, fay = ax / c - vx, ay / c - vy
        fcx, fcy = _seek(px, py, vx, vy, px + cx / c, py + cy / c, top)
    else:
        fax = fay = fcx = fcy = 0.0
    return (
        finite_or_zero(sx), finite_or_zero(sy), finite_or_zero(fax),
        finite_or_zero(fay), finite_or_zero(fcx), finite_or_zero(fcy),
    )  # fmt: skip


@inline
def _flock_out(
    r, i, count, sx, sy, ax, ay, cx, cy, pos, vel, max_speed,
    w_sep, w_ali, w_coh, out_sep, out_ali, out_coh,
):  # fmt: skip
    """The three flocking forces of row ``r`` (:func:`_flock_forces`), each weighted into its
    ``out``; a negative weight skips one."""
    fsx, fsy, fax, fay, fcx, fcy = _flock_forces(
        count, sx, sy, ax, ay, cx, cy, pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1], max_speed[i]
    )
    if w_sep >= 0.0:
        _put(out_sep, r, fsx, fsy, w_sep)
    if w_ali >= 0.0:
        _put(out_ali, r, fax, fay, w_ali)
    if w_coh >= 0.0:
        _put(out_coh, r, fcx, fcy, w_coh)


@kernel
def flock_sums(
    rows, local, offsets, sums, pos, vel, max_speed,
    w_sep, w_ali, w_coh, out_sep, out_ali, out_coh,
):  # fmt: skip
    """:func:`flock` from the per-observer sums the neighbour query already made."""
    for r in range(rows.shape[0]):
        g = local[r]
        _flock_out(
            r, rows[r], offsets[g + 1] - offsets[g], sums[g, 0], sums[g, 1], sums[g, 2],
            sums[g, 3], sums[g, 4], sums[g, 5], pos, vel, max_speed,
            w_sep, w_ali, w_coh, out_sep, out_ali, out_coh,
        )  # fmt: skip


@kernel
def obstacle_avoidance(
    rows, pos, vel, heading, max_speed, radius, obstacle_pos, obstacle_radius,
    min_length, braking_weight, weight, out,
):  # fmt: skip
    """Buckland's detection box (``kernels.obstacle_avoidance_force``), obstacle by obstacle."""
    m = obstacle_pos.shape[0]
    for r in range(rows.shape[0]):
        i = rows[r]
        px, py = pos[i, 0], pos[i, 1]
        hx, hy = normalize(heading[i, 0], heading[i, 1])
        speed = math.sqrt(vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1])
        top = max_speed[i]
        box = min_length * (1.0 + (speed / top if top > EPS else 0.0))
        best = np.inf
        k = -1
        for o in range(m):
            tx, ty = obstacle_pos[o, 0] - px, obstacle_pos[o, 1] - py
            lx = tx * hx + ty * hy
            ly = tx * -hy + ty * hx
            ro = obstacle_radius[o]
            expanded = ro + radius[i]
            if not (length(tx, ty) < box + ro and lx >= 0.0 and abs(ly) < expanded):
                continue
            root = math.sqrt(max(expanded * expanded - ly * ly, 0.0))
            ip = lx - root
            if ip <= 0.0:
                ip = lx + root
            if ip < best:
                best, k = ip, o
        if k < 0 or not math.isfinite(best):
            _put(out, r, 0.0, 0.0, weight)
            continue
        tx, ty = obstacle_pos[k, 0] - px, obstacle_pos[k, 1] - py
        cx = tx * hx + ty * hy
        cy = tx * -hy + ty * hx
        ce = obstacle_radius[k] + radius[i]
        multiplier = 1.0 + ((box - cx) / box if box > EPS else 0.0)
        lateral = (ce - abs(cy)) * multiplier * (-1.0 if cy > 0.0 else 1.0)
        braking = (obstacle_radius[k] - cx) * braking_weight
        _put(out, r, hx * braking + -hy * lateral, hy * braking + hx * lateral, weight)


@inline
def _power(x: float, e: float) -> float:
    """``x ** e`` with NumPy's exact shortcuts for the exponents 1, 2, 0.5, -1 and 0."""
    if e == 1.0:
        return x
    if e == 2.0:
        return x * x
    if e == 0.5:
        return math.sqrt(x)
    if e == -1.0:
        return 1.0 / x
    if e == 0.0:
        return 1.0
    return float(x**e)


@kernel
def lj_avoidance(
    rows, pos, heading, obstacle_pos, obstacle_radius, a, n_exp, b, m_exp, cutoff, weight, out,
):  # fmt: skip
    """Lennard-Jones repulsion (``kernels.lj_force``), summed over obstacles in order."""
    m = obstacle_pos.shape[0]
    for r in range(rows.shape[0]):
        i = rows[r]
        px, py = pos[i, 0], pos[i, 1]
        bx, by = normalize(heading[i, 0], heading[i, 1])
        fx = fy = 0.0
        for o in range(m):
            rx, ry = px - obstacle_pos[o, 0], py - obstacle_pos[o, 1]
            dist = length(rx, ry)
            if dist > EPS:
                ux, uy = normalize(rx, ry)
            else:
                ux, uy = -bx, -by
            if dist <= cutoff:
                dd = max(dist / max(obstacle_radius[o], EPS), LJ_MIN_D)
                u = -a / _power(dd, n_exp) + b / _power(dd, m_exp)
            else:
                u = 0.0
            fx += ux * u
            fy += uy * u
        _put(out, r, fx, fy, weight)


@kernel
def wall_avoidance(
    rows, pos, heading, wall_a, wall_b, wall_normal, front, rotations, weight, out,
):  # fmt: skip
    """Buckland's three feelers (``kernels.feeler_ends``, ``kernels.wall_avoidance_force``).

    ``rotations`` holds ``(cos, sin)`` of the left and right feelers' angles.
    """
    k_walls = wall_a.shape[0]
    for r in range(rows.shape[0]):
        i = rows[r]
        px, py = pos[i, 0], pos[i, 1]
        hx, hy = normalize(heading[i, 0], heading[i, 1])
        depth_best = -np.inf
        wall_best = 0
        for f in range(3):
            if f == 0:
                ex, ey = px + hx * front, py + hy * front
            else:
                c, s = rotations[f - 1, 0], rotations[f - 1, 1]
                ex = px + (c * hx - s * hy) * front * 0.5
                ey = py + (s * hx + c * hy) * front * 0.5
            rx, ry = ex - px, ey - py
            t_best = np.inf
            w_best = 0
            for w in range(k_walls):
                qx, qy = wall_a[w, 0], wall_a[w, 1]
                sx, sy = wall_b[w, 0] - qx, wall_b[w, 1] - qy
                denom = rx * sy - ry * sx
                ok = abs(denom) > EPS
                safe = denom if ok else 1.0
                qpx, qpy = qx - px, qy - py
                t = (qpx * sy - qpy * sx) / safe
                u = (qpx * ry - qpy * rx) / safe
                if ok and 0.0 <= t <= 1.0 and 0.0 <= u <= 1.0 and t < t_best:
                    t_best, w_best = t, w
            overshoot = 0.0
            if math.isfinite(t_best):
                overshoot = (1.0 - min(t_best, 1.0)) * length(rx, ry)
            if overshoot > depth_best:
                depth_best, wall_best = overshoot, w_best
        if k_walls == 0:
            _put(out, r, 0.0, 0.0, weight)
            continue
        nx, ny = wall_normal[wall_best, 0], wall_normal[wall_best, 1]
        facing = (px - wall_a[wall_best, 0]) * nx + (py - wall_a[wall_best, 1]) * ny
        flip = -1.0 if facing < 0.0 else 1.0
        _put(out, r, nx * flip * depth_best, ny * flip * depth_best, weight)


@kernel
def path_following(
    rows, local, pos, vel, max_speed, tvalid, points, cursor, seek_distance, looped, weight, out,
):  # fmt: skip
    """Buckland's FollowPath: advance the remembered waypoint, seek it (arrive at an open end)."""
    last = points.shape[0] - 1
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        c = min(max(cursor[i], 0), last)
        px, py, vx, vy = pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1]
        if length(points[c, 0] - px, points[c, 1] - py) < seek_distance:
            c = (c + 1) % points.shape[0] if looped else min(c + 1, last)
        cursor[i] = c
        if not tvalid[g]:
            _put(out, r, 0.0, 0.0, weight)
            continue
        tx, ty = points[c, 0], points[c, 1]
        if not looped and c == last:
            fx, fy = arrive_buckland(px, py, vx, vy, tx, ty, max_speed[i], 2.0, 0.0)  # normal
        else:
            fx, fy = _seek(px, py, vx, vy, tx, ty, max_speed[i])
        _put(out, r, fx, fy, weight)


@kernel
def containment(rows, pos, vel, low, high, margin, look_ahead, weight, out):
    """Probe ``look_ahead`` seconds ahead; push back to the area shrunk by ``margin``."""
    lo_x = min(low[0] + margin, (low[0] + high[0]) / 2.0)
    lo_y = min(low[1] + margin, (low[1] + high[1]) / 2.0)
    hi_x = max(high[0] - margin, (low[0] + high[0]) / 2.0)
    hi_y = max(high[1] - margin, (low[1] + high[1]) / 2.0)
    ahead = max(look_ahead, EPS)
    for r in range(rows.shape[0]):
        i = rows[r]
        qx = pos[i, 0] + vel[i, 0] * look_ahead
        qy = pos[i, 1] + vel[i, 1] * look_ahead
        cx = min(max(qx, lo_x), hi_x)
        cy = min(max(qy, lo_y), hi_y)
        _put(out, r, (cx - qx) / ahead, (cy - qy) / ahead, weight)


@kernel
def flock_blend(
    rows, local, offsets, sums, pos, vel, max_speed, max_force, kinds, weights, weight, out,
):  # fmt: skip
    """A ``blend`` whose children are all flocking leaves of one ``of``, in one pass:
    each child's weighted force (``kinds``: 0 separation, 1 alignment, 2 cohesion,
    in child order) from the query's sums, summed in child order, truncated at
    max_force, times the blend's ``weight``."""
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        fsx, fsy, fax, fay, fcx, fcy = _flock_forces(
            offsets[g + 1] - offsets[g], sums[g, 0], sums[g, 1], sums[g, 2], sums[g, 3],
            sums[g, 4], sums[g, 5], pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1], max_speed[i],
        )  # fmt: skip
        x = y = 0.0
        for c in range(kinds.shape[0]):
            k = kinds[c]
            if k == 0:
                x += fsx * weights[c]
                y += fsy * weights[c]
            elif k == 1:
                x += fax * weights[c]
                y += fay * weights[c]
            else:
                x += fcx * weights[c]
                y += fcy * weights[c]
        x, y = truncate(x, y, max_force[i])
        _put(out, r, x, y, weight)


# --------------------------------------------------------------- combiners
@kernel
def blend(forces, rows, max_force, weight, out):
    """Sum of the children's weighted forces in order, truncated at max_force, times ``weight``."""
    for r in range(rows.shape[0]):
        x = y = 0.0
        for c in range(forces.shape[0]):
            x += forces[c, r, 0]
            y += forces[c, r, 1]
        x, y = truncate(x, y, max_force[rows[r]])
        _put(out, r, x, y, weight)


@kernel
def prioritized_sum(forces, rows, max_force, weight, out):
    """Buckland's AccumulateForce over the children in order, times ``weight``."""
    for r in range(rows.shape[0]):
        x = y = 0.0
        top = max_force[rows[r]]
        for c in range(forces.shape[0]):
            x, y = accumulate(x, y, forces[c, r, 0], forces[c, r, 1], top)
        _put(out, r, x, y, weight)


@kernel
def first_nonzero(forces, rows, max_force, epsilon, weight, out):
    """The first child longer than ``epsilon``, truncated at max_force, times ``weight``."""
    for r in range(rows.shape[0]):
        x = y = 0.0
        for c in range(forces.shape[0]):
            fx, fy = forces[c, r, 0], forces[c, r, 1]
            if length(fx, fy) > epsilon:
                x, y = fx, fy
                break
        x, y = truncate(x, y, max_force[rows[r]])
        _put(out, r, x, y, weight)


@kernel
def prioritized_dither(forces, rows, max_force, rand, slot, chances, weight, out):
    """Buckland's prioritized dithering: in order, a child applies with its chance (scaled by
    ``1 / chance``); the first that applies and is non-zero wins."""
    for r in range(rows.shape[0]):
        i = rows[r]
        x = y = 0.0
        for c in range(forces.shape[0]):
            chance = chances[c]
            if chance <= 0.0:
                continue
            if not rand[i, slot + c] < chance:
                continue
            fx, fy = forces[c, r, 0] / chance, forces[c, r, 1] / chance
            if length(fx, fy) > 0.0:
                x, y = fx, fy
                break
        x, y = truncate(x, y, max_force[i])
        _put(out, r, x, y, weight)


@kernel
def requests(emitted):
    """The rows that asked for each steering leaf (``emitted``: agents x leaves): leaf ``k``'s
    ascending rows are ``rows[firsts[k]:firsts[k + 1]]``. Branch-free: every row is
    written, only those that asked advance (a later leaf's rows overwrite the rest)."""
    n, leaves = emitted.shape
    firsts = np.zeros(leaves + 1, dtype=np.int64)
    for a in range(n):
        for k in range(leaves):
            firsts[k + 1] += emitted[a, k]
    for k in range(leaves):
        firsts[k + 1] += firsts[k]
    rows = np.empty(firsts[leaves] + 1, dtype=np.int64)
    for k in range(leaves):
        at = firsts[k]
        for a in range(n):
            rows[at] = a
            at += emitted[a, k]
    return firsts, rows[: firsts[leaves]]


@kernel
def accumulate_rows(linear, rows, force, max_force):
    """``act``'s AccumulateForce of one leaf's weighted forces into the running totals, in place."""
    for r in range(rows.shape[0]):
        i = rows[r]
        linear[i, 0], linear[i, 1] = accumulate(
            linear[i, 0], linear[i, 1], force[r, 0], force[r, 1], max_force[i]
        )
