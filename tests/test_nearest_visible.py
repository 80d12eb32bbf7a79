"""The `visible` nearest target: the nearest agent the observer can see, exactly.

A hand-worked case, then the search (k nearest candidates, then a masked search
for the rest) against a brute-force reference over every pair with the same
sight test, with the candidate count and the memory budget forced low so the
fallback and its chunks run; then both engines compared on a guard tree.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from engine_support import definition, other_group
from hypothesis import given, settings
from hypothesis import strategies as st
from steering_support import node

import behaviortk
from behaviortk.format.world import Wall
from behaviortk.leaves.conditions import can_see
from behaviortk.registry import default
from behaviortk.sense.sensing import Sense
from behaviortk.sim.simulation import Simulation
from behaviortk.world import visible_nearest
from behaviortk.world.build import wall_geometry
from behaviortk.world.factory import make_agents
from behaviortk.world.sight import sees
from behaviortk.world.spatial import SpatialIndex, displacement
from behaviortk.world.state import World


def make_world(
    width: float = 400.0,
    height: float = 400.0,
    edges: str = "contain",
    obstacles: Any = (),
    walls: Any = (),
) -> World:
    a, b, normal = wall_geometry([Wall.model_validate({"from": p, "to": q}) for p, q in walls])
    return World(
        width=width,
        height=height,
        edges=edges,
        obstacle_pos=np.array([o[:2] for o in obstacles], dtype=float).reshape(-1, 2),
        obstacle_radius=np.array([o[2] for o in obstacles], dtype=float),
        wall_a=a,
        wall_b=b,
        wall_normal=normal,
    )


def test_nearest_visible_by_hand() -> None:
    """Observer at (100, 100) heading +x, view 150, fov 180 (90 either side).

    - (130, 100): 30 away, but the wall x = 115 from y 95 to 105 crosses the line;
    - (80, 100): 20 away, behind (180 degrees off the heading > 90);
    - (160, 130): sqrt(60^2 + 30^2) = 67.08 away, atan(30/60) = 26.6 degrees off, and the
      line passes x = 115 at y = 100 + 15 * 30 / 60 = 107.5, above the wall: seen;
    - (200, 100): 100 away, behind the wall too.
    So the nearest is row 1 (20), the nearest visible row 3 (67.08). Without the wall,
    row 2 (30)."""
    pos = [[100.0, 100.0], [130.0, 100.0], [80.0, 100.0], [160.0, 130.0], [200.0, 100.0]]
    agents = make_agents(
        pos,
        heading=[[1.0, 0.0]] * 5,
        view_distance=150.0,
        fov=np.pi,
        groups=[("guard", 1), ("thief", 4)],
    )
    walled = make_world(walls=[([115.0, 95.0], [115.0, 105.0])])
    sense = Sense(walled, agents, np.zeros((5, 1)), 0, 0.0)
    assert sense.nearest("guard", "thief")[0].tolist() == [2]
    row, dist = sense.nearest_visible("guard", "thief")
    assert row.tolist() == [3]
    assert dist[0] == pytest.approx(np.hypot(60.0, 30.0))
    open_sense = Sense(make_world(), agents, np.zeros((5, 1)), 0, 0.0)
    assert open_sense.nearest_visible("guard", "thief")[0].tolist() == [1]
    # radius 60 < 67.08: nothing visible within it; view 25 < 30: nothing either
    assert sense.nearest_visible("guard", "thief", 60.0)[0].tolist() == [-1]
    spec = node({"type": "seek", "target": {"kind": "nearest", "group": "thief", "visible": True}})
    facts = sense.target(spec.target, "guard")
    assert facts.agent.tolist() == [3]
    assert facts.pos.tolist() == [[160.0, 130.0]]


def brute_force(
    world: World, agents: Any, a: slice, b: slice, reach: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (observer, candidate) through the same sight test; nearest by (dist, row)."""
    n_a = a.stop - a.start
    best = np.full(n_a, -1, dtype=np.int64)
    best_dist = np.full(n_a, np.inf)
    for r in range(n_a):
        i = a.start + r
        j = np.array([x for x in range(b.start, b.stop) if x != i], dtype=np.int64)
        if j.size == 0:
            continue
        p = np.repeat(agents.pos[i][None, :], j.size, axis=0)
        target = p + displacement(p, agents.pos[j], world)
        d = target - p
        dist = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])
        ok = sees(
            p,
            np.repeat(agents.heading[i][None, :], j.size, axis=0),
            target,
            np.ones(j.size, bool),
            np.full(j.size, reach[r]),
            np.full(j.size, 0.5 * agents.fov[i]),
            world,
        )
        if ok.any():
            order = np.lexsort((j[ok], dist[ok]))
            best[r], best_dist[r] = j[ok][order[0]], dist[ok][order[0]]
    return best, best_dist


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n_a=st.integers(1, 25),
    n_b=st.integers(1, 40),
    overlap=st.booleans(),
    edges=st.sampled_from(["wrap", "contain"]),
    candidates=st.sampled_from([1, 2, 8]),
    budget=st.sampled_from([300, 32 * 1024 * 1024]),
    grid=st.booleans(),
)
def test_search_matches_brute_force(
    seed: int,
    n_a: int,
    n_b: int,
    overlap: bool,
    edges: str,
    candidates: int,
    budget: int,
    grid: bool,
) -> None:
    rng = np.random.default_rng(seed)
    n = max(n_a, n_b) if overlap else n_a + n_b
    # on a grid some distances tie exactly: the lower row must win on every path
    pos = rng.integers(0, 12, (n, 2)) * 10.0 if grid else rng.random((n, 2)) * [120.0, 100.0]
    angle = rng.random(n) * 2 * np.pi
    heading = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    agents = make_agents(
        pos, heading=heading, view_distance=rng.random(n) * 80.0, fov=rng.random(n) * 2 * np.pi
    )
    obstacles = [(*(rng.random(2) * [120, 100]), rng.random() * 8 + 1) for _ in range(3)]
    walls = [(rng.random(2) * [120, 100], rng.random(2) * [120, 100]) for _ in range(2)]
    world = make_world(120.0, 100.0, edges, obstacles, [(p.tolist(), q.tolist()) for p, q in walls])
    a = slice(0, n_a)
    b = slice(0, n_b) if overlap else slice(n_a, n_a + n_b)
    reach = np.minimum(agents.view_distance[a], 60.0)
    saved = visible_nearest.CANDIDATES, visible_nearest.SEARCH_BUDGET
    try:
        visible_nearest.CANDIDATES, visible_nearest.SEARCH_BUDGET = candidates, budget
        got = visible_nearest.nearest_visible(
            SpatialIndex(world, agents.pos), a, b, agents.heading[a], reach, 0.5 * agents.fov[a]
        )
    finally:
        visible_nearest.CANDIDATES, visible_nearest.SEARCH_BUDGET = saved
    want = brute_force(world, agents, a, b, reach)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_can_see_agrees_with_the_visible_nearest() -> None:
    """Wherever a visible nearest exists, can_see of it is true (same test, same figures)."""
    rng = np.random.default_rng(5)
    n = 300
    angle = rng.random(n) * 2 * np.pi
    agents = make_agents(
        rng.random((n, 2)) * 400.0,
        heading=np.stack([np.cos(angle), np.sin(angle)], axis=1),
        view_distance=90.0,
        fov=np.radians(120.0),
    )
    world = make_world(
        edges="wrap",
        obstacles=[(100, 100, 20), (300, 250, 30), (200, 320, 15)],
        walls=[([50, 200], [350, 200]), ([200, 0], [200, 150])],
    )
    sense = Sense(world, agents, np.zeros((n, 1)), 0, 0.0, registries=default())
    target = {"kind": "nearest", "group": "agents", "visible": True}
    found = sense.target(node({"type": "seek", "target": target}).target, "agents").valid
    seen = can_see(node({"type": "can_see", "target": target}), sense, "agents", found, None)
    assert found.sum() > 50 and (~found).sum() > 10  # both cases occur
    np.testing.assert_array_equal(seen, found)


