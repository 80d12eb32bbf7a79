"""Every steering primitive's per-row maths, written once over components.

A formula takes plain numbers or NumPy columns (``px, py`` the agent's position,
``tx, ty`` the target's, ...; the names are ``steering/declared.py``'s vocabulary) and
uses ``select`` where a row-by-row program would branch, so the NumPy path runs
it over whole columns and the compiled path calls the same function inside a
numba row loop (``behaviortk.jit`` registers every ``@formula``). Divisions are
guarded as ``vec.normalize_xy`` guards them: both sides of a ``select`` are
computed, so a formula picks its inputs before a square root or a division
rather than computing two and picking one (``vec.unit_or``); an ``if`` is only
on a bool that is the same for every row (a constant of the leaf, a world flag:
a literal in the compiled loop, ``steering/declared.py``), never on row data.

Sources as in ``steering/kernels.py``: Reynolds (1999), Buckland ch. 3,
Millington ch. 3.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.sense.derived_targets import nearest_hiding_spot
from behaviortk.sense.sensing import offset_point
from behaviortk.vec import EPS, formula, inlined, length_xy, normalize_xy, select, unit_or


@formula
def seek(px: Any, py: Any, vx: Any, vy: Any, tx: Any, ty: Any, top: Any) -> tuple[Any, Any]:
    """Reynolds/Buckland seek: ``normalize(target - pos) * max_speed - vel``."""
    ux, uy = normalize_xy(tx - px, ty - py)
    return ux * top - vx, uy * top - vy


# ---- targeted primitives and predictors
#: Buckland's DecelerationTweaker: desired speed = distance / (deceleration * 0.3).
DECELERATION_TWEAK = 0.3
#: Buckland's Deceleration enum: slow = 3, normal = 2, fast = 1.
DECELERATION = {"slow": 3.0, "normal": 2.0, "fast": 1.0}
FAST = DECELERATION["fast"]
"""Hide, interpose and offset pursuit arrive with Buckland's ``fast``."""
#: Pursuit's ``facing_test: velocity``: raw velocities' dot product below this counts as facing.
VELOCITY_FACING = 0.95


@formula
def beyond(px: Any, py: Any, tx: Any, ty: Any, limit: Any) -> Any:
    """The meaning of ``threat_range`` (evade, hide) and ``fear_distance`` (flee): the target
    farther than ``limit`` (null = ``inf``: never) leaves the agent alone, zero force."""
    return length_xy(px - tx, py - ty) > limit


@formula
def predicted(x: Any, y: Any, vx: Any, vy: Any, t: Any) -> tuple[Any, Any]:
    """Where a constant-velocity point will be after ``t`` seconds."""
    return x + vx * t, y + vy * t


@formula
def flee_from(
    px: Any, py: Any, vx: Any, vy: Any, hx: Any, hy: Any, tx: Any, ty: Any, top: Any
) -> tuple[Any, Any]:
    """Buckland's Flee without a range: ``normalize(pos - threat) * max_speed - vel``; an agent
    exactly on the threat flees along its heading instead of standing still."""
    ux, uy = unit_or(px - tx, py - ty, hx, hy)
    return ux * top - vx, uy * top - vy


@formula
def flee(
    px: Any, py: Any, vx: Any, vy: Any, hx: Any, hy: Any, tx: Any, ty: Any, top: Any,
    fear_distance: Any,
) -> tuple[Any, Any]:  # fmt: skip
    """Buckland's Flee: :func:`flee_from`, zero beyond ``fear_distance`` (his panic distance)."""
    fx, fy = flee_from(px, py, vx, vy, hx, hy, tx, ty, top)
    far = beyond(px, py, tx, ty, fear_distance)
    return select(far, 0.0, fx), select(far, 0.0, fy)


