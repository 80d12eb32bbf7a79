"""Derived target kinds: centroid, offset and hide_point, worked by hand, checked against the
primitives they share code with, validated when nested, failing their leaf when they find
nothing, and run on both engines."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from engine_support import definition, other_group
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from steering_support import node, run

import behaviortk
from behaviortk.format.loader import load_text
from behaviortk.registry import Registries, load_plugin
from behaviortk.sense.derived_targets import group_centroid
from behaviortk.sense.sensing import Sense, TargetFacts
from behaviortk.sim.simulation import Simulation
from behaviortk.steering.debug import DebugBuffer
from behaviortk.world.factory import make_agents
from behaviortk.world.state import World

RUNNING, SUCCESS, FAILURE = 1, 2, 3


def facts(
    target: dict[str, Any],
    agents: Any,
    world: World | None = None,
    group: str = "agents",
    registries: Registries | None = None,
) -> TargetFacts:
    """Resolve ``target`` (JSON) for ``group``'s rows on a fresh Sense."""
    spec = node({"type": "seek", "target": target}, registries).target
    w = world or World(400.0, 400.0, "contain")
    sense = Sense(w, agents, np.zeros((agents.n, 1)), 0, 0.0, registries=registries)
    return sense.target(spec, group)


# ------------------------------------------------------------------ centroid
def test_centroid_of_a_group_by_hand() -> None:
    """b at (0, 0), (10, 0), (20, 30): mean (30/3, 30/3) = (10, 10); velocities (3, 0),
    (0, 3), (0, 0): mean (1, 1)."""
    agents = make_agents(
        [[100, 100], [0, 0], [10, 0], [20, 30]],
        [[0, 0], [3, 0], [0, 3], [0, 0]],
        groups=[("a", 1), ("b", 3)],
    )
    f = facts({"kind": "centroid", "group": "b"}, agents, group="a")
    assert_allclose(f.pos, [[10.0, 10.0]])
    assert_allclose(f.vel, [[1.0, 1.0]])
    assert f.valid.tolist() == [True] and f.agent.tolist() == [-1]
    # the agent itself counts when it belongs to the group: (100+0+10+20)/4, (100+0+0+30)/4
    mine = facts(
        {"kind": "centroid", "group": "agents"},
        make_agents([[100, 100], [0, 0], [10, 0], [20, 30]]),
    )
    assert_allclose(mine.pos, [[32.5, 32.5]] * 4)


def test_centroid_on_a_wrapped_world_is_the_circular_mean() -> None:
    """Width 100, wrap: x = 95 and x = 5 are angles 342 and 18 degrees; their mean unit
    vector is (cos 18, 0), angle 0, so x = 0 (a plain mean would say 50). From an agent at
    x = 90 the nearest image of x = 0 is x = 100."""
    w = World(100.0, 100.0, "wrap")
    assert_allclose(
        group_centroid(np.array([[95.0, 40.0], [5.0, 60.0]]), w), [0.0, 50.0], atol=1e-9
    )
    agents = make_agents([[90, 50], [95, 50], [5, 50]], groups=[("a", 1), ("b", 2)])
    f = facts({"kind": "centroid", "group": "b"}, agents, w, group="a")
    assert_allclose(f.pos, [[100.0, 50.0]], atol=1e-9)
    # evenly spread all round x (0, 25, 50, 75: unit vectors cancel): the plain mean 37.5
    spread = np.array([[0.0, 10.0], [25.0, 10.0], [50.0, 10.0], [75.0, 10.0]])
    assert_allclose(group_centroid(spread, w), [37.5, 10.0], atol=1e-9)


def test_centroid_of_neighbours_is_the_flocking_set() -> None:
    """Agent 0 at (0, 0) heading +x, view 50, fov 180: (30, 0) and (0, 40) are in view,
    (-20, 0) is behind, (60, 0) too far: centre ((30 + 0) / 2, (0 + 40) / 2) = (15, 20)."""
    agents = make_agents(
        [[0, 0], [30, 0], [0, 40], [-20, 0], [60, 0]],
        heading=[[1.0, 0.0]] * 5,
        view_distance=50.0,
        fov=np.pi,
    )
    f = facts({"kind": "centroid", "group": "neighbours"}, agents)
    assert_allclose(f.pos[0], [15.0, 20.0])
    assert f.valid[0]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), edges=st.sampled_from(["wrap", "contain"]))
