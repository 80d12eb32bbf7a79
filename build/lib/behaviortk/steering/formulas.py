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
from behaviortk.vec import (
    EPS,
    formula,
    inlined,
    length_xy,
    maximum,
    minimum,
    normalize_xy,
    safe_div,
    select,
    truncate_xy,
    unit_or,
)


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


# ---- shapes, neighbours and combiners
# Sums over neighbour pairs, obstacles, walls, path points or a combiner's children stay
# in each path's own loop (NumPy: vectorised, bincount; compiled: ``flock_loops``,
# ``shape_loops``, ``memory_loops``, ``combiner_loops``), in the same order; the term of
# each pair, obstacle, wall or child is one of these. ``if`` appears only on a leaf's
# constant (a number on both paths), never on a row's data.

#: Smallest normalised distance used in the Lennard-Jones potential, so d -> 0 stays finite.
LJ_MIN_D = 1e-2


# flocking: per pair, then per row from the pairs' sums
@formula
def alignment(count: Any, ax: Any, ay: Any, vx: Any, vy: Any) -> tuple[Any, Any]:
    """Alignment as velocity matching (Reynolds 1987): the mean of the ``count`` neighbours'
    velocities (their sum ``ax, ay``) minus our own; zero without neighbours."""
    c = maximum(count, 1.0)
    some = count > 0
    return select(some, ax / c - vx, 0.0), select(some, ay / c - vy, 0.0)


@formula
def cohesion(
    count: Any, cx: Any, cy: Any, px: Any, py: Any, vx: Any, vy: Any, top: Any
) -> tuple[Any, Any]:
    """Buckland's Cohesion: seek the centre of mass of the ``count`` neighbours (``cx, cy``: the
    sum of their offsets); zero without neighbours."""
    c = maximum(count, 1.0)
    fx, fy = seek(px, py, vx, vy, px + cx / c, py + cy / c, top)
    some = count > 0
    return select(some, fx, 0.0), select(some, fy, 0.0)


# obstacle avoidance: per obstacle, then the nearest hit
@formula
def detection_box(vx: Any, vy: Any, top: Any, min_length: Any) -> Any:
    """Buckland's detection box length: ``min_length * (1 + speed / max_speed)``."""
    return min_length * (1.0 + safe_div(length_xy(vx, vy), top))


@formula
def obstacle_near(
    px: Any, py: Any, hx: Any, hy: Any, radius: Any, box: Any, ox: Any, oy: Any, orad: Any
) -> Any:
    """Whether the obstacle at ``(ox, oy)`` (radius ``orad``) is in the detection box: tagged
    (``|to| < box + orad``), ahead, and within ``orad + radius`` of the box's axis.
    ``(hx, hy)``: the unit heading."""
    tx, ty = ox - px, oy - py
    lx = tx * hx + ty * hy
    ly = tx * -hy + ty * hx
    return (length_xy(tx, ty) < box + orad) & (lx >= 0.0) & (np.abs(ly) < orad + radius)


@formula
def obstacle_hit(
    px: Any, py: Any, hx: Any, hy: Any, radius: Any, box: Any, ox: Any, oy: Any, orad: Any
) -> Any:
    """How far ahead the obstacle meets the box's axis (its intersection with the circle of
    radius ``orad + radius``); infinite unless :func:`obstacle_near`."""
    tx, ty = ox - px, oy - py
    lx = tx * hx + ty * hy
    ly = tx * -hy + ty * hx
    expanded = orad + radius
    root = np.sqrt(maximum(expanded * expanded - ly * ly, 0.0))
    ip = lx - root
    ip = select(ip <= 0.0, lx + root, ip)
    near = obstacle_near(px, py, hx, hy, radius, box, ox, oy, orad)
    return select(near, ip, np.inf)


@formula
def obstacle_push(
    px: Any, py: Any, hx: Any, hy: Any, radius: Any, box: Any, ox: Any, oy: Any, orad: Any,
    braking_weight: Any, hit: Any,
) -> tuple[Any, Any]:  # fmt: skip
    """Buckland's avoidance force from the obstacle hit nearest (``hit``: its
    :func:`obstacle_hit`; infinite: none, zero force): braking ``(orad - x) * braking_weight``
    along the heading, lateral ``(orad + radius - |y|) * (1 + (box - x) / box)`` away from
    its side (a centred one goes to +y)."""
    tx, ty = ox - px, oy - py
    cx = tx * hx + ty * hy
    cy = tx * -hy + ty * hx
    multiplier = 1.0 + safe_div(box - cx, box)
    lateral = (orad + radius - np.abs(cy)) * multiplier * select(cy > 0.0, -1.0, 1.0)
    braking = (orad - cx) * braking_weight
    found = np.isfinite(hit)
    return (
        select(found, hx * braking + -hy * lateral, 0.0),
        select(found, hy * braking + hx * lateral, 0.0),
    )


