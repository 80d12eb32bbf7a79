"""The game's side of a Simulation (behaviortk/sim/embed.py): events, watching, agent views, advance.

Expected status sequences are worked out by hand from py_trees 2.6's Selector
and Sequence (a non-memory selector re-ticks its first child every tick and,
when a higher-priority child succeeds or runs, stops the lower ones with
INVALID) and from ``wait`` (leaves/actions.py), with dt = 0.1 s. Node paths are the
flat tree's (``FlatNode.path``).
"""

from __future__ import annotations

import json
import math
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from engine_support import definition, other_group, seek, wait
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_equivalence import depth, extend, leaves, scenario_text

import behaviortk
from behaviortk.format.loader import load, load_text
from behaviortk.leaves.actions import Emit, EmitOps
from behaviortk.sim.embed import MAX_STEPS, AgentView, Event, SimulationError
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.ops import NodeContext
from behaviortk.tree.status import SUCCESS

ENGINES = ("py_trees", "batch")
DEFINITIONS = Path(__file__).resolve().parent.parent / "definitions"


def make(root: dict[str, Any], engine: str, **kw: Any) -> Simulation:
    kw.setdefault("blackboard", {"ready": "bool"})  # SELECTOR's key
    return Simulation(load_text(json.dumps(definition(root, **kw)), "events.json"), engine=engine)


def emit(event: str, name: str | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "emit", "event": event}
    if name:
        node["name"] = name
    return node


def everything(sim: Simulation) -> list[Event]:
    """Subscribe to every event; the list fills as the simulation steps."""
    seen: list[Event] = []
    sim.on("*", seen.append)
    return seen


# ------------------------------------------------------------------ emit


CHANCY = {
    "type": "sequence",
    "memory": False,
    "children": [
        {"type": "chance", "probability": 0.3},
        emit("first"),
        {"type": "chance", "probability": 0.5},
        emit("second"),
    ],
}


def test_emit_events_equal_on_both_engines_and_match_the_decisions() -> None:
    """Agents emit at different ticks (seeded chance); both engines list the same events in
    the same order, and exactly the agents whose emit node ran this tick appear."""
    runs = []
    for engine in ENGINES:
        sim = make(CHANCY, engine, count=8, others=[other_group("b", [[50, 50], [60, 60]])])
        per_tick = []
        for _ in range(30):
            sim.step()
            per_tick.append(list(sim.events))
            status = sim.decisions["a"].status
            first = [e.agent for e in sim.events if e.name == "first"]
            second = [e.agent for e in sim.events if e.name == "second"]
            assert first == np.flatnonzero(status[:, 2] == SUCCESS).tolist()
            assert second == np.flatnonzero(status[:, 4] == SUCCESS).tolist()
            assert all(e.tick == sim.tick - 1 and e.node is None for e in sim.events)
            # by agent, and within an agent in tree order
            keys = [(e.agent, e.name != "first") for e in sim.events]
            assert keys == sorted(keys)
        runs.append(per_tick)
    assert runs[0] == runs[1]
    ticks_with = {e.tick for tick in runs[0] for e in tick}
    agents_with = {e.agent for tick in runs[0] for e in tick}
    assert len(ticks_with) > 5 and len(agents_with) > 4  # several agents, different ticks
    assert {e.agent for tick in runs[0] for e in tick} <= set(range(8))  # group b never emits


def test_emit_ids_of_a_later_group_are_their_rows_and_it_succeeds() -> None:
    """Group ``b`` (rows 2 and 3) emits on every tick; ids are rows until agents carry their own."""
    text = json.dumps(
        {
            **definition(wait(100), count=2, others=[other_group("b", [[10, 10], [20, 20]])]),
            "trees": {"main": {"root": wait(100)}, "idle": {"root": emit("ping", "hello")}},
        }
    )
    for engine in ENGINES:
        sim = Simulation(load_text(text, "b.json"), engine=engine)
        sim.run(2)
        assert sim.events == [Event(1, 2, "ping"), Event(1, 3, "ping")]
        assert sim.decisions["b"].status.tolist() == [[SUCCESS], [SUCCESS]]


def test_emit_ops_without_an_event_sink_still_succeed() -> None:
    """A NodeContext made without ``events`` (plugins' tests, tools) drops events."""
    ctx = NodeContext(group="a", n_agents=3, clock=_Clock(), board=None)  # type: ignore[arg-type]
    codes = EmitOps(Emit(event="x"), ctx).update(np.array([0, 2]))
    assert codes.tolist() == [SUCCESS, SUCCESS]


