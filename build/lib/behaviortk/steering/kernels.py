"""The maths of every steering primitive: pure functions on arrays.

Each function takes ``(n, 2)`` positions/velocities and ``(n,)`` per-agent
numbers for the ``n`` rows that asked, and returns forces ``(n, 2)`` (or
angular accelerations ``(n,)``). No state, no models, no Python loop over
agents: the registered adapters in ``primitives.py`` feed them from the
context. Where a primitive also runs compiled, its per-row (per-pair,
per-obstacle, per-wall) maths is a formula of ``formulas.py`` and the function
here is its array form: the columns in, the rows' sums or choices (``bincount``,
``argmin``) around it. Every division is guarded, so zero vectors, coincident
agents, zero speed and ``d -> 0`` give finite numbers.

Force conventions follow the source of each formula: Reynolds/Buckland
behaviours return ``desired_velocity - velocity`` (Buckland, *Programming Game
AI by Example*, ch. 3), Millington's return an acceleration, which the
adapters multiply by the mass so that ``a = F / m`` is Millington's number.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from behaviortk import vec
from behaviortk.steering import formulas
from behaviortk.vec import (
    EPS,
    Array,
    dot,
    from_angle,
    heading_angle,
    length,
    length_sq,
    normalize,
    perp,
    safe_div,
    sum_by_owner,
    wrap_angle,
    xy,
)

IntArray = NDArray[np.int64]

#: Stand-in for an unlimited rotation speed when it multiplies a ratio (inf * 0 would be NaN).
BIG = 1e9


def col(x: ArrayLike, n: int) -> Array:
    """Broadcast a scalar or ``(n,)`` per-agent number to ``(n,)`` floats."""
    return np.broadcast_to(np.asarray(x, dtype=np.float64), (n,)).astype(np.float64)


def _finite(x: Array) -> Array:
    return np.where(np.isfinite(x), x, BIG)


# ------------------------------------------------------------- seek family
def seek_force(pos: Array, vel: Array, target: Array, max_speed: ArrayLike) -> Array:
    """Reynolds/Buckland seek on ``(n, 2)`` rows (``formulas.seek``)."""
    n = pos.shape[0]
    px, py = pos.T
    vx, vy = vel.T
    tx, ty = target.T
    fx, fy = formulas.seek(px, py, vx, vy, tx, ty, col(max_speed, n))
    return np.stack([fx, fy], axis=1)


# ---------------------------------------------------------------- wander
def wander_jitter(
    local_target: Array, rand: Array, jitter: Array, dt: float, radius: Array
) -> Array:
    """Buckland's wander step on ``(n, 2)`` local targets (``formulas.wander_step``; a
    non-finite one starts straight ahead). ``rand`` is ``(n, 2)`` uniform [0, 1)."""
    lx, ly = formulas.wander_step(
        local_target[:, 0], local_target[:, 1], rand[:, 0], rand[:, 1], jitter * dt, radius
    )
    return np.stack([lx, ly], axis=1)


def wander_world_target(local_target: Array, distance: Array, pos: Array, heading: Array) -> Array:
    """The circle's target moved ``distance`` ahead along the heading, in world coordinates."""
    x, y = formulas.wander_target(*xy(local_target), distance, *xy(pos), *xy(heading))
    return np.stack([x, y], axis=1)


def random_binomial(rand: Array) -> Array:
    """Millington's ``randomBinomial()``: ``random() - random()``, in (-1, 1), most often near 0.

    ``rand`` is ``(n, 2)`` uniform [0, 1); the result is ``(n,)``.
    """
    return np.asarray(rand[:, 0] - rand[:, 1])


def wander_orientation_step(angle: Array, rand: Array, rate: ArrayLike, dt: float) -> Array:
    """Millington's wander update ``wanderOrientation += randomBinomial() * wanderRate``.

    ``rate`` is in radians per second and is multiplied by ``dt`` (Millington's
    rate is per call, i.e. per tick); the angle is kept in (-pi, pi].
    """
    n = angle.shape[0]
    return np.asarray(wrap_angle(angle + random_binomial(rand) * col(rate, n) * dt))


def wander_orientation_target(
    pos: Array, facing: Array, angle: Array, distance: Array, radius: Array
) -> tuple[Array, Array]:
    """Millington's wander target: ``(centre, target)`` in world coordinates.

    Centre = ``pos + distance * asVector(facing)``; target = centre + ``radius *
    asVector(facing + angle)``; ``facing`` and the wander ``angle`` in radians.
    """
    centre = pos + from_angle(facing) * distance[:, None]
    return centre, centre + from_angle(facing + angle) * radius[:, None]


