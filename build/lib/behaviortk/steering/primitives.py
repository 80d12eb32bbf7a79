"""Steering primitives: one format model and one registered adapter each.

The model documents every parameter (unit, default). A model that declares
``ROWS`` has its per-row maths in one formula (``formulas.py``) that both the
NumPy path (:func:`by_rows`) and the compiled one run (``declared.py``);
the others' adapter reads the context for the rows that asked and calls the
pure kernel in ``kernels.py``.
Sources: Craig Reynolds, "Steering Behaviors For Autonomous Characters" (GDC
1999) and "Flocks, Herds, and Schools" (SIGGRAPH 1987); Mat Buckland,
*Programming Game AI by Example* (2005), ch. 3 "How to Create Autonomous
Agents"; Ian Millington, *AI for Games* (3rd ed., 2019), ch. 3 "Movement";
David M. Bourg & Glenn Seemann, *AI for Game Developers* (O'Reilly 2004),
ch. 4 "Flocking" and ch. 5 "Potential Function-Based Movement". Each model's
docstring names the section it follows and says where a default departs from it.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from behaviortk.format.fields import (
    Parameterisable,
    PDegrees,
    PNonNeg,
    Point,
    PPoint,
    PPositive,
    doc,
)
from behaviortk.format.limits import MAX_LJ_EXPONENT, MIN_POSITIVE
from behaviortk.format.nodes import NodeModel, Predictor, Target
from behaviortk.registry import Registries, tag_of
from behaviortk.sense.sensing import Sense, target_heading
from behaviortk.steering import formulas as f
from behaviortk.steering import kernels as k
from behaviortk.steering.context import Steering, SteeringContext
from behaviortk.steering.declared import WORLD_FLAGS, Rows, columns
from behaviortk.steering.predictors import Linear
from behaviortk.vec import Array, from_angle, heading_angle, length, normalize, xy
from behaviortk.world.state import World

PCosine = Annotated[float, Field(ge=-1, le=1, allow_inf_nan=False), Parameterisable()]
"""A dot product of unit vectors, -1 to 1 (or a ``$param`` reference in a tree as written)."""

WEIGHT_DOC = "Multiplies this leaf's force before it is combined with the agent's other requests"


class SteeringModel(NodeModel):
    """Base of steering leaves: every one has a weight."""

    weight: PNonNeg = doc(WEIGHT_DOC, 1.0)


class TargetedModel(SteeringModel):
    target: Target = doc("What to steer relative to")


# ----------------------------------------------------------------- helpers
def rows_of(declared: Rows, p: Any, ctx: SteeringContext) -> tuple[Array, Array | None]:
    """``declared``'s formula on the columns of the context's rows: forces and the point
    the formula returns after them, if any (``declared.columns``)."""
    target = ctx.target_facts() if declared.targeted else None
    heading = None
    if target is not None and declared.target_heading:
        heading = target_heading(ctx.agents, target)
    other = ctx.resolve(p.other) if declared.other else None
    return columns(
        declared, p, ctx.agents, ctx.rows, target, heading, other, ctx.world, ctx.sense.registries
    )


def by_rows(p: Any, ctx: SteeringContext) -> Steering:
    """A primitive declared by ``ROWS``: its formula on the columns of the context's rows,
    its point drawn as ``ROWS.draw`` when debug geometry is on."""
    declared: Rows = type(p).ROWS
    force, point = rows_of(declared, p, ctx)
    if declared.draw is not None and point is not None and ctx.debug.enabled:
        ctx.debug.add(declared.draw, ctx.rows, point=point)
    return Steering(force)


def reach(limit: float | None) -> float:
    """A range field (``fear_distance``, ``threat_range``; what it means: ``formulas.beyond``)
    as the formulas take it: null is no limit."""
    return np.inf if limit is None else float(limit)


def _buckland_arrive(ctx: SteeringContext, point: Array, preset: str) -> Array:
    """Buckland's Arrive (``formulas.arrive_buckland``) at ``point`` for the context's rows."""
    pos, vel = ctx.pos, ctx.vel
    fx, fy = f.arrive_buckland(
        pos[:, 0], pos[:, 1], vel[:, 0], vel[:, 1], point[:, 0], point[:, 1],
        ctx.per_agent("max_speed"), f.DECELERATION[preset], 0.0,
    )  # fmt: skip
    return np.stack([fx, fy], axis=1)


# -------------------------------------------------------------- seek, flee
class Seek(TargetedModel):
    """Head for the target at full speed (Reynolds; Buckland ch. 3 "Seek")."""

    type: Literal["seek"] = "seek"
    ROWS: ClassVar[Rows] = Rows(f.seek)


class Flee(TargetedModel):
    """Run from the target at full speed while it is within the fear distance.

    Buckland ch. 3 "Flee": ``normalize(pos - target) * max_speed - vel``, and
    zero force beyond his "panic distance" of 100 units.
    """

    type: Literal["flee"] = "flee"
    fear_distance: PNonNeg | None = doc(
        "Beyond this distance from the target the force is zero (null = always flee); "
        "100 is Buckland's panic distance",
        100.0,
        unit="world units",
    )
    ROWS: ClassVar[Rows] = Rows(f.flee, lambda p: {"fear_distance": reach(p.fear_distance)})


# ------------------------------------------------------------------ arrive
class Arrive(TargetedModel):
    """Seek that slows down to stop on the target.

    Two speed profiles: ``deceleration`` null (default) is Millington's (full
    speed outside ``slowing_radius``, proportional inside, reached within
    ``time_to_target``); a preset ``slow``/``normal``/``fast`` is Buckland's
    ``speed = distance / (k * 0.3)`` with k = 3/2/1 (no slowing radius: the
    speed is capped by max speed). Within ``tolerance`` the agent brakes to a
    stop and the leaf reports SUCCESS.
    """

    type: Literal["arrive"] = "arrive"
    deceleration: Literal["slow", "normal", "fast"] | None = doc(
        "Buckland's deceleration preset; null uses Millington's slowing_radius and time_to_target",
        None,
    )
    slowing_radius: PNonNeg = doc(
        "Millington: start slowing down within this distance", 100.0, unit="world units"
    )
    tolerance: PNonNeg = doc(
        "Arrived (SUCCESS, brake to a stop) within this distance", 1.0, unit="world units"
    )
    time_to_target: PPositive = doc(
        "Millington: time over which to reach the desired velocity", 0.1, unit="s"
    )
    ROWS: ClassVar[Rows] = Rows(
        f.arrive,
        lambda p: {
            "buckland": p.deceleration is not None,
            "deceleration": f.DECELERATION[p.deceleration] if p.deceleration else 1.0,
            "slowing_radius": float(p.slowing_radius),
            "tolerance": float(p.tolerance),
            "time_to_target": float(p.time_to_target),
        },
    )


def arrive_done(p: Arrive, sense: Sense, group: str, memory: Any) -> np.ndarray:
    """Where arrive is done (SUCCESS): within ``tolerance`` of a valid target."""
    rows = sense.rows(group)
    facts = sense.target(p.target, group)
    return np.asarray(length(facts.pos - sense.agents.pos[rows]) <= p.tolerance, dtype=bool)


# ---------------------------------------------------------- pursuit, evade
class Pursuit(TargetedModel):
    """Seek where the target will be (Reynolds 1999; Buckland ch. 3 "Pursuit").

    If the target is ahead and facing us (``facing_test: heading``, Buckland's
    early out: headings' dot product below ``facing_threshold``, -0.95 in the
    book, about 18 degrees) seek its current position; otherwise seek the
    position the ``predictor`` foresees (by default Buckland's look-ahead,
    distance / (max speed + target speed)).
    ``facing_test: none`` is Millington's Pursue (ch. 3 "Pursue"), which has no
    early out and always seeks the predicted position; pair it with the
    ``capped`` predictor for his look-ahead (distance / own speed, at most
    ``max_prediction``).
    ``facing_test: velocity`` is a variant of Buckland's test on raw
    velocities instead of unit headings (``dot(to_target, v) > 0`` and
    ``dot(v, v_target) < 0.95``), so it also seeks directly whenever the target
    is ahead and not moving fast in our direction.
    """

    type: Literal["pursuit"] = "pursuit"
    predictor: Predictor = doc("How far ahead to aim", default_factory=Linear)
    facing_test: Literal["heading", "velocity", "none"] = doc(
        "Early-out test: 'heading' (Buckland ch. 3: target ahead and the unit headings' dot "
        "product below facing_threshold: seek its current position), 'velocity' (a variant "
        "of Buckland's test on raw velocities instead of unit headings, dot < 0.95) or 'none' "
        '(Millington ch. 3 "Pursue": no early out, always aim at the predicted position)',
        "heading",
    )
    facing_threshold: PCosine = doc(
        "facing_test 'heading': the target faces us when the dot product of the two unit "
        "headings is below this (-1 = exactly head-on; Buckland's -0.95 is within about 18 "
        "degrees of head-on)",
        -0.95,
    )
    ROWS: ClassVar[Rows] = Rows(
        f.pursuit,
        lambda p: {
            "early_out": p.facing_test != "none",
            "by_velocity": p.facing_test == "velocity",
            "facing_threshold": float(p.facing_threshold),
        },
        draw="crosshair",
    )


class Evade(TargetedModel):
    """Flee where the pursuer will be, while it is within the threat range (Buckland ch. 3 "Evade").

    Buckland's Evade has no facing test; his code ignores pursuers farther
    than a threat range of 100 units.
    """

    type: Literal["evade"] = "evade"
    predictor: Predictor = doc("How far ahead to look", default_factory=Linear)
    threat_range: PNonNeg | None = doc(
        "Zero force while the pursuer is farther than this (null = always)",
        100.0,
        unit="world units",
    )
    ROWS: ClassVar[Rows] = Rows(
        f.evade, lambda p: {"threat_range": reach(p.threat_range)}, draw="crosshair"
    )


# ------------------------------------------------------------------ wander
class Wander(SteeringModel):
    """A target on a circle ahead of the agent that drifts at random every tick.

    ``method: jitter`` (default) is Reynolds' (1999) and Buckland's (ch. 3
    "Wander"): the target moves by up to ``jitter`` per second on each axis and
    is put back onto the circle. Defaults are Buckland's (WanderRad 1.2,
    WanderDist 2.0, WanderJitterPerSec 80), measured in agent radii by
    default, as Buckland's own overlay scales the circle by the vehicle's
    bounding radius: the same numbers then look alike at any world scale.
    ``method: orientation`` is Millington's (ch. 3 "Wander"): the target's
    angle on the circle, relative to the way the agent faces, changes every
    tick by randomBinomial() * rate (random() - random(), in (-1, 1) and most
    often near 0). Millington adds his wanderRate per call, that is per tick;
    here ``rate`` is per second and multiplied by the tick's dt, as Buckland's
    jitter is, so the largest change per second does not depend on the tick
    rate. Millington gives no numbers: the circle keeps the ``radius`` and
    ``distance`` above, and ``rate`` 720 degrees per second (at most 12
    degrees a tick at 60 ticks a second) is ours.
    ``steer`` says how to reach the target: ``face`` is Millington's own (turn
    the orientation toward the target, with his Align parameters below, and
    accelerate fully along the orientation: force ``max_force`` along it);
    ``seek`` seeks the target at max speed, the other form Millington offers
    (seek, and look where you are going), so the force is comparable to
    seek's; ``displacement`` returns Buckland's ``target - position``. The
    circle is ahead along the agent's orientation with ``face`` and along its
    heading (direction of travel) otherwise. Null: the method's source form,
    ``face`` for ``orientation``, and ``seek`` for ``jitter`` (where Buckland
    returns the displacement, whose size grows with the circle rather than
    with the agent's speed).
    Uses two random numbers per tick (the scenario's seeded stream).
    """

    type: Literal["wander"] = "wander"
    random_numbers: ClassVar[int] = 2
    method: Literal["jitter", "orientation"] = doc(
        "How the target drifts: 'jitter' (Reynolds, Buckland ch. 3: a random step on each axis, "
        "put back on the circle) or 'orientation' (Millington ch. 3: a random binomial change "
        "of its angle on the circle)",
        "jitter",
    )
    radius: PNonNeg = doc("Radius of the wander circle", 1.2, unit="agent radii (see units)")
    distance: PNonNeg = doc(
        "How far ahead of the agent the circle's centre is", 2.0, unit="agent radii (see units)"
    )
    jitter: PNonNeg = doc(
        "method 'jitter': largest random move of the target per second, per axis",
        80.0,
        unit="agent radii per second (see units)",
    )
    rate: PNonNeg = doc(
        "method 'orientation': largest change of the target's angle on the circle per second "
        "(Millington's wanderRate, per second here rather than per tick)",
        720.0,
        unit="degrees per second",
    )
    units: Literal["agent_radius", "world"] = doc(
        "Unit of radius, distance and jitter: the agent's radius or world units", "agent_radius"
    )
    steer: Literal["seek", "displacement", "face"] | None = doc(
        "'seek': seek the wander target at max speed; 'displacement': Buckland's target - "
        "position; 'face': Millington's, face the target and accelerate fully along the "
        "orientation. Null: 'face' for method 'orientation', 'seek' for 'jitter'",
        None,
    )
    target_radius: PDegrees = doc(
        "steer 'face': within this angle of the target's direction the rotation is brought to rest",
        2.0,
        unit="degrees",
    )
    slow_radius: PDegrees = doc(
        "steer 'face': start slowing the rotation within this angle", 30.0, unit="degrees"
    )
    time_to_target: PPositive = doc(
        "steer 'face': time over which to reach the goal rotation", 0.1, unit="s"
    )

    @property
    def steering(self) -> str:
        """The ``steer`` in effect: the field, or the method's source form when it is null."""
        if self.steer is not None:
            return self.steer
        return "face" if self.method == "orientation" else "seek"


def _wander_target(p: Wander, ctx: SteeringContext, ahead: Array, scale: Array) -> Array:
    """This tick's wander target (world), its memory updated; ``ahead`` is the way the agent faces."""
    radius = p.radius * scale
    distance = p.distance * scale
    if p.method == "orientation":
        memory = ctx.state("wander_angle", (), fill=0.0)
        rate = np.radians(p.rate)
        angle = k.wander_orientation_step(memory[ctx.rows], ctx.rand[:, :2], rate, ctx.dt)
        memory[ctx.rows] = angle
        facing = heading_angle(ahead)
        centre, target = k.wander_orientation_target(ctx.pos, facing, angle, distance, radius)
    else:
        memory = ctx.state("wander_target", (2,), fill=np.nan)  # nan: not started
        local = k.wander_jitter(memory[ctx.rows], ctx.rand[:, :2], p.jitter * scale, ctx.dt, radius)
        memory[ctx.rows] = local
        target = k.wander_world_target(local, distance, ctx.pos, ahead)
        centre = ctx.pos + ahead * distance[:, None]
    if ctx.debug.enabled:
        ctx.debug.add("wander", ctx.rows, center=centre, radius=radius, target=target)
    return target


def wander(p: Wander, ctx: SteeringContext) -> Steering:
    scale = np.ones(ctx.n) if p.units == "world" else ctx.per_agent("radius")
    steer = p.steering
    if steer == "face":
        orientation = ctx.per_agent("orientation")
        ahead = from_angle(orientation)
        target = _wander_target(p, ctx, ahead, scale)
        turn = align_to(p, ctx, k.face_orientation(ctx.pos, target, orientation))
        return Steering(ahead * ctx.per_agent("max_force")[:, None], turn.angular)
    target = _wander_target(p, ctx, normalize(ctx.heading), scale)
    if steer == "displacement":
        return Steering(target - ctx.pos)
    return Steering(k.seek_force(ctx.pos, ctx.vel, target, ctx.per_agent("max_speed")))


# --------------------------------------------------------------- rotation
class AlignParams(SteeringModel):
    """Millington's Align parameters (AI for Games 3.3.5), shared by the rotation primitives."""

    target_radius: PDegrees = doc(
        "Within this angle of the goal the rotation is brought to rest", 2.0, unit="degrees"
    )
    slow_radius: PDegrees = doc(
        "Start slowing the rotation within this angle", 30.0, unit="degrees"
    )
    time_to_target: PPositive = doc("Time over which to reach the goal rotation", 0.1, unit="s")


def align_to(p: AlignParams | Wander, ctx: SteeringContext, goal: Array) -> Steering:
    """Angular acceleration turning the rows' orientation to ``goal`` (radians)."""
    angular = k.align_angular(
        ctx.per_agent("orientation"),
        ctx.per_agent("rotation"),
        goal,
        ctx.per_agent("max_rotation"),
        ctx.per_agent("max_angular_accel"),
        np.radians(p.target_radius),
        np.radians(p.slow_radius),
        p.time_to_target,
    )
    return Steering(np.zeros((ctx.n, 2)), angular)


class Face(AlignParams):
    """Turn the orientation toward the target (Millington ch. 3 "Face").

    Align to the direction from the agent to the target; on the target, keep
    the current orientation.
    """

    type: Literal["face"] = "face"
    target: Target = doc("What to look at")


def face(p: Face, ctx: SteeringContext) -> Steering:
    goal = k.face_orientation(ctx.pos, ctx.target_facts().pos, ctx.per_agent("orientation"))
    return align_to(p, ctx, goal)


class LookWhereYouAreGoing(AlignParams):
    """Turn the orientation toward the direction of travel.

    Millington ch. 3 "Looking Where You're Going": Align to the velocity's
    direction; a still agent keeps its orientation.
    """

    type: Literal["look_where_you_are_going"] = "look_where_you_are_going"


def look_where_you_are_going(p: LookWhereYouAreGoing, ctx: SteeringContext) -> Steering:
    return align_to(p, ctx, k.travel_orientation(ctx.vel, ctx.per_agent("orientation")))


class Align(AlignParams):
    """Match the target agent's orientation (Millington's Align).

    A target that is not an agent has no orientation of its own: its velocity's
    direction is used, and the current orientation when it is still.
    """

    type: Literal["align"] = "align"
    target: Target = doc("Whose orientation to match")


def align(p: Align, ctx: SteeringContext) -> Steering:
    t = ctx.target_facts()
    own = ctx.per_agent("orientation")
    safe = np.where(t.agent >= 0, t.agent, 0)
    theirs = ctx.agents.orientation[safe] if ctx.agents.n else own
    goal = np.where(t.agent >= 0, theirs, k.travel_orientation(t.vel, own))
    return align_to(p, ctx, goal)


class VelocityMatch(TargetedModel):
    """Match the target's velocity (Millington's VelocityMatch): ``(v_t - v) / time_to_target``."""

    type: Literal["velocity_match"] = "velocity_match"
    time_to_target: PPositive = doc("Time over which to match the velocity", 0.1, unit="s")
    ROWS: ClassVar[Rows] = Rows(
        f.velocity_match, lambda p: {"time_to_target": float(p.time_to_target)}
    )


# --------------------------------------------------------------- flocking
class FlockModel(SteeringModel):
    of: str = doc(
        "Whose agents count as neighbours: 'same' (own group), 'any', or a group name",
        "same",
        min_length=1,
    )


def _pairs(ctx: SteeringContext, of: str) -> tuple[np.ndarray, Array, np.ndarray, np.ndarray]:
    """Neighbour pairs of the context's rows: (owner position in rows, d, i, j)."""
    nb = ctx.sense.neighbours(ctx.group, of)
    start = ctx.agents.slices[ctx.group].start
    n_group = nb.offsets.shape[0] - 1
    if ctx.n == n_group:  # rows are sorted and unique: the whole group asked
        return nb.i - start, nb.d, nb.i, nb.j
    position = np.full(n_group, -1, dtype=np.int64)
    position[ctx.rows - start] = np.arange(ctx.n)
    owner = np.take(position, nb.i - start)
    keep = owner >= 0
    return owner[keep], nb.d[keep], nb.i[keep], nb.j[keep]


class Separation(FlockModel):
    """Steer away from neighbours in view, inversely to their distance.

    Buckland ch. 3 "Separation": sum of ``normalize(-d) / |d|``.
    """

    type: Literal["separation"] = "separation"


def separation(p: Separation, ctx: SteeringContext) -> Steering:
    owner, d, i, j = _pairs(ctx, p.of)
    return Steering(k.separation_force(owner, d, ctx.n, i, j))


class Alignment(FlockModel):
    """Steer toward the average velocity of the neighbours in view: ``avg - v``.

    Reynolds 1987's velocity matching, with neighbours seen within a view
    distance and field of view as in Bourg & Seemann ch. 4 "Flocking".
    Buckland ch. 3 "Alignment" averages unit headings instead; averaging
    velocities also matches the neighbours' speed. Zero without neighbours.
    """

    type: Literal["alignment"] = "alignment"


def alignment(p: Alignment, ctx: SteeringContext) -> Steering:
    owner, _, _, j = _pairs(ctx, p.of)
    return Steering(k.alignment_force(owner, np.take(ctx.agents.vel, j, axis=0), ctx.vel))


class Cohesion(FlockModel):
    """Seek the centre of mass of the neighbours in view (Buckland ch. 3 "Cohesion").

    ``normalize`` (default, Buckland): the seek force is made a unit vector, as
    the code accompanying the book does, noting that "the magnitude of cohesion
    is usually much larger than separation or alignment so it usually helps to
    normalize it". Its size is then 1 whatever the speeds, like separation's
    1/distance scale, so weights are of Buckland's size (his are multiplied by
    200). ``normalize: false`` returns the seek force itself, up to twice the
    max speed, comparable with seek's. Zero without neighbours.
    """

    type: Literal["cohesion"] = "cohesion"
    normalize: bool = doc(
        "Make the force a unit vector, as Buckland's code does; false: the seek force itself "
        "(up to twice the max speed)",
        True,
    )


def cohesion(p: Cohesion, ctx: SteeringContext) -> Steering:
    owner, d, _, _ = _pairs(ctx, p.of)
    top = ctx.per_agent("max_speed")
    return Steering(k.cohesion_force(owner, d, ctx.pos, ctx.vel, top, p.normalize))


class Follow(FlockModel):
    """Take the mean velocity of the neighbours in view that are not following themselves.

    A leader-following rule built on Bourg & Seemann's flocking (ch. 4:
    neighbours within a view distance and field of view): the velocity is set
    to the average velocity of the agents in view, leaving out those that are
    following, so followers line up behind agents that lead.
    Who is following: an agent whose tree asked for a ``follow`` this tick
    (as a leaf or inside a combiner) and who has a neighbour in that
    ``follow``'s view. A sequential update would keep a flag set by each
    agent's last follow (it found someone to follow), which others read before
    or after its update depending on the order agents are updated in; here
    every agent decides at once, so the flag is known from this tick's decisions and neighbours, the
    same on both engines, before any force is computed.
    The velocity is set through the force that makes that change in one tick,
    ``m (v_new - v) / dt``; like every request it is weighted, combined and
    truncated at the agent's max force, so the velocity is reached in one tick
    only when the max force allows it. With nobody to follow the force is
    zero (the velocity stays as it is).
    """

    type: Literal["follow"] = "follow"


def following(ctx: SteeringContext) -> np.ndarray:
    """Which agents follow this tick (bool over all agents); see ``Follow``."""
    requests = ctx.requests
    n_all = ctx.agents.n
    if requests is None:
        return np.zeros(n_all, dtype=bool)

    def compute() -> np.ndarray:
        out = np.zeros(n_all, dtype=bool)
        for group, model, rows in requests.leaves("follow"):
            count = ctx.sense.neighbours(group, model.of).count
            sees = count[rows - ctx.agents.slices[group].start] > 0
            out[rows[sees]] = True
        return out

    found: np.ndarray = requests.once("following", compute)
    return found


def follow(p: Follow, ctx: SteeringContext) -> Steering:
    owner, _, _, j = _pairs(ctx, p.of)
    leads = ~following(ctx)[j]
    vel = k.follow_velocity(owner[leads], np.take(ctx.agents.vel, j[leads], axis=0), ctx.vel)
    return Steering(k.velocity_change_force(vel, ctx.vel, ctx.per_agent("mass"), ctx.dt))


class AvoidNeighbours(FlockModel):
    """Steer sideways from the neighbour we would collide with first (unaligned collision avoidance).

    Reynolds (1999) "Unaligned Collision Avoidance", as his OpenSteer library's
    ``steerToAvoidNeighbors`` (SteerLibrary.h) does it. Each neighbour in view
    (view distance, field of view, max_neighbours, as for the flocking
    primitives) is projected along its current velocity and ours to the time of
    closest approach; a neighbour that will then be closer than the sum of the
    two radii within ``time_horizon`` is a threat, and the soonest threat is
    avoided by steering sideways: away from where it will be (head on), from
    where it is (side by side), or behind it (crossing paths; only an agent at
    least as fast as its threat steers, as OpenSteer's code does, though its
    comment says the slower). A neighbour overlapping now comes first:
    straight sideways away from it. Zero force when nothing threatens.

    Departures from OpenSteer: the collision distance is the sum of the two
    radii (OpenSteer: twice our own), the overlapping neighbour is the nearest
    one (OpenSteer: the first in its list) and the force is a unit direction
    times our max speed, a desired lateral velocity sized like seek's
    (OpenSteer returns the unit side vector, and its pedestrians multiply it
    by 10).
    """

    type: Literal["avoid_neighbours"] = "avoid_neighbours"
    time_horizon: PPositive = doc(
        "Only collisions predicted sooner than this count (OpenSteer's minTimeToCollision; "
        "its pedestrians look 3 s ahead)",
        3.0,
        unit="s",
    )


def avoid_neighbours(p: AvoidNeighbours, ctx: SteeringContext) -> Steering:
    owner, d, _, j = _pairs(ctx, p.of)
    ag = ctx.agents
    contact = ctx.per_agent("radius")[owner] + np.take(ag.radius, j)
    force, aim, found = k.avoid_neighbours_force(
        owner,
        d,
        ctx.vel,
        ctx.heading,
        ctx.per_agent("max_speed"),
        np.take(ag.vel, j, axis=0),
        np.take(ag.heading, j, axis=0),
        contact,
        p.time_horizon,
    )
    if ctx.debug.enabled and found.any():
        ctx.debug.add("crosshair", ctx.rows[found], point=ctx.pos[found] + aim[found])
    return Steering(force)


# ------------------------------------------------------------- avoidance
class ObstacleAvoidance(SteeringModel):
    """Buckland's detection-box obstacle avoidance (ch. 3): box length 40 * (1 + speed / max_speed)."""

    type: Literal["obstacle_avoidance"] = "obstacle_avoidance"
    min_detection_length: PNonNeg = doc(
        "Detection box length at zero speed (doubles at max speed)", 40.0, unit="world units"
    )
    braking_weight: PNonNeg = doc("Weight of the braking (forward) component", 0.2)


def obstacle_avoidance(p: ObstacleAvoidance, ctx: SteeringContext) -> Steering:
    heading = normalize(ctx.heading)
    force, box = k.obstacle_avoidance_force(
        ctx.pos,
        heading,
        ctx.vel,
        ctx.per_agent("max_speed"),
        ctx.per_agent("radius"),
        ctx.world.obstacle_pos,
        ctx.world.obstacle_radius,
        p.min_detection_length,
        p.braking_weight,
    )
    if ctx.debug.enabled:
        corners = k.detection_box_corners(ctx.pos, heading, box, ctx.per_agent("radius"))
        ctx.debug.add("box", ctx.rows, corners=corners)
    return Steering(force)


Exponent = Annotated[
    float,
    Field(ge=MIN_POSITIVE, le=MAX_LJ_EXPONENT, allow_inf_nan=False),
    Parameterisable(),
]
"""An exponent of the Lennard-Jones potential (``d^n`` stays finite: ``MAX_LJ_EXPONENT``)."""


class LJAvoidance(SteeringModel):
    """Lennard-Jones obstacle repulsion: ``U = -A / d^n + B / d^m``, ``d = |r| / R``.

    The Lennard-Jones potential function of Bourg & Seemann ch. 5 "Potential
    Function-Based Movement", which they also apply to obstacle avoidance;
    ``r`` runs from an obstacle's centre to the agent and ``R`` is the
    obstacle's radius. The defaults (A = 0: no attraction; n = 1, B = 20,
    m = 2.5, cutoff 40, ``d`` in obstacle radii, speed 5) give a repulsion of
    20 on an obstacle's rim that falls to about 3.5 one radius further out.
    ``update: force`` (default): the force is the sum over obstacles whose
    centre is within ``cutoff`` of ``U * r / |r|``, combined with the agent's
    other requests like any other force, as Bourg & Seemann apply the
    potential's result as a force on their units.
    ``update: velocity`` is a velocity update instead of a force: for each
    obstacle within ``cutoff``, in the definition's order, ``v = speed *
    normalize(v + U * r / |r|)``. To fit the force pipeline it becomes the
    force that makes that change in one tick, ``m (v_new - v) / dt``; like
    every request it is weighted, combined and truncated at max force (and the
    speed at max speed), so the velocity is reached only when those allow it.
    Its ``speed`` is in world units per second (null: the agent's max speed).
    The default stays the force: a velocity that is set overrides the agent's
    other requests instead of combining with them.
    """

    type: Literal["lj_avoidance"] = "lj_avoidance"
    a: PNonNeg = doc("Attraction strength A", 0.0)
    n: Exponent = doc("Attraction exponent n", 1.0)
    b: PNonNeg = doc("Repulsion strength B", 20.0)
    m: Exponent = doc("Repulsion exponent m", 2.5)
    cutoff: PNonNeg = doc(
        "Ignore obstacles whose centre is farther than this", 40.0, unit="world units"
    )
    update: Literal["force", "velocity"] = doc(
        "'force': the sum of U * r / |r| is the steering force (Bourg & Seemann); 'velocity': "
        "a velocity update, v = speed * normalize(v + U * r / |r|) for each obstacle in turn, "
        "applied as the force m (v_new - v) / dt",
        "force",
    )
    speed: PPositive | None = doc(
        "update 'velocity': the speed it sets; null = the agent's max speed",
        5.0,
        unit="world units per second",
    )


def lj_avoidance(p: LJAvoidance, ctx: SteeringContext) -> Steering:
    w = ctx.world
    lj = k.LJConstants(a=p.a, b=p.b, n=p.n, m=p.m, cutoff=p.cutoff)
    ctx.debug.add("potential", ctx.rows)
    if p.update == "velocity":
        speed = ctx.per_agent("max_speed") if p.speed is None else p.speed
        vel = k.lj_velocity(
            ctx.pos, ctx.vel, ctx.heading, w.obstacle_pos, w.obstacle_radius, speed, lj
        )
        return Steering(k.velocity_change_force(vel, ctx.vel, ctx.per_agent("mass"), ctx.dt))
    force = k.lj_force(ctx.pos, ctx.heading, w.obstacle_pos, w.obstacle_radius, lj)
    return Steering(force)


class WallAvoidance(SteeringModel):
    """Buckland's three feelers (ch. 3): front ``feeler_length``, sides half as long at ``side_angle``.

    The deepest feeler crossing a wall pushes along the wall's normal by its overshoot.
    """

    type: Literal["wall_avoidance"] = "wall_avoidance"
    feeler_length: PNonNeg = doc("Length of the front feeler", 40.0, unit="world units")
    side_angle: PDegrees = doc(
        "Angle of the two side feelers from the heading", 45.0, unit="degrees"
    )


def wall_avoidance(p: WallAvoidance, ctx: SteeringContext) -> Steering:
    ends = k.feeler_ends(ctx.pos, ctx.heading, p.feeler_length, np.radians(p.side_angle))
    ctx.debug.add("feelers", ctx.rows, ends=ends)
    w = ctx.world
    return Steering(k.wall_avoidance_force(ctx.pos, ends, w.wall_a, w.wall_b, w.wall_normal))


class Hide(TargetedModel):
    """Hide behind the obstacle nearest to a spot out of the hunter's sight (Buckland ch. 3 "Hide").

    Each obstacle's hiding spot is ``distance_from_boundary`` beyond its edge on
    the side away from the hunter; arrive (fast) at the closest one. With no
    obstacles in the world, evade the hunter.
    """

    type: Literal["hide"] = "hide"
    distance_from_boundary: PNonNeg = doc(
        "How far beyond the obstacle's edge to hide", 30.0, unit="world units"
    )
    threat_range: PNonNeg | None = doc(
        "Evade's threat range when there is nowhere to hide (null = always)",
        100.0,
        unit="world units",
    )
    ROWS: ClassVar[Rows] = Rows(
        f.hide,
        lambda p: {
            "distance_from_boundary": float(p.distance_from_boundary),
            "threat_range": reach(p.threat_range),
        },
    )


def hide(p: Hide, ctx: SteeringContext) -> Steering:
    """``by_rows``, drawing the hiding spot (evade's aim when there are no obstacles)."""
    force, point = rows_of(Hide.ROWS, p, ctx)
    if ctx.debug.enabled and point is not None:
        kind = "crosshair" if WORLD_FLAGS["no_obstacles"](ctx.world) else "hiding_spot"
        ctx.debug.add(kind, ctx.rows, point=point)
    return Steering(force)


class Interpose(TargetedModel):
    """Get between two agents: arrive fast at their predicted midpoint (Buckland ch. 3 "Interpose").

    The midpoint is treated as a target moving at the mean of the two
    velocities; the ``predictor`` gives the look-ahead (Buckland's distance /
    max speed is ``linear`` for a still midpoint), then each agent is projected
    by that time and their midpoint is the aim.
    """

    type: Literal["interpose"] = "interpose"
    other: Target = doc("The second target")
    predictor: Predictor = doc("How far ahead to aim", default_factory=Linear)
    ROWS: ClassVar[Rows] = Rows(f.interpose, lead=f.interpose_lead, draw="crosshair")


class OffsetPursuit(TargetedModel):
    """Keep an offset from a leader, in the leader's frame (Buckland ch. 3 "OffsetPursuit").

    ``offset`` is [ahead, left] relative to the leader's heading; arrive (fast)
    at where that point will be after the ``predictor``'s look-ahead.
    """

    type: Literal["offset_pursuit"] = "offset_pursuit"
    offset: PPoint = doc(
        "Offset from the leader: [along its heading, to its left]", unit="world units"
    )
    predictor: Predictor = doc("How far ahead to aim", default_factory=Linear)
    ROWS: ClassVar[Rows] = Rows(
        f.offset_pursuit,
        lambda p: {"offset_x": float(p.offset[0]), "offset_y": float(p.offset[1])},
        lead=f.offset_lead,
        draw="crosshair",
    )


class PathFollowing(TargetedModel):
    """Follow a path's waypoints (Buckland ch. 3 "FollowPath").

    Seek the current waypoint; within ``waypoint_seek_distance`` move on to the
    next. A looped path starts over; an open one ends with arrive (normal) at
    its last point. The target must be a ``path`` target. Each agent's waypoint
    is remembered between ticks, starting at the first point.
    """

    type: Literal["path_following"] = "path_following"
    waypoint_seek_distance: PNonNeg = doc(
        "Move on to the next waypoint within this distance of the current one",
        20.0,
        unit="world units",
    )
    looped: bool | None = doc("Start over at the end (null = the path's own setting)", None)

    @model_validator(mode="after")
    def _needs_path(self) -> PathFollowing:
        if getattr(self.target, "kind", None) != "path":
            raise ValueError("path_following needs a target of kind 'path'")
        return self


def waypoint_state(p: PathFollowing, ctx: SteeringContext) -> tuple[Array, np.ndarray, bool]:
    """(path points, this leaf's cursor memory, looped) for ``p``."""
    path = ctx.world.paths.get(str(getattr(p.target, "path", "")))
    if path is None or len(path.points) == 0:
        return np.zeros((0, 2)), ctx.state("waypoint", (), 0, np.int64), False
    looped = path.looped if p.looped is None else p.looped
    return np.asarray(path.points, dtype=np.float64), ctx.state("waypoint", (), 0, np.int64), looped


def path_following(p: PathFollowing, ctx: SteeringContext) -> Steering:
    points, memory, looped = waypoint_state(p, ctx)
    if points.shape[0] == 0:
        return Steering(np.zeros((ctx.n, 2)))
    count = points.shape[0]
    cursor = f.on_path(memory[ctx.rows], count)
    cursor = k.advance_waypoints(cursor, ctx.pos, points, p.waypoint_seek_distance, looped)
    memory[ctx.rows] = cursor
    current = points[cursor]
    ctx.debug.add("waypoint", ctx.rows, point=current)
    fx, fy = f.path_force(
        *xy(ctx.pos), *xy(ctx.vel), *xy(current), ctx.per_agent("max_speed"),
        cursor, count, looped, f.DECELERATION["normal"],
    )  # fmt: skip
    return Steering(np.stack([fx, fy], axis=1))


Rect = Annotated[tuple[Point, Point], Field(strict=False)]
"""Two corners [[min_x, min_y], [max_x, max_y]]; a JSON array of arrays."""


def _area(p: Containment, world: World) -> dict[str, float]:
    """Containment's constants: the area's corners (the world's without ``rect``)."""
    (x0, y0), (x1, y1) = ((0.0, 0.0), world.size) if p.rect is None else p.rect
    x0, y0, x1, y1 = float(x0), float(y0), float(x1), float(y1)
    return dict(x0=x0, y0=y0, x1=x1, y1=y1, margin=float(p.margin), look_ahead=float(p.look_ahead))


class Containment(SteeringModel):
    """Stay inside the world, or a rectangle of it.

    Looks ``look_ahead`` seconds ahead along the velocity; when that probe is
    outside the area shrunk by ``margin``, the force is the velocity change that
    brings the probe back to the inner edge, ``(clamp(probe) - probe) /
    look_ahead``: inward, proportional to the overshoot, sliding along the edge.
    Zero force otherwise.
    """

    type: Literal["containment"] = "containment"
    ROWS: ClassVar[Rows] = Rows(f.containment, constants=_area)
    rect: Rect | None = doc(
        "Area to stay in: [[min_x, min_y], [max_x, max_y]] (null = the whole world)",
        None,
        unit="world units",
    )
    margin: PNonNeg = doc("Keep this far inside the area's edges", 20.0, unit="world units")
    look_ahead: PPositive = doc("How far ahead along the velocity to probe", 0.5, unit="s")

    @model_validator(mode="after")
    def _ordered(self) -> Containment:
        if self.rect is not None and not (
            self.rect[0][0] < self.rect[1][0] and self.rect[0][1] < self.rect[1][1]
        ):
            raise ValueError("rect must be [[min_x, min_y], [max_x, max_y]] with min < max")
        return self


def path_following_done(p: Any, sense: Sense, group: str, memory: Any) -> np.ndarray:
    """SUCCESS for an open path: on its last waypoint and within ``waypoint_seek_distance`` of it."""
    rows = sense.rows(group)
    n = rows.stop - rows.start
    path = sense.world.paths.get(str(getattr(p.target, "path", "")))
    looped = path is not None and (path.looped if p.looped is None else bool(p.looped))
    if path is None or looped or len(path.points) == 0:
        return np.zeros(n, dtype=bool)
    last = len(path.points) - 1
    stored = memory.get("waypoint") if isinstance(memory, dict) else None
    if stored is None or stored.shape[0] != sense.agents.n:
        cursor = np.zeros(n, dtype=np.int64)
    else:
        cursor = stored[rows]
    near = length(np.asarray(path.points[last]) - sense.agents.pos[rows])
    return np.asarray((cursor == last) & (near < p.waypoint_seek_distance), dtype=bool)


BUILTIN = (
    (Seek, by_rows),
    (Flee, by_rows),
    (Arrive, by_rows),
    (Pursuit, by_rows),
    (Evade, by_rows),
    (Wander, wander),
    (Face, face),
    (LookWhereYouAreGoing, look_where_you_are_going),
    (Align, align),
    (VelocityMatch, by_rows),
    (Separation, separation),
    (Alignment, alignment),
    (Cohesion, cohesion),
    (Follow, follow),
    (AvoidNeighbours, avoid_neighbours),
    (ObstacleAvoidance, obstacle_avoidance),
    (LJAvoidance, lj_avoidance),
    (WallAvoidance, wall_avoidance),
    (Hide, hide),
    (Interpose, by_rows),
    (OffsetPursuit, by_rows),
    (PathFollowing, path_following),
    (Containment, by_rows),
)
"""(model, implementation) of every built-in primitive, in registration order."""


DONE = {"arrive": arrive_done, "path_following": path_following_done}
"""Where a built-in primitive reports SUCCESS (the others are never done)."""


def register(registries: Registries) -> None:
    for model, impl in BUILTIN:
        registries.primitives.register(model, impl, done=DONE.get(tag_of(model)))