@formula
def buckland_speed(dist: Any, top: Any, deceleration: Any, tolerance: Any) -> Any:
    """Buckland's Arrive speed: ``min(dist / (deceleration * 0.3), max_speed)``, zero within
    ``tolerance`` (brake to a stop)."""
    speed = np.minimum(dist / (deceleration * DECELERATION_TWEAK), top)
    return select(dist <= tolerance, 0.0, speed)


@formula
def millington_speed(dist: Any, top: Any, slowing_radius: Any, tolerance: Any) -> Any:
    """Millington's Arrive speed (AI for Games 3.3.4): max speed outside ``slowing_radius``,
    ``max_speed * dist / slowing_radius`` inside, zero within ``tolerance``."""
    ok = slowing_radius > EPS
    ratio = select(ok, dist / select(ok, slowing_radius, 1.0), 0.0)
    speed = select(dist >= slowing_radius, top, top * ratio)
    return select(dist <= tolerance, 0.0, speed)


@formula
def arrive_buckland(
    px: Any, py: Any, vx: Any, vy: Any, tx: Any, ty: Any, top: Any, deceleration: Any,
    tolerance: Any,
) -> tuple[Any, Any]:  # fmt: skip
    """Buckland's Arrive: ``normalize(target - pos) * speed - vel`` (:func:`buckland_speed`)."""
    dx, dy = tx - px, ty - py
    speed = buckland_speed(length_xy(dx, dy), top, deceleration, tolerance)
    ux, uy = normalize_xy(dx, dy)
    return ux * speed - vx, uy * speed - vy


@formula
def arrive(
    px: Any, py: Any, vx: Any, vy: Any, tx: Any, ty: Any, top: Any, mass: Any, buckland: Any,
    deceleration: Any, slowing_radius: Any, tolerance: Any, time_to_target: Any,
) -> tuple[Any, Any]:  # fmt: skip
    """Arrive: Buckland's (:func:`arrive_buckland`) when ``buckland``, else Millington's
    acceleration ``(desired - vel) / time_to_target`` times the mass (so that ``a = F / m``
    is his number)."""
    if buckland:  # a constant of the leaf
        return arrive_buckland(px, py, vx, vy, tx, ty, top, deceleration, tolerance)
    dx, dy = tx - px, ty - py
    speed = millington_speed(length_xy(dx, dy), top, slowing_radius, tolerance)
    ux, uy = normalize_xy(dx, dy)
    return (ux * speed - vx) / time_to_target * mass, (uy * speed - vy) / time_to_target * mass


@formula
def pursuit(
    px: Any, py: Any, vx: Any, vy: Any, hx: Any, hy: Any, top: Any, tx: Any, ty: Any,
    tvx: Any, tvy: Any, thx: Any, thy: Any, ahead: Any, early_out: Any, by_velocity: Any,
    facing_threshold: Any,
) -> tuple[Any, Any, Any, Any]:  # fmt: skip
    """Buckland's Pursuit: seek the target's position ``ahead`` seconds on, or (``early_out``)
    its current one when it is ahead and facing us: unit headings' dot below
    ``facing_threshold``, or (``by_velocity``) raw velocities' dot below 0.95. Also the aim."""
    tox, toy = tx - px, ty - py
    by_heading = (tox * hx + toy * hy > 0.0) & (hx * thx + hy * thy < facing_threshold)
    by_vel = (tox * vx + toy * vy > 0.0) & (vx * tvx + vy * tvy < VELOCITY_FACING)
    direct = early_out & select(by_velocity, by_vel, by_heading)
    lx, ly = predicted(tx, ty, tvx, tvy, ahead)
    ax, ay = select(direct, tx, lx), select(direct, ty, ly)
    fx, fy = seek(px, py, vx, vy, ax, ay, top)
    return fx, fy, ax, ay


