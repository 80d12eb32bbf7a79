"""The maths of every steering primitive: pure functions on arrays.

Each function takes ``(n, 2)`` positions/velocities and ``(n,)`` per-agent
numbers for the ``n`` rows that asked, and returns forces ``(n, 2)`` (or
angular accelerations ``(n,)``). No state, no models, no Python loop over
agents: the registered adapters in ``primitives.py`` feed them from the
context. Every division is guarded, so zero vectors, coincident agents, zero
speed and ``d -> 0`` give finite numbers.

Force conventions follow the source of each formula: Reynolds/Buckland
behaviours return ``desired_velocity - velocity`` (Buckland, *Programming Game
AI by Example*, ch. 3), Millington's return an acceleration, which the
adapters multiply by the mass so that ``a = F / m`` is Millington's number.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from behaviortk.steering import formulas
from behaviortk.vec import (
    EPS,
    Array,
    coincident_direction,
    dot,
    from_angle,
    heading_angle,
    length,
    length_sq,
    normalize,
    perp,
    rotate,
    sum_by_owner,
    to_world,
    wrap_angle,
)

IntArray = NDArray[np.int64]

#: Smallest normalised distance used in the Lennard-Jones potential, so d -> 0 stays finite.
LJ_MIN_D = 1e-2
#: Distances shorter than this count as coincident in separation (push along a fixed direction).
MIN_SEPARATION = 1e-3
#: Stand-in for an unlimited rotation speed when it multiplies a ratio (inf * 0 would be NaN).
BIG = 1e9


def col(x: ArrayLike, n: int) -> Array:
    """Broadcast a scalar or ``(n,)`` per-agent number to ``(n,)`` floats."""
    return np.broadcast_to(np.asarray(x, dtype=np.float64), (n,)).astype(np.float64)


def _finite(x: Array) -> Array:
    return np.where(np.isfinite(x), x, BIG)


def _safe_div(num: Array, den: Array) -> Array:
    """``num / den`` where ``den > EPS``, else 0."""
    ok = den > EPS
    return np.where(ok, num / np.where(ok, den, 1.0), 0.0)


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
    """Buckland's wander step: add ``(2u - 1) * jitter * dt`` to each axis, re-project onto the circle.

    ``rand`` is ``(n, 2)`` uniform [0, 1). A target that lands exactly on the
    centre goes back to straight ahead.
    """
    step = (jitter * dt)[:, None]
    moved = local_target + (2.0 * rand - 1.0) * step
    unit = normalize(moved)
    unit[length(moved) <= EPS] = (1.0, 0.0)
    return unit * radius[:, None]


def wander_world_target(local_target: Array, distance: Array, pos: Array, heading: Array) -> Array:
    """The circle's target moved ``distance`` ahead along the heading, in world coordinates."""
    local = local_target.copy()
    local[:, 0] += distance
    return to_world(local, heading, pos)


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
    goal = np.where(size > slow, top, top * _safe_div(size, slow))
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
    """Buckland's Separation: sum over neighbours of ``normalize(-d) / |d|`` (``d = pos_j - pos_i``).

    ``owner`` is each pair's row in the output (0..n-1); ``i``/``j`` (global
    rows) pick a fixed push direction for coincident pairs. The force is in
    units of 1/distance, as in the book (whose weights are multiplied by 200).
    """
    d2 = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]
    # normalize(-d) / |d| == -d / |d|^2, with |d| floored at MIN_SEPARATION
    contrib = d * (-1.0 / np.maximum(d2, MIN_SEPARATION * MIN_SEPARATION))[:, None]
    if i is not None and j is not None:
        tiny = d2 <= EPS * EPS
        if tiny.any():
            contrib[tiny] = coincident_direction(i[tiny], j[tiny]) / MIN_SEPARATION
    return sum_by_owner(owner, contrib, n)


def alignment_force(owner: IntArray, neighbour_vel: Array, vel: Array) -> Array:
    """Alignment as velocity matching (Reynolds 1987): ``avg - v`` over the neighbours in view.

    Rows without neighbours get zero.
    """
    n = vel.shape[0]
    count = np.bincount(owner, minlength=n).astype(np.float64)
    avg = sum_by_owner(owner, neighbour_vel, n) / np.maximum(count, 1.0)[:, None]
    return np.where((count > 0)[:, None], avg - vel, 0.0)


def cohesion_force(
    owner: IntArray,
    d: Array,
    pos: Array,
    vel: Array,
    max_speed: ArrayLike,
    unit: bool = False,
) -> Array:
    """Buckland's Cohesion: seek the centre of mass of the neighbours (zero without neighbours).

    ``unit``: return ``normalize(seek)``, as the code accompanying Buckland's
    book does (a zero force stays zero).
    """
    n = pos.shape[0]
    count = np.bincount(owner, minlength=n).astype(np.float64)
    centre = pos + sum_by_owner(owner, d, n) / np.maximum(count, 1.0)[:, None]
    force = np.where((count > 0)[:, None], seek_force(pos, vel, centre, max_speed), 0.0)
    return normalize(force) if unit else force