# Lennard-Jones: per obstacle, summed
@formula
def power(x: Any, e: Any) -> Any:
    """``x ** e`` with NumPy's exact shortcuts for the exponents 1, 2, 0.5, -1 and 0 (``e`` is
    a leaf's constant). Others: ``**``, NumPy's on columns, the C library's in a compiled
    loop; they may differ in the last bit (so the two paths' LJ traces may)."""
    if e == 1.0:
        return x
    if e == 2.0:
        return x * x
    if e == 0.5:
        return np.sqrt(x)
    if e == -1.0:
        return 1.0 / x
    if e == 0.0:
        return 1.0
    return x**e


@formula
def lj_potential(d: Any, a: Any, n: Any, b: Any, m: Any) -> Any:
    """Lennard-Jones potential ``U = -A / d^n + B / d^m`` (Bourg & Seemann ch. 5), ``d``
    clamped at ``LJ_MIN_D`` so that ``d -> 0`` stays finite."""
    dd = maximum(d, LJ_MIN_D)
    return -a / power(dd, n) + b / power(dd, m)


@formula
def away_from(px: Any, py: Any, ox: Any, oy: Any, bx: Any, by: Any) -> tuple[Any, Any, Any]:
    """``r / |r|`` and ``|r|`` for ``r = pos - obstacle``; on the obstacle's centre the
    direction is ``(bx, by)`` (minus the unit heading: backwards)."""
    rx, ry = px - ox, py - oy
    dist = length_xy(rx, ry)
    ux, uy = normalize_xy(rx, ry)
    away = dist > EPS
    return select(away, ux, bx), select(away, uy, by), dist


@formula
def lj_term(
    px: Any, py: Any, bx: Any, by: Any, ox: Any, oy: Any, orad: Any,
    a: Any, n: Any, b: Any, m: Any, cutoff: Any,
) -> tuple[Any, Any]:  # fmt: skip
    """One obstacle's Lennard-Jones push ``U(|r| / R) * r / |r|`` (:func:`away_from`, ``R``
    its radius), zero beyond ``cutoff`` (a centre distance)."""
    ux, uy, dist = away_from(px, py, ox, oy, bx, by)
    u = select(dist <= cutoff, lj_potential(dist / maximum(orad, EPS), a, n, b, m), 0.0)
    return ux * u, uy * u


# wall avoidance: three feelers, per wall, the deepest crossing
@formula
def feelers(
    px: Any, py: Any, hx: Any, hy: Any, front: Any, lc: Any, ls: Any, rc: Any, rs: Any
) -> tuple[Any, Any, Any, Any, Any, Any]:
    """Buckland's three feelers' ends: ``front`` long along the unit heading, and half as long
    turned by the side angles (cosine, sine: ``lc, ls`` left, ``rc, rs`` right)."""
    return (
        px + hx * front,
        py + hy * front,
        px + (lc * hx - ls * hy) * front * 0.5,
        py + (ls * hx + lc * hy) * front * 0.5,
        px + (rc * hx - rs * hy) * front * 0.5,
        py + (rs * hx + rc * hy) * front * 0.5,
    )


@formula
def wall_crossing(px: Any, py: Any, ex: Any, ey: Any, ax: Any, ay: Any, bx: Any, by: Any) -> Any:
    """Where along the feeler from ``(px, py)`` to ``(ex, ey)`` (0 to 1) it crosses the wall
    from ``(ax, ay)`` to ``(bx, by)``; infinite when it does not (parallel ones do not)."""
    rx, ry = ex - px, ey - py
    sx, sy = bx - ax, by - ay
    denom = rx * sy - ry * sx
    qx, qy = ax - px, ay - py
    ok = np.abs(denom) > EPS
    safe = select(ok, denom, 1.0)
    t = (qx * sy - qy * sx) / safe
    u = (qx * ry - qy * rx) / safe
    hit = ok & (t >= 0.0) & (t <= 1.0) & (u >= 0.0) & (u <= 1.0)
    return select(hit, t, np.inf)


@formula
def overshoot(px: Any, py: Any, ex: Any, ey: Any, t: Any) -> Any:
    """How much of the feeler lies beyond the wall it crosses first at ``t`` (0: none)."""
    return select(np.isfinite(t), (1.0 - minimum(t, 1.0)) * length_xy(ex - px, ey - py), 0.0)


@formula
def wall_push(px: Any, py: Any, ax: Any, ay: Any, nx: Any, ny: Any, depth: Any) -> tuple[Any, Any]:
    """The wall's normal, turned to the agent's side of it, times the feeler's ``depth``."""
    facing = (px - ax) * nx + (py - ay) * ny
    flip = select(facing < 0.0, -1.0, 1.0)
    return nx * flip * depth, ny * flip * depth


# paths and wander: per row, with the leaf's remembered state
@formula
def on_path(cursor: Any, count: Any) -> Any:
    """A remembered waypoint index kept on a path of ``count`` points."""
    return minimum(maximum(cursor, 0), count - 1)


