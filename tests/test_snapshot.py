"""Save and restore continue byte-identically (issue 26, "Save and restore").

A run is saved at a few ticks (some inside running ``wait`` / ``timeout`` /
``cooldown`` nodes and memory sequences), restored on the same engine and on the
other one, and both continue: the trace lines (positions, velocities, statuses,
requests, names) must be the same bytes as the uninterrupted run's. Random trees
(``test_equivalence``'s strategy: every composite, decorator, condition and action)
are saved at random ticks; a game's side (spawns and despawns pending, blackboard
writes, watched agents, ``advance``'s accumulator, the pointer) is saved too.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_equivalence import assert_same_decisions, random_trees, scenario_text, scenarios

from behaviortk.format.loader import load, load_text
from behaviortk.record.jsonl import TraceWriter
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.status import RUNNING

ENGINES = ("py_trees", "batch")
TIMED = ("wait", "timeout", "cooldown")


def lines(sim: Simulation, ticks: int) -> list[str]:
    """The trace lines of ``sim``'s next ``ticks`` ticks (header left out)."""
    out = io.StringIO()
    writer = TraceWriter(out, sim)
    for _ in range(ticks):
        sim.step()
        writer.on_tick(sim)
    return out.getvalue().splitlines()[1:]


def running(sim: Simulation) -> set[str]:
    """Types of the timed nodes and memory composites RUNNING for some agent now."""
    found = set()
    for group, decision in sim.decisions.items():
        for node in sim.trees[group].nodes:
            kind = node.model.type
            memory = getattr(node.model, "memory", False)
            if (kind in TIMED or memory) and (decision.status[:, node.index] == RUNNING).any():
                found.add(f"memory {kind}" if memory else kind)
    return found


def check_continuations(
    scenario: Any, engine: str, saves: list[int], end: int, tmp: Path
) -> set[str]:
    """Run to ``end`` saving at ``saves``; each snapshot, restored on both engines, must
    continue with the run's lines. Returns what was running at the saves."""
    sim = Simulation(scenario, engine=engine)
    out = io.StringIO()
    writer = TraceWriter(out, sim)
    seen: set[str] = set()
    for tick in range(end):
        if tick in saves:
            sim.save(tmp / f"{engine}-{tick}.btks")
            seen |= running(sim)
        sim.step()
        writer.on_tick(sim)
    run = out.getvalue().splitlines()[1:]
    for tick in saves:
        for other in ENGINES:
            restored = Simulation.restore(tmp / f"{engine}-{tick}.btks", engine=other)
            assert (restored.tick, restored.engine.name) == (tick, other)
            got = lines(restored, end - tick)
            first = next(
                (k for k, (a, b) in enumerate(zip(got, run[tick:], strict=False)) if a != b), None
            )
            assert got == run[tick:], f"saved at {tick} on {engine}, on {other}: tick {first}"
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "path",
    [p for p in scenarios() if p.stem != "evacuation"],
    ids=lambda p: f"{p.parent.name}/{p.stem}",
)
def test_every_shipped_definition_continues_identically(
    path: Path, engine: str, tmp_path: Path
) -> None:
    scenario = load(path)
    if sum(g.count for g in scenario.definition.groups) > 500:  # the 2,000-agent template
        check_continuations(scenario, engine, [13], 30, tmp_path)
    else:
        check_continuations(scenario, engine, [0, 13, 47], 80, tmp_path)


@pytest.mark.slow
def test_evacuation_continues_identically(tmp_path: Path) -> None:
    """3,000 agents, non-penetration and waits: batch only (py_trees takes minutes)."""
    scenario = load(Path(__file__).parent.parent / "definitions" / "evacuation.json")
    sim = Simulation(scenario, engine="batch")
    sim.run(23)
    sim.save(tmp_path / "e.btks")
    restored = Simulation.restore(tmp_path / "e.btks")
    assert lines(restored, 25) == lines(sim, 25)


def test_guard_patrol_saved_inside_waits_and_memory_sequences(tmp_path: Path) -> None:
    """The guards search (a running ``wait`` in a memory sequence) from tick 367 on."""
    scenario = load(Path(__file__).parent.parent / "definitions" / "guard_patrol.json")
    seen = check_continuations(scenario, "py_trees", [40, 371, 386], 400, tmp_path)
    assert {"wait", "memory sequence"} <= seen


