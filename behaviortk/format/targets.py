"""Built-in target kinds of steering leaves and conditions, discriminated on ``kind``.

A field typed ``format.nodes.Target`` takes any registered kind (plugins add more).

Strings naming a group, agent or path may be ``"$param"`` references inside a
reusable tree; names are checked once the tree is expanded for a group.
"""

from __future__ import annotations

from typing import Literal

from behaviortk.format.fields import AgentRef, GroupRef, Model, PathRef, PNonNeg, Point, PPoint, doc


class NearestTarget(Model):
    """The nearest agent of a group (wrap-aware), optionally only within a radius."""

    kind: Literal["nearest"] = "nearest"
    group: GroupRef = doc("Name of the group to take the nearest agent from")
    radius: PNonNeg | None = doc(
        "Ignore agents farther than this (null = any distance)", None, unit="world units"
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
    """A point stored on the agent's blackboard under a key (e.g. by `blackboard_set`)."""

    kind: Literal["blackboard"] = "blackboard"
    key: str = doc("Blackboard key holding a point [x, y]", min_length=1)


class PointerTarget(Model):
    """The mouse pointer in the viewer; the fixed point `at` when headless."""

    kind: Literal["pointer"] = "pointer"
    at: Point = doc("Where the pointer is when there is no viewer", (0.0, 0.0), unit="world units")


class SelfTarget(Model):
    """The agent itself (for leaves that need no other target)."""

    kind: Literal["self"] = "self"
