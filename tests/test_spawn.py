"""Stable ids, spawn and despawn mid-run on both engines (the embedding API)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from engine_support import definition
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from behaviortk.errors import SimulationError
from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation

ENGINES = ("py_trees", "batch")


def wanderers(count: int = 5, seed: int = 3) -> dict[str, Any]:
    """Group ``a`` wanders (random numbers, steering memory); ``b`` waits in a sequence."""
    root = {
        "type": "sequence",
        "memory": True,
        "children": [
            {"type": "wait", "duration": 0.3},
            {"type": "blackboard_set", "key": "done", "value": True},
            {"type": "wander", "units": "world", "radius": 10, "distance": 20, "jitter": 40},
        ],
    }
    data = definition(root, count=count, seed=seed, blackboard={"done": "bool"})
    data["world"]["edges"] = "wrap"
    data["groups"].append(
        {
            "name": "b",
            "count": 2,
            "spawn": {"kind": "positions", "points": [[10, 10], [20, 20]]},
            "tree": "idle",
        }
    )
    return data


def sim_of(data: dict[str, Any], engine: str) -> Simulation:
    return Simulation(load_text(json.dumps(data), "spawn.json"), engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_ids_are_stable_and_never_reused(engine: str) -> None:
    sim = sim_of(wanderers(), engine)
    assert sim.ids.tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert sim.spawn("a", 2) == [7, 8]
    assert sim.ids.tolist() == [0, 1, 2, 3, 4, 7, 8, 5, 6]  # groups stay contiguous
    sim.despawn([1, 7])  # the group's last survivor (8) takes the first freed row (swap-remove)
    assert sim.ids.tolist() == [0, 8, 2, 3, 4, 5, 6]
    assert sim.spawn("b") == [9]
    assert sim.agents.names[-1] == "b-9"
    assert sim.agents.slices == {"a": slice(0, 5), "b": slice(5, 8)}


@pytest.mark.parametrize("engine", ENGINES)
def test_survivors_keep_every_bit_of_state(engine: str) -> None:
    """Wanderers do not interact: with agents spawned and despawned around them, each
    survivor moves exactly as in a run where nothing happened (tree timers, wander memory,
    its own random stream, blackboard)."""
    control, sim = sim_of(wanderers(), engine), sim_of(wanderers(), engine)
    for tick in range(12):
        if tick == 2:  # agents are mid-wait: the wait timer must survive
            assert sim.spawn("a", 3, pos=[[100, 100], [150, 150], [200, 200]]) == [7, 8, 9]
        if tick == 5:
            sim.despawn([0, 8, 5])
        if tick == 7:
            sim.spawn("b", pos=[50, 50], vel=[1, 0], heading=0)
        control.step()
        sim.step()
        for agent in (1, 2, 3, 4, 6):
            row, ref = int(sim.rows_of(agent)[0]), agent
            assert np.array_equal(sim.agents.pos[row], control.agents.pos[ref]), (tick, agent)
            assert np.array_equal(sim.engine.node_status(row), control.engine.node_status(ref))
            assert sim.engine.blackboard(row) == control.engine.blackboard(ref)
    new = int(sim.rows_of(9)[0])
    assert sim.engine.blackboard(new) == {"done": True}  # started fresh at tick 2, waited 3 ticks


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 20), st.integers(1, 3)), max_size=10))
def test_engines_agree_under_random_game_calls(calls: list[tuple[int, int, int]]) -> None:
    """Random spawn / despawn / move / blackboard writes / steps: both engines stay equal."""
    data = wanderers(count=4, seed=5)
    data["trees"]["main"]["root"]["children"].insert(
        0, {"type": "in_range", "target": {"kind": "nearest", "group": "p"}, "radius": 500}
    )
    data["groups"].append(
        {
            "name": "p",
            "count": 1,
            "control": "external",
            "spawn": {"kind": "positions", "points": [[200, 200]]},
        }
    )
    sims = [sim_of(data, e) for e in ENGINES]
    for action, pick, count in calls:
        for sim in sims:
            live = sim.ids.tolist()
            a_ids = sim.ids[sim.agents.slices["a"]].tolist()
            if action == 0 and live:
                sim.despawn([live[pick % len(live)]])
            elif action == 1:
                sim.spawn(("a", "b", "p")[pick % 3], count)
            elif action == 2:
                p_ids = sim.ids[sim.agents.slices["p"]].tolist()
                if p_ids:
                    sim.move(p_ids[pick % len(p_ids)], [10.0 * pick, 5.0 * count])
            elif action == 3 and a_ids:
                sim.blackboard(a_ids[pick % len(a_ids)])["done"] = bool(count % 2)
            else:
                sim.run(count)
        ref, batch = sims
        views = [[s.agent(i) for i in s.ids[s.agents.slices["p"]].tolist()] for s in sims]
        for a, b in zip(*views, strict=True):  # the game reads its players every frame
            assert (a.id, a.active, dict(a.blackboard)) == (b.id, (), {}) == (b.id, b.active, {})
            assert np.array_equal(a.pos, b.pos) and np.array_equal(a.vel, b.vel)
        assert ref.ids.tolist() == batch.ids.tolist()
        assert np.array_equal(ref.agents.pos, batch.agents.pos)
        assert [ref.engine.blackboard(r) for r in range(ref.agents.slices["a"].stop)] == [
            batch.engine.blackboard(r) for r in range(batch.agents.slices["a"].stop)
        ]
        for group, decision in ref.decisions.items():
            assert np.array_equal(decision.status, batch.decisions[group].status)
            assert np.array_equal(decision.emitted, batch.decisions[group].emitted)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.spawn("c"), "unknown group 'c'; valid: a, b"),
        (lambda s: s.spawn("a", 0), "count must be a whole number >= 1, got 0"),
        (lambda s: s.spawn("a", 2, pos=[[1, 2]]), "pos must be [x, y] or 2 of them"),
        (lambda s: s.spawn("a", pos=[1, float("nan")]), "pos must be [x, y] or 1 of them, finite"),
        (lambda s: s.spawn("a", vel="fast"), "vel must be [x, y] or 1 of them"),
        (lambda s: s.spawn("a", heading=[1, 2]), "heading must be 1 finite number(s)"),
        (lambda s: s.despawn([42]), "agent id 42 was never spawned; live ids: 0-6"),
        (lambda s: s.despawn([3, 3]), "agent ids repeat in [3, 3]"),
        (lambda s: s.despawn("x"), "agent ids are whole numbers, got 'x' (str); live ids: 0-6"),
    ],
)
def test_a_bad_call_names_the_value_and_changes_nothing(
    engine: str, call: Any, message: str
) -> None:
    sim = sim_of(wanderers(), engine)
    sim.run(2)
    before = (sim.ids.copy(), sim.agents.pos.copy(), sim.tick)
    with pytest.raises(SimulationError) as err:
        call(sim)
    assert message in str(err.value)
    assert np.array_equal(sim.ids, before[0]) and np.array_equal(sim.agents.pos, before[1])
    assert sim.tick == before[2]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_despawned_id_is_refused(engine: str) -> None:
    sim = sim_of(wanderers(), engine)
    sim.despawn(2)
    with pytest.raises(SimulationError, match="agent id 2 was despawned; live ids: 0-1, 3-6"):
        sim.despawn([2])


def test_same_seed_and_calls_give_byte_identical_traces() -> None:
    from behaviortk.record.jsonl import record

    def run() -> list[str]:
        sim = sim_of(wanderers(), "batch")
        lines = []
        for tick in range(10):
            if tick == 3:
                sim.spawn("a", 2)
            if tick == 6:
                sim.despawn([1])
            sim.step()
            lines.append(json.dumps(record(sim)))
        return lines

    first, second = run(), run()
    assert first == second
    assert '"id": 7' in first[-1] and '"id": 1,' not in first[-1]