@formula
def next_waypoint(
    cursor: Any, px: Any, py: Any, points_x: Any, points_y: Any,
    seek_distance: Any, count: Any, looped: Any,
) -> Any:  # fmt: skip
    """Buckland's FollowPath step: the waypoint to seek of ``count``, once within
    ``seek_distance`` of waypoint ``cursor`` (at ``points_x, points_y``) the next (a looped
    path wraps to its first, an open one stays on its last)."""
    close = length_xy(points_x - px, points_y - py) < seek_distance
    nxt = select(looped, (cursor + 1) % count, minimum(cursor + 1, count - 1))
    return select(close, nxt, cursor)


@formula
def path_force(
    px: Any, py: Any, vx: Any, vy: Any, wx: Any, wy: Any, top: Any,
    cursor: Any, count: Any, looped: Any, deceleration: Any,
) -> tuple[Any, Any]:  # fmt: skip
    """FollowPath's force toward waypoint ``cursor`` at ``(wx, wy)``: seek it, or arrive
    (Buckland's ``deceleration``, the book's normal) when it is the last of an open path."""
    finished = select(looped, False, cursor == count - 1)
    sx, sy = seek(px, py, vx, vy, wx, wy, top)
    ax, ay = arrive_buckland(px, py, vx, vy, wx, wy, top, deceleration, 0.0)
    return select(finished, ax, sx), select(finished, ay, sy)


@formula
def containment(
    px: Any, py: Any, vx: Any, vy: Any, x0: Any, y0: Any, x1: Any, y1: Any,
    margin: Any, look_ahead: Any,
) -> tuple[Any, Any]:  # fmt: skip
    """Reynolds' containment, probe form: when the probe ``pos + vel * look_ahead`` is outside
    the area ``[x0, x1] x [y0, y1]`` shrunk by ``margin`` (to its middle at most), the
    velocity change that puts it back on the inner edge, ``(clamp(probe) - probe) /
    look_ahead``: inward, in proportion to the overshoot, sliding along the edge; else zero."""
    qx = px + vx * look_ahead
    qy = py + vy * look_ahead
    mx, my = (x0 + x1) / 2.0, (y0 + y1) / 2.0
    cx = minimum(maximum(qx, minimum(x0 + margin, mx)), maximum(x1 - margin, mx))
    cy = minimum(maximum(qy, minimum(y0 + margin, my)), maximum(y1 - margin, my))
    ahead = maximum(look_ahead, EPS)
    return (cx - qx) / ahead, (cy - qy) / ahead


@formula
def wander_step(lx: Any, ly: Any, u0: Any, u1: Any, step: Any, radius: Any) -> tuple[Any, Any]:
    """Buckland's wander step: the circle's target ``(lx, ly)`` (local; non-finite: new, straight
    ahead) moves by ``(2u - 1) * step`` on each axis (``u`` uniform [0, 1)) and goes back onto
    the circle; one landing on the centre goes back to straight ahead."""
    ok = np.isfinite(lx) & np.isfinite(ly)
    mx = select(ok, lx, radius) + (2.0 * u0 - 1.0) * step
    my = select(ok, ly, 0.0) + (2.0 * u1 - 1.0) * step
    ux, uy = normalize_xy(mx, my)
    centre = length_xy(mx, my) <= EPS
    return select(centre, 1.0, ux) * radius, select(centre, 0.0, uy) * radius


@formula
def wander_target(
    lx: Any, ly: Any, distance: Any, px: Any, py: Any, hx: Any, hy: Any
) -> tuple[Any, Any]:
    """The circle's target moved ``distance`` ahead along the unit heading, in world
    coordinates (``vec.to_world``)."""
    ax = lx + distance
    return hx * ax + -hy * ly + px, hy * ax + hx * ly + py


# combiners: per child, in order
@formula
def accumulate(rx: Any, ry: Any, fx: Any, fy: Any, max_force: Any) -> tuple[Any, Any]:
    """Buckland's AccumulateForce: add ``(fx, fy)`` to the running ``(rx, ry)`` up to what is
    left of ``max_force`` (whole if shorter, else truncated; nothing once it is spent)."""
    remaining = maximum(max_force - length_xy(rx, ry), 0.0)
    tx, ty = truncate_xy(fx, fy, remaining)
    return rx + tx, ry + ty


@formula
def longer_than(fx: Any, fy: Any, epsilon: Any) -> Any:
    """Priority arbitration's test (``first_nonzero``; ``prioritized_dither`` with 0)."""
    return length_xy(fx, fy) > epsilon


@formula
def dither(fx: Any, fy: Any, u: Any, chance: Any) -> tuple[Any, Any, Any]:
    """Buckland's prioritized dithering, one child: it applies with probability ``chance``
    (``u`` uniform [0, 1)) and is scaled by ``1 / chance``."""
    return fx / chance, fy / chance, u < chance