@formula
def evade(
    px: Any, py: Any, vx: Any, vy: Any, hx: Any, hy: Any, top: Any, tx: Any, ty: Any,
    tvx: Any, tvy: Any, ahead: Any, threat_range: Any,
) -> tuple[Any, Any, Any, Any]:  # fmt: skip
    """Buckland's Evade: flee where the pursuer will be ``ahead`` seconds on, zero while it
    is :func:`beyond` ``threat_range``. Also the aim."""
    ax, ay = predicted(tx, ty, tvx, tvy, ahead)
    fx, fy = flee_from(px, py, vx, vy, hx, hy, ax, ay, top)
    far = beyond(px, py, tx, ty, threat_range)
    return select(far, 0.0, fx), select(far, 0.0, fy), ax, ay


@formula
@inlined
def hide(
    px: Any, py: Any, vx: Any, vy: Any, hx: Any, hy: Any, top: Any, tx: Any, ty: Any,
    tvx: Any, tvy: Any, obstacle_pos: Any, obstacle_radius: Any, no_obstacles: Any,
    distance_from_boundary: Any, threat_range: Any,
) -> tuple[Any, Any, Any, Any]:  # fmt: skip
    """Buckland's Hide: arrive (fast) at the nearest hiding spot; with no obstacle in the
    world, his Evade (:func:`evade`, with his look-ahead :func:`linear_time`). Also the
    spot, or evade's aim."""
    if no_obstacles:  # a literal in the compiled loop: only one branch is compiled
        ahead = usable_time(linear_time(tx - px, ty - py, top, tvx, tvy))
        return evade(px, py, vx, vy, hx, hy, top, tx, ty, tvx, tvy, ahead, threat_range)
    sx, sy = nearest_hiding_spot(
        px, py, tx, ty, obstacle_pos, obstacle_radius, distance_from_boundary
    )
    fx, fy = arrive_buckland(px, py, vx, vy, sx, sy, top, FAST, 0.0)
    return fx, fy, sx, sy


@formula
def interpose_lead(
    tx: Any, ty: Any, tvx: Any, tvy: Any, ox: Any, oy: Any, ovx: Any, ovy: Any
) -> tuple[Any, Any, Any, Any]:
    """What interpose's predictor looks ahead to: the midpoint, at the mean velocity."""
    return (tx + ox) / 2.0, (ty + oy) / 2.0, (tvx + ovx) / 2.0, (tvy + ovy) / 2.0


@formula
def interpose(
    px: Any, py: Any, vx: Any, vy: Any, top: Any, tx: Any, ty: Any, tvx: Any, tvy: Any,
    ox: Any, oy: Any, ovx: Any, ovy: Any, ahead: Any,
) -> tuple[Any, Any, Any, Any]:  # fmt: skip
    """Buckland's Interpose: arrive (fast) at the midpoint of the two targets, each projected
    ``ahead`` seconds. Also the aim."""
    ax, ay = predicted(tx, ty, tvx, tvy, ahead)
    bx, by = predicted(ox, oy, ovx, ovy, ahead)
    mx, my = (ax + bx) / 2.0, (ay + by) / 2.0
    fx, fy = arrive_buckland(px, py, vx, vy, mx, my, top, FAST, 0.0)
    return fx, fy, mx, my


@formula
def offset_lead(
    tx: Any, ty: Any, tvx: Any, tvy: Any, thx: Any, thy: Any, offset_x: Any, offset_y: Any
) -> tuple[Any, Any, Any, Any]:
    """What offset pursuit's predictor looks ahead to: the leader's offset ``[ahead, left]``
    (``sensing.offset_point``), at the leader's velocity."""
    wx, wy = offset_point(tx, ty, thx, thy, offset_x, offset_y)
    return wx, wy, tvx, tvy