TIMERS = {
    "type": "sequence",
    "memory": True,
    "children": [
        {"type": "timeout", "duration": 0.3, "child": {"type": "wait", "duration": 0.1}},
        {
            "type": "cooldown",
            "duration": 0.2,
            "child": {"type": "repeat", "num_success": 2, "child": {"type": "wait", "duration": 0.06}},
        },
        {
            "type": "retry",
            "num_failures": 2,
            "child": {"type": "one_shot", "policy": "on_completion", "child": {"type": "chance", "probability": 0.5}},
        },
        {"type": "seek", "target": {"kind": "point", "at": [100.0, 100.0]}},
    ],
}  # fmt: skip
EXPIRES = {"type": "timeout", "duration": 0.1, "child": {"type": "wait", "duration": 0.5}}


def test_timers_counters_and_clocks_continue_on_both_engines(tmp_path: Path) -> None:
    """Saved inside a running timeout, cooldown, repeat, retry and one_shot."""
    scenario = load_text(
        scenario_text({"type": "selector", "memory": False, "children": [TIMERS, EXPIRES]}, 5)
    )
    seen = check_continuations(scenario, "batch", list(range(2, 90, 4)), 94, tmp_path)
    assert {"wait", "timeout", "cooldown", "memory sequence"} <= seen


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    tree=random_trees,
    seed=st.integers(0, 10_000),
    at=st.integers(0, 30),
    engines=st.sampled_from([(a, b) for a in ENGINES for b in ENGINES]),
)
def test_random_trees_continue_identically(
    tree: dict[str, Any], seed: int, at: int, engines: tuple[str, str]
) -> None:
    import tempfile

    scenario = load_text(scenario_text(tree, seed, non_penetration=seed % 2 == 0))
    a = Simulation(scenario, engine=engines[0])
    a.run(at)
    with tempfile.TemporaryDirectory() as tmp:
        a.save(Path(tmp) / "s.btks")
        b = Simulation.restore(Path(tmp) / "s.btks", engine=engines[1])
    for t in range(15):
        a.step()
        b.step()
        assert_same_decisions(a, b, at + t)
        np.testing.assert_array_equal(a.agents.pos, b.agents.pos)
    for agent in (0, 5, 11):
        assert a.engine.blackboard(agent) == b.engine.blackboard(agent)
        assert a.blackboard(agent).stored_tick("seen") == b.blackboard(agent).stored_tick("seen")


GAME = {
    "name": "game",
    "world": {"width": 400, "height": 400, "edges": "wrap", "dt": 0.05, "seed": 3,
              "heading_smoothing": 4},
    "groups": [
        {"name": "player", "control": "external", "count": 1,
         "spawn": {"kind": "positions", "points": [[200, 200]]}},
        {"name": "bugs", "count": 6, "tree": "bug", "max_speed": 50,
         "spawn": {"kind": "area", "min": [0, 0], "max": [400, 400]}},
    ],
    "trees": {
        "bug": {
            "blackboard": {"angry": {"type": "bool", "default": False},
                           "mark": {"type": "point"}, "note": {"type": "string"}},
            "root": {"type": "selector", "memory": False, "children": [
                {"type": "sequence", "memory": False, "children": [
                    {"type": "blackboard_compare", "key": "angry", "op": "==", "value": True},
                    {"type": "emit", "event": "charge"},
                    {"type": "pursuit", "target": {"kind": "nearest", "group": "player"}}]},
                {"type": "sequence", "memory": True, "children": [
                    {"type": "remember", "key": "mark",
                     "target": {"kind": "nearest", "group": "player", "radius": 500}},
                    {"type": "wait", "duration": 0.2},
                    {"type": "wander"}]}]},
        }
    },
}  # fmt: skip


def game_turn(sim: Simulation, t: int) -> None:
    """What a game does between ticks: move the player, spawn, despawn, write boards."""
    sim.move(0, [200 + 3 * t, 200 - 2 * t])
    if t % 4 == 1:
        sim.spawn("bugs", 2)
    if t % 5 == 3:
        sim.despawn(sim.ids[-1])
    if t % 6 == 2:
        bug = int(sim.ids[2])
        sim.blackboard(bug)["angry"] = t % 12 == 2
        sim.blackboard(bug)["note"] = f"turn {t}"