class _Clock:
    tick = 0
    dt = 0.1


def test_events_before_the_first_step_and_on_a_quiet_tick_are_empty() -> None:
    sim = make(wait(100), "batch", count=3)
    assert sim.events == []
    sim.step()
    assert sim.events == []


# ------------------------------------------------------------------ status


SELECTOR = {
    "type": "selector",
    "memory": False,
    "children": [
        {
            "type": "sequence",
            "name": "attack",
            "memory": True,
            "children": [
                {
                    "type": "blackboard_compare",
                    "name": "ready",
                    "key": "ready",
                    "op": "==",
                    "value": True,
                },
                emit("hit", "hit"),
            ],
        },
        {
            "type": "sequence",
            "name": "prepare",
            "memory": True,
            "children": [
                wait(0.2, "aim"),
                {"type": "blackboard_set", "name": "arm", "key": "ready", "value": True},
            ],
        },
    ],
}
SEL, ATTACK, READY, HIT = (
    "selector",
    "selector/attack[0]",
    "selector/attack[0]/ready[0]",
    "selector/attack[0]/hit[1]",
)
PREPARE, AIM, ARM = (
    "selector/prepare[1]",
    "selector/prepare[1]/aim[0]",
    "selector/prepare[1]/arm[1]",
)

STATUS_BY_TICK: dict[int, list[tuple[str, str]]] = {
    # tick 0: ready? unset -> FAILURE, attack FAILURE; prepare runs the 0.2 s wait (2 ticks)
    0: [
        (SEL, "RUNNING"),
        (ATTACK, "FAILURE"),
        (READY, "FAILURE"),
        (PREPARE, "RUNNING"),
        (AIM, "RUNNING"),
    ],
    # tick 1: the same statuses again (aim has waited 1 tick of 2): no events
    # tick 2: aim done, arm sets ready, prepare and the selector succeed
    2: [(SEL, "SUCCESS"), (PREPARE, "SUCCESS"), (AIM, "SUCCESS"), (ARM, "SUCCESS")],
    # tick 3: ready? true, hit emits, attack succeeds. The selector was not RUNNING, so it
    # restarted at attack (current child = attack = previous): no interrupt, prepare and
    # its children keep their SUCCESS
    3: [(ATTACK, "SUCCESS"), (READY, "SUCCESS"), (HIT, "SUCCESS")],
    # tick 4 on: attack succeeds every tick, nothing changes
}