def follow_velocity(owner: IntArray, neighbour_vel: Array, vel: Array) -> Array:
    """The mean velocity of each row's neighbours (``owner`` pairs); its own velocity without any.

    The follow of Bourg & Seemann-style flocking sets the velocity to this mean.
    """
    n = vel.shape[0]
    count = np.bincount(owner, minlength=n).astype(np.float64)
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
    speed: Array,
    max_speed: Array,
    radius: Array,
    obstacle_pos: Array,
    obstacle_radius: Array,
    min_length: ArrayLike = 40.0,
    braking_weight: float = 0.2,
) -> tuple[Array, Array]:
    """Buckland's ObstacleAvoidance (ch. 3): detection box ``min_length * (1 + speed / max_speed)``.

    Among obstacles within the box (tagged by ``|to| < box + r``, ahead,
    ``|local y| < r + own radius``), the one whose intersection with the local x
    axis is closest wins. Braking force ``(r - x) * braking_weight`` along the
    heading; lateral force ``(r + own radius - |y|) * (1 + (box - x) / box)`` away
    from the obstacle's side (the book's ``r - y`` pushes toward obstacles whose
    centre is on the +y side, so the sign is taken from ``y``; centred ones go
    to +y). Returns ``(force (n, 2), box length (n,))``.
    """
    n = pos.shape[0]
    box = col(min_length, n) * (1.0 + _safe_div(speed, max_speed))
    force = np.zeros((n, 2))
    if obstacle_pos.shape[0] == 0 or n == 0:
        return force, box
    side = perp(heading)
    to = obstacle_pos[None, :, :] - pos[:, None, :]  # (n, M, 2)
    lx = to[..., 0] * heading[:, None, 0] + to[..., 1] * heading[:, None, 1]
    ly = to[..., 0] * side[:, None, 0] + to[..., 1] * side[:, None, 1]
    r = obstacle_radius[None, :]
    expanded = r + radius[:, None]
    tagged = length(to) < box[:, None] + r
    hit = tagged & (lx >= 0.0) & (np.abs(ly) < expanded)
    root = np.sqrt(np.maximum(expanded * expanded - ly * ly, 0.0))
    ip = lx - root
    ip = np.where(ip <= 0.0, lx + root, ip)
    ip = np.where(hit, ip, np.inf)
    k = np.argmin(ip, axis=1)
    found = np.isfinite(ip[np.arange(n), k])
    cx = lx[np.arange(n), k]
    cy = ly[np.arange(n), k]
    cr = np.broadcast_to(r, lx.shape)[np.arange(n), k]
    ce = expanded[np.arange(n), k]
    multiplier = 1.0 + _safe_div(box - cx, box)
    lateral = (ce - np.abs(cy)) * multiplier * np.where(cy > 0.0, -1.0, 1.0)
    braking = (cr - cx) * braking_weight
    local = np.stack([braking, lateral], axis=1)
    force = np.where(found[:, None], to_world(local, heading), 0.0)
    return force, box


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
    """Lennard-Jones potential ``U = -A / d^n + B / d^m`` (Bourg & Seemann ch. 5).

    ``d`` is clamped at ``LJ_MIN_D`` so that ``d -> 0`` stays finite.
    """
    dd = np.maximum(np.asarray(d, dtype=np.float64), LJ_MIN_D)
    return -a / dd**n + b / dd**m


def lj_force(
    pos: Array,
    heading: Array,
    obstacle_pos: Array,
    obstacle_radius: Array,
    lj: LJConstants = LJ_DEFAULTS,
) -> Array:
    """Lennard-Jones repulsion: sum over obstacles within ``cutoff`` of ``U(|r| / R) * r / |r|``.

    ``lj.cutoff`` is a centre distance; the defaults are those of ``LJAvoidance``.

    ``r = pos - obstacle``; positive ``U`` repels. An agent on an obstacle's
    centre is pushed backwards along its heading.
    """
    rows = pos.shape[0]
    if obstacle_pos.shape[0] == 0 or rows == 0:
        return np.zeros((rows, 2))
    r = pos[:, None, :] - obstacle_pos[None, :, :]
    dist = length(r)
    unit = normalize(r)
    back = -normalize(heading)
    unit = np.where((dist > EPS)[..., None], unit, back[:, None, :])
    radius = np.maximum(obstacle_radius, EPS)[None, :]
    u = lj_potential(dist / radius, lj.a, lj.n, lj.b, lj.m)
    u = np.where(dist <= lj.cutoff, u, 0.0)
    return np.asarray((unit * u[..., None]).sum(axis=1))


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
    ``v = speed * normalize(v + U(|r| / R) * r / |r|)`` (``r = pos - obstacle``,
    ``U`` as :func:`lj_potential`). Rows near no obstacle keep their velocity.
    ``v + u = 0`` leaves at ``speed`` straight away from the obstacle; on an
    obstacle's centre ``r / |r|`` is minus the heading, as in :func:`lj_force`.
    The loop runs over obstacles near at least one row, never over agents.
    """
    rows = pos.shape[0]
    out = np.array(vel, dtype=np.float64, copy=True)
    if obstacle_pos.shape[0] == 0 or rows == 0:
        return out
    top = col(speed, rows)[:, None]
    back = -normalize(heading)
    r_all = pos[:, None, :] - obstacle_pos[None, :, :]
    near_all = length(r_all) <= lj.cutoff
    for k in np.flatnonzero(near_all.any(axis=0)).tolist():
        r = r_all[:, k, :]
        dist = length(r)
        unit = np.where((dist > EPS)[:, None], normalize(r), back)
        u = lj_potential(dist / max(float(obstacle_radius[k]), EPS), lj.a, lj.n, lj.b, lj.m)
        moved = out + unit * u[:, None]
        direction = np.where((length(moved) > EPS)[:, None], normalize(moved), unit)
        out = np.where(near_all[:, k, None], direction * top, out)
    return out


def feeler_ends(pos: Array, heading: Array, length_front: ArrayLike, side_angle: float) -> Array:
    """Buckland's three wall feelers (n, 3, 2): front, left and right (half length, +-angle)."""
    n = pos.shape[0]
    front = col(length_front, n)[:, None]
    h = normalize(heading)
    ends = [
        pos + h * front,
        pos + rotate(h, side_angle) * front * 0.5,
        pos + rotate(h, -side_angle) * front * 0.5,
    ]
    return np.stack(ends, axis=1)


