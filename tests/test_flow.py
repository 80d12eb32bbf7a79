"""The ``flow`` primitive (issue 14, item 3): distance fields worked out by hand, the bilinear
lookup, the force, both engines alike, the located errors of bad input, and the evacuation."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from engine_support import definition
from test_equivalence import assert_same_decisions

from behaviortk.cli import main
from behaviortk.commands.validate import check
from behaviortk.format.issues import DefinitionError
from behaviortk.format.loader import load, load_text
from behaviortk.leaves.conditions import inside
from behaviortk.sim.simulation import Simulation
from behaviortk.steering.flow import flow_force
from behaviortk.tree.status import RUNNING, SUCCESS
from behaviortk.world import flow_field
from behaviortk.world.flow_field import FlowField, Goal, bilinear, compute, distances
from behaviortk.world.overlap import overlap_fraction
from behaviortk.world.state import World

ROOT = Path(__file__).resolve().parents[1]
INVALID = ROOT / "tests" / "fixtures" / "invalid"
R2 = math.sqrt(2.0)


def world(width: float, height: float, walls: list[tuple[Any, Any]] = ()) -> World:  # type: ignore[assignment]
    a = np.array([w[0] for w in walls], dtype=np.float64).reshape(-1, 2)
    b = np.array([w[1] for w in walls], dtype=np.float64).reshape(-1, 2)
    return World(width, height, "contain", wall_a=a, wall_b=b, wall_normal=np.zeros_like(a))


# ------------------------------------------------------------------ the field by hand
def test_straight_and_diagonal_steps_on_an_open_grid() -> None:
    # 4 x 3 cells of 10; goal cell (row 0, column 0). Octile distances: a straight step 10,
    # a diagonal 10 sqrt(2); (row 1, col 1) one diagonal; (row 2, col 3) two diagonals and
    # one straight step: 20 sqrt(2) + 10 = 38.28
    f = compute(world(40, 30), Goal(point=(5.0, 5.0)), 10.0, 0.0)
    expected = np.array(
        [
            [0, 10, 20, 30],
            [10, 10 * R2, 10 + 10 * R2, 20 + 10 * R2],
            [20, 10 + 10 * R2, 20 * R2, 10 + 20 * R2],
        ]
    )
    np.testing.assert_allclose(f.distance, expected, rtol=0, atol=1e-12)
    assert f.goal.sum() == 1 and f.goal[0, 0]


def test_the_way_around_a_wall_without_cutting_its_corner() -> None:
    # 5 x 3 cells of 10; a wall x = 25 from y = 0 to 15 blocks column 2, rows 0 and 1.
    # Goal (45, 5): cell (0, 4). From the goal: (1, 3) and (1, 4) are sqrt2 and 1 cells,
    # (2, 3) is 1 + sqrt2, (2, 2) is 2 + sqrt2 (the diagonal (1, 3) -> (2, 2) passes the
    # blocked (1, 2): not allowed), (2, 1) is 3 + sqrt2, (1, 1) is 4 + sqrt2 (straight
    # from (2, 1): the diagonal from (2, 2) passes (1, 2) again) and (0, 0) is 4 + 2 sqrt2.
    w = world(50, 30, [((25, 0), (25, 15))])
    f = compute(w, Goal(point=(45.0, 5.0)), 10.0, 0.0)
    assert f.blocked.tolist() == [
        [False, False, True, False, False],
        [False, False, True, False, False],
        [False, False, False, False, False],
    ]
    d = f.distance / 10.0
    assert d[1, 3] == pytest.approx(R2) and d[1, 4] == pytest.approx(1.0)
    assert d[2, 2] == pytest.approx(2 + R2)
    assert d[2, 1] == pytest.approx(3 + R2)
    assert d[1, 1] == pytest.approx(4 + R2)  # 2 + 2 sqrt2 = 4.83 if it cut the corner
    assert d[0, 0] == pytest.approx(4 + 2 * R2)
    assert np.isinf(f.distance[0, 2]) and np.isinf(f.distance[1, 2])


def test_a_wall_on_a_grid_line_blocks_both_sides_and_a_diagonal_wall_does_not_leak() -> None:
    w = world(40, 40, [((20, 0), (20, 30))])
    blocked = flow_field.blocked_cells(w, 10.0, 0.0)
    assert blocked[:, 1].tolist() == blocked[:, 2].tolist() == [True, True, True, True]
    # a diagonal wall through the grid's corners, from (0, 40) to (40, 0): nothing on the
    # lower-left side reaches the upper-right goal
    diagonal = world(40, 40, [((0, 40), (40, 0))])
    f = compute(diagonal, Goal(point=(35.0, 35.0)), 10.0, 0.0)
    assert np.isinf(f.distance[0, 0]) and np.isinf(f.distance[1, 1])


def test_obstacles_grow_by_the_agents_radius() -> None:
    # an obstacle of radius 4 at (25, 25): centre-to-square distance < 4 blocks only cell
    # (2, 2); grown by a radius of 3 (to 7), the 4 cells sharing an edge with it (5 away)
    # are blocked too, the diagonal ones (5 sqrt2 = 7.07 away) are not
    w = World(
        50, 50, "contain", obstacle_pos=np.array([[25.0, 25.0]]), obstacle_radius=np.array([4.0])
    )
    assert flow_field.blocked_cells(w, 10.0, 0.0).sum() == 1
    grown = flow_field.blocked_cells(w, 10.0, 3.0)
    assert grown.sum() == 5 and grown[2, 1] and grown[1, 2] and not grown[1, 1]


def test_clearance_makes_cells_near_blocked_ones_dearer() -> None:
    # one row of 5 cells of 10, cell 0 blocked (an obstacle of radius 1 at (5, 5)); cells
    # 1..4 are 10, 20, 30, 40 from it. Clearance 20: cost 1 + clip(1 - (d - 10) / 20, 0, 1)
    # = 2, 1.5, 1, 1. From the goal (cell 4) each step costs 10 x the mean of its two cells:
    # 4->3: 10, 3->2: 12.5, 2->1: 17.5; so 0, 10, 22.5, 40 (40 without clearance: 30)
    w = World(
        50, 10, "contain", obstacle_pos=np.array([[5.0, 5.0]]), obstacle_radius=np.array([1.0])
    )
    plain = compute(w, Goal(point=(45.0, 5.0)), 10.0, 0.0)
    dear = compute(w, Goal(point=(45.0, 5.0)), 10.0, 0.0, clearance=20.0)
    np.testing.assert_allclose(plain.distance[0, 1:], [30, 20, 10, 0])
    np.testing.assert_allclose(dear.distance[0, 1:], [40, 22.5, 10, 0])
    assert np.isinf(dear.distance[0, 0])


def test_gradient_of_a_straight_field_by_hand() -> None:
    # one row, distances 0 10 20 30 40: forward, central and backward differences all 1
    f = compute(world(50, 10), Goal(point=(5.0, 5.0)), 10.0, 0.0)
    np.testing.assert_allclose(f.distance[0], [0, 10, 20, 30, 40])
    np.testing.assert_allclose(f.gradient[0], [[1, 0]] * 5)


def test_zone_goals_are_the_cells_whose_centre_is_inside() -> None:
    from behaviortk.world.state import Zone

    zone = Zone(
        "exit",
        "rect",
        np.array([35.0, 15.0]),
        low=np.array([30.0, 0.0]),
        high=np.array([40.0, 30.0]),
    )
    f = compute(world(50, 30), Goal(zone=zone), 10.0, 0.0)
    assert f.goal[:, 3].all() and f.goal.sum() == 3
    assert f.distance[1, 0] == pytest.approx(30.0)


def test_dijkstra_with_many_sources_takes_the_nearest() -> None:
    free = np.ones((1, 6), dtype=bool)
    sources = np.array([[True, False, False, False, False, True]])
    np.testing.assert_allclose(distances(free, sources, 2.0)[0], [0, 2, 4, 4, 2, 0])


# ------------------------------------------------------------------ lookup and force
def test_bilinear_lookup_by_hand() -> None:
    values = np.array([[[1.0], [2.0]], [[3.0], [4.0]]])
    # (8, 12) with cells of 10: u = 0.3, v = 0.7; weights 0.7 * 0.3 = 0.21 on (0, 0),
    # 0.3 * 0.3 = 0.09 on (0, 1), 0.7 * 0.7 = 0.49 on (1, 0), 0.3 * 0.7 = 0.21 on (1, 1):
    # 0.21 + 0.18 + 1.47 + 0.84 = 2.70. Outside the centres, clamped: (-5, 100) reads (1, 0).
    out = bilinear(values, 10.0, np.array([[8.0, 12.0], [-5.0, 100.0], [5.0, 5.0]]))
    np.testing.assert_allclose(out[:, 0], [2.70, 3.0, 1.0])


def test_force_is_desired_minus_velocity_by_hand() -> None:
    f = compute(world(50, 10), Goal(point=(5.0, 5.0)), 10.0, 0.0)
    pos = np.array([[25.0, 5.0], [7.0, 5.0]])
    vel = np.array([[10.0, 20.0], [3.0, -4.0]])
    # gradient (1, 0) at x = 25: desired = 50 * (-1, 0); force = (-50 - 10, 0 - 20).
    # (7, 5) stands in the goal cell: desired 0, force = -velocity.
    force = flow_force(f, pos, vel, np.array([50.0, 50.0]))
    np.testing.assert_allclose(force, [[-60.0, -20.0], [-3.0, 4.0]])


def flow_leaf(at: list[float], cell: float = 10.0) -> dict[str, Any]:
    return {"type": "flow", "target": {"kind": "point", "at": at}, "cell_size": cell}


def test_the_leaf_steers_and_succeeds_in_the_goal_cell() -> None:
    d = definition(flow_leaf([5.0, 5.0]), count=2, positions=[[25.0, 5.0], [7.0, 5.0]])
    d["world"].update(width=50, height=10)
    d["groups"][0].update(speed=20, max_speed=50, max_force=1000)
    d["groups"][0]["heading"] = 90  # velocity (0, 20)
    sim = Simulation(load_text(json.dumps(d)), engine="py_trees")
    sim.step()
    _rows, force = sim.contributions["a"][0]
    # gradient (1, 0) at (25, 5): (-50, 0) - (0, 20); in the goal cell: -(0, 20)
    np.testing.assert_allclose(force, [[-50.0, -20.0], [0.0, -20.0]], atol=1e-12)
    assert sim.decisions["a"].status[:, 0].tolist() == [RUNNING, SUCCESS]


def test_the_field_is_computed_once_not_every_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = flow_field.compute

    def counted(*args: Any) -> FlowField:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(flow_field, "compute", counted)
    monkeypatch.setattr(flow_field, "_cache", type(flow_field._cache)())
    d = definition(flow_leaf([333.0, 17.0]), count=5)
    sim = Simulation(load_text(json.dumps(d)), engine="batch")
    for _ in range(30):
        sim.step()
    assert len(calls) == 1  # validation computed it; the 30 ticks read the cache


SCENE: dict[str, Any] = {
    "name": "flow_scene",
    "world": {"width": 300, "height": 200, "edges": "contain", "dt": 0.05, "seed": 5},
    "obstacles": [{"at": [150, 60], "radius": 25}],
    "walls": [{"from": [200, 0], "to": [200, 140]}],
    "zones": [{"name": "goal", "kind": "circle", "at": [270, 40], "radius": 20}],
    "groups": [
        {
            "name": "a",
            "count": 40,
            "spawn": {"kind": "area", "min": [10, 10], "max": [100, 190]},
            "radius": 3,
            "max_speed": 60,
            "view_distance": 15,
            "tree": "t",
        }
    ],
    "trees": {
        "t": {
            "root": {
                "type": "selector",
                "memory": False,
                "children": [
                    {"type": "in_zone", "zone": "goal"},
                    {
                        "type": "blend",
                        "children": [
                            {
                                "type": "flow",
                                "target": {"kind": "zone", "zone": "goal"},
                                "cell_size": 8,
                            },
                            {"type": "separation", "weight": 30},
                        ],
                    },
                ],
            }
        }
    },
}


@pytest.mark.parametrize("non_penetration", [False, True])
def test_both_engines_identical_around_an_obstacle_and_a_wall(non_penetration: bool) -> None:
    scene = copy.deepcopy(SCENE)
    scene["world"]["non_penetration"] = non_penetration
    scenario = load_text(json.dumps(scene))
    a, b = (Simulation(scenario, engine=e) for e in ("py_trees", "batch"))
    for t in range(200):
        a.step()
        b.step()
        assert_same_decisions(a, b, t)
        np.testing.assert_array_equal(a.agents.pos, b.agents.pos)
    # the goal is behind the wall: they went round its end (y > 140) to get there
    assert (a.agents.pos[:, 0] > 200).mean() > 0.8


# ------------------------------------------------------------------ bad input
FLOW_FIXTURES = {
    "flow_zero_cell_size": "greater_than_equal",
    "flow_too_many_cells": "flow_grid_too_large",
    "flow_goal_in_obstacle": "flow_goal_in_obstacle",
    "flow_unreachable_goal": "flow_unreachable",
    "flow_spawn_enclosed": "flow_unreachable",
    "flow_moving_target": "value_error",
}


@pytest.mark.parametrize("name", sorted(FLOW_FIXTURES))
def test_bad_input_is_one_located_error(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(INVALID)
    lines = check(f"{name}.json", schema_only=False, max_agents=200_000)
    assert len(lines) == 1
    head = lines[0]
    assert head.startswith(f"{name}.json:") and f"[{FLOW_FIXTURES[name]}]" in head
    assert ": /trees/main/root/" in head  # a JSON pointer to the flow node's field
    assert main(["validate", f"{name}.json"]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err


def test_a_grid_larger_than_the_memory_available_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 40 x 30 cells of 10 over the 400 x 300 world: 1,200 cells x 300 bytes = 360,000 > 300,000
    monkeypatch.setattr(flow_field, "available_memory", lambda: 300_000)
    d = definition(flow_leaf([333.0, 17.0]), count=2)
    d["world"].update(width=400, height=300)
    with pytest.raises(DefinitionError) as err:
        load_text(json.dumps(d))
    (issue,) = err.value.issues
    assert issue.pointer == "/trees/main/root/cell_size" and issue.kind == "flow_grid_too_large"
    assert "1,200 cells" in issue.message and "GiB are available" in issue.message


def test_a_goal_covered_after_loading_gives_no_force_and_no_traceback() -> None:
    d = definition(flow_leaf([333.0, 17.0]), count=3)
    sim = Simulation(load_text(json.dumps(d)), engine="batch")
    sim.world.obstacle_pos = np.array([[333.0, 17.0]])  # dragged onto the goal in the viewer
    sim.world.obstacle_radius = np.array([30.0])
    sim.step()
    assert not sim.contributions["a"][0][1].any()
    assert (sim.decisions["a"].status[:, 0] == RUNNING).all()


# ------------------------------------------------------------------ evacuation
def small_evacuation() -> dict[str, Any]:
    """definitions/evacuation.json with 500 agents (the same room, doors and trees)."""
    raw = copy.deepcopy(load(ROOT / "definitions" / "evacuation.json").raw)
    raw["groups"][0]["count"] = 500
    return dict(raw)


def test_evacuation_empties_the_room_without_overlap() -> None:
    sim = Simulation(load_text(json.dumps(small_evacuation())), engine="batch")
    room = sim.world.zones["room"]
    worst = 0.0
    for _ in range(720):
        sim.step()
        worst = max(worst, overlap_fraction(sim.world, sim.agents))
    assert worst < 0.01
    left = inside(room, sim.agents.pos, sim.world).mean()
    assert left < 0.05, f"{left:.0%} still in the room after 720 ticks"


def test_shipped_evacuation_runs_its_crowd_without_overlap() -> None:
    scenario = load(ROOT / "definitions" / "evacuation.json")
    assert scenario.definition.groups[0].count >= 3000
    assert scenario.definition.world.non_penetration
    sim = Simulation(scenario, engine="batch")
    for _ in range(30):
        sim.step()
        assert overlap_fraction(sim.world, sim.agents) < 0.01