# ------------------------------------------------------------- rotation
def align_angular(
    orientation: Array,
    rotation: Array,
    target_orientation: Array,
    max_rotation: ArrayLike,
    max_angular: ArrayLike,
    target_radius: ArrayLike,
    slow_radius: ArrayLike,
    time_to_target: ArrayLike,
) -> Array:
    """Millington's Align (AI for Games 3.3.5): angular acceleration toward ``target_orientation``.

    Target rotation is max rotation outside ``slow_radius`` (radians), scaled
    by ``angle / slow_radius`` inside, and zero within ``target_radius`` (where
    Millington returns no steering we aim for zero rotation, so the character
    settles instead of drifting); clamped to ``max_angular``.
    """
    n = orientation.shape[0]
    diff = wrap_angle(target_orientation - orientation)
    size = np.abs(diff)
    top = _finite(col(max_rotation, n))
    slow = col(slow_radius, n)
    goal = np.where(size > slow, top, top * safe_div(size, slow))
    goal = np.where(size < col(target_radius, n), 0.0, goal) * np.sign(diff)
    angular = (goal - rotation) / col(time_to_target, n)
    limit = col(max_angular, n)
    return np.clip(angular, -limit, limit)


def face_orientation(pos: Array, target: Array, orientation: Array) -> Array:
    """Millington's Face: the angle of ``target - pos``; the current orientation when on the target."""
    to = target - pos
    return np.where(length(to) > EPS, heading_angle(to), orientation)


def travel_orientation(vel: Array, orientation: Array) -> Array:
    """Look where you are going: the angle of the velocity; unchanged when not moving."""
    return np.where(length(vel) > EPS, heading_angle(vel), orientation)


# -------------------------------------------------------------- flocking
def separation_force(
    owner: IntArray, d: Array, n: int, i: IntArray | None = None, j: IntArray | None = None
) -> Array:
    """Buckland's Separation: the sum over neighbours of ``vec.separation_term``
    (``d = pos_j - pos_i``).

    ``owner`` is each pair's row in the output (0..n-1); ``i``/``j`` (global
    rows) give coincident pairs their ``vec.coincident_push``. The force is in
    units of 1/distance, as in the book (whose weights are multiplied by 200).
    """
    tx, ty = vec.separation_term(d[:, 0], d[:, 1])
    if i is not None and j is not None:
        tiny = vec.coincident(d[:, 0], d[:, 1])
        if tiny.any():
            tx[tiny], ty[tiny] = vec.coincident_push(i[tiny], j[tiny])
    return sum_by_owner(owner, np.stack([tx, ty], axis=1), n)


def _count(owner: IntArray, n: int) -> Array:
    return np.bincount(owner, minlength=n).astype(np.float64)


def alignment_force(owner: IntArray, neighbour_vel: Array, vel: Array) -> Array:
    """Alignment (``formulas.alignment``) from the neighbours' velocities, summed per row."""
    n = vel.shape[0]
    total = sum_by_owner(owner, neighbour_vel, n)
    fx, fy = formulas.alignment(_count(owner, n), *xy(total), *xy(vel))
    return np.stack([fx, fy], axis=1)


def cohesion_force(
    owner: IntArray,
    d: Array,
    pos: Array,
    vel: Array,
    max_speed: ArrayLike,
    unit: bool = False,
) -> Array:
    """Buckland's Cohesion (``formulas.cohesion``) from the neighbours' offsets, summed per row.

    ``unit``: return ``normalize(seek)``, as the code accompanying Buckland's
    book does (a zero force stays zero).
    """
    n = pos.shape[0]
    total = sum_by_owner(owner, d, n)
    fx, fy = formulas.cohesion(_count(owner, n), *xy(total), *xy(pos), *xy(vel), col(max_speed, n))
    force = np.stack([fx, fy], axis=1)
    return normalize(force) if unit else force


def follow_velocity(owner: IntArray, neighbour_vel: Array, vel: Array) -> Array:
    """The mean velocity of each row's neighbours (``owner`` pairs); its own velocity without any.

    The follow of Bourg & Seemann-style flocking sets the velocity to this mean.
    """
    n = vel.shape[0]
    count = _count(owner, n)
    mean = sum_by_owner(owner, neighbour_vel, n) / np.maximum(count, 1.0)[:, None]
    return np.where((count > 0)[:, None], mean, vel)