def test_a_games_side_is_saved(tmp_path: Path) -> None:
    """Pending spawns and despawns, their events, watched agents, boards written by the
    game, the heading smoother, ``advance``'s accumulator and the pointer."""
    scenario = load_text(json.dumps(GAME))
    sim = Simulation(scenario, engine="py_trees")
    sim.watch([1, 2])
    for t in range(21):
        game_turn(sim, t)
        sim.step()
    sim.advance(0.07)  # one tick, 0.02 s left over
    sim.spawn("bugs", 1)  # pending: applied when saved, its event goes out next step
    sim.despawn(3)
    sim.pointer = np.array([10.0, 20.0])
    held = {g: (d.status.copy(), d.emitted.copy()) for g, d in sim.decisions.items()}
    sim.save(tmp_path / "g.btks")
    copies = [Simulation.restore(tmp_path / "g.btks", engine=e) for e in ENGINES]
    for copy in copies:
        assert copy.watching == sim.watching == (1, 2)
        np.testing.assert_array_equal(copy.ids, sim.ids)
        assert copy.agents.names == sim.agents.names
        np.testing.assert_array_equal(copy.pointer, [10.0, 20.0])
        for group, (status, emitted) in held.items():
            np.testing.assert_array_equal(copy.decisions[group].status, status)
            np.testing.assert_array_equal(copy.decisions[group].emitted, emitted)
    names: set[str] = set()
    for t in range(21, 45):
        for s in (sim, *copies):
            game_turn(s, t)
            s.advance(0.031)
        want = [(e.tick, e.agent, e.name, e.node, e.status) for e in sim.events]
        if t == 21:  # the pending spawn and despawn's events go out with the next step
            assert {("spawn", 19), ("despawn", 3)} <= {(e.name, e.agent) for e in sim.events}
        names |= {e.name for e in sim.events}
        for copy in copies:
            assert [(e.tick, e.agent, e.name, e.node, e.status) for e in copy.events] == want
            assert copy.tick == sim.tick
            np.testing.assert_array_equal(copy.agents.pos, sim.agents.pos)
            np.testing.assert_array_equal(copy.agents.smoothed_heading, sim.agents.smoothed_heading)
            for agent in sim.ids.tolist()[1:]:
                view, other = sim.blackboard(agent), copy.blackboard(agent)
                assert dict(view) == dict(other)
                assert [view.stored_tick(k) for k in view.declared] == [
                    other.stored_tick(k) for k in view.declared
                ]
    assert {"spawn", "despawn", "status", "charge"} <= names


def test_a_snapshot_before_the_first_tick(tmp_path: Path) -> None:
    scenario = load_text(json.dumps(GAME))
    sim = Simulation(scenario, engine="batch")
    sim.save(tmp_path / "s.btks")
    copy = Simulation.restore(tmp_path / "s.btks")
    assert copy.tick == 0 and copy.decisions == {}
    assert lines(copy, 10) == lines(sim, 10)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    tree=random_trees,
    seed=st.integers(0, 10_000),
    at=st.integers(0, 30),
    every=st.integers(1, 4),
    far=st.sampled_from([None, 0, 3]),
    engines=st.sampled_from([(a, b) for a in ENGINES for b in ENGINES]),
)
def test_random_trees_with_lod_continue_identically(
    tree: dict[str, Any],
    seed: int,
    at: int,
    every: int,
    far: int | None,
    engines: tuple[str, str],
) -> None:
    """Think-rate LOD: who thought last, held decisions, held targets and neighbours."""
    import tempfile

    lod: dict[str, Any] = {"think_every": every}
    if far is not None:
        lod["lod"] = {"focus": {"group": "b"}, "near": 60.0, "far_think_every": every + far}
    scenario = load_text(scenario_text(tree, seed, **lod))
    a = Simulation(scenario, engine=engines[0])
    a.run(at)
    with tempfile.TemporaryDirectory() as tmp:
        a.save(Path(tmp) / "s.btks")
        b = Simulation.restore(Path(tmp) / "s.btks", engine=engines[1])
    for t in range(15):
        a.step()
        b.step()
        assert_same_decisions(a, b, at + t)
        np.testing.assert_array_equal(a.decisions["a"].thought, b.decisions["a"].thought)
        np.testing.assert_array_equal(a.agents.pos, b.agents.pos)


