"""Why a condition holds: strings hand-worked per condition type, on both engines.

Agent ``a`` stands at (100, 100) heading +x with no steering leaf (it does not move);
group ``b`` stands still (the idle tree). Each explanation is checked against its text,
worked out by hand from the positions, and its verdict against the status the next
tick gives the node (a ``parallel`` ticks every condition every tick)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from engine_support import definition, other_group

from behaviortk.format.loader import load_text
from behaviortk.leaves.why import BLOCKED, NO_TARGET, OUT_OF_RANGE, OUTSIDE_CONE, SEEN
from behaviortk.sim.simulation import Simulation
from behaviortk.sim.why import NEXT_TICK, explain_agent, why_shown
from behaviortk.tree.status import SUCCESS
from behaviortk.world.sight import first_blocker, line_blocked

ENGINES = ("py_trees", "batch")
ROOT = Path(__file__).resolve().parents[1]
B = {"kind": "nearest", "group": "b"}


def run(
    conditions: list[dict[str, Any]],
    b_at: list[float] | None,
    engine: str,
    *,
    ticks: int = 1,
    **world: Any,
) -> tuple[list[str], Simulation]:
    """The why-texts of ``a``'s conditions after ``ticks`` ticks; checks each verdict against
    the status the following tick gives its node."""
    root = {"type": "parallel", "policy": "success_on_all", "children": conditions}
    others = [other_group("b", [b_at])] if b_at is not None else []
    d = definition(root, positions=[[100, 100]], others=others, blackboard=world.pop("bb", None))
    d.update(world)
    sim = Simulation(load_text(json.dumps(d), "why.json"), engine=engine)
    for _ in range(ticks):
        sim.step()
    whys = explain_agent(sim, 0)
    sim.step()
    status = sim.decisions["a"].status[0]
    texts = []
    for index, why in sorted(whys.items()):
        assert why is not None
        assert why.holds == (status[index] == SUCCESS), why.text
        texts.append(why.text)
    return texts, sim


@pytest.mark.parametrize("engine", ENGINES)
def test_in_range_distance_against_radius_and_hysteresis(engine: str) -> None:
    """b at (243.2, 100): 143.2 from a. Radius 100: false. Radius 150 + hysteresis 10 after
    it held: b at (255, 100) is 155 <= 160, the hysteresis bound."""
    near = {"type": "in_range", "target": B, "radius": 100}
    texts, _ = run([near], [243.2, 100], engine)
    assert texts == ["in_range: 143.2 > 100"]
    held = {"type": "in_range", "target": B, "radius": 160, "hysteresis": 10}
    texts, _ = run([held], [255, 100], engine)
    assert texts == ["in_range: 155 <= 170 (160 + hysteresis)"]
    unset = {"type": "in_range", "target": {"kind": "blackboard", "key": "spot"}, "radius": 9}
    texts, _ = run([unset], None, engine, bb={"spot": "point"})
    assert texts == ["in_range: no target"]


@pytest.mark.parametrize("engine", ENGINES)
def test_can_see_gives_each_reason(engine: str) -> None:
    """distance 150, fov 90 (45° either side of +x): b 212 ahead is out of range; b 100
    straight up is 90° off the heading, outside the cone; b 100 ahead behind a wall at
    x = 150 is blocked by wall 0; b 100 ahead, no wall, is seen."""
    see = {"type": "can_see", "target": B, "distance": 150, "fov": 90}
    texts, _ = run([see], [312, 100], engine)
    assert texts == ["can_see: out of range (212 > 150)"]
    texts, _ = run([see], [100, 200], engine)
    assert texts == ["can_see: outside the 90° cone (90° off heading)"]
    wall = {"from": [150, 50], "to": [150, 150]}
    post = {"at": [150, 300], "radius": 5}
    texts, _ = run([see], [200, 100], engine, walls=[wall], obstacles=[post])
    assert texts == ["can_see: blocked by wall 0"]
    texts, _ = run([see], [200, 130], engine, obstacles=[post])
    assert texts == ["can_see: seen (104.4 <= 150, 16.7° off heading)"]


def test_the_reason_codes_and_the_blocker_match_the_view_test() -> None:
    """The reason codes, and first_blocker agreeing with line_blocked: obstacles first."""
    from behaviortk.leaves import why

    assert why.SIGHT_REASONS == (SEEN, OUT_OF_RANGE, OUTSIDE_CONE, BLOCKED)
    d = definition({"type": "wait", "duration": 1}, positions=[[100, 100]])
    d["walls"] = [{"from": [150, 50], "to": [150, 150]}]
    d["obstacles"] = [{"at": [170, 100], "radius": 5}]
    sim = Simulation(load_text(json.dumps(d), "why.json"))
    p, w = np.array([100.0, 100.0]), sim.world
    assert first_blocker(p, np.array([200.0, 100.0]), w) == ("obstacle", 0)
    assert first_blocker(p, np.array([140.0, 100.0]), w) is None
    assert first_blocker(p, np.array([160.0, 140.0]), w) == ("wall", 0)
    q = np.array([[200.0, 100.0], [140.0, 100.0], [160.0, 140.0]])
    assert line_blocked(np.tile(p, (3, 1)), q, w).tolist() == [True, False, True]
    assert NO_TARGET == "no target"


@pytest.mark.parametrize("engine", ENGINES)
def test_facing_arrived_neighbours_and_zones(engine: str) -> None:
    """b at (130, 140): 50 away, atan(40/30) = 53.1° off +x. facing 90 (45 either side):
    false; arrived tolerance 60 at speed 0: true; neighbours (view 50, all round): b is
    exactly 50 away, 1 visible of group b; in_zone: a circle of radius 10 at (105, 100)
    holds a, a rectangle far away does not."""
    conditions = [
        {"type": "facing", "target": B, "angle": 90},
        {"type": "arrived", "target": B, "tolerance": 60, "max_speed": 1},
        {"type": "neighbours", "of": "b", "min_count": 2},
        {"type": "in_zone", "zone": "pad"},
        {"type": "in_zone", "zone": "far"},
    ]
    zones = [
        {"name": "pad", "kind": "circle", "at": [105, 100], "radius": 10},
        {"name": "far", "kind": "rect", "min": [300, 300], "max": [350, 350]},
    ]
    texts, _ = run(conditions, [130, 140], engine, zones=zones)
    assert texts == [
        "facing: 53.1° off heading > 45°",
        "arrived: 50 <= 60, speed 0 <= 1",
        "neighbours: 1 visible < 2",
        'in_zone: inside "pad"',
        'in_zone: outside "far"',
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_blackboard_compare_and_recall(engine: str) -> None:
    """alarm declared false: `alarm = false, wants true`; hp 30 against > 50; a key never
    stored is unset; `seen` remembered on tick 0 and explained after 3 ticks: age 3 < 5
    (max_age 0.5 s at dt 0.1)."""
    conditions = [
        {"type": "blackboard_compare", "key": "alarm", "value": True},
        {"type": "blackboard_compare", "key": "hp", "op": ">", "value": 50},
        {"type": "recall", "key": "spot"},
        {"type": "recall", "key": "seen", "max_age": 0.5},
    ]
    bb = {
        "alarm": {"type": "bool", "default": False},
        "hp": {"type": "number", "default": 30},
        "spot": "point",
        "seen": "point",
    }
    d = definition(
        {"type": "parallel", "policy": "success_on_all", "children": conditions},
        positions=[[100, 100]],
        blackboard=bb,
    )
    sim = Simulation(load_text(json.dumps(d), "why.json"), engine=engine)
    sim.step()
    sim.blackboard(0)["seen"] = (1.0, 2.0)  # stored on the next tick: 1
    for _ in range(3):
        sim.step()
    texts = [w.text for w in explain_agent(sim, 0).values() if w is not None]
    assert texts == [
        "blackboard_compare: alarm = false, wants true",
        "blackboard_compare: hp = 30, wants > 50",
        "recall: spot unset",
        "recall: seen stored 3 ticks ago < 5",
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_chance_shows_the_number_drawn(engine: str) -> None:
    """The number drawn is the tick's seeded uniform at the node's slot: u < p holds."""
    node = {"type": "chance", "probability": 0.5}
    _, sim = run([node], None, engine, ticks=2)
    for _ in range(5):
        why = explain_agent(sim, 0)[1]
        assert why is not None
        u = float(sim.sense().rand[0, 0])
        assert why.text == f"chance: drew {u:.2f} {'<' if u < 0.5 else '>='} 0.5"
        sim.step()
        assert (sim.decisions["a"].status[0][1] == SUCCESS) == why.holds


@pytest.mark.parametrize("engine", ENGINES)
def test_in_formation_gives_the_distance_to_its_slot(engine: str) -> None:
    """A column of one behind a still captain at (100, 100) facing +y: the slot is (100, 90);
    the member stands at (103, 94), 5 from it (3-4-5). Before the first tick nobody holds a
    slot; after it, tolerance 5 holds and 4 does not. Every built-in condition explains."""
    from behaviortk.leaves.why import EXPLAINERS

    keep = {
        "type": "parallel",
        "policy": "success_on_all",
        "children": [
            {"type": "formation_slot", "weight": 0},
            {"type": "in_formation", "tolerance": 5},
            {"type": "in_formation", "tolerance": 4},
        ],
    }
    d = {
        "name": "why in_formation",
        "world": {"width": 400, "height": 400, "edges": "contain", "dt": 0.05, "seed": 3},
        "formations": [{"name": "f", "pattern": "column", "spacing": 10}],
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
                "count": 1,
                "spawn": {"kind": "positions", "points": [[103, 94]]},
                "heading": 90,
                "tree": "keep",
                "formation": {"name": "f", "anchor": {"kind": "nearest", "group": "captain"}},
            },
        ],
        "trees": {
            "stay": {"root": {"type": "seek", "weight": 0, "target": {"kind": "self"}}},
            "keep": {"root": keep},
        },
    }
    sim = Simulation(load_text(json.dumps(d), "why.json"), engine=engine)
    before = explain_agent(sim, 1)
    assert [w.text for w in before.values() if w is not None] == ["in_formation: no slot"] * 2
    sim.step()
    whys = explain_agent(sim, 1)
    assert [w.text for w in whys.values() if w is not None] == [
        "in_formation: 5 <= 5 from its slot",
        "in_formation: 5 > 4 from its slot",
    ]
    sim.step()
    status = sim.decisions["squad"].status[0]
    for index, why in whys.items():
        assert why is not None and why.holds == (status[index] == SUCCESS), why.text
    conditions = {e.tag for e in sim.registries.conditions}
    assert conditions <= set(EXPLAINERS), conditions - set(EXPLAINERS)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_why_shown_is_the_tick_shown(engine: str) -> None:
    """b (id 1) is 95 from a when a tick runs, then moved to 105 before the viewer asks: the
    status shown is SUCCESS (the tick saw 95), and so is the why shown (``95 <= 100``);
    what the next tick will find is marked. Selected while paused, the first answer is the
    next tick's; once a tick has run it is that tick's."""
    near = {"type": "in_range", "target": B, "radius": 100}
    root = {"type": "parallel", "policy": "success_on_all", "children": [near]}
    b = {"name": "b", "count": 1, "spawn": {"kind": "positions", "points": [[195, 100]]}}
    d = definition(root, positions=[[100, 100]], others=[{**b, "control": "external"}])
    sim = Simulation(load_text(json.dumps(d), "why.json"), engine=engine)
    sim.step()
    first = why_shown(sim, 0)[1]
    assert first is not None and first.text == "in_range: 95 <= 100" + NEXT_TICK
    for x, holds in ((195.0, True), (205.0, False), (195.0, True)):
        sim.move(1, [x, 100.0])
        sim.step()
        sim.move(1, [300.0 - x + 100.0, 100.0])  # across the radius before it is shown
        why = why_shown(sim, 0)[1]
        status = sim.decisions["a"].status[0][1]
        assert why is not None and why.holds == holds == (status == SUCCESS)
        assert why.text == f"in_range: {x - 100:g} {'<=' if holds else '>'} 100"
        after = explain_agent(sim, 0)[1]
        assert after is not None and after.holds != holds  # the next tick's differs


@pytest.mark.parametrize("engine", ENGINES)
def test_watching_why_changes_nothing(engine: str) -> None:
    """Asking why of an agent every tick (the viewer's selection) leaves the run as it was."""
    guards = json.loads((ROOT / "definitions" / "guard_patrol.json").read_text())
    flock = json.loads((ROOT / "definitions" / "evade_or_flock.json").read_text())
    for group in flock["groups"]:
        group["think_every"] = 3  # held perception measured early by the why
    for data in (guards, flock):
        runs = []
        for watch in (False, True):
            sim = Simulation(load_text(json.dumps(data), "why.json"), engine=engine)
            for _ in range(60):
                if watch:
                    why_shown(sim, 1)
                sim.step()
            runs.append((sim.agents.pos.copy(), sim.agents.vel.copy()))
        np.testing.assert_array_equal(runs[0][0], runs[1][0])
        np.testing.assert_array_equal(runs[0][1], runs[1][1])


@pytest.mark.parametrize("agent", [-1, 7, 2**64])
def test_why_of_an_agent_that_is_not_there_is_a_simulation_error(agent: int) -> None:
    """Asked of an id never handed out, ``why_shown`` says so (SimulationError); the next
    tick runs as it would have, and asking again still says so."""
    from behaviortk.errors import SimulationError

    near = {"type": "in_range", "target": B, "radius": 100}
    plain, asked = (run([near], [195.0, 100.0], "batch")[1] for _ in range(2))
    with pytest.raises(SimulationError):
        why_shown(asked, agent)
    plain.step()
    asked.step()
    np.testing.assert_array_equal(plain.agents.pos, asked.agents.pos)
    with pytest.raises(SimulationError):
        why_shown(asked, agent)