def velocity_change_force(new_vel: Array, vel: Array, mass: ArrayLike, dt: float) -> Array:
    """The force that changes ``vel`` into ``new_vel`` in one step: ``m (v_new - v) / dt``.

    How a primitive that sets the velocity (``follow``, ``lj_avoidance`` with
    ``update: velocity``) joins the force pipeline: with ``a = F / m`` and
    ``v += a dt`` it gives ``new_vel`` exactly when nothing truncates it.
    """
    n = vel.shape[0]
    return (new_vel - vel) * (col(mass, n) / max(dt, EPS))[:, None]


# ---------------------------------------------------- neighbour avoidance
#: OpenSteer's steerToAvoidNeighbors: headings' dot product above this is "parallel",
#: below its negative "head on", between them "perpendicular" (its 0.707f).
PARALLEL_COS = 0.707


def _first_per_owner(owner: IntArray, key: Array, picked: np.ndarray) -> IntArray:
    """Index of the pair with the smallest ``key`` per owner among ``picked`` pairs.

    Ties keep the earlier pair (pairs come in neighbour-row order). Returns one
    pair index per owner that has a picked pair, owners ascending.
    """
    idx = np.flatnonzero(picked)
    if idx.size == 0:
        return idx
    order = idx[np.lexsort((key[idx], owner[idx]))]  # lexsort is stable
    o = owner[order]
    first = np.ones(order.size, dtype=bool)
    first[1:] = o[1:] != o[:-1]
    return order[first]


def avoid_neighbours_force(
    owner: IntArray,
    d: Array,
    vel: Array,
    heading: Array,
    max_speed: ArrayLike,
    other_vel: Array,
    other_heading: Array,
    contact: Array,
    horizon: float,
) -> tuple[Array, Array, NDArray[np.bool_]]:
    """OpenSteer's steerToAvoidNeighbors (Reynolds' unaligned collision avoidance), per row.

    Pairs: ``owner`` (row 0..n-1 of ``vel``/``heading``), ``d = pos_j - pos_i``,
    the neighbour's velocity and unit heading, and ``contact`` = the sum of the
    two radii. First, a neighbour overlapping now (``|d| < contact``) pushes
    straight sideways, along the part of ``-d`` across our heading: the nearest
    such neighbour (one dead ahead or behind has no such part and is left to
    the prediction).
    Otherwise, for each neighbour the time of closest approach is
    ``t = (v_j - v_i) . (-d) / |v_j - v_i|^2`` (0 for equal velocities); it is a
    threat when ``0 <= t < horizon`` and the predicted distance ``|d + (v_j -
    v_i) t|`` is below ``contact``; the soonest threat is avoided by steering
    along ``side = perp(heading)`` or its opposite: head on (headings' dot
    below -0.707) away from where the threat will be (``d + v_j t``), parallel
    (above 0.707) away from where it is (``d``), perpendicular behind it
    (against the side its velocity points to), and then only if it is not
    faster than us. A dot of exactly 0 with ``side`` steers to ``+side`` (left).

    The force is that unit direction times ``max_speed`` (a desired lateral
    velocity, sized like seek's). Returns ``(force (n, 2), the threat's offset
    from us (n, 2): where it will be at closest approach, or where an
    overlapping neighbour is, rows steering (n,))``.
    """
    n = vel.shape[0]
    force = np.zeros((n, 2))
    aim = np.zeros((n, 2))
    found = np.zeros(n, dtype=bool)
    if owner.size == 0:
        return force, aim, found
    top = col(max_speed, n)
    h_i = np.take(heading, owner, axis=0)
    v_i = np.take(vel, owner, axis=0)
    dist2 = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]
    # the soonest predicted collision
    rel = other_vel - v_i
    rs2 = rel[:, 0] * rel[:, 0] + rel[:, 1] * rel[:, 1]
    t = np.where(rs2 > 0.0, -dot(rel, d) / np.where(rs2 > 0.0, rs2, 1.0), 0.0)
    gap = d + rel * t[:, None]
    threat = (t >= 0.0) & (t < horizon) & (length_sq(gap) < contact * contact)
    pick = _first_per_owner(owner, t, threat)
    if pick.size:
        rows = owner[pick]
        h, hj = h_i[pick], other_heading[pick]
        side = perp(h)
        parallelness = dot(h, hj)
        ahead_at = d[pick] + other_vel[pick] * t[pick][:, None]  # the threat at closest approach
        head_on = (parallelness < -PARALLEL_COS)[:, None]
        away = np.where(dot(np.where(head_on, ahead_at, d[pick]), side) > 0.0, -1.0, 1.0)
        behind = np.where(dot(side, other_vel[pick]) > 0.0, -1.0, 1.0)
        not_faster = length(other_vel[pick]) <= length(v_i[pick])
        perpendicular = np.abs(parallelness) <= PARALLEL_COS
        steer = np.where(perpendicular, np.where(not_faster, behind, 0.0), away)
        force[rows] = side * (steer * top[rows])[:, None]
        aim[rows] = ahead_at
        found[rows] = steer != 0.0
    # overlapping now: first priority
    lateral = -d + h_i * dot(d, h_i)[:, None]  # the part of -d across our heading
    close = (dist2 < contact * contact) & (length_sq(lateral) > EPS * EPS)
    near = _first_per_owner(owner, dist2, close)
    if near.size:
        rows = owner[near]
        force[rows] = normalize(lateral[near]) * top[rows][:, None]
        aim[rows] = d[near]
        found[rows] = True
    return force, aim, found


