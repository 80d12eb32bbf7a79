"""The py_trees engine reads node statuses only when somebody asks (issue 14, item 4).

``Decision.status`` of the py_trees engine is a ``TreeStatuses`` source read on
first access. These tests show that a run nobody inspects never reads it, and
that every reader gets the statuses of the tick it asks about, equal to the
batch engine's (which always has them): a trace opened mid-run, the viewer's
tree panel (one row), watched agents' events, and a caller holding an old
Decision across later ticks.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from behaviortk.engines.pytrees import TreeStatuses
from behaviortk.format.loader import load
from behaviortk.record.jsonl import TraceWriter
from behaviortk.sim.simulation import Simulation
from behaviortk.sim.tick_state import TickState
from behaviortk.tree.flat import Decision
from behaviortk.viewer.tree_frame import frame_from_sim

DEFINITIONS = Path(__file__).resolve().parent.parent / "definitions"
SCENARIOS = ["evade_or_flock", "guard_patrol"]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of ``TreeStatuses`` reads: ``all`` (every row) and ``rows`` (some rows)."""
    counts = {"all": 0, "rows": 0}
    original_all, original_rows = TreeStatuses.all, TreeStatuses.rows

    def all_rows(self: TreeStatuses) -> np.ndarray:
        counts["all"] += 1
        return original_all(self)

    def some_rows(self: TreeStatuses, local: np.ndarray) -> np.ndarray:
        counts["rows"] += 1
        return original_rows(self, local)

    monkeypatch.setattr(TreeStatuses, "all", all_rows)
    monkeypatch.setattr(TreeStatuses, "rows", some_rows)
    return counts


def pair(name: str) -> tuple[Simulation, Simulation]:
    scenario = load(DEFINITIONS / f"{name}.json")
    return Simulation(scenario, engine="py_trees"), Simulation(scenario, engine="batch")


def step_both(ref: Simulation, batch: Simulation) -> None:
    ref.step()
    batch.step()
    for group, d in ref.decisions.items():  # requests are needed every tick: always equal
        assert np.array_equal(d.emitted, batch.decisions[group].emitted), (ref.tick, group)


@pytest.mark.parametrize("name", SCENARIOS)
def test_nobody_asks_nothing_is_read(name: str, reads: dict[str, int]) -> None:
    ref, batch = pair(name)
    for _ in range(40):
        step_both(ref, batch)
    assert reads == {"all": 0, "rows": 0}
    assert not any(d.collected for d in ref.decisions.values())
    assert all(d.collected for d in batch.decisions.values())  # the batch engine has them anyway
    for group, d in ref.decisions.items():  # asked now, after the run: that tick's statuses
        assert np.array_equal(d.status, batch.decisions[group].status), group
        assert d.collected
    assert reads["all"] == len(ref.decisions)


@pytest.mark.parametrize("name", SCENARIOS)
def test_trace_opened_mid_run_records_the_batch_engines_statuses(
    name: str, reads: dict[str, int]
) -> None:
    ref, batch = pair(name)
    for _ in range(25):  # nobody asks for 25 ticks
        step_both(ref, batch)
    assert reads["all"] == 0
    outs = [io.StringIO(), io.StringIO()]
    writers = [TraceWriter(out, sim) for out, sim in zip(outs, (ref, batch), strict=True)]
    for _ in range(30):
        step_both(ref, batch)
        for writer, sim in zip(writers, (ref, batch), strict=True):
            writer.on_tick(sim)
        want, got = TickState.of(batch), TickState.of(ref)
        for group in want.status:
            assert np.array_equal(got.status[group], want.status[group]), (ref.tick, group)
    assert reads["all"] >= 30 * len(ref.decisions)  # the trace asked every tick from then on
    lines = [out.getvalue().splitlines() for out in outs]
    assert json.loads(lines[0][0])["engine"] == "py_trees"
    assert lines[0][1:] == lines[1][1:]  # the tick lines: statuses, active leaves, state


def test_viewer_tree_panel_reads_one_row(reads: dict[str, int]) -> None:
    ref, batch = pair("evade_or_flock")
    prey = ref.agents.slices["prey"]
    for tick in range(30):
        step_both(ref, batch)
        row = prey.start + (7 * tick) % (prey.stop - prey.start)  # the selection moves
        shown = frame_from_sim(ref, row)
        want = frame_from_sim(batch, row)
        assert shown is not None and want is not None
        assert np.array_equal(shown.status, want.status), tick
        assert np.array_equal(shown.status, batch.decisions["prey"].status[row - prey.start])
    assert reads == {"all": 0, "rows": 30}  # one row per frame, never the whole group
    assert not ref.decisions["prey"].collected


