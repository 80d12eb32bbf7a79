"""World geometry of a definition: bounds and edges, obstacles, walls, paths."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from behaviortk.format.fields import POSITIVE_RANGE, Model, Point, Positive, doc, shown
from behaviortk.format.limits import (
    MAX_DT,
    MAX_HEADING_SMOOTHING,
    MAX_NON_PENETRATION_PASSES,
    MAX_PATH_POINTS,
    MAX_SEED,
    MAX_WORLD_SIDE,
    MIN_DT,
    MIN_WORLD_SIDE,
)

SIDE_RANGE = f"{shown(MIN_WORLD_SIDE)} to {shown(MAX_WORLD_SIDE)}"


class WorldDef(Model):
    """The rectangle agents live in, its edge rule, the time step and the random seed."""

    width: float = doc(
        f"Width of the world, {SIDE_RANGE}",
        unit="world units",
        ge=MIN_WORLD_SIDE,
        le=MAX_WORLD_SIDE,
    )
    height: float = doc(
        f"Height of the world, {SIDE_RANGE}",
        unit="world units",
        ge=MIN_WORLD_SIDE,
        le=MAX_WORLD_SIDE,
    )
    edges: Literal["wrap", "bounce", "contain"] = doc(
        "What happens at the border: wrap (torus), bounce (reflect velocity) or contain (clamp)",
        "wrap",
    )
    dt: float = doc(
        f"Simulation time step, {shown(MIN_DT)} to {shown(MAX_DT)}",
        1 / 60,
        unit="s",
        ge=MIN_DT,
        le=MAX_DT,
    )
    seed: int = doc(
        f"Seed of the random generator (same seed, same run), 0 to 2^63 - 1 ({MAX_SEED:,})",
        0,
        ge=0,
        le=MAX_SEED,
    )
    heading_smoothing: int = doc(
        f"Average the heading over this many ticks (1 = no smoothing), 1 to {MAX_HEADING_SMOOTHING}",
        1,
        ge=1,
        le=MAX_HEADING_SMOOTHING,
    )
    non_penetration: bool = doc(
        "After each tick's move, push overlapping agents apart along the line between their "
        "centres (sharing the overlap by inverse mass; agents of external groups do not move), "
        "and out of obstacles and off walls: Buckland's EnforceNonPenetrationConstraint "
        "(Programming Game AI by Example, ch. 3), relaxed for all agents at once in a few passes "
        "instead of one agent after another. Only positions change",
        False,
    )
    non_penetration_passes: int = doc(
        "Most relaxation passes per tick of non_penetration (they stop once nothing overlaps): "
        "one separates an isolated pair, a packed cluster needs more, each pass after the first "
        "measuring only the agents the one before moved",
        10,
        ge=1,
        le=MAX_NON_PENETRATION_PASSES,
    )


class Obstacle(Model):
    """A solid circle that obstacle avoidance and hide steer around."""

    at: Point = doc("Centre of the circle", unit="world units")
    radius: Positive = doc(f"Radius of the circle, {POSITIVE_RANGE}", unit="world units")


class Wall(Model):
    """A segment that wall avoidance keeps agents away from."""

    start: Point = Field(alias="from", description="First end point [x, y]. Unit: world units.")
    to: Point = doc("Second end point [x, y]", unit="world units")
    inside: Literal["left", "right"] = doc(
        "Which side of the segment (walking from `from` to `to`) faces the agents", "left"
    )

    @model_validator(mode="after")
    def _has_length(self) -> Wall:
        if self.start == self.to:
            raise ValueError("wall has zero length: 'from' and 'to' are the same point")
        return self


class PathDef(Model):
    """A named polyline that path following walks, optionally closed into a loop."""

    name: str = doc("Name the `path` target refers to", min_length=1)
    points: list[Point] = doc(
        f"Waypoints [x, y], 2 to {MAX_PATH_POINTS:,}",
        unit="world units",
        min_length=2,
        max_length=MAX_PATH_POINTS,
    )
    looped: bool = doc("Whether the last point connects back to the first", False)


class CircleZone(Model):
    """A named disc of the world (`in_zone` conditions, `zone` targets: its centre)."""

    name: str = doc("Name conditions and targets refer to (unique among zones)", min_length=1)
    kind: Literal["circle"] = "circle"
    at: Point = doc("Centre [x, y]", unit="world units")
    radius: Positive = doc(f"Radius, {POSITIVE_RANGE}", unit="world units")


class RectZone(Model):
    """A named axis-aligned rectangle of the world (its centre is the `zone` target)."""

    name: str = doc("Name conditions and targets refer to (unique among zones)", min_length=1)
    kind: Literal["rect"] = "rect"
    min: Point = doc("Lower-left corner [x, y]", unit="world units")
    max: Point = doc("Upper-right corner [x, y] (each coordinate >= min's)", unit="world units")

    @model_validator(mode="after")
    def _ordered(self) -> RectZone:
        if self.min[0] > self.max[0] or self.min[1] > self.max[1]:
            raise ValueError(f"zone min {list(self.min)} is not below-left of max {list(self.max)}")
        return self


ZoneDef = Annotated[CircleZone | RectZone, Field(discriminator="kind")]
"""A named region: a circle or a rectangle."""
