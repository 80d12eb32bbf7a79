"""The built-in target kinds: their models and where each target is, per row of a group.

A target kind is a model discriminated on ``kind`` and ``fn(spec, sense, group)
-> TargetFacts``, registered in ``Registries.targets`` (a field typed
``format.nodes.Target`` takes any registered kind, plugins' too). Strings naming
a group, agent or path may be ``"$param"`` references inside a reusable tree;
names are checked once the tree is expanded for a group. Every leaf and
condition that takes a ``target`` resolves it through ``Sense.target``, which
caches the answer per tick. Positions are nearest images on wrapped worlds.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from behaviortk.format.fields import (
    AgentRef,
    BlackboardPointKey,
    GroupRef,
    Model,
    PathRef,
    PNonNeg,
    Point,
    PPoint,
    ZoneRef,
    doc,
)
from behaviortk.registry import Registries
from behaviortk.sense.sensing import Sense, TargetFacts


class NearestTarget(Model):
    """The nearest agent of a group (wrap-aware, never the agent itself), optionally only
    within a radius, or only among those the agent can see.

    With `visible`, the nearest agent that passes `can_see`'s test with the seeing group's
    values: within its `view_distance` (and `radius`), inside its `fov` (a full angle) and
    no obstacle or wall across the line. Equal distances: the agent listed first.
    """

    kind: Literal["nearest"] = "nearest"
    group: GroupRef = doc("Name of the group to take the nearest agent from")
    radius: PNonNeg | None = doc(
        "Ignore agents farther than this (null = any distance)", None, unit="world units"
    )
    visible: bool = doc(
        "Only agents the agent can see: within its view distance, inside its field of view, "
        "line of sight clear (as `can_see` with the group's values)",
        False,
    )


class AgentTarget(Model):
    """One agent, by id (a group's `names` entry or the default `<group>-<i>`)."""

    kind: Literal["agent"] = "agent"
    id: AgentRef = doc("Id of the agent")


class PointTarget(Model):
    """A fixed point of the world."""

    kind: Literal["point"] = "point"
    at: PPoint = doc("The point [x, y]", unit="world units")


class PathTarget(Model):
    """A named path of the definition (for path following)."""

    kind: Literal["path"] = "path"
    path: PathRef = doc("Name of the path")


class BlackboardTarget(Model):
    """A point stored on the agent's blackboard under a key (by `blackboard_set`, `remember` or
    the game), read when the tick is sensed; an unset or forgotten key finds nothing, so the
    leaf fails."""

    kind: Literal["blackboard"] = "blackboard"
    key: BlackboardPointKey = doc(
        "Blackboard key holding a point [x, y]: declared in the tree's `blackboard` with type point"
    )


class PointerTarget(Model):
    """The mouse pointer in the viewer; the fixed point `at` when headless."""

    kind: Literal["pointer"] = "pointer"
    at: Point = doc("Where the pointer is when there is no viewer", (0.0, 0.0), unit="world units")


class ZoneTarget(Model):
    """The centre of a named zone (a circle's centre, a rectangle's middle)."""

    kind: Literal["zone"] = "zone"
    zone: ZoneRef = doc("Name of a zone of the definition's `zones`")


class SelfTarget(Model):
    """The agent itself (for leaves that need no other target)."""

    kind: Literal["self"] = "self"


def own_positions(sense: Sense, group: str) -> np.ndarray:
    return sense.agents.pos[sense.rows(group)]


def self_target(spec: SelfTarget, sense: Sense, group: str) -> TargetFacts:
    rows = sense.rows(group)
    agent = np.arange(rows.start, rows.stop, dtype=np.int64)
    return sense.agent_facts(own_positions(sense, group), agent)


def nearest_target(spec: NearestTarget, sense: Sense, group: str) -> TargetFacts:
    only = sense.deciding_rows(group)
    if only is not None:  # a think-rate LOD group decides: its thinkers' targets alone
        agent = sense.thinkers_nearest(group, spec.group, spec.radius, spec.visible)
        return sense.agent_facts(own_positions(sense, group), agent, only)
    find = sense.nearest_visible if spec.visible else sense.nearest
    agent, _ = find(group, spec.group, spec.radius)
    return sense.agent_facts(own_positions(sense, group), agent)


def agent_target(spec: AgentTarget, sense: Sense, group: str) -> TargetFacts:
    own = own_positions(sense, group)
    names = sense.agents.names
    row = names.index(spec.id) if spec.id in names else -1
    return sense.agent_facts(own, np.full(own.shape[0], row, dtype=np.int64))


def point_target(spec: PointTarget, sense: Sense, group: str) -> TargetFacts:
    return sense.point_facts(own_positions(sense, group), np.asarray(spec.at, dtype=np.float64))


def path_target(spec: PathTarget, sense: Sense, group: str) -> TargetFacts:
    """The path's first point (path following keeps its own cursor along the path)."""
    path = sense.world.paths.get(spec.path)
    point = None if path is None or len(path.points) == 0 else path.points[0]
    return sense.point_facts(own_positions(sense, group), point)


def pointer_target(spec: PointerTarget, sense: Sense, group: str) -> TargetFacts:
    point = sense.pointer if sense.pointer is not None else spec.at
    return sense.point_facts(own_positions(sense, group), np.asarray(point, float))


def blackboard_target(spec: BlackboardTarget, sense: Sense, group: str) -> TargetFacts:
    rows = sense.rows(group)
    return sense.blackboard_facts(own_positions(sense, group), group, rows, spec.key)


def zone_target(spec: ZoneTarget, sense: Sense, group: str) -> TargetFacts:
    return sense.point_facts(own_positions(sense, group), sense.world.zones[spec.zone].center)


BUILTIN = (
    (NearestTarget, nearest_target),
    (AgentTarget, agent_target),
    (PointTarget, point_target),
    (PathTarget, path_target),
    (BlackboardTarget, blackboard_target),
    (PointerTarget, pointer_target),
    (SelfTarget, self_target),
    (ZoneTarget, zone_target),
)
"""(model, implementation) of every built-in target kind."""


def register(registries: Registries) -> None:
    for model, impl in BUILTIN:
        registries.targets.register(model, impl)