FLOCK_LOD = {
    "name": "flock_lod",
    "world": {"width": 400, "height": 400, "edges": "wrap", "dt": 0.05, "seed": 11},
    "groups": [
        {"name": "birds", "count": 60, "tree": "flock", "max_speed": 60, "view_distance": 60,
         "spawn": {"kind": "area", "min": [0, 0], "max": [400, 400]}, "think_every": 3,
         "lod": {"focus": [[200, 200]], "near": 120, "far_think_every": 7}},
        {"name": "hawk", "count": 2, "tree": "hunt", "max_speed": 70,
         "spawn": {"kind": "area", "min": [0, 0], "max": [400, 400]}},
    ],
    "trees": {
        "flock": {"root": {"type": "selector", "memory": False, "children": [
            {"type": "sequence", "memory": False, "children": [
                {"type": "in_range", "target": {"kind": "nearest", "group": "hawk"}, "radius": 80},
                {"type": "evade", "target": {"kind": "nearest", "group": "hawk"}}]},
            {"type": "blend", "children": [
                {"type": "separation"}, {"type": "alignment"}, {"type": "cohesion"},
                {"type": "wander"}]}]}},
        "hunt": {"root": {"type": "pursuit", "target": {"kind": "nearest", "group": "birds"}}},
    },
}  # fmt: skip


@pytest.mark.parametrize("kernels", ["numpy", "numba"])
def test_lod_with_a_moved_focus_and_spawns_continues(tmp_path: Path, kernels: str) -> None:
    """Held neighbour pairs and nearest targets, the game's focus, and rows changed by
    spawns after the tick the pairs were made (then read re-sorted), on both kernel paths."""
    scenario = load_text(json.dumps(FLOCK_LOD))
    sim = Simulation(scenario, engine="batch", kernels=kernels)
    sim.focus([[100.0, 100.0], [300.0, 250.0]])
    sim.run(10)
    sim.save(tmp_path / "a.btks")
    want = lines(sim, 20)
    sim.spawn("birds", 3)
    sim.despawn(sim.ids[4])
    sim.save(tmp_path / "b.btks")  # rows changed since the pairs were made
    copies = [Simulation.restore(tmp_path / "b.btks", e, kernels=kernels) for e in ENGINES]
    assert lines(copies[0], 20) == lines(copies[1], 20) == lines(sim, 20)
    for engine in ENGINES:
        copy = Simulation.restore(tmp_path / "a.btks", engine, kernels=kernels)
        np.testing.assert_array_equal(copy.think.override, [[100.0, 100.0], [300.0, 250.0]])
        assert lines(copy, 20) == want


@pytest.mark.parametrize("name", ["patience", "tally"])
def test_a_plugins_per_agent_arrays_are_saved(name: str, tmp_path: Path) -> None:
    """A plugin decorator's and action's per-agent counters (``per_agent``), restored with
    the registries that know the plugin."""
    import importlib

    from behaviortk.registry import Registries, load_plugin

    regs = Registries.with_builtins()
    load_plugin(f"examples.plugins.{name}", regs)
    definition = importlib.import_module(f"examples.plugins.{name}").DEFINITION
    scenario = load_text(json.dumps(definition), registries=regs)
    for saved_on in ENGINES:
        sim = Simulation(scenario, engine=saved_on)
        sim.run(6)  # inside patience's count, after the first tally
        sim.save(tmp_path / "p.btks")
        copies = [Simulation.restore(tmp_path / "p.btks", e, registries=regs) for e in ENGINES]
        want = lines(sim, 12)
        for copy in copies:
            assert lines(copy, 12) == want
            for row in range(sim.agents.n):
                assert copy.engine.blackboard(row) == sim.engine.blackboard(row)


def test_obstacles_dragged_in_the_viewer_are_saved(tmp_path: Path) -> None:
    scenario = load(Path(__file__).parent.parent / "definitions" / "obstacle_avoidance.json")
    sim = Simulation(scenario, engine="batch")
    sim.run(5)
    sim.world.obstacle_pos[0] += (40.0, -25.0)  # what the viewer's drag does
    sim.save(tmp_path / "o.btks")
    copy = Simulation.restore(tmp_path / "o.btks", "py_trees")
    np.testing.assert_array_equal(copy.world.obstacle_pos, sim.world.obstacle_pos)
    assert lines(copy, 30) == lines(sim, 30)
