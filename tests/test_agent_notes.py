"""The selected agent's notes: status history diffed tick by tick, time in status, blackboard lines.

Agent ``a`` (alone, at (100, 100)) runs a sequence: ``blackboard_compare`` on ``go`` (declared
false), then ``wait 0.2 s``. The game sets ``go`` after tick 1, so the tree's statuses change
on the tick after (the game's write is stored then): the history holds exactly those changes."""

from __future__ import annotations

import json

from engine_support import definition

from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.status import FAILURE, INVALID, RUNNING
from behaviortk.viewer.agent_notes import (
    HISTORY,
    AgentNotes,
    Change,
    blackboard_lines,
    since_text,
)
from behaviortk.viewer.tree_frame import frame_from_sim

GO_THEN_WAIT = {
    "type": "sequence",
    "memory": False,
    "children": [
        {"type": "blackboard_compare", "key": "go", "value": True},
        {"type": "wait", "duration": 10},
    ],
}
"""Waits 10 ticks once the blackboard's ``go`` is true."""


def run_notes(engine: str) -> tuple[AgentNotes, Simulation]:
    d = definition(
        GO_THEN_WAIT, positions=[[100, 100]], blackboard={"go": {"type": "bool", "default": False}}
    )
    sim = Simulation(load_text(json.dumps(d), "notes.json"), engine=engine)
    notes = AgentNotes()
    for tick in range(4):
        sim.step()
        if tick == 1:
            sim.blackboard(0)["go"] = True
        frame = frame_from_sim(sim, 0)
        assert frame is not None
        notes.observe(sim, 0, frame.tree, frame.status)
    return notes, sim


def test_history_and_time_in_status_on_both_engines() -> None:
    """Ticks 1, 2 (sim.tick after each step): root FAILURE, compare FAILURE, wait not
    ticked. After the step that ends on sim.tick 3 the compare holds and wait runs."""
    for engine in ("py_trees", "batch"):
        notes, sim = run_notes(engine)
        assert sim.tick == 4
        assert list(notes.history) == [
            Change(3, "sequence", FAILURE, RUNNING),
            Change(3, "sequence/blackboard_compare[0]", FAILURE, 2),
            Change(3, "sequence/wait[1]", INVALID, RUNNING),
        ]
        texts = notes.notes(sim.tick)
        assert texts[0] == "1 ticks"
        assert texts[1] == "blackboard_compare: go = true, wants true   1 ticks"
        # shown as the step's 0-based tick: the HUD's "tick 2", the trace's record 2
        assert notes.history[0].step == 2
        assert str(notes.history[0]) == "2: sequence FAILURE -> RUNNING"
        assert notes.count == 3 and since_text(notes) == "since selected at tick 0"
        assert blackboard_lines(sim, 0) == ["  go = true  (bool, age 2 ticks)"]


def test_the_ring_keeps_the_last_200_changes() -> None:
    notes, _ = run_notes("batch")
    assert notes.history.maxlen == HISTORY == 200


def test_the_tree_panel_writes_each_note_beside_its_node() -> None:
    """The panel's body labels hold the compare's why and each node's time in status."""
    from dataclasses import replace

    from behaviortk.viewer.layout import Rect
    from behaviortk.viewer.tree_panel import TreeView

    notes, sim = run_notes("batch")
    frame = frame_from_sim(sim, 0)
    assert frame is not None
    noted = replace(frame, notes=notes.notes(sim.tick))
    texts = [
        label.text for pic in TreeView().build(noted, Rect(0, 0, 900, 500)) for label in pic.labels
    ]
    assert "blackboard_compare: go = true, wants true   1 ticks" in texts
    assert texts.count("1 ticks") == 2  # the sequence and the wait


def test_another_agent_selected_on_the_same_tick_gets_its_own_whys() -> None:
    """Two agents, ``go`` set for the second only: selecting it after the first on the same
    tick (paused) shows its own why, not the first one's (the whys were kept per tick)."""
    d = definition(
        GO_THEN_WAIT,
        count=2,
        positions=[[100, 100], [200, 200]],
        blackboard={"go": {"type": "bool", "default": False}},
    )
    sim = Simulation(load_text(json.dumps(d), "two.json"))
    sim.step()
    sim.blackboard(1)["go"] = True
    sim.step()
    notes = AgentNotes()
    texts = []
    for row in (0, 1, 0):
        frame = frame_from_sim(sim, row)
        assert frame is not None
        notes.observe(sim, row, frame.tree, frame.status)
        why = notes.whys[1]
        assert why is not None
        texts.append(why.text)
    assert [t.split(",")[0] for t in texts] == [
        "blackboard_compare: go = false",
        "blackboard_compare: go = true",
        "blackboard_compare: go = false",
    ]


def test_the_history_starts_when_the_agent_is_selected_and_says_so() -> None:
    """Selected before the first step: ``since selected at start``; another agent taken on
    after tick 4 (sim.tick 5) starts afresh, ``since selected at tick 4``, with no change."""
    _, sim = run_notes("batch")
    first = frame_from_sim(sim, 0)
    assert first is not None
    fresh = AgentNotes()
    fresh.observe(Simulation(sim.scenario), 0, first.tree, first.status)  # tick 0: not stepped
    assert since_text(fresh) == "since selected at start"
    sim.step()
    other = AgentNotes()
    other.agent = 99  # following some other agent: taking agent 0 starts afresh
    other.observe(sim, 0, first.tree, first.status)
    assert since_text(other) == "since selected at tick 4" and other.count == 0
    assert list(other.history) == []