GUARD = {
    "type": "selector",
    "memory": False,
    "children": [
        {
            "type": "sequence",
            "memory": False,
            "children": [
                {
                    "type": "in_range",
                    "target": {"kind": "nearest", "group": "b", "visible": True},
                    "radius": 120,
                },
                {"type": "pursuit", "target": {"kind": "nearest", "group": "b", "visible": True}},
            ],
        },
        {"type": "wander"},
    ],
}


def guard_scenario(**kw: Any) -> dict[str, Any]:
    b = {
        "name": "b",
        "count": 20,
        "tree": "idle",
        "spawn": {"kind": "area", "min": [0, 0], "max": [400, 400]},
    }
    data = definition(GUARD, count=15, others=[b], **kw)
    data["groups"][0]["fov"] = 120
    data["groups"][0]["view_distance"] = 150
    data["groups"][0]["heading"] = "random"
    data["obstacles"] = [{"at": [200, 200], "radius": 40}, {"at": [90, 300], "radius": 20}]
    data["walls"] = [{"from": [100, 0], "to": [100, 250]}, {"from": [250, 300], "to": [400, 300]}]
    return data


def test_both_engines_agree_on_a_guard_tree() -> None:
    scenario = behaviortk.load_text(json.dumps(guard_scenario()), "guards.json")
    ref, batch = (Simulation(scenario, engine=e) for e in ("py_trees", "batch"))
    statuses = set()
    for _ in range(80):
        ref.step()
        batch.step()
        assert np.array_equal(ref.decisions["a"].status, batch.decisions["a"].status)
        assert np.array_equal(ref.decisions["a"].emitted, batch.decisions["a"].emitted)
        assert np.array_equal(ref.agents.pos, batch.agents.pos)
        statuses |= set(ref.decisions["a"].status[:, 2].tolist())
    assert statuses >= {2, 3}  # in_range: some saw a b agent near, some did not


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_nothing_visible_fails_the_leaf(engine: str) -> None:
    """The only b agent is behind the guard (heading +x, fov 120): seek fails, and the
    selector falls through to its second child."""
    root = {
        "type": "selector",
        "memory": False,
        "children": [
            {"type": "seek", "target": {"kind": "nearest", "group": "b", "visible": True}},
            {"type": "seek", "target": {"kind": "point", "at": [0, 0]}},
        ],
    }
    data = definition(root, positions=[[200, 200]], others=[other_group("b", [[180, 200]])])
    data["groups"][0]["fov"] = 120
    sim = Simulation(behaviortk.load_text(json.dumps(data), "v.json"), engine)
    sim.step()
    assert sim.decisions["a"].status[0].tolist() == [1, 3, 1]  # RUNNING, FAILURE, RUNNING
