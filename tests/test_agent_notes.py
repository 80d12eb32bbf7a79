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
from behaviortk.viewer.agent_notes import HISTORY, AgentNotes, Change, blackboard_lines
from behaviortk.viewer.tree_frame import frame_from_sim


def run_notes(engine: str) -> tuple[AgentNotes, Simulation]:
    root = {
        "type": "sequence",
        "memory": False,
        "children": [
            {"type": "blackboard_compare", "key": "go", "value": True},
            {"type": "wait", "duration": 10},
        ],
    }
    d = definition(
        root, positions=[[100, 100]], blackboard={"go": {"type": "bool", "default": False}}
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
        assert str(notes.history[0]) == "3: sequence FAILURE -> RUNNING"
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
