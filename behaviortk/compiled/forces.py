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
from behaviortk.steering.kernels import DECELERATION_TWEAK, FACING_COS, LJ_MIN_D

LINEAR, CAPPED, INTERCEPT = 0, 1, 2
"""Predictor codes (``steering/predictors.py``)."""


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


@inline
def _flee(
    px: float,
    py: float,
    vx: float,
    vy: float,
    tx: float,
    ty: float,
    top: float,
    hx: float,
    hy: float,
    fear: float,
):
    """``kernels.flee_force``: away at max speed (along the heading when on the threat)."""
    ax, ay = px - tx, py - ty
    dist = length(ax, ay)
    if dist > EPS:
        ux, uy = normalize(ax, ay)
    else:
        ux, uy = normalize(hx, hy)
    if dist > fear:
        return 0.0, 0.0
    return ux * top - vx, uy * top - vy


@inline
def _arrive_buckland(
    px: float,
    py: float,
    vx: float,
    vy: float,
    tx: float,
    ty: float,
    top: float,
    deceleration: float,
    tolerance: float,
):
    """``kernels.arrive_buckland``."""
    dx, dy = tx - px, ty - py
    dist = length(dx, dy)
    speed = min(dist / (deceleration * DECELERATION_TWEAK), top)
    if dist <= tolerance:
        speed = 0.0
    ux, uy = normalize(dx, dy)
    return ux * speed - vx, uy * speed - vy


@inline
def _linear_time(tox: float, toy: float, top: float, tvx: float, tvy: float) -> float:
    den = top + length(tvx, tvy)
    return length(tox, toy) / den if den > EPS else 0.0


@inline
def _intercept_time(tox: float, toy: float, top: float, tvx: float, tvy: float) -> float:
    """``predictors.intercept_time`` (nan when there is no positive root)."""
    a = (tvx * tvx + tvy * tvy) - top * top
    b = 2.0 * (tox * tvx + toy * tvy)
    c = tox * tox + toy * toy
    disc = b * b - 4.0 * a * c
    sq = math.sqrt(max(disc, 0.0))
    q = -0.5 * (b + (sq if b >= 0.0 else -sq))
    big_a = abs(a) > EPS
    r1 = q / a if big_a else (-c / b if b < -EPS else np.nan)
    r2 = (c / q if abs(q) > EPS else np.nan) if big_a else np.nan
    r1 = r1 if (disc >= 0.0 and r1 > 0.0) else np.inf
    r2 = r2 if (disc >= 0.0 and r2 > 0.0) else np.inf
    t = min(r1, r2)
    if c <= EPS * EPS:
        t = 0.0
    return t if math.isfinite(t) else np.nan


@inline
def _look_ahead(
    code: int,
    param: float,
    tox: float,
    toy: float,
    vx: float,
    vy: float,
    top: float,
    tvx: float,
    tvy: float,
) -> float:
    """``predictors.look_ahead`` for the built-in predictors: seconds, finite and >= 0."""
    if code == CAPPED:
        dist = length(tox, toy)
        speed = length(vx, vy)
        t = param if speed <= dist / param else dist / speed
    elif code == INTERCEPT:
        t = _intercept_time(tox, toy, top, tvx, tvy)
        if math.isnan(t):
            t = _linear_time(tox, toy, top, tvx, tvy)
    else:
        t = _linear_time(tox, toy, top, tvx, tvy)
    return t if (math.isfinite(t) and t > 0.0) else 0.0


@inline
def _target_heading(agent: int, heading: np.ndarray, tvx: float, tvy: float):
    """``primitives._target_heading``: the target agent's heading, else its velocity's direction."""
    if agent >= 0:
        return heading[agent, 0], heading[agent, 1]
    return normalize(tvx, tvy)


# -------------------------------------------------------------- primitives
@kernel
def flee(rows, local, pos, vel, heading, max_speed, tpos, tvalid, fear, weight, out):
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        if not tvalid[g]:
            _put(out, r, 0.0, 0.0, weight)
            continue
        fx, fy = _flee(
            pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1], tpos[g, 0], tpos[g, 1],
            max_speed[i], heading[i, 0], heading[i, 1], fear,
        )  # fmt: skip
        _put(out, r, fx, fy, weight)


