"""The ``despawn`` leaf: an agent leaves at the end of the tick it ticks it, as if the game
called ``sim.despawn`` then; both engines alike, saved and traced like a game's despawn."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_snapshot import check_continuations

from behaviortk.format.loader import load_text
from behaviortk.record.jsonl import TraceWriter
from behaviortk.sim.simulation import Simulation

ENGINES = ("py_trees", "batch")
XS = [10.0, 50.0, 90.0, 130.0, 170.0]


def scene(radius: float = 45.0, tree: dict[str, Any] | None = None) -> dict[str, Any]:
    """Five agents on y = 10 at ``XS``, still; those within ``radius`` of (50, 10) leave."""
    root = tree or {
        "type": "sequence",
        "memory": False,
        "children": [
            {"type": "in_range", "target": {"kind": "point", "at": [50, 10]}, "radius": radius},
            {"type": "despawn", "name": "leave"},
        ],
    }
    return {
        "name": "leavers",
        "world": {"width": 200, "height": 200, "edges": "contain", "dt": 0.1, "seed": 1},
        "groups": [
            {
                "name": "a",
                "count": 5,
                "spawn": {"kind": "positions", "points": [[x, 10] for x in XS]},
                "speed": 0,
                "tree": "t",
            }
        ],
        "trees": {"t": {"root": root}},
    }


def sim_of(data: dict[str, Any], engine: str) -> Simulation:
    return Simulation(load_text(json.dumps(data), "leavers.json"), engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_agents_in_range_leave_after_the_tick_with_its_events(engine: str) -> None:
    """|x - 50| <= 45 for x = 10, 50, 90 (ids 0, 1, 2): gone after tick 0, their despawn
    events stamped 0 among that tick's events; 130 and 170 stay, tick after tick."""
    sim = sim_of(scene(), engine)
    sim.step()
    assert sim.ids.tolist() == [3, 4]
    assert [(e.tick, e.agent, e.name) for e in sim.events] == [
        (0, 0, "despawn"), (0, 1, "despawn"), (0, 2, "despawn")
    ]  # fmt: skip
    assert sim.agents.pos[:, 0].tolist() == [130.0, 170.0]
    sim.step()
    assert sim.ids.tolist() == [3, 4] and list(sim.events) == []


def test_the_engines_write_the_same_trace_and_snapshots_continue(tmp_path: Path) -> None:
    """Agents leave in turn (in_range of a point moving along y is not needed: radii grow
    with x): both engines give the same lines, and snapshots taken before and after a
    leaving continue identically on both engines."""
    data = scene()
    data["groups"][0]["speed"] = 20
    data["groups"][0]["heading"] = 180  # walking towards x = 50: one by one in range
    scenario = load_text(json.dumps(data), "leavers.json")
    for engine in ENGINES:
        check_continuations(scenario, engine, [0, 1, 30], 60, tmp_path)
    lines = []
    for engine in ENGINES:
        sim = Simulation(scenario, engine=engine)
        out = io.StringIO()
        writer = TraceWriter(out, sim)
        for _ in range(60):
            sim.step()
            writer.on_tick(sim)
        lines.append(out.getvalue().splitlines()[1:])
        assert sim.ids.size == 0  # everyone reached the range and left
    assert lines[0] == lines[1]


@pytest.mark.parametrize("engine", ENGINES)
def test_formation_march_loses_a_soldier_to_the_fox_and_re_forms(engine: str) -> None:
    """The shipped march: the fox bites and runs off, the bitten soldier leaves (both by
    their despawn leaves, on the same tick); the next tick the wedge has one member fewer,
    its slots re-spaced for six (a wedge of six: offsets of pattern_offsets(6))."""
    from behaviortk.format.loader import load
    from behaviortk.sense.formations import pattern_offsets

    root = Path(__file__).resolve().parents[1]
    sim = Simulation(load(root / "definitions" / "formation_march.json"), engine=engine)
    squad_ids = set(sim.ids[sim.agents.slices["squad"]].tolist())
    fox_id = int(sim.ids[sim.agents.slices["fox"]][0])
    gone: list[int] = []
    while not gone:
        assert sim.tick < 1800, "the fox never bit"
        sim.step()
        gone = sorted(e.agent for e in sim.events if e.name == "despawn")
    bitten = [g for g in gone if g in squad_ids]
    assert fox_id in gone and len(bitten) >= 1
    assert sim.ids[sim.agents.slices["fox"]].size == 0
    sim.step()
    wedge = sim.formations.groups["squad"]
    left = 7 - len(bitten)
    assert sim.ids[sim.agents.slices["squad"]].size == left
    assert not set(wedge.members.tolist()) & set(bitten)
    if wedge.members.size == left:  # every soldier back in the wedge (none chasing)
        np.testing.assert_allclose(wedge.offsets, pattern_offsets("wedge", 22.0, left))


@pytest.mark.parametrize("engine", ENGINES)
def test_two_despawn_leaves_in_one_tick_remove_an_agent_once(engine: str) -> None:
    """A parallel of two despawn leaves: every agent leaves once, one event each, and the
    empty group keeps stepping."""
    tree = {
        "type": "parallel",
        "policy": "success_on_all",
        "children": [{"type": "despawn"}, {"type": "despawn", "name": "again"}],
    }
    sim = sim_of(scene(tree=tree), engine)
    sim.step()
    assert [(e.agent, e.name) for e in sim.events] == [(i, "despawn") for i in range(5)]
    assert sim.ids.size == 0
    sim.run(3)
    assert sim.tick == 4 and list(sim.events) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["trees"]["t"]["root"]["children"][1].update(radius=3),
            "/trees/t/root/children/1/radius: unknown key 'radius'; valid: name, type",
        ),
        (
            lambda d: d.update(
                checks=[
                    {
                        "name": "c",
                        "metric": "count",
                        "group": "nope",
                        "over": "final",
                        "op": "<",
                        "value": 1,
                    }
                ]
            ),
            "/checks/0/group: unknown group 'nope'; valid: a",
        ),
        (
            lambda d: d.update(
                checks=[{"name": "c", "metric": "count", "over": "final", "op": "<", "value": 1}]
            ),
            "/checks/0/group: missing required key 'group'",
        ),
    ],
)
def test_bad_despawn_and_count_fields_are_located_errors(change: Any, message: str) -> None:
    from behaviortk.format.issues import DefinitionError

    data = scene()
    change(data)
    with pytest.raises(DefinitionError) as err:
        load_text(json.dumps(data), "leavers.json")
    assert message in str(err.value)
