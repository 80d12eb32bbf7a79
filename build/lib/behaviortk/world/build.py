"""World and agents from a validated definition.

Randomness: every agent draws from its own stream, a counter-based hash of
the run's seed, its id and the tick (``world/streams.py``): spawn positions
and headings use the ``SPAWN`` tick, so they never depend on other agents,
on the order of groups or on agents spawned later.

Units: the file speaks degrees, the state radians.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from behaviortk.vec import Array, from_angle, normalize, perp
from behaviortk.world.rows import stack
from behaviortk.world.state import Agents, Path, World, Zone
from behaviortk.world.streams import SPAWN, uniforms

if TYPE_CHECKING:
    from behaviortk.format.definition import Definition
    from behaviortk.format.group import Group
    from behaviortk.format.world import Obstacle, PathDef, Wall, WorldDef


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
    zones: Sequence[Any] = (),
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
        zones={z.name: zone_of(z) for z in zones},
    )


def zone_of(z: Any) -> Zone:
    if z.kind == "circle":
        return Zone(z.name, "circle", np.array(z.at, dtype=np.float64), radius=float(z.radius))
    low, high = np.array(z.min, dtype=np.float64), np.array(z.max, dtype=np.float64)
    return Zone(z.name, "rect", (low + high) / 2.0, low=low, high=high)


Draw = Callable[[int, np.ndarray, int, int], Array]
"""``streams.uniforms`` or a function drawing the same numbers (the compiled one)."""


def spawn_state(
    group: Group, ids: np.ndarray, seed: int, first: int, draw: Draw = uniforms
) -> tuple[Array, Array]:
    """Positions and unit headings of agents ``ids``, the ``first``-th onward of ``group``.

    Uniform in an area and random headings come from each agent's own stream
    (``streams.uniforms(seed, id, SPAWN, ...)``: columns 0-1 position, 2 heading);
    listed points are taken in order (cycling, for agents spawned later) and a
    ring places the k-th agent at angle ``2 pi k / count``.
    """
    n = ids.size
    u = draw(seed, ids, SPAWN, 3)
    spawn = group.spawn
    if spawn.kind == "area":
        lo = np.array(spawn.min, dtype=np.float64)
        hi = np.array(spawn.max, dtype=np.float64)
        pos = lo + u[:, :2] * (hi - lo)
    elif spawn.kind == "positions":
        points = np.array(spawn.points, dtype=np.float64).reshape(-1, 2)
        order = first + np.arange(n)
        pos = points[order % len(points)] if len(points) else np.zeros((n, 2))
    else:
        order = first + np.arange(n)
        angles = 2.0 * np.pi * order / max(group.count, 1)
        pos = np.array(spawn.center, dtype=np.float64) + spawn.radius * from_angle(angles)
    if group.heading == "random":
        heading = from_angle(u[:, 2] * 2.0 * np.pi)
    else:
        heading = np.tile(from_angle(np.radians(float(group.heading))), (n, 1))
    return pos, heading


GROUP_CONSTANTS = (
    "mass",
    "max_speed",
    "max_force",
    "max_turn_rate",
    "max_angular_accel",
    "max_rotation",
    "radius",
    "view_distance",
    "fov",
    "max_neighbours",
)
"""The per-agent constants ``group_agents`` sets from a group's fields, the same for every agent
of a group (a replay and a tuning change rebuild them from the definition)."""


def group_constants(group: Group) -> dict[str, Any]:
    """The value each of ``GROUP_CONSTANTS`` takes for every agent of ``group`` (radians;
    an unlimited turn rate is infinite)."""
    turn = np.inf if group.max_turn_rate is None else np.radians(group.max_turn_rate)
    return {
        "mass": float(group.mass),
        "max_speed": float(group.max_speed),
        "max_force": float(group.max_force),
        "max_turn_rate": float(turn),
        "max_angular_accel": float(np.radians(group.max_angular_accel)),
        "max_rotation": float(np.radians(group.max_rotation)),
        "radius": float(group.radius),
        "view_distance": float(group.view_distance),
        "fov": float(np.radians(group.fov)),
        "max_neighbours": np.int64(group.max_neighbours),
    }


def spawned_rows(
    group: Group,
    ids: np.ndarray,
    seed: int,
    first: int = 0,
    *,
    pos: Array | None = None,
    vel: Array | None = None,
    heading: Array | None = None,
    draw: Draw = uniforms,
    constants: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Every per-agent field (``world/rows.PER_AGENT``) of new agents ``ids`` of one group:
    arrays for their state (the spawn rule unless given), one value for each of the group's
    constants (``Simulation.spawn`` writes them into its rows without making a whole
    ``Agents``; it passes ``group_constants(group)`` worked out once)."""
    ids = np.asarray(ids, dtype=np.int64)
    n = ids.size
    spawn_pos, spawn_heading = spawn_state(group, ids, seed, first, draw)
    p = spawn_pos if pos is None else np.array(pos, dtype=np.float64).reshape(n, 2)
    h = spawn_heading if heading is None else np.array(heading, dtype=np.float64).reshape(n, 2)
    v = h * group.speed if vel is None else np.array(vel, dtype=np.float64).reshape(n, 2)
    return {
        "ids": ids,
        "pos": p,
        "vel": v,
        "heading": h,
        "smoothed_heading": h.copy(),
        "orientation": np.arctan2(h[:, 1], h[:, 0]),
        "rotation": np.zeros(n),
        "force": np.zeros((n, 2)),
        **(group_constants(group) if constants is None else constants),
    }


def group_agents(
    group: Group,
    ids: np.ndarray,
    names: Sequence[str],
    seed: int,
    first: int = 0,
    *,
    pos: Array | None = None,
    vel: Array | None = None,
    heading: Array | None = None,
) -> Agents:
    """Agents ``ids`` of one group: the group's constants, its spawn rule unless given."""
    rows = spawned_rows(group, ids, seed, first, pos=pos, vel=vel, heading=heading)
    n = rows["ids"].size
    arrays = {
        field: value if isinstance(value, np.ndarray) else np.full(n, value)
        for field, value in rows.items()
    }
    make: Any = Agents  # the per-agent arrays are keyword arguments by name
    return make(
        names=list(names),
        group_names=[group.name],
        group=np.zeros(n, dtype=np.int64),
        slices={group.name: slice(0, n)},
        **arrays,
    )


def build_agents(groups: Sequence[Group], seed: int) -> Agents:
    """All groups' agents, contiguous per group in the given order, ids 0..N-1 in row order."""
    parts, first_id = [], 0
    for g in groups:
        ids = np.arange(first_id, first_id + g.count, dtype=np.int64)
        parts.append(group_agents(g, ids, g.agent_ids(), seed))
        first_id += g.count
    return stack(parts, [g.name for g in groups])


def build(definition: Definition, seed: int | None = None) -> tuple[World, Agents]:
    """World and agents of ``definition`` (seed: the file's unless given)."""
    world = build_world(
        definition.world, definition.obstacles, definition.walls, definition.paths, definition.zones
    )
    return world, build_agents(definition.groups, definition.world.seed if seed is None else seed)