@kernel
def arrive(
    rows, local, pos, vel, max_speed, mass, tpos, tvalid,
    buckland, deceleration, slowing_radius, tolerance, time_to_target, weight, out,
):  # fmt: skip
    """``primitives.arrive_force``: Buckland's preset, else Millington's (times the mass)."""
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        if not tvalid[g]:
            _put(out, r, 0.0, 0.0, weight)
            continue
        px, py, vx, vy = pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1]
        top = max_speed[i]
        if buckland:
            fx, fy = _arrive_buckland(
                px, py, vx, vy, tpos[g, 0], tpos[g, 1], top, deceleration, tolerance
            )
        else:
            dx, dy = tpos[g, 0] - px, tpos[g, 1] - py
            dist = length(dx, dy)
            if dist >= slowing_radius:
                speed = top
            else:
                speed = top * (dist / slowing_radius if slowing_radius > EPS else 0.0)
            if dist <= tolerance:
                speed = 0.0
            ux, uy = normalize(dx, dy)
            m = mass[i]
            fx = (ux * speed - vx) / time_to_target * m
            fy = (uy * speed - vy) / time_to_target * m
        _put(out, r, fx, fy, weight)


@kernel
def pursuit(
    rows, local, pos, vel, heading, max_speed, tpos, tvel, tagent, tvalid,
    by_velocity, predictor, param, weight, out,
):  # fmt: skip
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        if not tvalid[g]:
            _put(out, r, 0.0, 0.0, weight)
            continue
        px, py, vx, vy = pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1]
        hx, hy = heading[i, 0], heading[i, 1]
        tx, ty, tvx, tvy = tpos[g, 0], tpos[g, 1], tvel[g, 0], tvel[g, 1]
        tox, toy = tx - px, ty - py
        if by_velocity:
            direct = (tox * vx + toy * vy > 0.0) and (vx * tvx + vy * tvy < 0.95)
        else:
            ehx, ehy = _target_heading(tagent[g], heading, tvx, tvy)
            direct = (tox * hx + toy * hy > 0.0) and (hx * ehx + hy * ehy < FACING_COS)
        if direct:
            ax, ay = tx, ty
        else:
            t = _look_ahead(predictor, param, tox, toy, vx, vy, max_speed[i], tvx, tvy)
            ax, ay = tx + tvx * t, ty + tvy * t
        fx, fy = _seek(px, py, vx, vy, ax, ay, max_speed[i])
        _put(out, r, fx, fy, weight)


@inline
def _evade(px, py, vx, vy, hx, hy, top, tx, ty, tvx, tvy, predictor, param, threat):
    """``primitives.evade_force``: flee the predicted position, zero beyond ``threat``."""
    t = _look_ahead(predictor, param, tx - px, ty - py, vx, vy, top, tvx, tvy)
    fx, fy = _flee(px, py, vx, vy, tx + tvx * t, ty + tvy * t, top, hx, hy, np.inf)
    if length(tx - px, ty - py) > threat:
        return 0.0, 0.0
    return fx, fy