def test_seek_of_the_neighbours_centroid_is_cohesion(seed: int, edges: str) -> None:
    """Cohesion seeks the centre of mass of the neighbours in view; seek of the neighbours'
    centroid is the very same force as cohesion left unnormalised (bit for bit), and fails where cohesion is zero."""
    rng = np.random.default_rng(seed)
    n = 40
    angle = rng.random(n) * 2 * np.pi
    agents = make_agents(
        rng.random((n, 2)) * 200.0,
        rng.normal(size=(n, 2)) * 20.0,
        heading=np.stack([np.cos(angle), np.sin(angle)], axis=1),
        view_distance=40.0,
        fov=np.radians(270.0),
        max_neighbours=3,
    )
    w = World(400.0, 400.0, edges)
    cohesion = run(node({"type": "cohesion", "normalize": False}), agents, w).linear
    target = {"kind": "centroid", "group": "neighbours"}
    seek = run(node({"type": "seek", "target": target}), agents, w).linear
    assert_array_equal(seek, cohesion)
    valid = facts(target, agents, w).valid
    assert_array_equal(valid, np.bincount(sense_pairs(agents, w), minlength=n) > 0)
    assert_array_equal(cohesion[~valid], 0.0)


def sense_pairs(agents: Any, w: World) -> np.ndarray:
    """Observer rows of the flocking neighbour pairs."""
    return Sense(w, agents, np.zeros((agents.n, 1)), 0, 0.0).neighbours("agents").i


# -------------------------------------------------------------------- offset
def test_offset_in_the_target_frame_by_hand() -> None:
    """Leader at (100, 100) heading +y. Offset [10, 5] in its frame: 10 forward (+y) and 5
    to its left (+y turned 90 degrees counter-clockwise is -x): (95, 110). In the world
    frame: (110, 105)."""
    agents = make_agents([[0, 0], [100, 100]], heading=[[1, 0], [0, 1]], names=["me", "lead"])
    lead = {"kind": "agent", "id": "lead"}
    f = facts({"kind": "offset", "target": lead, "offset": [10, 5]}, agents)
    assert_allclose(f.pos[0], [95.0, 110.0])
    f = facts({"kind": "offset", "target": lead, "offset": [10, 5], "frame": "world"}, agents)
    assert_allclose(f.pos[0], [110.0, 105.0])


def test_offset_of_targets_without_a_heading() -> None:
    """A point has no heading: its frame is the world's, [10, 5] -> (60, 55). A moving
    centroid heads along its velocity: b moves at (0, 2), so forward is +y and left -x:
    centroid (50, 50) -> (45, 60)."""
    agents = make_agents(
        [[0, 0], [40, 50], [60, 50]], [[0, 0], [0, 2], [0, 2]], groups=[("a", 1), ("b", 2)]
    )
    point = {"kind": "point", "at": [50, 50]}
    f = facts({"kind": "offset", "target": point, "offset": [10, 5]}, agents, group="a")
    assert_allclose(f.pos, [[60.0, 55.0]])
    centre = {"kind": "centroid", "group": "b"}
    f = facts({"kind": "offset", "target": centre, "offset": [10, 5]}, agents, group="a")
    assert_allclose(f.pos, [[45.0, 60.0]])
    assert_allclose(f.vel, [[0.0, 2.0]])


def test_offset_pursuit_aims_at_the_offset_target() -> None:
    """A still leader: offset_pursuit's aim (no look-ahead needed) is the offset target, in
    the same frame convention: leader (100, 100) heading +y, [-10 ahead, 5 left] -> (95, 90)."""
    agents = make_agents(
        [[95, 60], [100, 100]], heading=[[1, 0], [0, 1]], names=["me", "lead"], max_speed=100
    )
    lead = {"kind": "agent", "id": "lead"}
    debug = DebugBuffer(enabled=True)
    spec = {"type": "offset_pursuit", "target": lead, "offset": [-10, 5]}
    run(node(spec), agents, rows=[0], debug=debug)
    _, aim = debug.gather("crosshair", "point")
    f = facts({"kind": "offset", "target": lead, "offset": [-10, 5]}, agents)
    assert_allclose(aim, [[95.0, 90.0]])
    assert_allclose(f.pos[0], aim[0])


