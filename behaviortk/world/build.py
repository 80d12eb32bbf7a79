"""World and agents from a validated definition.

Randomness: ``generators(seed)`` splits ``SeedSequence(seed)`` into two
independent streams, ``[0]`` for spawning (positions in areas, random
headings) and ``[1]`` for the per-tick numbers (``sense.rand``), so changing a
group's spawn never shifts the random numbers a run draws later. Spawning
draws, group by group in file order: the area positions (``(count, 2)``
uniform), then the random headings (``count`` uniform angles).

Units: the file speaks degrees, the state radians.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from behaviortk.vec import Array, from_angle, normalize, perp
from behaviortk.world.factory import make_agents
from behaviortk.world.state import Agents, Path, World

if TYPE_CHECKING:
    from behaviortk.format.definition import Definition
    from behaviortk.format.group import Group
    from behaviortk.format.world import Obstacle, PathDef, Wall, WorldDef


def generators(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """``(spawn_rng, tick_rng)``: children 0 and 1 of ``SeedSequence(seed)``."""
    spawn, tick = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(spawn), np.random.default_rng(tick)


def wall_geometry(walls: Sequence[Wall]) -> tuple[Array, Array, Array]:
    """Segment ends and unit normals pointing to the ``inside`` side.

    Walking from ``from`` to ``to``, "left" is the direction rotated +90 degrees
    (counter-clockwise, y up): normal = perp(to - from) / |to - from|.
    """
    if not walls:
        return np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2))
    a = np.array([w.start for w in walls], dtype=np.float64)
    b = np.array([w.to for w in walls], dtype=np.float64)
    side = np.array([1.0 if w.inside == "left" else -1.0 for w in walls])
    normal = normalize(perp(b - a)) * side[:, None]
    return a, b, normal


def build_world(
    world: WorldDef,
    obstacles: Sequence[Obstacle] = (),
    walls: Sequence[Wall] = (),
    paths: Sequence[PathDef] = (),
) -> World:
    wall_a, wall_b, wall_normal = wall_geometry(walls)
    return World(
        width=float(world.width),
        height=float(world.height),
        edges=world.edges,
        obstacle_pos=np.array([o.at for o in obstacles], dtype=np.float64).reshape(-1, 2),
        obstacle_radius=np.array([o.radius for o in obstacles], dtype=np.float64),
        wall_a=wall_a,
        wall_b=wall_b,
        wall_normal=wall_normal,
        paths={
            p.name: Path(p.name, np.array(p.points, dtype=np.float64), bool(p.looped))
            for p in paths
        },
    )


def spawn_positions(group: Group, rng: np.random.Generator) -> Array:
    """Start positions: uniform in an area, the listed points, or evenly on a ring from angle 0."""
    n = group.count
    spawn = group.spawn
    if spawn.kind == "area":
        lo = np.array(spawn.min, dtype=np.float64)
        hi = np.array(spawn.max, dtype=np.float64)
        return lo + rng.random((n, 2)) * (hi - lo)
    if spawn.kind == "positions":
        return np.array(spawn.points, dtype=np.float64).reshape(n, 2)
    angles = 2.0 * np.pi * np.arange(n) / max(n, 1)
    return np.array(spawn.center, dtype=np.float64) + spawn.radius * from_angle(angles)


def spawn_headings(group: Group, rng: np.random.Generator) -> Array:
    if group.heading == "random":
        return from_angle(rng.random(group.count) * 2.0 * np.pi)
    return np.tile(from_angle(np.radians(float(group.heading))), (group.count, 1))


def build_agents(groups: Sequence[Group], rng: np.random.Generator) -> Agents:
    """All groups' agents, contiguous per group in the given order; constants in radians."""
    pos, heading, per = [], [], []
    for g in groups:
        pos.append(spawn_positions(g, rng))
        heading.append(spawn_headings(g, rng))
        per.append(g)

    def column(values: Sequence[float]) -> Array:
        return np.repeat(np.asarray(values, dtype=np.float64), [g.count for g in per])

    h = np.concatenate(heading) if heading else np.zeros((0, 2))
    turn = [np.inf if g.max_turn_rate is None else np.radians(g.max_turn_rate) for g in per]
    return make_agents(
        np.concatenate(pos) if pos else np.zeros((0, 2)),
        h * column([g.speed for g in per])[:, None],
        heading=h,
        groups=[(g.name, g.count) for g in per],
        ids=[agent_id for g in per for agent_id in g.agent_ids()],
        mass=column([g.mass for g in per]),
        max_speed=column([g.max_speed for g in per]),
        max_force=column([g.max_force for g in per]),
        max_turn_rate=column(turn),
        max_angular_accel=column([np.radians(g.max_angular_accel) for g in per]),
        max_rotation=column([np.radians(g.max_rotation) for g in per]),
        radius=column([g.radius for g in per]),
        view_distance=column([g.view_distance for g in per]),
        fov=column([np.radians(g.fov) for g in per]),
        max_neighbours=np.repeat(
            np.array([g.max_neighbours for g in per], dtype=np.int64), [g.count for g in per]
        ),
    )


def build(
    definition: Definition, seed: int | None = None
) -> tuple[World, Agents, np.random.Generator]:
    """World, agents and the per-tick generator for ``definition`` (seed: file's unless given)."""
    spawn_rng, tick_rng = generators(definition.world.seed if seed is None else seed)
    world = build_world(definition.world, definition.obstacles, definition.walls, definition.paths)
    return world, build_agents(definition.groups, spawn_rng), tick_rng