@formula
def offset_pursuit(
    px: Any, py: Any, vx: Any, vy: Any, top: Any, qx: Any, qy: Any, qvx: Any, qvy: Any,
    ahead: Any,
) -> tuple[Any, Any, Any, Any]:  # fmt: skip
    """Buckland's OffsetPursuit: arrive (fast) where the offset point (``offset_lead``) will
    be ``ahead`` seconds on. Also the aim."""
    ax, ay = predicted(qx, qy, qvx, qvy, ahead)
    fx, fy = arrive_buckland(px, py, vx, vy, ax, ay, top, FAST, 0.0)
    return fx, fy, ax, ay


@formula
def velocity_match(
    vx: Any, vy: Any, tvx: Any, tvy: Any, mass: Any, time_to_target: Any
) -> tuple[Any, Any]:
    """Millington's VelocityMatch, ``(v_target - v) / time_to_target``, times the mass."""
    return (tvx - vx) / time_to_target * mass, (tvy - vy) / time_to_target * mass


# predictors: seconds ahead for an agent (vx, vy, top) and a point at offset (tox, toy)
# moving at (tvx, tvy); see steering/predictors.py
@formula
def linear_time(tox: Any, toy: Any, top: Any, tvx: Any, tvy: Any) -> Any:
    """Buckland: ``|to_target| / (max_speed + |target_vel|)``; zero when both speeds are zero."""
    den = top + length_xy(tvx, tvy)
    ok = den > EPS
    return select(ok, length_xy(tox, toy) / select(ok, den, 1.0), 0.0)


@formula
def capped_time(tox: Any, toy: Any, vx: Any, vy: Any, max_prediction: Any) -> Any:
    """Millington: ``max_prediction`` if ``speed <= distance / max_prediction``, else distance / speed."""
    dist = length_xy(tox, toy)
    speed = length_xy(vx, vy)
    slow = speed <= dist / max_prediction
    return select(slow, max_prediction, dist / select(slow, 1.0, speed))


@formula
def intercept_time(tox: Any, toy: Any, top: Any, tvx: Any, tvy: Any) -> Any:
    """Smallest ``t > 0`` with ``|d + v t| = s t``: ``(v.v - s^2) t^2 + 2 (d.v) t + d.d = 0``.

    ``nan`` without a positive root; ``d = 0`` gives 0. Roots use the
    cancellation-free form ``q = -(b + sign(b) sqrt(disc)) / 2``.
    """
    a = (tvx * tvx + tvy * tvy) - top * top
    b = 2.0 * (tox * tvx + toy * tvy)
    c = tox * tox + toy * toy
    disc = b * b - 4.0 * a * c
    sq = np.sqrt(np.maximum(disc, 0.0))
    q = -0.5 * (b + select(b >= 0.0, sq, -sq))
    big_a = np.abs(a) > EPS
    big_q = np.abs(q) > EPS
    r1 = select(big_a, q / select(big_a, a, 1.0), np.nan)
    r2 = select(big_q, c / select(big_q, q, 1.0), np.nan)
    # a == 0 (equal speeds): b t + c = 0
    closing = b < -EPS
    lin = select(closing, -c / select(closing, b, 1.0), np.nan)
    r1 = select(big_a, r1, lin)
    r2 = select(big_a, r2, np.nan)
    r1 = select((disc >= 0.0) & (r1 > 0.0), r1, np.inf)
    r2 = select((disc >= 0.0) & (r2 > 0.0), r2, np.inf)
    t = select(c <= EPS * EPS, 0.0, np.minimum(r1, r2))
    return select(np.isfinite(t), t, np.nan)


@formula
def intercept_or_linear_time(tox: Any, toy: Any, top: Any, tvx: Any, tvy: Any) -> Any:
    """:func:`intercept_time`, falling back to :func:`linear_time` when the target cannot be caught."""
    t = intercept_time(tox, toy, top, tvx, tvy)
    return select(np.isnan(t), linear_time(tox, toy, top, tvx, tvy), t)


@formula
def usable_time(t: Any) -> Any:
    """A predictor's answer as a look-ahead: finite and positive, else 0."""
    return select(np.isfinite(t) & (t > 0.0), t, 0.0)
