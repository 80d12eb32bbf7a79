"""Building World and Agents from format models: spawn kinds, ids, units, wall normals."""

from __future__ import annotations

import numpy as np

from behaviortk.format.group import Group
from behaviortk.format.world import Obstacle, PathDef, Wall, WorldDef
from behaviortk.world.build import build_agents, build_world, wall_geometry
from behaviortk.world.streams import SPAWN, uniforms


def group(**kw: object) -> Group:
    base: dict[str, object] = {"name": "g", "count": 3, "tree": "t"}
    base.update(kw)
    return Group.model_validate(base)


def test_wall_normals_face_the_inside_side() -> None:
    """Walking (0,0)->(10,0), left is +y: normal (0,1); right is (0,-1).
    (0,0)->(0,5) with left inside: perp((0,5)) = (-5,0) -> (-1,0)."""
    walls = [
        Wall.model_validate({"from": [0, 0], "to": [10, 0], "inside": "left"}),
        Wall.model_validate({"from": [0, 0], "to": [10, 0], "inside": "right"}),
        Wall.model_validate({"from": [0, 0], "to": [0, 5]}),
    ]
    a, b, n = wall_geometry(walls)
    np.testing.assert_allclose(a, [[0, 0], [0, 0], [0, 0]])
    np.testing.assert_allclose(b, [[10, 0], [10, 0], [0, 5]])
    np.testing.assert_allclose(n, [[0, 1], [0, -1], [-1, 0]])


def test_build_world_geometry_and_paths() -> None:
    w = build_world(
        WorldDef(width=800, height=600, edges="bounce"),
        [Obstacle(at=(10, 20), radius=5)],
        [],
        [PathDef(name="p", points=[(0, 0), (5, 5)], looped=True)],
    )
    assert (w.width, w.height, w.edges) == (800.0, 600.0, "bounce")
    np.testing.assert_allclose(w.obstacle_pos, [[10, 20]])
    np.testing.assert_allclose(w.obstacle_radius, [5])
    assert w.wall_a.shape == (0, 2)
    np.testing.assert_allclose(w.paths["p"].points, [[0, 0], [5, 5]])
    assert w.paths["p"].looped


def test_ring_spawn_evenly_spaced_with_fixed_heading_and_speed() -> None:
    """4 agents on a ring radius 10 about (50,50): angles 0, 90, 180, 270 degrees.
    heading 90 degrees, speed 3 -> v = (0, 3)."""
    g = group(
        count=4, spawn={"kind": "ring", "center": [50, 50], "radius": 10}, heading=90, speed=3
    )
    a = build_agents([g], 0)
    np.testing.assert_allclose(a.pos, [[60, 50], [50, 60], [40, 50], [50, 40]], atol=1e-12)
    np.testing.assert_allclose(a.vel, [[0, 3]] * 4, atol=1e-12)
    np.testing.assert_allclose(a.heading, [[0, 1]] * 4, atol=1e-12)
    np.testing.assert_allclose(a.orientation, [np.pi / 2] * 4)


def test_positions_and_area_spawn_groups_contiguous_with_ids() -> None:
    g1 = group(
        name="red",
        count=2,
        spawn={"kind": "positions", "points": [[1, 2], [3, 4]]},
        heading=0,
        names=["boss"],
    )
    g2 = group(name="blue", count=3, spawn={"kind": "area", "min": [10, 20], "max": [30, 25]})
    a = build_agents([g1, g2], 1)
    assert a.names == ["boss", "red-1", "blue-0", "blue-1", "blue-2"]
    assert a.slices == {"red": slice(0, 2), "blue": slice(2, 5)}
    assert a.group.tolist() == [0, 0, 1, 1, 1] and a.group_names == ["red", "blue"]
    np.testing.assert_allclose(a.pos[:2], [[1, 2], [3, 4]])
    blue = a.pos[2:]
    assert (blue[:, 0] >= 10).all() and (blue[:, 0] <= 30).all()
    assert (blue[:, 1] >= 20).all() and (blue[:, 1] <= 25).all()
    np.testing.assert_allclose(np.hypot(a.heading[:, 0], a.heading[:, 1]), 1.0)
    np.testing.assert_allclose(a.vel, 0.0)


def test_area_spawn_uses_each_agents_own_stream() -> None:
    """Agent ``id`` spawns at ``min + u[:2] * (max - min)`` heading ``2 pi u[2]``, with
    ``u = uniforms(seed, id, SPAWN, 3)``: independent of other agents and groups."""
    g = group(count=2, spawn={"kind": "area", "min": [0, 0], "max": [100, 50]})
    a = build_agents([g], 7)
    u = uniforms(7, np.array([0, 1]), SPAWN, 3)
    np.testing.assert_allclose(a.pos, u[:, :2] * [100, 50])
    angles = u[:, 2] * 2 * np.pi
    np.testing.assert_allclose(a.heading, np.stack([np.cos(angles), np.sin(angles)], axis=1))
    before = group(name="first", count=5, spawn={"kind": "area", "min": [0, 0], "max": [1, 1]})
    shifted = build_agents([before, g], 7)
    np.testing.assert_allclose(
        shifted.pos[5:], uniforms(7, np.arange(5, 7), SPAWN, 3)[:, :2] * [100, 50]
    )


def test_units_converted_to_radians() -> None:
    g = group(
        max_turn_rate=180,
        max_angular_accel=90,
        max_rotation=360,
        fov=360,
        spawn={"kind": "ring", "center": [0, 0], "radius": 1},
    )
    a = build_agents([g], 0)
    np.testing.assert_allclose(a.max_turn_rate, np.pi)
    np.testing.assert_allclose(a.max_angular_accel, np.pi / 2)
    np.testing.assert_allclose(a.max_rotation, 2 * np.pi)
    assert (a.fov / 2 >= np.pi).all()  # all round: the FOV test is skipped
    unlimited = build_agents([group(spawn={"kind": "ring", "center": [0, 0], "radius": 1})], 0)
    assert np.isinf(unlimited.max_turn_rate).all()


def test_empty_group() -> None:
    a = build_agents(
        [group(count=0, spawn={"kind": "ring", "center": [0, 0], "radius": 1})],
        0,
    )
    assert a.n == 0 and a.slices == {"g": slice(0, 0)}
