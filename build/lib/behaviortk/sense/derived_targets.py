"""Target kinds derived from other facts: a group's centroid, an offset from another
target, the hiding point behind an obstacle. Models and implementations.

Like every target kind (``target_kinds.py``), each answers ``fn(spec, sense,
group) -> TargetFacts`` for all the group's rows at once and is cached per
tick by ``Sense.target``. ``offset`` and ``hide_point`` take another target in
an open ``Target`` slot: any registered kind, plugins' too, resolved through
``Sense.target`` as well (and checked by the loader like any target: unknown
groups, agents and zones inside them are located errors). A derived target is
missing (``valid`` False, so its leaf fails) where what it is made from is:
an empty group, no visible neighbour, a missing inner target, no obstacle to
hide behind.

The hiding spot's maths (``nearest_hiding_spot``, a formula) lives here and ``hide`` (steering)
imports it: steering reads sensed targets, never the reverse.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from behaviortk.format.fields import Model, NameRef, PNonNeg, PPoint, doc
from behaviortk.format.nodes import Target
from behaviortk.registry import Registries
from behaviortk.sense.sensing import Sense, TargetFacts, offset_point, target_heading
from behaviortk.vec import Array, formula, inlined, mean_by_owner, select, unit_or
from behaviortk.world.spatial import displacement, wrap_positions
from behaviortk.world.state import World

NEIGHBOURS = "neighbours"
"""The ``group`` of a centroid that means "my visible neighbours" (a reserved group name)."""

#: Below this length of the mean unit vector the circular mean along an axis is undefined
#: (the positions are spread evenly all round it): the plain mean is taken instead.
CIRCULAR_EPS = 1e-12

CentroidGroup = Annotated[str, NameRef("group", also=(NEIGHBOURS,)), Field(min_length=1)]


class CentroidTarget(Model):
    """The mean position of a group's agents (the agent itself counts when it is one of
    them), moving at their mean velocity; missing when the group is empty.

    On a wrapped world the mean is taken along each axis as a circular mean (Bai &
    Breen, "Calculating Center of Mass in an Unbounded 2D Environment", Journal of
    Graphics Tools, 2008): each coordinate becomes an angle around the torus, the unit
    vectors are averaged and the mean angle is turned back into a coordinate, so a group
    straddling an edge has its centroid among its agents, not mid-world. Where the
    positions are spread evenly all round an axis that mean is undefined and the plain
    mean of the coordinates is used.

    `"group": "neighbours"` is the mean position of the agent's visible neighbours of its
    own group, the very set flocking uses (view distance, field of view, the nearest
    `max_neighbours`): each neighbour's nearest image from the agent is averaged, the
    centre of mass Buckland's Cohesion (ch. 3) seeks, so `seek` of this target is
    `cohesion`. Missing for an agent with no neighbour in view.
    """

    kind: Literal["centroid"] = "centroid"
    group: CentroidGroup = doc(
        "Name of the group, or `neighbours` for the agent's visible neighbours of its own "
        "group (the set flocking uses)"
    )


class OffsetTarget(Model):
    """A point at a fixed offset from another target, moving with it.

    `frame: target` (default) reads `offset` as [forward, left] in the target's own frame,
    as `offset_pursuit` (Buckland ch. 3 "OffsetPursuit") reads its offset: x along the
    target's heading, y along its left (the heading turned 90 degrees counter-clockwise,
    with y up as the viewer draws it). An agent target's frame follows its heading; a
    target that is not an agent heads along its velocity (a moving centroid), and one that
    is still (a point, a zone, a blackboard point) has no heading: its frame is the
    world's, +x forward and +y left. `frame: world` adds `offset` as [dx, dy] in world
    axes. Missing where the inner target is missing.
    """

    kind: Literal["offset"] = "offset"
    target: Target = doc("The target to offset from (any kind of target)")
    offset: PPoint = doc(
        "The offset: [forward, left] in the target's frame, or [dx, dy] in the world frame",
        unit="world units",
    )
    frame: Literal["target", "world"] = doc(
        "'target': along the target's heading and to its left; 'world': world axes",
        "target",
    )


class HidePointTarget(Model):
    """Where the `hide` primitive would hide from a threat (Buckland ch. 3 "Hide").

    Each obstacle's hiding spot lies `distance_from_boundary` beyond its edge on the side
    away from the threat; the one nearest the agent is the target (computed by the very
    function `hide` uses). Still; missing where the threat is missing and everywhere when
    the world has no obstacles (where `hide` evades instead).
    """

    kind: Literal["hide_point"] = "hide_point"
    threat: Target = doc("What to hide from (any kind of target)")
    distance_from_boundary: PNonNeg = doc(
        "How far beyond the obstacle's edge the spot lies (as `hide`'s)",
        30.0,
        unit="world units",
    )


# ----------------------------------------------------------------- helpers
@formula
def hiding_spot_xy(
    px: Any, py: Any, hunter_x: Any, hunter_y: Any, ox: Any, oy: Any, radius: Any, distance: Any
) -> tuple[Any, Any]:
    """Buckland's GetHidingPosition: ``obstacle + normalize(obstacle - hunter) * (radius +
    distance)``; a hunter on the obstacle's centre pushes the spot toward the agent's side."""
    ux, uy = unit_or(ox - hunter_x, oy - hunter_y, px - ox, py - oy)
    reach = radius + distance
    return ox + ux * reach, oy + uy * reach


@formula
@inlined
def nearest_hiding_spot(
    px: Any, py: Any, hunter_x: Any, hunter_y: Any, obstacle_pos: Any, obstacle_radius: Any,
    distance: Any,
) -> tuple[Any, Any]:  # fmt: skip
    """The :func:`hiding_spot_xy` nearest the agent, obstacle by obstacle (the first of equals);
    ``(0, 0)`` without obstacles."""
    best = np.inf
    bx = 0.0
    by = 0.0
    for o in range(obstacle_pos.shape[0]):
        sx, sy = hiding_spot_xy(
            px, py, hunter_x, hunter_y, obstacle_pos[o, 0], obstacle_pos[o, 1],
            obstacle_radius[o], distance,
        )  # fmt: skip
        d2 = (sx - px) * (sx - px) + (sy - py) * (sy - py)
        nearer = (o == 0) | (d2 < best)
        best = select(nearer, d2, best)
        bx = select(nearer, sx, bx)
        by = select(nearer, sy, by)
    return bx, by


def hiding_spot(pos: Array, threat: Array, world: World, distance: float) -> Array:
    """Buckland's hiding spot for each row (:func:`nearest_hiding_spot`, as ``hide`` finds
    it): what a ``hide_point`` target is. Needs at least one obstacle."""
    x, y = nearest_hiding_spot(
        pos[:, 0], pos[:, 1], threat[:, 0], threat[:, 1], world.obstacle_pos,
        world.obstacle_radius, distance,
    )  # fmt: skip
    return np.stack([x, y], axis=1)


def group_centroid(pos: Array, world: World) -> Array:
    """The mean of ``pos`` (m >= 1 rows); circular along each axis on wrapped worlds."""
    if world.edges != "wrap":
        return np.asarray(pos.mean(axis=0), dtype=np.float64)
    size = world.size
    angle = wrap_positions(pos, world) * (2.0 * np.pi / size)
    c, s = np.cos(angle).mean(axis=0), np.sin(angle).mean(axis=0)
    mean = np.mod(np.arctan2(s, c), 2.0 * np.pi) * (size / (2.0 * np.pi))
    plain = wrap_positions(pos, world).mean(axis=0)
    return np.asarray(np.where(np.hypot(c, s) > CIRCULAR_EPS, mean, plain), dtype=np.float64)


def _facts(sense: Sense, own: Array, point: Array, vel: Array, valid: np.ndarray) -> TargetFacts:
    """Facts of per-row points (nearest images from ``own``), zero where not valid."""
    n = own.shape[0]
    safe = np.where(valid[:, None], point, own)
    pos = own + displacement(own, safe, sense.world)
    pos[~valid] = 0.0
    vel = np.where(valid[:, None], vel, 0.0)
    return TargetFacts(pos, vel, np.full(n, -1, dtype=np.int64), np.asarray(valid, dtype=bool))


# ---------------------------------------------------------- implementations
def centroid_target(spec: CentroidTarget, sense: Sense, group: str) -> TargetFacts:
    rows = sense.rows(group)
    own = sense.agents.pos[rows]
    n = own.shape[0]
    if spec.group == NEIGHBOURS:
        nb = sense.neighbours(group, "same")
        owner = nb.i - rows.start
        offset, count = mean_by_owner(owner, nb.d, n)
        vel, _ = mean_by_owner(owner, np.take(sense.agents.vel, nb.j, axis=0), n)
        valid = count > 0  # the offsets are nearest images already: no displacement again
        pos = np.where(valid[:, None], own + offset, 0.0)
        agent = np.full(n, -1, dtype=np.int64)
        return TargetFacts(pos, np.where(valid[:, None], vel, 0.0), agent, valid)
    members = sense.rows(spec.group)
    if members.stop <= members.start:
        return sense.point_facts(own, None)
    centre = group_centroid(sense.agents.pos[members], sense.world)
    vel = sense.agents.vel[members].mean(axis=0)
    facts = sense.point_facts(own, centre)
    return TargetFacts(facts.pos, np.broadcast_to(vel, (n, 2)).copy(), facts.agent, facts.valid)


def offset_target(spec: OffsetTarget, sense: Sense, group: str) -> TargetFacts:
    inner = sense.target(spec.target, group)
    own = sense.agents.pos[sense.rows(group)]
    n = own.shape[0]
    if spec.frame == "world":
        point = inner.pos + np.broadcast_to(np.asarray(spec.offset, dtype=np.float64), (n, 2))
    else:
        heading = target_heading(sense.agents, inner)
        x, y = offset_point(
            inner.pos[:, 0], inner.pos[:, 1], heading[:, 0], heading[:, 1],
            float(spec.offset[0]), float(spec.offset[1]),
        )  # fmt: skip
        point = np.stack([x, y], axis=1)
    return _facts(sense, own, point, inner.vel, inner.valid)


def hide_point_target(spec: HidePointTarget, sense: Sense, group: str) -> TargetFacts:
    threat = sense.target(spec.threat, group)
    own = sense.agents.pos[sense.rows(group)]
    n = own.shape[0]
    w = sense.world
    if w.obstacle_pos.shape[0] == 0:
        return sense.point_facts(own, None)
    spot = hiding_spot(own, threat.pos, w, spec.distance_from_boundary)
    if w.edges == "wrap":  # as every target, the nearest image (hide itself uses the spot)
        spot = own + displacement(own, spot, w)
    valid = threat.valid
    spot[~valid] = 0.0
    return TargetFacts(spot, np.zeros((n, 2)), np.full(n, -1, dtype=np.int64), valid.copy())


BUILTIN = (
    (CentroidTarget, centroid_target),
    (OffsetTarget, offset_target),
    (HidePointTarget, hide_point_target),
)
"""(model, implementation) of every derived target kind."""


def register(registries: Registries) -> None:
    for model, impl in BUILTIN:
        registries.targets.register(model, impl)