# ------------------------------------------------------------- obstacles
def obstacle_avoidance_force(
    pos: Array,
    heading: Array,
    vel: Array,
    max_speed: Array,
    radius: Array,
    obstacle_pos: Array,
    obstacle_radius: Array,
    min_length: float = 40.0,
    braking_weight: float = 0.2,
) -> tuple[Array, Array]:
    """Buckland's ObstacleAvoidance (ch. 3) on ``(n, 2)`` rows, ``heading`` unit: each
    obstacle's ``formulas.obstacle_hit`` (rows x obstacles), the nearest hit's
    ``formulas.obstacle_push`` (ties: the first obstacle). Returns ``(force (n, 2), box
    length (n,))`` (``formulas.detection_box``).
    """
    n = pos.shape[0]
    px, py = pos.T
    hx, hy = heading.T
    box = formulas.detection_box(vel[:, 0], vel[:, 1], max_speed, min_length)
    if obstacle_pos.shape[0] == 0 or n == 0:
        return np.zeros((n, 2)), box
    ox, oy = obstacle_pos.T
    ip = formulas.obstacle_hit(
        px[:, None], py[:, None], hx[:, None], hy[:, None], radius[:, None], box[:, None],
        ox[None, :], oy[None, :], obstacle_radius[None, :],
    )  # fmt: skip
    k = np.argmin(ip, axis=1)
    hit = ip[np.arange(n), k]
    fx, fy = formulas.obstacle_push(
        px, py, hx, hy, radius, box, ox[k], oy[k], obstacle_radius[k], braking_weight, hit
    )
    return np.stack([fx, fy], axis=1), box


def detection_box_corners(pos: Array, heading: Array, box: Array, radius: Array) -> Array:
    """The four corners (n, 4, 2) of the detection box, for the debug overlay."""
    side = perp(heading)
    near_l = pos + side * radius[:, None]
    near_r = pos - side * radius[:, None]
    ahead = heading * box[:, None]
    return np.stack([near_l, near_l + ahead, near_r + ahead, near_r], axis=1)


@dataclass(frozen=True)
class LJConstants:
    """``lj_avoidance``'s constants, defaults as the node's: ``U = -a / d^n + b / d^m``,
    obstacles whose centre is farther than ``cutoff`` ignored (the kernels and the heat map)."""

    a: float = 0.0
    b: float = 20.0
    n: float = 1.0
    m: float = 2.5
    cutoff: float = 40.0


LJ_DEFAULTS = LJConstants()


def lj_potential(d: ArrayLike, a: float, n: float, b: float, m: float) -> Array:
    """``formulas.lj_potential`` of distances ``d`` (in obstacle radii)."""
    return np.asarray(formulas.lj_potential(np.asarray(d, dtype=np.float64), a, n, b, m))


def lj_force(
    pos: Array,
    heading: Array,
    obstacle_pos: Array,
    obstacle_radius: Array,
    lj: LJConstants = LJ_DEFAULTS,
) -> Array:
    """Lennard-Jones repulsion: the sum over obstacles of ``formulas.lj_term`` (rows x
    obstacles, summed over the obstacles in order). ``lj.cutoff`` is a centre distance; the
    defaults are those of ``LJAvoidance``.
    """
    rows = pos.shape[0]
    if obstacle_pos.shape[0] == 0 or rows == 0:
        return np.zeros((rows, 2))
    back = -normalize(heading)
    tx, ty = formulas.lj_term(
        pos[:, 0, None], pos[:, 1, None], back[:, 0, None], back[:, 1, None],
        obstacle_pos[None, :, 0], obstacle_pos[None, :, 1], obstacle_radius[None, :],
        lj.a, lj.n, lj.b, lj.m, lj.cutoff,
    )  # fmt: skip
    return np.asarray(np.stack([tx, ty], axis=-1).sum(axis=1))