def expected_status(agent: int, ticks: range, start: int = 0) -> list[Event]:
    return [
        Event(t, agent, "status", node, status)
        for t in ticks
        if t >= start
        for node, status in STATUS_BY_TICK.get(t, [])
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_status_events_only_for_watched_agents_worked_by_hand(engine: str) -> None:
    sim = make(SELECTOR, engine, count=3)
    sim.watch(1)
    assert sim.watching == (1,)
    per_tick = []
    for _ in range(6):
        sim.step()
        per_tick.append(sim.events)
    hits = [Event(t, a, "hit") for t in range(3, 6) for a in range(3)]
    assert [e for tick in per_tick for e in tick if e.name == "hit"] == hits
    status = [e for tick in per_tick for e in tick if e.name == "status"]
    assert status == expected_status(1, range(6))
    # tick 3: emitted events (by agent) first, then the watched agent's changes by node
    assert per_tick[3] == [Event(3, a, "hit") for a in range(3)] + expected_status(1, range(3, 4))


@pytest.mark.parametrize("engine", ENGINES)
def test_watching_later_starts_from_the_current_statuses_and_unwatch_stops(engine: str) -> None:
    sim = make(SELECTOR, engine, count=3)
    seen = everything(sim)
    sim.run(2)  # ticks 0, 1
    sim.watch([2, 0])
    sim.run(2)  # ticks 2, 3
    sim.unwatch([0])
    sim.run(2)
    status = [e for e in seen if e.name == "status"]
    tick2 = expected_status(0, range(2, 3)) + expected_status(2, range(2, 3))
    tick3 = expected_status(0, range(3, 4)) + expected_status(2, range(3, 4))
    assert status == tick2 + tick3  # agent order, no tick-0 history; nothing after tick 3
    assert sim.watching == (2,)
    sim.watch(2)  # already watched: keeps its baseline, no duplicate events
    sim.unwatch(1)  # not watched: nothing to do
    assert sim.watching == (2,)


def test_recorded_spawn_events_go_out_first_with_the_next_step() -> None:
    sim = make(SELECTOR, "batch", count=2)
    sim.run(3)
    seen: list[Event] = []
    sim.on("spawn", seen.append)
    sim._record(Event(sim.tick, 1, "spawn"))
    sim.step()
    assert sim.events[0] == Event(3, 1, "spawn")
    assert [e.name for e in sim.events[1:]] == ["hit", "hit"]
    assert seen == [Event(3, 1, "spawn")]
    sim.step()
    assert all(e.name == "hit" for e in sim.events)


# ------------------------------------------------------------------ callbacks


@pytest.mark.parametrize("engine", ENGINES)
def test_on_calls_named_then_catch_all_subscribers_with_each_event(engine: str) -> None:
    sim = make(SELECTOR, engine, count=2)
    calls: list[tuple[str, Event]] = []
    sim.on("hit", lambda e: calls.append(("hit", e)))
    sim.on("*", lambda e: calls.append(("*", e)))
    stop_status = sim.on("status", lambda e: calls.append(("status", e)))
    sim.watch(0)
    sim.run(4)
    hits = [Event(3, 0, "hit"), Event(3, 1, "hit")]
    status = expected_status(0, range(4))
    expected: list[tuple[str, Event]] = []
    for e in status[:9]:  # ticks 0 and 2
        expected += [("status", e), ("*", e)]
    for e in hits:
        expected += [("hit", e), ("*", e)]
    for e in status[9:]:
        expected += [("status", e), ("*", e)]
    assert calls == expected
    calls.clear()
    stop_status()
    stop_status()  # twice is harmless
    sim.step()
    assert calls == [(k, e) for e in [Event(4, 0, "hit"), Event(4, 1, "hit")] for k in ("hit", "*")]


def test_a_callback_exception_propagates_after_the_tick_is_complete() -> None:
    sim = make(SELECTOR, "batch", count=2)
    sim.run(3)
    later: list[Event] = []

    def boom(event: Event) -> None:
        raise RuntimeError(f"game bug at {event.agent}")

    sim.on("hit", boom)
    sim.on("*", later.append)
    pos = sim.agents.pos.copy()
    with pytest.raises(RuntimeError, match="game bug at 0"):
        sim.step()
    assert sim.tick == 4
    assert sim.events == [Event(3, 0, "hit"), Event(3, 1, "hit")]
    assert later == []  # the tick's remaining callbacks were not called
    np.testing.assert_array_equal(sim.agents.pos, pos)  # nothing steers: the tick ran whole


def test_on_refuses_unknown_names_and_non_callables() -> None:
    sim = make(SELECTOR, "batch", count=2)
    with pytest.raises(SimulationError) as err:
        sim.on("hitt", print)
    assert str(err.value) == (
        "no node raises event 'hitt'; choose one of hit, spawn, despawn, status, *"
    )
    with pytest.raises(SimulationError, match="callable, got 3"):
        sim.on("hit", 3)  # type: ignore[arg-type]
    with pytest.raises(SimulationError, match="event None"):
        sim.on(None, print)  # type: ignore[arg-type]
    sim.run(4)
    assert [e.name for e in sim.events] == ["hit", "hit"]  # nothing was subscribed


# ------------------------------------------------------------------ agent views


@pytest.mark.parametrize("engine", ENGINES)
def test_agent_view_fields_equal_the_arrays(engine: str) -> None:
    sim = Simulation(load(DEFINITIONS / "evade_or_flock.json"), engine=engine)
    sim.run(20)
    for agent in range(0, sim.agents.n, 7):
        view = sim.agent(agent)
        assert isinstance(view, AgentView)
        assert view.id == agent
        assert view.group == sim.agents.group_names[int(sim.agents.group[agent])]
        np.testing.assert_array_equal(view.pos, sim.agents.pos[agent])
        np.testing.assert_array_equal(view.vel, sim.agents.vel[agent])
        np.testing.assert_array_equal(view.heading, sim.agents.heading[agent])
        assert list(view.active) == sim.active_names(agent)
        assert dict(view.blackboard) == sim.engine.blackboard(agent)
    assert any(sim.agent(a).active for a in range(sim.agents.n))


@pytest.mark.parametrize("engine", ENGINES)
def test_agent_view_is_a_read_only_snapshot(engine: str) -> None:
    sim = make(
        {"type": "sequence", "memory": False, "children": [SELECTOR, seek("chase")]},
        engine,
        count=2,
    )
    sim.run(3)  # the selector succeeds on tick 2 (ready set), then chase runs
    view = sim.agent(1)
    assert view.active == ("chase",)
    assert dict(view.blackboard) == {"ready": True}
    before = view.pos.copy()
    sim.step()
    np.testing.assert_array_equal(view.pos, before)  # a snapshot: the step moved the agent
    assert not np.array_equal(sim.agent(1).pos, before)
    with pytest.raises(ValueError):
        view.pos[0] = 0.0
    with pytest.raises(TypeError):
        view.blackboard["ready"] = False  # type: ignore[index]
    with pytest.raises(FrozenInstanceError):
        view.id = 3  # type: ignore[misc]
    assert sim.engine.blackboard(1) == {"ready": True}


# ------------------------------------------------------------------ bad ids


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.watch(3), "agent id 3 was never spawned; live ids: 0-2"),
        (lambda s: s.watch([0, 1, -1]), "agent id -1 was never spawned; live ids: 0-2"),
        (
            lambda s: s.watch("a-0"),
            "agent ids are whole numbers, got 'a-0' (str); live ids: 0-2",
        ),
        (
            lambda s: s.watch([0, 1.0]),
            "agent ids are whole numbers, got 1.0 (float); live ids: 0-2",
        ),
        (lambda s: s.watch(True), "agent ids are whole numbers, got True (bool); live ids: 0-2"),
        (
            lambda s: s.watch([[0]]),
            "agent ids are whole numbers, got [0] (list); live ids: 0-2",
        ),
        (
            lambda s: s.watch(None),
            "agent ids are whole numbers, got None (NoneType); live ids: 0-2",
        ),
        (lambda s: s.unwatch(7), "agent id 7 was never spawned; live ids: 0-2"),
        (lambda s: s.agent(3), "agent id 3 was never spawned; live ids: 0-2"),
        (
            lambda s: s.agent("a-1"),
            "agent ids are whole numbers, got 'a-1' (str); live ids: 0-2",
        ),
        (lambda s: s.row_of(np.int64(5)), "agent id 5 was never spawned; live ids: 0-2"),
    ],
)
def test_bad_ids_raise_one_documented_error_and_change_nothing(call: Any, message: str) -> None:
    sim = make(SELECTOR, "batch", count=3)
    sim.watch(2)
    sim.run(2)
    events = sim.events
    with pytest.raises(SimulationError) as err:
        call(sim)
    assert str(err.value) == message
    assert isinstance(err.value, ValueError)
    assert behaviortk.SimulationError is SimulationError
    assert sim.tick == 2 and sim.watching == (2,) and sim.events is events
    sim.step()
    assert [e.agent for e in sim.events if e.name == "status"] == [2, 2, 2, 2]  # only 2, tick 2