def test_watched_agents_events_equal_and_only_their_rows_read(reads: dict[str, int]) -> None:
    ref, batch = pair("evade_or_flock")
    watched = [0, 5, 61]  # two prey and a predator
    for sim in (ref, batch):
        sim.watch(watched)
    for _ in range(40):
        step_both(ref, batch)
        assert ref.events == batch.events, ref.tick
    assert reads["all"] == 0
    # watch() before the first tick reads nothing (no decisions yet: all INVALID), then
    # each tick reads once per group holding a watched agent: 40 ticks * 2 groups = 80
    assert reads["rows"] == 40 * 2


def test_decisions_held_across_ticks_keep_their_tick(reads: dict[str, int]) -> None:
    """A caller keeps every tick's Decision and reads them all after the run."""
    ref, batch = pair("guard_patrol")
    held: list[tuple[dict[str, Decision], dict[str, np.ndarray]]] = []
    for _ in range(30):
        step_both(ref, batch)
        truth = {group: d.status.copy() for group, d in batch.decisions.items()}
        held.append((ref.decisions, truth))
    # the engine read each held Decision before ticking the trees again (29 ticks of them)
    assert reads["all"] == 29 * len(ref.decisions)
    for tick, (decisions, truth) in enumerate(held):
        for group, d in decisions.items():
            assert np.array_equal(d.status, truth[group]), (tick, group)


def test_decisions_dropped_are_never_read(reads: dict[str, int]) -> None:
    """A reader that looks at a Decision and lets it go costs one read, not one per tick."""
    ref, batch = pair("evade_or_flock")
    seen: list[Any] = []
    for tick in range(20):
        step_both(ref, batch)
        if tick == 10:
            seen.append(ref.decisions["prey"].status_of([3]))
    assert reads == {"all": 0, "rows": 1}


def test_spawn_keeps_last_ticks_statuses_for_survivors(reads: dict[str, int]) -> None:
    """Spawning between ticks: survivors keep their rows' statuses, newcomers are INVALID (0);
    nothing is read until asked."""
    ref, batch = pair("evade_or_flock")
    for _ in range(12):
        step_both(ref, batch)
    for sim in (ref, batch):
        sim.despawn([2, 9])
        new = sim.spawn("prey", 3, pos=[100, 100])
    assert reads == {"all": 0, "rows": 0}
    n = ref.agents.slices["prey"].stop - ref.agents.slices["prey"].start
    # the newcomers take rows 2 and 9 (those of the agents gone) and the row after the old ones
    assert ref.rows_of(new).tolist() == batch.rows_of(new).tolist() == [2, 9, n - 1]
    # one row read through the re-rowed Decision: prey row 3 (id 3) stayed, row 2 is new
    assert np.array_equal(
        ref.decisions["prey"].status_of([3, 2]), batch.decisions["prey"].status[[3, 2]]
    )
    assert reads == {"all": 0, "rows": 1}
    for group, d in ref.decisions.items():
        assert np.array_equal(d.status, batch.decisions[group].status), group
    zeros = [[0] * len(ref.trees["prey"])] * 3
    assert ref.decisions["prey"].status[[2, 9, n - 1]].tolist() == zeros
    for _ in range(10):
        step_both(ref, batch)
    for group, d in ref.decisions.items():
        assert np.array_equal(d.status, batch.decisions[group].status), group


def test_decision_held_across_spawn_and_ticks_keeps_its_tick(reads: dict[str, int]) -> None:
    """A re-rowed Decision held while the trees tick on still gives the statuses of its tick."""
    ref, batch = pair("evade_or_flock")
    for _ in range(15):
        step_both(ref, batch)
    for sim in (ref, batch):
        sim.despawn([0, 1])
        sim.spawn("prey", 2)
    held = ref.decisions["prey"]
    truth = batch.decisions["prey"].status.copy()
    assert not held.collected
    for _ in range(40):
        step_both(ref, batch)
    assert not np.array_equal(batch.decisions["prey"].status, truth)  # the trees moved on
    assert np.array_equal(held.status, truth)