@kernel
def evade(
    rows, local, pos, vel, heading, max_speed, tpos, tvel, tvalid,
    predictor, param, threat, weight, out,
):  # fmt: skip
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        if not tvalid[g]:
            _put(out, r, 0.0, 0.0, weight)
            continue
        fx, fy = _evade(
            pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1], heading[i, 0], heading[i, 1],
            max_speed[i], tpos[g, 0], tpos[g, 1], tvel[g, 0], tvel[g, 1], predictor, param, threat,
        )  # fmt: skip
        _put(out, r, fx, fy, weight)


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
def velocity_match(rows, local, vel, mass, tvel, tvalid, time_to_target, weight, out):
    """Millington's VelocityMatch, ``(v_t - v) / time_to_target``, times the mass."""
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        if not tvalid[g]:
            _put(out, r, 0.0, 0.0, weight)
            continue
        fx = (tvel[g, 0] - vel[i, 0]) / time_to_target * mass[i]
        fy = (tvel[g, 1] - vel[i, 1]) / time_to_target * mass[i]
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
def hide(
    rows, local, pos, vel, heading, max_speed, tpos, tvel, tvalid,
    obstacle_pos, obstacle_radius, distance, threat, weight, out,
):  # fmt: skip
    """``primitives.hide``: arrive (fast) at the closest hiding spot; evade with no obstacles."""
    m = obstacle_pos.shape[0]
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        if not tvalid[g]:
            _put(out, r, 0.0, 0.0, weight)
            continue
        px, py, vx, vy = pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1]
        hunter_x, hunter_y = tpos[g, 0], tpos[g, 1]
        if m == 0:
            fx, fy = _evade(
                px, py, vx, vy, heading[i, 0], heading[i, 1], max_speed[i],
                hunter_x, hunter_y, tvel[g, 0], tvel[g, 1], LINEAR, 0.0, threat,
            )  # fmt: skip
            _put(out, r, fx, fy, weight)
            continue
        best = np.inf
        bx = by = 0.0
        for o in range(m):
            ox, oy = obstacle_pos[o, 0], obstacle_pos[o, 1]
            awx, awy = ox - hunter_x, oy - hunter_y
            if length(awx, awy) > EPS:
                ux, uy = normalize(awx, awy)
            else:
                ux, uy = normalize(px - ox, py - oy)
            reach = obstacle_radius[o] + distance
            sx, sy = ox + ux * reach, oy + uy * reach
            d2 = (sx - px) * (sx - px) + (sy - py) * (sy - py)
            if o == 0 or d2 < best:
                best, bx, by = d2, sx, sy
        fx, fy = _arrive_buckland(px, py, vx, vy, bx, by, max_speed[i], 1.0, 0.0)
        _put(out, r, fx, fy, weight)


@kernel
def interpose(
    rows, local, pos, vel, max_speed, apos, avel, avalid, bpos, bvel, bvalid,
    predictor, param, weight, out,
):  # fmt: skip
    """``primitives.interpose``: arrive (fast) at the predicted midpoint of two targets."""
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        if not (avalid[g] and bvalid[g]):
            _put(out, r, 0.0, 0.0, weight)
            continue
        px, py, vx, vy = pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1]
        mx, my = (apos[g, 0] + bpos[g, 0]) / 2.0, (apos[g, 1] + bpos[g, 1]) / 2.0
        mvx, mvy = (avel[g, 0] + bvel[g, 0]) / 2.0, (avel[g, 1] + bvel[g, 1]) / 2.0
        t = _look_ahead(predictor, param, mx - px, my - py, vx, vy, max_speed[i], mvx, mvy)
        ax = ((apos[g, 0] + avel[g, 0] * t) + (bpos[g, 0] + bvel[g, 0] * t)) / 2.0
        ay = ((apos[g, 1] + avel[g, 1] * t) + (bpos[g, 1] + bvel[g, 1] * t)) / 2.0
        fx, fy = _arrive_buckland(px, py, vx, vy, ax, ay, max_speed[i], 1.0, 0.0)
        _put(out, r, fx, fy, weight)


@kernel
def offset_pursuit(
    rows, local, pos, vel, heading, max_speed, tpos, tvel, tagent, tvalid,
    ox, oy, predictor, param, weight, out,
):  # fmt: skip
    """``primitives.offset_pursuit``: arrive (fast) where the leader's offset point will be."""
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        if not tvalid[g]:
            _put(out, r, 0.0, 0.0, weight)
            continue
        px, py, vx, vy = pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1]
        tvx, tvy = tvel[g, 0], tvel[g, 1]
        ehx, ehy = _target_heading(tagent[g], heading, tvx, tvy)
        hx, hy = normalize(ehx, ehy)
        if length(hx, hy) <= EPS:
            hx, hy = 1.0, 0.0
        wx = hx * ox + -hy * oy + tpos[g, 0]
        wy = hy * ox + hx * oy + tpos[g, 1]
        t = _look_ahead(predictor, param, wx - px, wy - py, vx, vy, max_speed[i], tvx, tvy)
        fx, fy = _arrive_buckland(
            px, py, vx, vy, wx + tvx * t, wy + tvy * t, max_speed[i], 1.0, 0.0
        )
        _put(out, r, fx, fy, weight)


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
            fx, fy = _arrive_buckland(px, py, vx, vy, tx, ty, max_speed[i], 2.0, 0.0)
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
