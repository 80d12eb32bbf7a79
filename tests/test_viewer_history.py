"""Step back and remembered points in the live viewer (headless window, synthetic keys).

One scout stands at (100, 150) under a tree that remembers the point (300, 200) once: on
its first tick ``recall`` fails (the key is unset) so ``remember`` stores the point,
stamped with the tick that step starts from, 0; from then on ``recall`` holds and
``wait`` runs. So at tick t (after t steps) the point's age is t ticks (``leaves/memory.py``:
a value stored on tick 5 is recalled with ``max_age`` 1 s at dt 0.1 on ticks 5..14).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import arcade
import numpy as np
import pytest

from behaviortk.viewer import palette
from behaviortk.viewer.app import ViewerView
from behaviortk.viewer.hud import help_text
from behaviortk.viewer.remembered import LEGEND, RING
from behaviortk.viewer.scene import ViewOptions
from behaviortk.viewer.session import Session
from tests.test_viewer_app import frame, key
from tests.viewer_support import window

SPOT = (300.0, 200.0)
SCENE = {
    "name": "memo",
    "world": {"width": 400, "height": 300, "edges": "contain", "dt": 0.05, "seed": 1},
    "obstacles": [{"at": [200, 60], "radius": 15}],
    "groups": [
        {
            "name": "scouts",
            "count": 1,
            "spawn": {"kind": "positions", "points": [[100, 150]]},
            "max_speed": 30,
            "tree": "scout",
        },
        {
            "name": "walkers",
            "count": 1,
            "spawn": {"kind": "positions", "points": [[60, 250]]},
            "heading": 0,
            "max_speed": 30,
            "tree": "walk",
        },
    ],
    "trees": {
        "scout": {
            "blackboard": {"spot": {"type": "point"}},
            "root": {
                "type": "selector",
                "memory": False,
                "children": [
                    {
                        "type": "sequence",
                        "memory": False,
                        "children": [
                            {"type": "recall", "key": "spot"},
                            {"type": "wait", "duration": 1000},
                        ],
                    },
                    {"type": "remember", "key": "spot", "target": {"kind": "point", "at": SPOT}},
                ],
            },
        },
        "walk": {"root": {"type": "seek", "target": {"kind": "point", "at": [390, 250]}}},
    },
}


@pytest.fixture
def view(tmp_path: Path):
    path = tmp_path / "memo.json"
    path.write_text(json.dumps(SCENE))
    win = window()
    v = ViewerView(Session(path, engine="batch"), win, watch=False)
    win.show_view(v)
    yield v
    v.on_hide_view()


def ink(img: np.ndarray, v: ViewerView, world_xy: tuple[float, float], half: float) -> int:
    """Pixels of the remembered points' ink in a square around a world point."""
    x, y = v.painter.viewport(v.session.sim.world, v.session.opts).to_screen(np.array(world_xy))
    h = img.shape[0]
    box = img[round(h - y - half) : round(h - y + half), round(x - half) : round(x + half)]
    return int(np.all(np.abs(box.astype(int) - palette.REMEMBERED[:3]) <= 3, axis=-1).sum())


def world_labels(v: ViewerView) -> list[str]:
    return [label.text for label in v.painter.pools["world"].labels]


def test_the_selected_agents_remembered_point_is_drawn_with_its_age(view: ViewerView) -> None:
    s = view.session
    for _ in range(9):
        key(view, arcade.key.PERIOD)
    assert s.sim.tick == 9 and s.paused
    img = frame(view)
    assert ink(img, view, SPOT, RING + 4) == 0  # nobody selected: nothing drawn
    assert LEGEND not in [label.text for label in view.painter.pools["ui"].labels]
    key(view, arcade.key.TAB)  # the scout (row 0)
    img = frame(view)
    assert ink(img, view, SPOT, RING + 4) > 25  # the ring
    assert ink(img, view, SPOT, RING - 3) == 0  # hollow
    assert ink(img, view, (200.0, 175.0), 3) > 0  # the line from the scout (100, 150)
    assert "spot  9 ticks" in world_labels(view)
    assert LEGEND in [label.text for label in view.painter.pools["ui"].labels]
    key(view, arcade.key.COMMA)
    key(view, arcade.key.COMMA)
    frame(view)
    assert s.sim.tick == 7 and "spot  7 ticks" in world_labels(view)
    key(view, arcade.key.TAB)  # the walker: no blackboard, nothing drawn
    img = frame(view)
    assert ink(img, view, SPOT, RING + 4) == 0 and not any("ticks" in t for t in world_labels(view))