def lj_velocity(
    pos: Array,
    vel: Array,
    heading: Array,
    obstacle_pos: Array,
    obstacle_radius: Array,
    speed: ArrayLike,
    lj: LJConstants = LJ_DEFAULTS,
) -> Array:
    """The potential function's velocity update, one obstacle after another.

    For each obstacle in order whose centre is within ``cutoff``:
    ``v = speed * normalize(v + U(|r| / R) * r / |r|)`` (``formulas.lj_term``).
    Rows near no obstacle keep their velocity. ``v + u = 0`` leaves at ``speed``
    straight away from the obstacle (``r / |r|``, minus the heading on its centre).
    The loop runs over obstacles near at least one row, never over agents.
    """
    rows = pos.shape[0]
    out = np.array(vel, dtype=np.float64, copy=True)
    if obstacle_pos.shape[0] == 0 or rows == 0:
        return out
    top = col(speed, rows)[:, None]
    px, py = pos.T
    bx, by = (-normalize(heading)).T
    near_all = length(pos[:, None, :] - obstacle_pos[None, :, :]) <= lj.cutoff
    for k in np.flatnonzero(near_all.any(axis=0)).tolist():
        ox, oy, orad = obstacle_pos[k, 0], obstacle_pos[k, 1], obstacle_radius[k]
        unit = np.stack(formulas.away_from(px, py, ox, oy, bx, by)[:2], axis=1)
        push = formulas.lj_term(px, py, bx, by, ox, oy, orad, lj.a, lj.n, lj.b, lj.m, np.inf)
        moved = out + np.stack(push, axis=1)
        direction = np.where((length(moved) > EPS)[:, None], normalize(moved), unit)
        out = np.where(near_all[:, k, None], direction * top, out)
    return out


def side_turns(side_angle: float) -> tuple[float, float, float, float]:
    """``(cos, sin)`` of the left and right feelers' angles, ``+-side_angle``, as ``vec.rotate``
    computes them."""
    a = np.asarray(side_angle, dtype=np.float64)
    return float(np.cos(a)), float(np.sin(a)), float(np.cos(-a)), float(np.sin(-a))


def feeler_ends(pos: Array, heading: Array, length_front: ArrayLike, side_angle: float) -> Array:
    """Buckland's three wall feelers (n, 3, 2): front, left and right (``formulas.feelers``)."""
    n = pos.shape[0]
    h = normalize(heading)
    ends = formulas.feelers(*xy(pos), *xy(h), col(length_front, n), *side_turns(side_angle))
    return np.stack(ends, axis=1).reshape(n, 3, 2)


def wall_avoidance_force(
    pos: Array, ends: Array, wall_a: Array, wall_b: Array, wall_normal: Array
) -> Array:
    """Buckland's WallAvoidance: for each feeler the nearest wall it crosses
    (``formulas.wall_crossing``, feelers x walls; ties: the first wall), and of the three
    the one that overshoots deepest (``formulas.overshoot``; ties: the first feeler) pushes
    along that wall's normal (``formulas.wall_push``; the book lets the last feeler with a
    hit overwrite the others).
    """
    n = pos.shape[0]
    if wall_a.shape[0] == 0 or n == 0:
        return np.zeros((n, 2))
    px, py = pos[:, 0, None], pos[:, 1, None]
    ex, ey = ends[..., 0], ends[..., 1]  # (n, 3)
    t = formulas.wall_crossing(
        px[..., None], py[..., None], ex[..., None], ey[..., None],
        wall_a[:, 0], wall_a[:, 1], wall_b[:, 0], wall_b[:, 1],
    )  # fmt: skip
    k = np.argmin(t, axis=2)  # t: (n, 3, K); k: (n, 3), the nearest wall per feeler
    t_best = np.take_along_axis(t, k[..., None], axis=2)[..., 0]
    depths = formulas.overshoot(px, py, ex, ey, t_best)
    f = np.argmax(depths, axis=1)  # deepest feeler
    rows = np.arange(n)
    wall = k[rows, f]
    fx, fy = formulas.wall_push(
        pos[:, 0], pos[:, 1], *xy(wall_a[wall]), *xy(wall_normal[wall]), depths[rows, f]
    )
    return np.stack([fx, fy], axis=1)


# ------------------------------------------------------------------ paths
def advance_waypoints(
    cursor: IntArray, pos: Array, points: Array, seek_distance: float, looped: bool
) -> IntArray:
    """Buckland's FollowPath step on ``(n,)`` waypoint indices (``formulas.next_waypoint``)."""
    current = points[cursor]
    nxt = formulas.next_waypoint(
        cursor, *xy(pos), *xy(current), seek_distance, points.shape[0], looped
    )
    return np.asarray(nxt, dtype=np.int64)
