"""Groups of vehicles: how many, where they spawn, their physics and which tree they run."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from behaviortk.format.budget import DEFAULT_MAX_NEIGHBOURS
from behaviortk.format.fields import (
    NONNEG_RANGE,
    POSITIVE_RANGE,
    Finite,
    GroupRef,
    Model,
    NonNeg,
    ParamValue,
    Point,
    Positive,
    doc,
)
from behaviortk.format.limits import MAX_GROUP_COUNT, MAX_THINK_EVERY


class AreaSpawn(Model):
    """Uniformly random positions inside an axis-aligned rectangle."""

    kind: Literal["area"] = "area"
    min: Point = doc("Lower-left corner [x, y]", unit="world units")
    max: Point = doc("Upper-right corner [x, y] (each coordinate >= min's)", unit="world units")

    @model_validator(mode="after")
    def _ordered(self) -> AreaSpawn:
        if self.min[0] > self.max[0] or self.min[1] > self.max[1]:
            raise ValueError(f"area min {list(self.min)} is not below-left of max {list(self.max)}")
        return self


class PositionsSpawn(Model):
    """Explicit positions, one per agent (so `count` must equal their number)."""

    kind: Literal["positions"] = "positions"
    points: list[Point] = doc("One [x, y] per agent", unit="world units")


class RingSpawn(Model):
    """Agents evenly spaced on a circle."""

    kind: Literal["ring"] = "ring"
    center: Point = doc("Centre of the ring [x, y]", unit="world units")
    radius: NonNeg = doc(f"Radius of the ring, {NONNEG_RANGE}", unit="world units")


Spawn = Annotated[AreaSpawn | PositionsSpawn | RingSpawn, Field(discriminator="kind")]


class FocusGroup(Model):
    """Every agent of a group is a focus point, where it is at the start of each tick (a
    player, the camera's target)."""

    group: GroupRef = doc("Name of the group whose agents are the focus")


class Lod(Model):
    """Think-rate level of detail: agents near a focus think every `think_every` ticks, the
    others every `far_think_every` (Unreal Engine's tick intervals set by its Significance
    Manager; Millington, AI for Games, "Execution Management": level of detail). An agent is
    near when its distance to the nearest focus point (the shortest image on a wrapped
    world), at the start of the tick, is at most `near`. The game may move the focus with
    `Simulation.focus(points)` (the camera). Details: docs/lod.md."""

    focus: FocusGroup | Annotated[list[Point], Field(min_length=1)] = doc(
        'Where the player looks: {"group": name} (its agents\' current positions) or a list '
        "of points [[x, y], ...]; Simulation.focus(points) replaces it until focus(None)"
    )
    near: NonNeg = doc(
        f"Agents at most this far from a focus point are near, {NONNEG_RANGE}",
        unit="world units",
    )
    far_think_every: int = doc(
        f"Ticks between two thinks of an agent that is not near, 1 to {MAX_THINK_EVERY:,}, "
        "at least the group's think_every",
        unit="ticks",
        ge=1,
        le=MAX_THINK_EVERY,
    )


Colour = (
    Annotated[str, Field(pattern=r"^#[0-9a-fA-F]{6}$", description='Hex colour "#rrggbb".')]
    | Annotated[
        tuple[
            Annotated[int, Field(ge=0, le=255)],
            Annotated[int, Field(ge=0, le=255)],
            Annotated[int, Field(ge=0, le=255)],
        ],
        Field(strict=False, description="[r, g, b], each 0..255."),
    ]
)


class Group(Model):
    """A set of identical vehicles running the same tree."""

    name: str = doc("Unique group name (targets and conditions refer to it)", min_length=1)
    count: int = doc(
        f"Number of agents, 0..{MAX_GROUP_COUNT:,} (the total is limited by --max-agents)",
        ge=0,
        le=MAX_GROUP_COUNT,
    )
    spawn: Spawn = doc("Where agents start: an area, explicit positions or a ring")
    heading: Finite | Literal["random"] = doc(
        'Initial heading, counter-clockwise from +x, or "random"', "random", unit="degrees"
    )
    speed: NonNeg = doc(
        f"Initial speed along the heading, {NONNEG_RANGE}", 0.0, unit="world units/s"
    )
    mass: Positive = doc(f"Mass (a = F / m), {POSITIVE_RANGE}", 1.0, unit="mass units")
    max_speed: Positive = doc(f"Speed limit, {POSITIVE_RANGE}", 150.0, unit="world units/s")
    max_force: Positive = doc(f"Steering force limit, {POSITIVE_RANGE}", 300.0, unit="force units")
    max_turn_rate: Positive | None = doc(
        f"Limit on how fast the velocity may turn, {POSITIVE_RANGE} (null = unlimited)",
        None,
        unit="degrees/s",
    )
    max_angular_accel: Positive = doc(
        f"Limit on angular acceleration (align, face), {POSITIVE_RANGE}", 720.0, unit="degrees/s^2"
    )
    max_rotation: Positive = doc(
        f"Limit on rotation speed, {POSITIVE_RANGE}", 360.0, unit="degrees/s"
    )
    radius: Positive = doc(
        f"Body radius (drawing, collisions, avoidance), {POSITIVE_RANGE}", 6.0, unit="world units"
    )
    colour: Colour | None = doc(
        'Colour of the group\'s agents in the viewer, its legend, renders and GIFs: "#rrggbb" '
        "or [r, g, b] with 0..255 (null: a colour of the viewer's palette, by the group's "
        "position in the file, so groups without one still differ)",
        None,
    )
    view_distance: NonNeg = doc(
        f"How far neighbours are seen, {NONNEG_RANGE}", 60.0, unit="world units"
    )
    fov: float = doc("Field of view, in (0, 360]", 270.0, unit="degrees", gt=0, le=360)
    max_neighbours: int = doc(
        "Most neighbours an agent takes into account, >= 1: its nearest ones in view (at equal "
        "distance, the agent listed first). Flocking and `neighbours` conditions see at most "
        "this many for each `of`, so a crowd's neighbour pairs stay within count x "
        "max_neighbours however dense it gets. Reynolds (1999) has each character react only "
        "to its local neighbourhood; OpenSteer's large crowds (Reynolds 2006, 'Big Fast Crowds "
        "on PS3') likewise limit each agent to a few nearest neighbours. The default is above "
        "the size of every group in definitions/ (none is affected) and keeps 200,000 agents "
        "within about 0.5 GiB of neighbour pairs",
        DEFAULT_MAX_NEIGHBOURS,
        ge=1,
        le=MAX_GROUP_COUNT,
    )
    control: Literal["tree", "external"] = doc(
        "Who moves the agents: their `tree`, or the game ('external': no tree, the "
        "integrator leaves them alone and the game places them with Simulation.move each tick; "
        "they are targets, threats and neighbours like any other agent)",
        "tree",
    )
    tree: str | None = doc(
        "Name of the tree (in `trees`) the agents run; required unless `control` is 'external'",
        None,
        min_length=1,
    )
    think_every: int = doc(
        f"Run the tree every this many ticks, 1 to {MAX_THINK_EVERY:,}: agent id i thinks on "
        "ticks t with (t - i) % think_every == 0, and on its first tick, so 1/think_every of "
        "the group thinks each tick; in between it keeps its last decision (the same steering "
        "leaves, steering every tick from the current positions of the same targets). Unreal "
        "Engine's AI tick intervals; Beehave's users report 200 agents at about 10 FPS "
        "without them",
        1,
        unit="ticks",
        ge=1,
        le=MAX_THINK_EVERY,
    )
    lod: Lod | None = doc(
        "Think less often far from the player: agents within `near` of a `focus` think every "
        "`think_every` ticks, the others every `far_think_every` (null = every agent every "
        "`think_every`)",
        None,
    )
    params: dict[str, ParamValue] = doc(
        "Values for the tree's parameters (override the tree's defaults)", default_factory=dict
    )
    names: list[Annotated[str, Field(min_length=1)]] | None = doc(
        "Ids of the first agents (at most `count`); the others are `<group>-<i>`", None
    )

    @model_validator(mode="after")
    def _consistent(self) -> Group:
        if self.control == "tree" and self.tree is None:
            raise ValueError('a group needs a `tree` (or `"control": "external"`)')
        if self.control == "external" and self.tree is not None:
            raise ValueError("an external group has no tree: remove `tree` or the `control` key")
        if self.control == "external" and (self.think_every != 1 or self.lod is not None):
            raise ValueError(
                "an external group has no tree to think: remove `think_every` and `lod`"
            )
        if self.lod is not None and self.lod.far_think_every < self.think_every:
            raise ValueError(
                f"lod.far_think_every ({self.lod.far_think_every}) is below think_every "
                f"({self.think_every}): far agents would think more often than near ones"
            )
        if isinstance(self.spawn, PositionsSpawn) and len(self.spawn.points) != self.count:
            raise ValueError(
                f"count is {self.count} but spawn lists {len(self.spawn.points)} positions"
            )
        if self.names is not None:
            if len(self.names) > self.count:
                raise ValueError(f"{len(self.names)} names for a count of {self.count}")
            if len(set(self.names)) != len(self.names):
                dup = next(n for n in self.names if self.names.count(n) > 1)
                raise ValueError(f"agent name {dup!r} is used twice")
        return self

    def agent_ids(self) -> list[str]:
        """Ids of all agents of the group, in row order."""
        given = list(self.names or [])
        return given + [f"{self.name}-{i}" for i in range(len(given), self.count)]