def test_numpy_ids_are_accepted() -> None:
    sim = make(SELECTOR, "py_trees", count=3)
    sim.watch(np.array([2, 0]))
    sim.watch(np.int32(1))
    assert sim.watching == (0, 1, 2)
    assert sim.agent(np.int64(1)).id == 1


# ------------------------------------------------------------------ advance


def test_advance_runs_whole_ticks_and_returns_the_fraction() -> None:
    sim = make(seek("go"), "batch", count=2)  # dt 0.1
    assert sim.advance(0.25) == pytest.approx(0.5)
    assert sim.tick == 2
    assert sim.advance(0.05) == pytest.approx(0.0, abs=1e-9)  # 0.05 + 0.05 = one more tick
    assert sim.tick == 3
    assert sim.advance(0.0) == pytest.approx(0.0, abs=1e-9)
    assert sim.tick == 3
    for _ in range(3):
        sim.advance(0.1)
    assert sim.tick == 6
    assert sim.advance(0.3) == pytest.approx(0.0, abs=1e-9)  # 0.3 / 0.1 < 3 in floats: still 3
    assert sim.tick == 9
    assert sim.advance(0.07) == pytest.approx(0.7)
    assert sim.tick == 9


def test_advance_is_capped_and_drops_the_rest() -> None:
    sim = make(seek("go"), "batch", count=2)
    assert sim.advance(10.0) == 0.0
    assert sim.tick == MAX_STEPS == 5
    assert sim.advance(0.05) == pytest.approx(0.5)  # nothing of the stall carried over
    assert sim.tick == 5
    assert sim.advance(1e300, max_steps=2) == 0.0
    assert sim.tick == 7
    alpha = sim.advance(0.999)  # 9.99 ticks + 0.5 left: 5 run, the rest dropped
    assert (sim.tick, alpha) == (12, 0.0)


def test_advance_alpha_stays_below_one() -> None:
    sim = make(seek("go"), "batch", count=1)
    for _ in range(50):
        alpha = sim.advance(0.0999999999)
        assert 0.0 <= alpha < 1.0


