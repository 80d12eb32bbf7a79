"""can_see: view distance, field of view and line of sight, worked by hand."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from steering_support import node

from behaviortk.leaves.conditions import can_see
from behaviortk.registry import default
from behaviortk.sense.sensing import Sense
from behaviortk.world.build import wall_geometry
from behaviortk.world.factory import make_agents
from behaviortk.world.sight import line_blocked
from behaviortk.world.state import World


def world(obstacles: list[tuple[float, float, float]] = (), walls: Any = ()) -> World:  # type: ignore[assignment]
    from behaviortk.format.world import Wall

    a, b, normal = wall_geometry([Wall.model_validate({"from": w[0], "to": w[1]}) for w in walls])
    return World(
        width=400.0,
        height=400.0,
        edges="contain",
        obstacle_pos=np.array([o[:2] for o in obstacles], dtype=float).reshape(-1, 2),
        obstacle_radius=np.array([o[2] for o in obstacles], dtype=float),
        wall_a=a,
        wall_b=b,
        wall_normal=normal,
    )


def sees(w: World, target: list[float], **fields: Any) -> bool:
    """An observer at (100, 100) heading +x (view 150, fov 180) looking at ``target``."""
    agents = make_agents(
        [[100.0, 100.0], target], heading=[[1, 0], [1, 0]], view_distance=150.0, fov=np.pi
    )
    model = node({"type": "can_see", "target": {"kind": "agent", "id": "agents-1"}, **fields})
    sense = Sense(w, agents, np.zeros((2, 1)), 0, 0.0, registries=default())
    return bool(can_see(model, sense, "agents", np.zeros(2, bool), None)[0])


def test_distance_and_field_of_view() -> None:
    open_world = world()
    assert sees(open_world, [200.0, 100.0])  # 100 ahead
    assert not sees(open_world, [260.0, 100.0])  # 160 > view 150
    assert sees(open_world, [260.0, 100.0], distance=200)
    assert not sees(open_world, [50.0, 100.0])  # behind: outside a 180 degree view
    assert sees(open_world, [100.0, 180.0])  # exactly 90 degrees off: on the edge, seen
    assert not sees(open_world, [60.0, 130.0], fov=180)  # behind and to the side
    assert sees(open_world, [60.0, 130.0], fov=360)


@pytest.mark.parametrize(
    ("obstacle", "blocked"),
    [((150.0, 105.0, 10.0), True), ((150.0, 120.0, 10.0), False), ((250.0, 100.0, 10.0), False)],
)
def test_obstacles_block_the_line(obstacle: tuple[float, float, float], blocked: bool) -> None:
    """Line (100,100) -> (200,100): an obstacle 5 off the line with radius 10 blocks, 20 off
    does not, one beyond the target does not."""
    w = world([obstacle])
    assert sees(w, [200.0, 100.0]) is not blocked
    assert sees(w, [200.0, 100.0], line_of_sight=False)


def test_walls_block_only_where_they_cross() -> None:
    assert not sees(world(walls=[([150, 50], [150, 150])]), [200.0, 100.0])
    assert sees(world(walls=[([150, 110], [150, 150])]), [200.0, 100.0])  # passes below it
    assert sees(world(walls=[([250, 50], [250, 150])]), [200.0, 100.0])  # beyond the target
    p, q = np.array([[0.0, 0.0], [0.0, 0.0]]), np.array([[10.0, 0.0], [0.0, 10.0]])
    walled = world(walls=[([5, -1], [5, 1])])
    assert line_blocked(p, q, walled).tolist() == [True, False]


def test_both_engines_agree_among_walls_and_obstacles() -> None:
    import json

    from engine_support import definition

    import behaviortk
    from behaviortk.sim.simulation import Simulation

    root = {
        "type": "selector",
        "memory": False,
        "children": [
            {
                "type": "sequence",
                "memory": False,
                "children": [
                    {"type": "can_see", "target": {"kind": "nearest", "group": "b"}},
                    {"type": "seek", "target": {"kind": "nearest", "group": "b"}},
                ],
            },
            {"type": "wander"},
        ],
    }
    data = definition(
        root,
        count=12,
        others=[
            {
                "name": "b",
                "count": 3,
                "tree": "idle",
                "spawn": {"kind": "area", "min": [0, 0], "max": [400, 400]},
            }
        ],
    )
    data["obstacles"] = [{"at": [200, 200], "radius": 30}]
    data["walls"] = [{"from": [100, 0], "to": [100, 250]}]
    scenario = behaviortk.load_text(json.dumps(data), "see.json")
    ref, batch = (Simulation(scenario, engine=e) for e in ("py_trees", "batch"))
    saw = set()
    for _ in range(60):
        ref.step()
        batch.step()
        assert np.array_equal(ref.decisions["a"].status, batch.decisions["a"].status)
        assert np.array_equal(ref.agents.pos, batch.agents.pos)
        saw |= set(ref.decisions["a"].status[:, 2].tolist())
    assert saw >= {2, 3}  # some agents saw a target, some did not
