"""Kernels of the built-in targeted steering primitives: one loop over the rows that asked.

Each primitive kernel writes ``weight * force`` for its rows into ``out`` and
follows its NumPy twin in ``steering/kernels.py`` and ``steering/primitives.py``
operation by operation (comments name it), including ``steer``'s rules: rows
whose target is invalid get zero, non-finite numbers become zero. ``rows`` are
global agent rows (state arrays), ``local`` the same agents' rows within their
group (target facts are per group). Flocking, the shapes, wander, path
following and the combiners are written once as formulas and run in
``steering/flock_loops.py``, ``shape_loops.py``, ``memory_loops.py`` and
``combiner_loops.py``.
"""

from __future__ import annotations

import math

import numpy as np

from behaviortk.compiled.vec import EPS, length, normalize
from behaviortk.jit.compile import inline, kernel
from behaviortk.steering.formulas import DECELERATION_TWEAK
from behaviortk.steering.kernels import FACING_COS
from behaviortk.steering.row_loops import put as _put

LINEAR, CAPPED, INTERCEPT = 0, 1, 2
"""Predictor codes (``steering/predictors.py``)."""


# ----------------------------------------------------------------- helpers
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