def test_advance_equals_stepping_and_fires_callbacks_for_every_tick() -> None:
    a = make(CHANCY, "batch", count=6)
    b = make(CHANCY, "batch", count=6)
    seen = everything(a)
    a.advance(0.35)
    a.advance(0.35)
    b.run(7)
    np.testing.assert_array_equal(a.agents.pos, b.agents.pos)
    assert a.tick == b.tick == 7
    assert {e.tick for e in seen} <= set(range(7))
    assert [e for e in seen if e.tick == 6] == b.events


@pytest.mark.parametrize(
    ("seconds", "kw", "message"),
    [
        (-0.1, {}, "real_seconds must be finite and >= 0, got -0.1"),
        (math.nan, {}, "real_seconds must be finite and >= 0, got nan"),
        (math.inf, {}, "real_seconds must be finite and >= 0, got inf"),
        ("0.1", {}, "real_seconds must be a number of seconds >= 0, got '0.1' (str)"),
        (True, {}, "real_seconds must be a number of seconds >= 0, got True (bool)"),
        (None, {}, "real_seconds must be a number of seconds >= 0, got None (NoneType)"),
        (0.5, {"max_steps": 0}, "max_steps must be a whole number >= 1, got 0"),
        (0.5, {"max_steps": 2.0}, "max_steps must be a whole number >= 1, got 2.0"),
    ],
)
def test_bad_advance_input_raises_and_changes_nothing(
    seconds: Any, kw: dict[str, Any], message: str
) -> None:
    sim = make(seek("go"), "batch", count=2)
    assert sim.advance(0.14) == pytest.approx(0.4)
    pos = sim.agents.pos.copy()
    with pytest.raises(SimulationError) as err:
        sim.advance(seconds, **kw)
    assert str(err.value) == message
    assert sim.tick == 1
    np.testing.assert_array_equal(sim.agents.pos, pos)
    assert sim.advance(0.0) == pytest.approx(0.4)  # the accumulator is untouched


# ------------------------------------------------------------------ both engines, random


def emits() -> st.SearchStrategy[dict[str, Any]]:
    near = {"type": "in_range", "target": {"kind": "nearest", "group": "b"}, "radius": 40}
    leave = {"type": "sequence", "memory": False, "children": [near, {"type": "despawn"}]}
    return st.sampled_from([emit("ping"), emit("pong", "named"), emit("caught"), leave])


random_trees = st.recursive(st.one_of(emits(), leaves(), emits()), extend, max_leaves=10).filter(
    lambda t: depth(t) <= 5 and '"emit"' in json.dumps(t)
)
calls = st.lists(
    st.one_of(
        st.tuples(st.just("step"), st.integers(1, 8)),
        st.tuples(st.just("watch"), st.lists(st.integers(0, 14), max_size=4)),
        st.tuples(st.just("unwatch"), st.lists(st.integers(0, 14), max_size=3)),
        st.tuples(st.just("advance"), st.sampled_from([0.0, 0.005, 0.013, 0.02, 0.05, 0.5])),
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    tree=random_trees,
    seed=st.integers(0, 10_000),
    first=st.lists(st.integers(0, 14), max_size=3),
    script=calls,
)
def test_random_calls_keep_both_engines_identical(
    tree: dict[str, Any], seed: int, first: list[int], script: list[tuple[str, Any]]
) -> None:
    """Random trees with emit nodes (and despawn leaves) (dt 0.02), random
    step/watch/unwatch/advance calls: the py_trees and batch simulations raise the same
    events (the despawns among them) and stay in the same state."""
    scenario = load_text(scenario_text(tree, seed))
    sims = [Simulation(scenario, engine=e) for e in ENGINES]
    seen = [everything(sim) for sim in sims]
    for op, arg in [("watch", first), *script, ("step", 5)]:
        results = []
        for sim in sims:
            if op == "step":
                sim.run(arg)
            elif op == "watch":  # agents a despawn leaf removed are not there to watch
                sim.watch([i for i in arg if i in set(sim.ids.tolist())])
            elif op == "unwatch":
                sim.unwatch([i for i in arg if i in set(sim.ids.tolist())])
            else:
                results.append(sim.advance(arg))
        a, b = sims
        assert results[:1] == results[1:]
        assert a.tick == b.tick and a.watching == b.watching
        assert a.events == b.events
        assert seen[0] == seen[1]
        np.testing.assert_array_equal(a.agents.pos, b.agents.pos)
    assert all(e.tick < sims[0].tick for e in seen[0])