def _cross(a: Array, b: Array) -> Array:
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def wall_avoidance_force(
    pos: Array, ends: Array, wall_a: Array, wall_b: Array, wall_normal: Array
) -> Array:
    """Buckland's WallAvoidance: for each feeler, the nearest wall it crosses pushes along its normal.

    Force = wall normal (turned to face the agent's side) * overshoot, the part
    of the feeler beyond the wall. Of the three feelers, the deepest overshoot
    wins (the book lets the last feeler with a hit overwrite the others).
    """
    n = pos.shape[0]
    if wall_a.shape[0] == 0 or n == 0:
        return np.zeros((n, 2))
    p = pos[:, None, None, :]  # (n, 1, 1, 2)
    r = ends[:, :, None, :] - p  # (n, 3, 1, 2)
    q = wall_a[None, None, :, :]  # (1, 1, K, 2)
    s = (wall_b - wall_a)[None, None, :, :]
    denom = _cross(r, s)  # (n, 3, K)
    qp = q - p
    ok = np.abs(denom) > EPS
    safe = np.where(ok, denom, 1.0)
    t = _cross(qp, s) / safe
    u = _cross(qp, r) / safe
    hit = ok & (t >= 0.0) & (t <= 1.0) & (u >= 0.0) & (u <= 1.0)
    t = np.where(hit, t, np.inf)
    k = np.argmin(t, axis=2)  # (n, 3) nearest wall per feeler
    t_best = np.take_along_axis(t, k[..., None], axis=2)[..., 0]
    feeler_len = length(r[:, :, 0, :])
    overshoot = np.where(np.isfinite(t_best), (1.0 - np.minimum(t_best, 1.0)) * feeler_len, 0.0)
    f = np.argmax(overshoot, axis=1)  # deepest feeler
    depth = overshoot[np.arange(n), f]
    wall = k[np.arange(n), f]
    normal = wall_normal[wall]
    facing = dot(pos - wall_a[wall], normal)
    normal = normal * np.where(facing < 0.0, -1.0, 1.0)[:, None]
    return normal * depth[:, None]


# ------------------------------------------------- paths and containment
def advance_waypoints(
    cursor: IntArray, pos: Array, points: Array, seek_distance: float, looped: bool
) -> IntArray:
    """Buckland's FollowPath step: move to the next waypoint once within ``seek_distance``.

    A looped path wraps to its first point; an open one stays on its last.
    """
    current = points[cursor]
    close = length(current - pos) < seek_distance
    last = points.shape[0] - 1
    nxt = (cursor + 1) % points.shape[0] if looped else np.minimum(cursor + 1, last)
    return np.where(close, nxt, cursor).astype(np.int64)


def containment_force(
    pos: Array, vel: Array, low: Array, high: Array, margin: float, look_ahead: float
) -> Array:
    """Stay inside the box ``[low, high]`` (Reynolds' containment, probe form).

    The probe ``pos + vel * look_ahead`` is compared with the box shrunk by
    ``margin``; when it is outside, the force is the velocity change that would
    put the probe back on the inner edge, ``(clamp(probe) - probe) / look_ahead``:
    it pushes inward along the edge normal, in proportion to the overshoot, and
    lets the tangential velocity slide along. Zero while the probe is inside.
    """
    mid = (low + high) / 2.0
    inner_low = np.minimum(low + margin, mid)
    inner_high = np.maximum(high - margin, mid)
    probe = pos + vel * look_ahead
    clamped = np.clip(probe, inner_low, inner_high)
    return np.asarray((clamped - probe) / max(look_ahead, EPS))
