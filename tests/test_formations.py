"""Formations (issue 27; Millington, AI for Games, "Coordinated Movement"): slot offsets of
each pattern, the anchor's frame, least-total-distance assignment once per change of
members, the centroid anchor, `formation_slot`'s force, `in_formation` at its tolerance,
snapshots and located errors. Values worked by hand from the formulas."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import behaviortk
from behaviortk.leaves.conditions import InFormation, evaluate_condition
from behaviortk.sense import formations as fm
from behaviortk.sim.simulation import Simulation
from behaviortk.steering import formulas as f

ENGINES = ["py_trees", "batch"]


# ------------------------------------------------------------------ slot offsets
@pytest.mark.parametrize(
    ("pattern", "count", "expected"),
    [
        ("line", 3, [[-10, 10], [-10, 0], [-10, -10]]),
        ("line", 2, [[-10, 5], [-10, -5]]),
        ("column", 3, [[-10, 0], [-20, 0], [-30, 0]]),
        ("wedge", 4, [[-10, 10], [-10, -10], [-20, 20], [-20, -20]]),
        ("wedge", 3, [[-10, 10], [-10, -10], [-20, 20]]),
        ("circle", 4, [[-10, 0], [0, -10], [10, 0], [0, 10]]),
        ("grid", 5, [[-10, 10], [-10, 0], [-10, -10], [-20, 10], [-20, 0]]),
        ("grid", 4, [[-10, 5], [-10, -5], [-20, 5], [-20, -5]]),
        ("line", 0, np.zeros((0, 2))),
    ],
)
def test_scalable_patterns_by_hand(pattern: str, count: int, expected: Any) -> None:
    """Spacing 10: line abreast one spacing behind; column behind; wedge ranks r = 1, 2 at
    (-10r, +-10r), left first; circle of 4 (radius = spacing up to 6 members) from behind,
    turning right; grid ranks of ceil(sqrt(n)) centred behind."""
    got = fm.pattern_offsets(pattern, 10.0, count)
    np.testing.assert_allclose(got, np.asarray(expected, dtype=float).reshape(-1, 2), atol=1e-12)


def test_a_large_circle_spaces_neighbours_by_the_spacing() -> None:
    """12 members: radius 10 / (2 sin(pi/12)) = 19.3185...; neighbours exactly 10 apart."""
    got = fm.pattern_offsets("circle", 10.0, 12)
    assert math.hypot(*got[0]) == pytest.approx(19.318516525781366)
    gaps = np.hypot(*(got - np.roll(got, 1, axis=0)).T)
    np.testing.assert_allclose(gaps, 10.0)


def test_fixed_slots_are_the_listed_offsets_whatever_the_count() -> None:
    slots = [[-5, 3], [-8, -3]]
    for count in (1, 2, 5):
        np.testing.assert_array_equal(fm.pattern_offsets("slots", 99.0, count, slots), slots)


def test_the_anchor_frame_turns_the_slots() -> None:
    """Anchor (100, 100) facing +y: forward is (0, 1), left (-1, 0); slot [forward -10,
    left 5] is at (100 - 5, 100 - 10) = (95, 90). Facing +x it is (90, 105)."""
    anchor = np.array([[100.0, 100.0], [100.0, 100.0]])
    heading = np.array([[0.0, 1.0], [2.0, 0.0]])  # not unit: the frame normalises it
    got = fm.slot_points(anchor, heading, np.array([[-10.0, 5.0]]))
    np.testing.assert_allclose(got[:, 0], [[95.0, 90.0], [90.0, 105.0]])


# ------------------------------------------------------------------ assignment
def test_assignment_is_least_total_distance_not_greedy() -> None:
    """Slots A (0,0), B (10,0); members at (4,0) and (-1,0). Greedy in member order gives
    A then B (4 + 11 = 15); the least total is B, A (6 + 1 = 7)."""
    points = np.array([[[0.0, 0.0], [10.0, 0.0]]] * 2)
    assert fm.assign(np.array([[4.0, 0.0], [-1.0, 0.0]]), points).tolist() == [1, 0]


def test_assignment_with_more_slots_or_more_members() -> None:
    three = np.array([[[0.0, 0.0], [10.0, 0.0], [20.0, 0.0]]] * 2)
    assert fm.assign(np.array([[19.0, 0.0], [1.0, 0.0]]), three).tolist() == [2, 0]
    two = np.array([[[0.0, 0.0], [10.0, 0.0]]] * 3)
    got = fm.assign(np.array([[50.0, 0.0], [9.0, 0.0], [1.0, 0.0]]), two)
    assert got.tolist() == [-1, 1, 0]  # the farthest member is left without a slot


coordinate = st.floats(-100, 100, allow_nan=False).map(lambda v: round(v, 1))


@settings(max_examples=60, deadline=None)
@given(
    members=st.lists(st.tuples(coordinate, coordinate), min_size=1, max_size=5),
    slots=st.lists(st.tuples(coordinate, coordinate), min_size=1, max_size=5),
)
def test_assignment_total_is_the_brute_force_minimum(
    members: list[tuple[float, float]], slots: list[tuple[float, float]]
) -> None:
    """Over every way to give min(m, k) members distinct slots, none is shorter in total."""
    pos, offsets = np.array(members), np.array(slots)
    got = fm.assign(pos, np.broadcast_to(offsets, (len(members), *offsets.shape)))
    held = got[got >= 0]
    assert held.size == min(len(members), len(slots)) and len(set(held.tolist())) == held.size
    cost = np.hypot(*(pos[:, None, :] - offsets[None]).transpose(2, 0, 1))
    total = sum(cost[i, j] for i, j in enumerate(got) if j >= 0)
    best = min(
        sum(cost[i, j] for i, j in zip(who, chosen, strict=True))
        for who in itertools.combinations(range(len(members)), held.size)
        for chosen in itertools.permutations(range(len(slots)), held.size)
    )
    assert total == pytest.approx(best, abs=1e-9)


# ------------------------------------------------------------------ a small world
def world(
    pattern: str,
    squad: list[list[float]],
    *,
    anchor: dict[str, Any] | None = None,
    tree: dict[str, Any] | None = None,
    spacing: float = 10.0,
    max_speed: float = 50.0,
) -> dict[str, Any]:
    """A still captain at (100, 100) facing +y and a squad keeping ``pattern`` on it."""
    return {
        "name": "formation test",
        "world": {"width": 400, "height": 400, "edges": "contain", "dt": 0.05, "seed": 3},
        "formations": [{"name": "f", "pattern": pattern, "spacing": spacing}],
        "groups": [
            {
                "name": "captain",
                "count": 1,
                "spawn": {"kind": "positions", "points": [[100, 100]]},
                "heading": 90,
                "tree": "stay",
            },
            {
                "name": "squad",
                "count": len(squad),
                "spawn": {"kind": "positions", "points": squad},
                "heading": 90,
                "max_speed": max_speed,
                "tree": "keep",
                "formation": {
                    "name": "f",
                    "anchor": anchor or {"kind": "nearest", "group": "captain"},
                },
            },
        ],
        "trees": {
            "stay": {"root": {"type": "seek", "weight": 0, "target": {"kind": "self"}}},
            "keep": {
                "blackboard": {"away": {"type": "bool", "default": False}},
                "root": tree or {"type": "formation_slot", "name": "keep"},
            },
        },
    }


def sim_of(data: dict[str, Any], engine: str = "batch") -> Simulation:
    return Simulation(behaviortk.load_text(json.dumps(data), "f.json"), engine)


def slots_by_id(sim: Simulation) -> dict[int, int]:
    form = sim.formations.groups["squad"]
    return dict(zip(form.members.tolist(), form.slot.tolist(), strict=True))


def test_in_formation_holds_up_to_its_tolerance() -> None:
    """Column of one behind the captain at (100, 100) facing +y: the slot is (100, 90).
    (103, 94) is 5 from it (3-4-5): in formation with tolerance 5, not with 4.999."""
    sim = sim_of(world("column", [[100, 90]]))
    sim.step()  # the member ran formation_slot: it holds slot 0
    sim.agents.pos[1] = [103.0, 94.0]
    sim.agents.pos[0] = [100.0, 100.0]
    sense = sim.sense()
    for tolerance, expected in ((5.0, True), (4.999, False)):
        model = InFormation(type="in_formation", tolerance=tolerance)
        prev = np.zeros(1, dtype=bool)
        assert evaluate_condition(model, sense, "squad", prev, -1).tolist() == [expected]


def test_no_slot_is_not_in_formation_and_gets_no_force() -> None:
    """Before any tick nobody holds a slot; a fixed pattern of 1 slot leaves the second
    member without one."""
    data = world("slots", [[100, 90], [100, 60]])
    data["formations"][0]["slots"] = [[-10, 0]]
    sim = sim_of(data)
    model = InFormation(type="in_formation", tolerance=1000.0)
    prev = np.zeros(2, dtype=bool)
    assert evaluate_condition(model, sim.sense(), "squad", prev, -1).tolist() == [False, False]
    sim.step()
    assert slots_by_id(sim) == {1: 0, 2: -1}
    assert evaluate_condition(model, sim.sense(), "squad", prev, -1).tolist() == [True, False]
    sim.step()
    assert sim.agents.pos[2].tolist() == [100.0, 60.0]  # no force: it never moved


def test_slots_are_assigned_once_per_change_of_members(monkeypatch: Any) -> None:
    """Line of 3 behind the captain (left 10, 0, -10 at forward -10): ids 1, 2, 3 take
    their nearest slots. Despawning id 1 re-spaces the line for 2 (left 5, -5): id 2 (at
    left 0) takes 5 and id 3 (at -10) takes -5 (5 + 5 beats 5 + 15). Spawning one more
    re-assigns again; ticks without a change assign nothing."""
    calls = []
    real = fm.assign
    monkeypatch.setattr(fm, "assign", lambda *a: calls.append(1) or real(*a))
    # facing +y, left is -x: left 10 is x = 90
    sim = sim_of(world("line", [[90, 90], [100, 90], [110, 90]]))
    sim.run(5)
    assert len(calls) == 1 and slots_by_id(sim) == {1: 0, 2: 1, 3: 2}
    sim.despawn(1)
    sim.run(3)
    assert len(calls) == 2 and slots_by_id(sim) == {2: 0, 3: 1}
    np.testing.assert_allclose(
        sim.formations.groups["squad"].offsets, [[-10.0, 5.0], [-10.0, -5.0]]
    )
    (new,) = sim.spawn("squad", pos=[120, 90])
    sim.run(3)
    assert len(calls) == 3 and sorted(slots_by_id(sim)) == [2, 3, new]
    assert slots_by_id(sim)[new] == 2  # the right-most slot (left -10, x = 110) is nearest


@pytest.mark.parametrize("engine", ENGINES)
def test_an_agent_that_stops_running_formation_slot_leaves(engine: str) -> None:
    tree = {
        "type": "selector",
        "memory": False,
        "children": [
            {
                "type": "sequence",
                "memory": False,
                "children": [
                    {"type": "blackboard_compare", "key": "away", "value": True},
                    {"type": "seek", "target": {"kind": "point", "at": [300, 300]}},
                ],
            },
            {"type": "formation_slot", "name": "keep"},
        ],
    }
    sim = sim_of(world("line", [[90, 90], [100, 90], [110, 90]], tree=tree), engine)
    sim.step()
    assert slots_by_id(sim) == {1: 0, 2: 1, 3: 2}
    sim.blackboard(3)["away"] = True
    sim.step()
    assert slots_by_id(sim) == {1: 0, 2: 1}  # re-spaced for two: left 5 and -5
    sim.blackboard(3)["away"] = False
    sim.step()
    assert slots_by_id(sim) == {1: 0, 2: 1, 3: 2}


def test_formation_slot_force_by_hand() -> None:
    """Member at (0, 0) still, slot at (10, 0) moving at (20, 0); top 50, slowing radius 40,
    time_to_target 0.1, mass 2: Arrive's speed 50 * 10 / 40 = 12.5 along +x, desired
    (32.5, 0), force (32.5 - 0) / 0.1 * 2 = 650. Capped: a slot far off moving across
    gives desired (20, 50) cut to 50: (20, 50) * 50 / sqrt(2900)."""
    fx, fy = f.formation_slot(0.0, 0.0, 0.0, 0.0, 50.0, 2.0, 10.0, 0.0, 20.0, 0.0, 40.0, 0.5, 0.1)
    assert (fx, fy) == pytest.approx((650.0, 0.0))
    fx, fy = f.formation_slot(0.0, 0.0, 0.0, 0.0, 50.0, 1.0, 0.0, 100.0, 20.0, 0.0, 40.0, 0.5, 0.1)
    scale = 50.0 / math.sqrt(20.0**2 + 50.0**2)
    assert (fx, fy) == pytest.approx((20.0 * scale / 0.1, 50.0 * scale / 0.1))
    # within tolerance: only the slot's velocity
    assert f.formation_slot(0, 0, 1, 1, 50, 1, 0.2, 0, 3, 4, 40, 0.5, 0.5) == pytest.approx((4, 6))


# ------------------------------------------------------------------ centroid anchor
def test_the_centroid_anchor_forms_on_the_members_and_moves_at_the_slowest_speed() -> None:
    """Column of 2 (slots (-10, 0), (-20, 0); centre (-15, 0)) at (100, 50) and (100, 40),
    going to the point (100, 300): heading +y, the anchor starts 15 ahead of the centroid
    (100, 45), at (100, 60); then it moves 30 * 0.05 = 1.5 a tick and stops on the point."""
    target = {"kind": "point", "at": [100.0, 300.0]}
    sim = sim_of(world("column", [[100, 50], [100, 40]], anchor=target, max_speed=30.0))
    form = sim.formations.groups["squad"]
    sim.step()
    np.testing.assert_allclose(form.pose, [[100.0, 60.0], [0.0, 1.0], [0.0, 0.0]], atol=1e-12)
    assert slots_by_id(sim) == {1: 0, 2: 1}
    sim.step()
    np.testing.assert_allclose(form.pose, [[100.0, 61.5], [0.0, 1.0], [0.0, 30.0]], atol=1e-12)
    sim.run(400)
    np.testing.assert_allclose(form.pose[0], [100.0, 300.0])
    np.testing.assert_allclose(form.pose[2], [0.0, 0.0])
    np.testing.assert_allclose(sim.agents.pos[1:], [[100.0, 290.0], [100.0, 280.0]], atol=0.6)


@pytest.mark.parametrize("anchor", ["leader", "centroid"])
def test_a_snapshot_continues_the_formation(anchor: str, tmp_path: Path) -> None:
    """Saved mid-march after a despawn, restored on the other engine: the same run."""
    target = None if anchor == "leader" else {"kind": "point", "at": [300.0, 300.0]}
    data = world("wedge", [[80, 80], [120, 80], [90, 60], [110, 60]], anchor=target)
    data["trees"]["stay"]["root"] = {"type": "seek", "target": {"kind": "point", "at": [300, 100]}}
    a = sim_of(data, "batch")
    a.run(20)
    a.despawn(2)
    a.run(7)
    a.save(tmp_path / "s.zip")
    b = Simulation.restore(tmp_path / "s.zip", "py_trees")
    for _ in range(40):
        a.step()
        b.step()
        np.testing.assert_array_equal(a.agents.pos, b.agents.pos)
    assert slots_by_id(a) == slots_by_id(b)
    np.testing.assert_array_equal(
        a.formations.groups["squad"].pose, b.formations.groups["squad"].pose
    )


# ------------------------------------------------------------------ located errors
def issues_of(data: dict[str, Any]) -> list[str]:
    with pytest.raises(behaviortk.DefinitionError) as err:
        behaviortk.load_text(json.dumps(data), "f.json")
    return [f"{i.pointer}: {i.message}" for i in err.value.issues]


def test_bad_formations_are_located_errors() -> None:
    data = world("wedge", [[90, 90]])
    data["groups"][1]["formation"]["name"] = "wegde"
    data["formations"][0]["name"] = "wedge"
    assert issues_of(data) == [
        "/groups/1/formation/name: group 'squad': unknown formation 'wegde'; did you mean "
        "'wedge'? valid: wedge"
    ]
    data = world("wedge", [[90, 90]])
    data["formations"].append({"name": "f", "pattern": "line"})
    assert issues_of(data) == ["/formations/1/name: formation name 'f' is used twice"]
    data = world("vee", [[90, 90]])
    (found,) = issues_of(data)
    assert found.startswith("/formations/0/pattern: ") and "'wedge'" in found
    data = world("slots", [[90, 90]])
    (found,) = issues_of(data)
    assert found.startswith("/formations/0: ") and "pattern 'slots' needs `slots`" in found
    data = world("line", [[90, 90]])
    data["formations"][0]["slots"] = [[0, 1]]
    (found,) = issues_of(data)
    assert found.startswith("/formations/0: ") and "remove `slots`" in found
    for spacing in (0, -3):
        data = world("line", [[90, 90]])
        data["formations"][0]["spacing"] = spacing
        (found,) = issues_of(data)
        assert found.startswith("/formations/0/spacing: "), found
    text = json.dumps(world("line", [[90, 90]])).replace('"spacing": 10.0', '"spacing": NaN')
    with pytest.raises(behaviortk.DefinitionError) as err:  # refused where it is written
        behaviortk.load_text(text, "f.json")
    (issue,) = err.value.issues
    assert (issue.kind, issue.line, issue.col) == ("json_nan", 1, text.index("NaN") + 1)


def test_an_unknown_formation_is_located_on_its_line() -> None:
    data = world("wedge", [[90, 90]])
    data["groups"][1]["formation"]["name"] = "wegde"
    text = json.dumps(data, indent=2)
    with pytest.raises(behaviortk.DefinitionError) as err:
        behaviortk.load_text(text, "f.json")
    (issue,) = err.value.issues
    line = next(i for i, t in enumerate(text.splitlines(), 1) if '"wegde"' in t)
    assert (issue.file, issue.line, issue.kind) == ("f.json", line, "unknown_formation")


def test_formation_nodes_need_the_group_s_formation() -> None:
    data = world("line", [[90, 90]])
    del data["groups"][1]["formation"]
    data["trees"]["keep"]["root"] = {
        "type": "selector",
        "memory": False,
        "children": [{"type": "in_formation"}, {"type": "formation_slot"}],
    }
    found = issues_of(data)
    assert len(found) == 2
    assert found[0].startswith("/trees/keep/root/children/0/type: group 'squad': in_formation ")
    assert found[1].startswith("/trees/keep/root/children/1/type: group 'squad': formation_slot ")
    assert all("needs the group's `formation`" in m for m in found)


def test_an_unknown_anchor_group_is_located() -> None:
    data = world("line", [[90, 90]], anchor={"kind": "nearest", "group": "captian"})
    (found,) = issues_of(data)
    assert found.startswith("/groups/1/formation/anchor/group: group 'squad': unknown group")


def test_think_rate_lod_holds_membership_alike_on_both_engines() -> None:
    """formation_march with think_every 4: agents that do not think keep asking for their
    slot (they stay members); both engines move every agent the same."""
    path = Path(__file__).resolve().parent.parent / "definitions" / "formation_march.json"
    data = json.loads(path.read_text())
    data["groups"][1]["think_every"] = 4
    a, b = sim_of(data, "py_trees"), sim_of(data, "batch")
    seen = set()
    for _ in range(300):
        a.step()
        b.step()
        np.testing.assert_array_equal(a.agents.pos, b.agents.pos)
        assert slots_by_id(a) == slots_by_id(b)
        seen.add(len(slots_by_id(a)))
    assert 7 in seen and len(seen) > 1  # the whole wedge, and fewer while some chase