# ---------------------------------------------------------------- hide_point
def test_hide_point_by_hand() -> None:
    """Obstacles (50, 0) r 10 and (500, 500) r 10; threat at (0, 0); agent at (60, 20).
    Spots: (50, 0) + (1, 0) * (10 + 30) = (90, 0) and (500, 500) + (0.707, 0.707) * 40;
    the first is nearer the agent."""
    w = World(
        1000.0,
        1000.0,
        "contain",
        obstacle_pos=np.array([[50.0, 0.0], [500.0, 500.0]]),
        obstacle_radius=np.array([10.0, 10.0]),
    )
    agents = make_agents([[60, 20], [0, 0]], names=["me", "hunter"])
    hunter = {"kind": "agent", "id": "hunter"}
    f = facts({"kind": "hide_point", "threat": hunter}, agents, w)
    assert_allclose(f.pos[0], [90.0, 0.0])
    f = facts({"kind": "hide_point", "threat": hunter, "distance_from_boundary": 5}, agents, w)
    assert_allclose(f.pos[0], [65.0, 0.0])  # (50, 0) + (1, 0) * (10 + 5)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), distance=st.sampled_from([0.0, 12.5, 30.0]))
def test_hide_point_is_where_hide_goes(seed: int, distance: float) -> None:
    """The hide primitive's spot (its debug geometry) and the hide_point target are the same
    numbers: one function computes both."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 6))
    w = World(
        300.0,
        300.0,
        "contain",
        obstacle_pos=rng.random((m, 2)) * 300.0,
        obstacle_radius=rng.random(m) * 20.0 + 2.0,
    )
    agents = make_agents(rng.random((12, 2)) * 300.0, groups=[("me", 10), ("hunter", 2)])
    threat = {"kind": "nearest", "group": "hunter"}
    debug = DebugBuffer(enabled=True)
    spec = {"type": "hide", "target": threat, "distance_from_boundary": distance}
    run(node(spec), agents, w, group="me", debug=debug)
    _, spot = debug.gather("hiding_spot", "point")
    target = {"kind": "hide_point", "threat": threat, "distance_from_boundary": distance}
    assert_array_equal(facts(target, agents, w, group="me").pos, spot)


# ------------------------------------------------------------ nesting, names
def test_nested_targets_take_plugin_kinds() -> None:
    """offset of the plugin `farthest` target: rows at x = 0, 10, 30; the farthest from
    row 0 is row 2 (30, 0), heading +x, so [0, 10] in its frame is (30, 10)."""
    regs = Registries.with_builtins()
    load_plugin("examples.plugins.farthest", regs)
    agents = make_agents([[0, 0], [10, 0], [30, 0]], heading=[[1, 0]] * 3)
    nested = {
        "kind": "offset",
        "target": {"kind": "farthest", "group": "agents"},
        "offset": [0, 10],
    }
    f = facts(nested, agents, registries=regs)
    assert_allclose(f.pos[0], [30.0, 10.0])


def located(data: dict[str, Any]) -> list[str]:
    with pytest.raises(behaviortk.DefinitionError) as err:
        load_text(json.dumps(data), "nested.json")
    return [f"{i.pointer}: {i.message}" for i in err.value.issues]


def test_unknown_names_in_nested_targets_are_located() -> None:
    others = [other_group("b", [[0, 0]])]
    bad_agent = {"kind": "offset", "target": {"kind": "agent", "id": "b-7"}, "offset": [1, 0]}
    data = definition({"type": "seek", "target": bad_agent}, others=others)
    assert located(data) == [
        "/trees/main/root/target/target/id: group 'a': unknown agent 'b-7'; did you mean 'b-0'?"
    ]
    bad_group = {"kind": "hide_point", "threat": {"kind": "centroid", "group": "neighbors"}}
    data = definition({"type": "seek", "target": bad_group}, others=others)
    assert located(data) == [
        "/trees/main/root/target/threat/group: group 'a': unknown group 'neighbors'; "
        "did you mean 'neighbours'? valid: a, b, neighbours"
    ]
    bad_zone = {"kind": "offset", "target": {"kind": "zone", "zone": "exit"}, "offset": [1, 0]}
    data = definition({"type": "in_range", "target": bad_zone, "radius": 3}, others=others)
    assert located(data) == [
        "/trees/main/root/target/target/zone: group 'a': unknown zone 'exit'; none are defined"
    ]
    bad_key = {"kind": "offset", "target": {"kind": "blackboard", "key": "hom"}, "offset": [1, 0]}
    data = definition(
        {"type": "seek", "target": bad_key}, others=others, blackboard={"home": "point"}
    )
    assert located(data) == [
        "/trees/main/root/target/target/key: group 'a': undeclared blackboard key 'hom'; "
        "did you mean 'home'? valid: home"
    ]
    bad_kind = {"kind": "offset", "target": {"kind": "nearst", "group": "b"}, "offset": [1, 0]}
    data = definition({"type": "seek", "target": bad_kind}, others=others)
    assert located(data) == [
        "/trees/main/root/target/target: unknown target kind 'nearst'; did you mean "
        "'nearest'? valid: agent, blackboard, centroid, hide_point, nearest, offset, path, "
        "point, pointer, self, zone"
    ]


def test_neighbours_is_a_reserved_group_name() -> None:
    data = definition({"type": "wander"}, others=[other_group("neighbours", [[0, 0]])])
    assert "/groups/1/name: group name 'neighbours' is reserved" in located(data)[0]


# -------------------------------------------------- nothing found: the leaf fails
NOTHING = {
    "empty group": {"kind": "centroid", "group": "empty"},
    "no neighbour in view": {"kind": "centroid", "group": "neighbours"},
    "offset of nothing": {
        "kind": "offset",
        "target": {"kind": "nearest", "group": "empty"},
        "offset": [5, 5],
    },
    "nothing to hide behind": {"kind": "hide_point", "threat": {"kind": "nearest", "group": "b"}},
    "hide from nothing": {"kind": "hide_point", "threat": {"kind": "centroid", "group": "empty"}},
    "nothing visible": {"kind": "nearest", "group": "b", "visible": True},
}


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
@pytest.mark.parametrize("case", sorted(NOTHING))
@pytest.mark.parametrize("leaf", ["seek", "pursuit", "hide", "interpose", "offset_pursuit"])
def test_a_target_that_finds_nothing_fails_its_leaf(engine: str, case: str, leaf: str) -> None:
    """One agent at (200, 200) heading +x with fov 90, alone in its group (no neighbours);
    `b` has one agent behind it at (150, 200), `empty` none; hide_point's case has no
    obstacles, the others one far away. The leaf fails and the selector falls through."""
    target = NOTHING[case]
    spec: dict[str, Any] = {"type": leaf, "target": target}
    if leaf == "interpose":  # both its targets count: a missing `other` fails it too
        spec = {"type": leaf, "target": {"kind": "point", "at": [0, 0]}, "other": target}
    if leaf == "offset_pursuit":
        spec["offset"] = [0, 5]
    root = {"type": "selector", "memory": False, "children": [spec, {"type": "wander"}]}
    empty = {**other_group("empty", []), "count": 0}
    data = definition(root, positions=[[200, 200]], others=[other_group("b", [[150, 200]]), empty])
    data["groups"][0]["fov"] = 90
    if case != "nothing to hide behind":
        data["obstacles"] = [{"at": [20, 380], "radius": 5}]
    sim = Simulation(behaviortk.load_text(json.dumps(data), "nothing.json"), engine)
    sim.step()
    assert sim.decisions["a"].status[0].tolist() == [RUNNING, FAILURE, RUNNING]


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_conditions_on_a_missing_target_are_false(engine: str) -> None:
    """in_range, arrived, facing and can_see are false (FAILURE) on a missing target."""
    target = {"kind": "centroid", "group": "empty"}
    conditions = [
        {"type": "in_range", "target": target, "radius": 1000},
        {"type": "arrived", "target": target, "tolerance": 1000, "max_speed": 1000},
        {"type": "facing", "target": target, "angle": 360},
        {"type": "can_see", "target": target, "distance": 1000, "fov": 360},
    ]
    root = {"type": "parallel", "policy": "success_on_all", "children": conditions}
    empty = {**other_group("empty", []), "count": 0}
    data = definition(root, positions=[[200, 200]], others=[empty])
    sim = Simulation(behaviortk.load_text(json.dumps(data), "nothing.json"), engine)
    sim.step()
    assert sim.decisions["a"].status[0, 1:].tolist() == [FAILURE] * 4


# ---------------------------------------------- every targeted leaf, every kind
KINDS = {
    "centroid": {"kind": "centroid", "group": "b"},
    "neighbours": {"kind": "centroid", "group": "neighbours"},
    "offset": {"kind": "offset", "target": {"kind": "nearest", "group": "b"}, "offset": [10, -5]},
    "world offset": {
        "kind": "offset",
        "target": {"kind": "zone", "zone": "yard"},
        "offset": [10, -5],
        "frame": "world",
    },
    "hide_point": {"kind": "hide_point", "threat": {"kind": "nearest", "group": "b"}},
    "visible": {"kind": "nearest", "group": "b", "visible": True},
    "zone": {"kind": "zone", "zone": "yard"},
}

LEAVES: dict[str, dict[str, Any]] = {
    "seek": {},
    "flee": {},
    "arrive": {"tolerance": 5},
    "pursuit": {},
    "evade": {},
    "face": {},
    "align": {},
    "velocity_match": {},
    "hide": {},
    "interpose": {"other": {"kind": "point", "at": [200, 200]}},
    "offset_pursuit": {"offset": [0, 10]},
    "in_range": {"radius": 60},
    "arrived": {"tolerance": 30},
    "facing": {"angle": 90},
    "can_see": {},
}


def every_leaf_scenario(kind: str) -> dict[str, Any]:
    target = KINDS[kind]
    children = [
        {
            "type": "selector",
            "memory": False,
            "children": [{"type": t, "target": target, **extra}, {"type": "wander"}],
        }
        for t, extra in LEAVES.items()
    ]
    root = {"type": "parallel", "policy": "success_on_all", "children": children}
    b = {
        "name": "b",
        "count": 6,
        "tree": "idle",
        "spawn": {"kind": "area", "min": [0, 0], "max": [400, 400]},
    }
    data = definition(root, count=10, others=[b])
    data["groups"][0].update(view_distance=120, fov=200, heading="random", speed=20)
    data["world"]["edges"] = "wrap"
    data["obstacles"] = [{"at": [200, 200], "radius": 30}, {"at": [80, 300], "radius": 15}]
    data["walls"] = [{"from": [100, 50], "to": [100, 200]}]
    data["zones"] = [{"name": "yard", "kind": "rect", "min": [250, 250], "max": [350, 350]}]
    return data


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_targeted_leaf_takes_every_kind_on_both_engines(kind: str) -> None:
    scenario = load_text(json.dumps(every_leaf_scenario(kind)), "kinds.json")
    ref, batch = (Simulation(scenario, engine=e) for e in ("py_trees", "batch"))
    # columns: the parallel, then (selector, leaf, wander) per leaf
    leaf_column = {t: 2 + 3 * k for k, t in enumerate(LEAVES)}
    seen: dict[str, set[int]] = {t: set() for t in LEAVES}
    for tick in range(25):
        ref.step()
        batch.step()
        a, b = ref.decisions["a"], batch.decisions["a"]
        assert np.array_equal(a.status, b.status), f"{kind}: tick {tick}"
        assert np.array_equal(a.emitted, b.emitted), f"{kind}: tick {tick}"
        assert np.array_equal(ref.agents.pos, batch.agents.pos), f"{kind}: tick {tick}"
        for t, col in leaf_column.items():
            seen[t] |= set(a.status[:, col].tolist())
    assert math.isfinite(float(np.abs(ref.agents.pos).sum()))
    assert RUNNING in seen["seek"] and RUNNING in seen["offset_pursuit"]
    assert seen["can_see"] == seen["facing"] == {SUCCESS, FAILURE}  # both answers occur