def test_comma_steps_back_and_period_replays_with_the_hud_saying_where(view: ViewerView) -> None:
    s = view.session
    dt = s.sim.dt
    view.on_fixed_update(12 * dt + 1e-9)  # running: 8 ticks per update at most
    view.on_fixed_update(4 * dt + 1e-9)
    assert s.sim.tick == 12 and not s.paused
    walker = s.sim.agents.pos[1].copy()
    trail = s.trails.history().copy()  # ticks 0..12
    key(view, arcade.key.COMMA)
    assert s.paused and s.sim.tick == 11
    assert s.trails.history().tobytes() == trail[:-1].tobytes()  # cut back to tick 11
    frame(view)
    assert "tick 10 " in view.painter.hud.text and "back 1 of 11" in view.painter.hud.text
    for _ in range(10):
        key(view, arcade.key.COMMA)
    assert s.sim.tick == 1
    key(view, arcade.key.COMMA)  # the ring's start (the keyframe of tick 0 is replayed from)
    frame(view)
    assert s.sim.tick == 1 and "back 11 of 11" in view.painter.hud.text
    for _ in range(11):
        key(view, arcade.key.PERIOD)
    assert s.sim.tick == 12
    assert s.sim.agents.pos[1].tobytes() == walker.tobytes()
    assert s.trails.history().tobytes() == trail.tobytes()  # recorded again, the same
    frame(view)
    assert "history 11 ticks (,)" in view.painter.hud.text  # at the head again
    key(view, arcade.key.PERIOD)  # at the head: a new tick
    assert s.sim.tick == 13 and s.history.head == 13


def test_selection_and_breakpoints_stay_and_a_drag_while_back_drops_the_future(
    view: ViewerView,
) -> None:
    s = view.session
    for _ in range(6):
        key(view, arcade.key.PERIOD)
    s.select_id(int(s.sim.ids[1]))
    s.cycle_break("walkers", 0)
    key(view, arcade.key.COMMA)
    key(view, arcade.key.COMMA)
    assert s.sim.tick == 4 and s.selected_id == int(s.sim.ids[1])
    assert s.break_marks("walkers") == {0: 1} and len(s.sim._breaks.points) == 1
    s.dragging = 0
    s.drag(np.array([210.0, 70.0]))
    assert s.history.head == 4 and s.history.back == 0
    key(view, arcade.key.PERIOD)
    assert s.sim.tick == 5 and s.history.head == 5
    np.testing.assert_array_equal(s.sim.world.obstacle_pos[0], [210.0, 70.0])


def test_a_reload_or_restart_starts_a_new_ring(view: ViewerView) -> None:
    s = view.session
    for _ in range(5):
        key(view, arcade.key.PERIOD)
    key(view, arcade.key.R)
    assert s.sim.tick == 0 and s.history.head == 0 and s.history.span == 0
    key(view, arcade.key.COMMA)
    assert s.sim.tick == 0
    for _ in range(5):
        key(view, arcade.key.PERIOD)
    changed = {**SCENE, "world": {**SCENE["world"], "seed": 2}}
    s.path.write_text(json.dumps(changed))
    assert s.reload() and s.sim.seed == 2
    assert s.sim.tick == 0 and s.history.head == 0 and s.history.keyframes.keys() == {0}


def test_the_help_names_the_step_keys() -> None:
    text = help_text(ViewOptions())
    assert "step back one tick" in text and "--history-seconds" in text


def test_history_seconds_reaches_the_viewer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from behaviortk.cli import main
    from behaviortk.commands import run

    opened: dict[str, object] = {}
    monkeypatch.setattr(run, "_viewer_opener", lambda: lambda path, **kw: opened.update(kw) or 0)
    path = tmp_path / "memo.json"
    path.write_text(json.dumps(SCENE))
    assert main(["run", str(path), "--history-seconds", "2.5"]) == 0
    assert opened["history_seconds"] == 2.5
    session = Session(path, history_seconds=2.5)
    assert session.history.capacity == 50  # 2.5 s at dt 0.05


def _notes_run(ticks: int, notes: Any = None) -> Any:
    """``tests/test_agent_notes.py``'s agent: its statuses change on tick 3 (the game sets
    ``go`` after tick 2); ``notes``, when given, observe every tick up to ``ticks``."""
    from engine_support import definition

    from behaviortk.format.loader import load_text
    from behaviortk.sim.simulation import Simulation

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
    sim = Simulation(load_text(json.dumps(d), "notes.json"), engine="batch")
    for _ in range(ticks):
        sim.step()
        if sim.tick == 2:
            sim.blackboard(0)["go"] = True
        if notes is not None:
            _show(notes, sim)
    return sim


def _show(notes: Any, sim: Any) -> None:
    from behaviortk.viewer.tree_frame import frame_from_sim

    frame = frame_from_sim(sim, 0)
    notes.observe(sim, 0, frame.tree, frame.status)


def test_the_notes_go_back_with_the_tick_shown() -> None:
    """Shown tick 4 after tick 6, the changes of tick 3 stay and the time in status counts
    from them; shown tick 2, they go (the nodes have held their statuses since tick 1, the
    first observed), and observing 3..6 again gives the same notes as the first time."""
    from behaviortk.viewer.agent_notes import AgentNotes

    notes = AgentNotes()
    _notes_run(6, notes)
    changes, at_six = list(notes.history), notes.notes(6)
    assert [c.tick for c in changes] == [3, 3, 3] and at_six[0] == "3 ticks"
    _show(notes, _notes_run(4))  # the same run shown at tick 4
    assert list(notes.history) == changes and notes.notes(4)[0] == "1 ticks"
    sim = _notes_run(2)
    _show(notes, sim)  # at tick 2: before the changes
    assert list(notes.history) == [] and notes.notes(2)[0] == "1 ticks"
    for _ in range(4):
        sim.step()
        _show(notes, sim)
    assert list(notes.history) == changes and notes.notes(6) == at_six


def test_a_tune_while_back_starts_a_new_future_that_replays_through_it(view: ViewerView) -> None:
    """Tuned at tick 6 of 10, the run goes on from 6 with the new value; stepping back over
    the tune and forward again gives the tuned run's state, not the first one's."""
    from tests.test_history import state

    s = view.session
    for _ in range(10):
        key(view, arcade.key.PERIOD)
    for _ in range(4):
        key(view, arcade.key.COMMA)
    assert s.sim.tick == 6
    speed = next(k for k in s.tuner.knobs(1) if k.name == "max_speed")
    ok, _ = s.tune(speed, 5.0)
    assert ok and s.history.head == 6 and s.history.back == 0
    tuned = {}
    for _ in range(4):
        key(view, arcade.key.PERIOD)
        tuned[s.sim.tick] = state(s.sim)
    for _ in range(6):
        key(view, arcade.key.COMMA)
    assert s.sim.tick == 4 and s.sim.agents.max_speed[1] == 30.0  # before the tune
    for _ in range(6):
        key(view, arcade.key.PERIOD)
        if s.sim.tick in tuned:
            assert state(s.sim) == tuned[s.sim.tick]
    assert s.sim.tick == 10 and s.sim.agents.max_speed[1] == 5.0
