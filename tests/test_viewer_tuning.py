"""The tuning panel: knobs read from the JSON Schema, live changes, refusals and saving.

A change made at tick 0 must give exactly the run of a file saved with that
value (``fresh``): the strongest check that applying live neither misses a value
nor corrupts the simulation.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import arcade
import numpy as np
import pytest

import behaviortk
from behaviortk.sim.simulation import Simulation
from behaviortk.viewer import palette
from behaviortk.viewer.app import ViewerView
from behaviortk.viewer.session import Session
from behaviortk.viewer.tuning import Knob
from tests.viewer_support import window

DEMO = Path(__file__).resolve().parents[1] / "definitions" / "evade_or_flock.json"


@pytest.fixture
def scene(tmp_path: Path) -> Path:
    path = tmp_path / "scene.json"
    shutil.copy(DEMO, path)
    return path


def knob(session: Session, group: int, name: str) -> Knob:
    return next(k for k in session.tuner.knobs(group) if k.name == name)


def fresh(path: Path, engine: str, ticks: int) -> Simulation:
    sim = Simulation(behaviortk.load(path), engine=engine)
    sim.run(ticks)
    return sim


def test_physics_knobs_come_from_the_schema(scene: Path) -> None:
    knobs = {k.name: k for k in Session(scene).tuner.knobs(0) if k.source == "physics"}
    assert {"count", "speed", "heading", "colour", "name"}.isdisjoint(knobs)
    assert {"mass", "max_speed", "max_force", "radius", "view_distance", "fov"} <= set(knobs)
    speed = knobs["max_speed"]
    assert (speed.unit, speed.low, speed.low_open, speed.high) == (
        "world units/s",
        1e-6,
        False,
        1e9,
    )
    assert speed.description == "Speed limit, 1e-6 to 1e9." and speed.default == 150.0
    fov = knobs["fov"]
    assert (fov.unit, fov.low, fov.low_open, fov.high, fov.high_open) == (
        "degrees",
        0.0,
        True,
        360.0,
        False,
    )
    assert knobs["max_turn_rate"].nullable and knobs["max_neighbours"].kind == "integer"
    assert fov.check(360.0) is None and fov.check(0.0) == "fov must be > 0"
    assert fov.check(361.0) == "fov must be <= 360"


def test_tree_parameters_take_bounds_and_unit_from_where_they_are_used(scene: Path) -> None:
    """evade_or_flock's prey pass threat = 100, written into in_range.radius (>= 0, world units)."""
    session = Session(scene)
    [threat] = [k for k in session.tuner.knobs(0) if k.source == "param"]
    assert (threat.name, threat.pointer) == ("threat", "/groups/0/params/threat")
    assert (threat.unit, threat.low, threat.low_open, threat.kind) == (
        "world units",
        0.0,
        False,
        "number",
    )
    assert threat.description == "Distance at which a predator is a threat"
    assert session.tuner.value(threat) == 100


def test_parameters_passed_into_subtrees_are_followed(tmp_path: Path) -> None:
    from behaviortk.viewer.tuning import param_uses

    data = {
        "trees": {
            "main": {"root": {"type": "subtree", "tree": "run", "params": {"fear": "$scare"}}},
            "run": {
                "root": {
                    "type": "flee",
                    "target": {"kind": "nearest", "group": "g", "radius": "$fear"},
                    "fear_distance": "$fear",
                }
            },
        }
    }
    assert sorted(param_uses(data, "main", "scare")) == [
        ("flee", "fear_distance"),
        ("nearest", "radius"),
    ]


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_changes_at_tick_zero_run_exactly_as_the_saved_file(scene: Path, engine: str) -> None:
    session = Session(scene, engine=engine)
    for group, name, value in ((0, "max_speed", 70.0), (1, "fov", 180.0), (0, "threat", 250.0)):
        ok, message = session.tune(knob(session, group, name), value)
        assert ok, message
    assert "start again" in message  # the parameter rebuilt the prey's trees
    np.testing.assert_allclose(session.sim.agents.max_speed[:60], 70.0)
    np.testing.assert_allclose(session.sim.agents.fov[60:], np.pi)  # 180 degrees
    tuned = scene.with_name("tuned.json")
    tuned.write_text(session.tuner.text)
    session.sim.run(40)
    expected = fresh(tuned, engine, 40)
    np.testing.assert_array_equal(session.sim.agents.pos, expected.agents.pos)
    np.testing.assert_array_equal(session.sim.agents.vel, expected.agents.vel)
    untuned = fresh(scene, engine, 40)
    assert not np.array_equal(session.sim.agents.pos, untuned.agents.pos)


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_live_changes_keep_the_run_going(tmp_path: Path, engine: str) -> None:
    """Mid-run, a physics change keeps every state; a parameter change keeps positions,
    blackboards and other groups' trees. Agent 0 stores its position under ``home``."""
    data = json.loads(DEMO.read_text())
    prey = data["trees"]["prey"]
    prey["blackboard"] = {"home": {"type": "point"}}
    prey["root"] = {
        "type": "sequence",
        "memory": False,
        "children": [
            {"type": "blackboard_set", "key": "home", "value": [1.0, 2.0]},
            prey["root"],
        ],
    }
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(data, indent=2))
    session = Session(path, engine=engine)
    session.sim.run(10)
    pos = session.sim.agents.pos.copy()
    ok, _ = session.tune(knob(session, 1, "max_force"), 120.0)
    assert ok and session.sim.tick == 10
    np.testing.assert_array_equal(session.sim.agents.pos, pos)
    np.testing.assert_allclose(session.sim.agents.max_force[60:], 120.0)
    ok, _ = session.tune(knob(session, 0, "threat"), 40.0)
    assert ok and session.sim.tick == 10
    np.testing.assert_array_equal(session.sim.agents.pos, pos)
    assert session.sim.engine.blackboard(0)["home"] == (1.0, 2.0)
    radii = [
        n.model.condition.radius
        for n in session.sim.trees["prey"].nodes
        if getattr(n.model, "condition", None) is not None and n.model.condition.type == "in_range"
    ]
    assert radii == [40.0]
    session.sim.run(5)  # and it keeps stepping
    assert session.sim.tick == 15


def test_a_refused_value_changes_nothing(scene: Path) -> None:
    session = Session(scene)
    before = session.sim.agents.fov.copy()
    fov = knob(session, 0, "fov")
    ok, message = session.tune(fov, 400.0)
    assert not ok and message == "refused: fov must be <= 360"
    # Past the panel's own bounds check, the loader still has the last word:
    unbounded = Knob(fov.pointer, "fov", "number", "physics", "", "degrees")
    ok, message = session.tune(unbounded, 400.0)
    assert not ok and message.startswith("refused: /groups/0/fov:")
    np.testing.assert_array_equal(session.sim.agents.fov, before)
    assert not session.tuner.dirty


def test_save_writes_only_the_changed_values_atomically(scene: Path) -> None:
    """A file laid out by hand keeps its layout: only the changed values are written."""
    scene.write_text(json.dumps(json.loads(scene.read_text()), indent=4) + "\n")
    original = scene.read_text()
    session = Session(scene)
    session.sim.run(3)
    session.tune(knob(session, 0, "max_speed"), 95.0)
    session.tune(knob(session, 1, "max_turn_rate"), 180.0)  # absent from the file: added
    assert session.save_tuning() == "saved scene.json"
    saved = scene.read_text()
    old_lines, new_lines = original.splitlines(), saved.splitlines()
    changed = [(a, b) for a, b in zip(old_lines, new_lines, strict=False) if a != b]
    assert changed[0] == ('            "max_speed": 110,', '            "max_speed": 95,')
    assert '"max_turn_rate": 180' in saved and len(new_lines) == len(old_lines) + 1
    data = json.loads(saved)
    assert list(data["groups"][0]) == list(json.loads(original)["groups"][0])  # key order
    assert list(data["groups"][1])[-1] == "max_turn_rate"
    behaviortk.load(scene)  # still valid
    assert not list(scene.parent.glob(".*.tmp"))
    # The watcher sees the save: the file holds what runs, so nothing restarts.
    assert session.reload() is True and session.sim.tick == 3


def test_save_keeps_the_layout_fmt_gives(scene: Path) -> None:
    """A file in ``fmt``'s layout stays in it: an added key goes where ``fmt`` puts it."""
    from behaviortk.format.layout import formatted

    assert formatted(scene.read_text(), "scene.json") == scene.read_text()  # shipped: fmt'd
    session = Session(scene)
    session.tune(knob(session, 0, "max_speed"), 95.0)
    session.tune(knob(session, 1, "max_turn_rate"), 180.0)
    assert session.save_tuning() == "saved scene.json"
    saved = scene.read_text()
    assert formatted(saved, "scene.json") == saved
    keys = list(json.loads(saved)["groups"][1])
    assert keys.index("max_turn_rate") == keys.index("max_force") + 1  # the schema's order
    assert session.reload() is True and session.sim.tick == 0  # the file holds what runs


def test_save_refuses_when_the_file_changed_on_disk(scene: Path) -> None:
    session = Session(scene)
    session.tune(knob(session, 0, "max_speed"), 95.0)
    theirs = scene.read_text().replace('"speed": 40', '"speed": 41')
    scene.write_text(theirs)
    assert session.save_tuning() == "not saved: scene.json changed on disk since it was loaded"
    assert scene.read_text() == theirs


# ------------------------------------------------------------ the widgets, by events
def send(v: ViewerView, *event: object) -> None:
    v.window.dispatch_event(*event)
    v.window.dispatch_events()


@pytest.fixture
def view(scene: Path):
    win = window()
    v = ViewerView(Session(scene), win, watch=False)
    win.show_view(v)
    v.session.paused = True
    yield v
    v.on_hide_view()


def frame(v: ViewerView) -> np.ndarray:
    send(v, "on_draw")
    return v.painter.snapshot()


def test_the_tune_tab_is_opened_by_a_click_and_its_widgets_tune(view: ViewerView) -> None:
    frame(view)
    x, y = (int(c) for c in view.painter.layout.tab_rect(1).inset(6).as_tuple()[:2])
    send(view, "on_mouse_press", x + 5, y + 5, arcade.MOUSE_BUTTON_LEFT, 0)
    send(view, "on_mouse_release", x + 5, y + 5, arcade.MOUSE_BUTTON_LEFT, 0)
    assert view.panel.tab == "tune"
    frame(view)
    texts = view.painter.pool("tune.body").texts()
    assert "max_speed" in texts and "Speed limit, 1e-6 to 1e9." in texts
    rows = {row.knob.name: row for row in view.panel.tuning._rows}
    speed = rows["max_speed"]
    # No upper bound: the span ends at twice the larger of value (110) and default (150),
    # 300; it starts just above the exclusive bound 0 (0 + 300/500 = 0.6); the step is the
    # round number at or above 1/50 of the span (6): 10.
    assert (speed.lo, speed.hi, speed.step) == (0.6, 300.0, 10.0)
    px, py = (speed.plus.x0 + speed.plus.x1) / 2, (speed.plus.y0 + speed.plus.y1) / 2
    send(view, "on_mouse_press", px, py, arcade.MOUSE_BUTTON_LEFT, 0)
    send(view, "on_mouse_release", px, py, arcade.MOUSE_BUTTON_LEFT, 0)
    np.testing.assert_allclose(view.session.sim.agents.max_speed[:60], 120.0)
    # Drag the knob to the middle of the track and let go: 0.6 + 0.5 * 299.4 = 150.3,
    # rounded to the step: 150.
    t = speed.track
    send(view, "on_mouse_press", t.x0 + 2, (t.y0 + t.y1) / 2, arcade.MOUSE_BUTTON_LEFT, 0)
    tx = t.x0 + 0.5 * t.width
    send(view, "on_mouse_drag", tx, (t.y0 + t.y1) / 2, tx - t.x0, 0, arcade.MOUSE_BUTTON_LEFT, 0)
    np.testing.assert_allclose(view.session.sim.agents.max_speed[:60], 120.0)  # not yet
    send(view, "on_mouse_release", tx, (t.y0 + t.y1) / 2, arcade.MOUSE_BUTTON_LEFT, 0)
    np.testing.assert_allclose(view.session.sim.agents.max_speed[:60], 150.0)
    img = frame(view)
    assert "150 world units/s" in " ".join(view.painter.pool("tune.body").texts())
    assert (np.abs(img.astype(int) - palette.SLIDER_FILL[:3]).max(axis=-1) == 0).sum() > 200


def test_a_refusal_shows_in_red_on_its_row_and_nullable_ends_at_unlimited(view: ViewerView) -> None:
    view.panel.tab = "tune"
    frame(view)
    rows = {row.knob.name: row for row in view.panel.tuning._rows}
    view.panel.tuning._tune(view.session, rows["max_speed"].knob, -5.0)
    frame(view)
    refused = [
        label for label in view.painter.pool("tune.body").labels if label.text.startswith("refused")
    ]
    assert refused and refused[0].text == "refused: max_speed must be >= 1e-06"
    assert refused[0].color == palette.REFUSED
    np.testing.assert_allclose(view.session.sim.agents.max_speed[:60], 110.0)  # unchanged
    turn = rows["max_turn_rate"]  # null in the file: unlimited, knob at the right end
    y = (turn.track.y0 + turn.track.y1) / 2
    mid = turn.track.x0 + 0.5 * turn.track.width
    send(view, "on_mouse_press", turn.track.x1, y, arcade.MOUSE_BUTTON_LEFT, 0)
    send(view, "on_mouse_drag", mid, y, mid - turn.track.x1, 0, arcade.MOUSE_BUTTON_LEFT, 0)
    send(view, "on_mouse_release", mid, y, arcade.MOUSE_BUTTON_LEFT, 0)
    limited = view.session.tuner.value(turn.knob)
    assert limited is not None and np.isfinite(view.session.sim.agents.max_turn_rate[0])
    send(view, "on_mouse_press", mid, y, arcade.MOUSE_BUTTON_LEFT, 0)
    send(view, "on_mouse_drag", turn.track.x1 + 20, y, 40, 0, arcade.MOUSE_BUTTON_LEFT, 0)
    send(view, "on_mouse_release", turn.track.x1 + 20, y, arcade.MOUSE_BUTTON_LEFT, 0)
    assert view.session.tuner.value(turn.knob) is None
    assert np.isinf(view.session.sim.agents.max_turn_rate[:60]).all()


def test_esc_with_unsaved_tuning_asks_before_quitting(
    view: ViewerView, scene: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Esc asks (Esc again discards, ctrl+s saves); another key takes the question back."""
    closed: list[bool] = []
    monkeypatch.setattr(view.window, "close", lambda: closed.append(True))
    s = view.session
    original = scene.read_text()
    s.tune(knob(s, 0, "max_speed"), 95.0)
    view.on_key_press(arcade.key.ESCAPE, 0)
    assert not closed and "unsaved tuning: Esc again to discard it and quit" in s.errors[-1]
    view.on_key_press(arcade.key.H, 0)  # not an answer: the question goes, nothing closes
    assert not closed and not s.errors
    view.on_key_press(arcade.key.ESCAPE, 0)
    view.on_key_press(arcade.key.S, arcade.key.MOD_CTRL)  # save instead
    assert not closed and not s.errors and '"max_speed": 95' in scene.read_text()
    assert scene.read_text() != original and view.panel.tuning.status == "saved scene.json"
    view.on_key_press(arcade.key.ESCAPE, 0)  # nothing unsaved now: quits at once
    assert closed == [True]


def test_esc_twice_discards_the_tuning_and_quits(
    view: ViewerView, scene: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[bool] = []
    monkeypatch.setattr(view.window, "close", lambda: closed.append(True))
    original = scene.read_text()
    view.session.tune(knob(view.session, 0, "max_speed"), 95.0)
    view.on_key_press(arcade.key.ESCAPE, 0)
    view.on_key_press(arcade.key.ESCAPE, 0)
    assert closed == [True] and scene.read_text() == original


def test_the_scenarios_own_knobs_come_first_wrapped_with_a_scrollbar(view: ViewerView) -> None:
    """The tree parameter ``threat`` heads the tab; descriptions wrap, never cut with "…";
    the rows overflow, so a scrollbar shows, and a press at its foot shows the last row."""
    view.panel.tab = "tune"
    frame(view)
    panel = view.panel.tuning
    assert panel._rows[0].knob.name == "threat"
    texts = view.painter.pool("tune.body").texts()
    assert "Distance at which a predator is a threat" in texts
    assert not any(t.endswith("…") for t in texts)
    assert panel._scrollbar is not None
    track, most = panel._scrollbar
    assert most > 0
    send(view, "on_mouse_press", track.x0 + 2, track.y0 + 1, arcade.MOUSE_BUTTON_LEFT, 0)
    send(view, "on_mouse_release", track.x0 + 2, track.y0 + 1, arcade.MOUSE_BUTTON_LEFT, 0)
    frame(view)
    assert panel.scroll == pytest.approx(most, rel=0.01)  # pressed 1 px above the foot
    last = view.session.tuner.knobs(panel.group)[-1]
    assert panel._rows[-1].knob.name == last.name  # the last row is drawn, above the Save bar
    footer_top = view.painter.layout.content.y0 + 52.0
    assert panel._rows[-1].minus.y0 >= footer_top


def test_every_knobs_description_is_shown_whole() -> None:
    """No description of any group's knob is cut, however long (max_neighbours' and
    think_every's run to five lines at the panel's width): its lines join back to it."""
    from behaviortk.viewer.tuning import Tuner
    from behaviortk.viewer.tuning_panel import TuningPanel, chars_across

    text = (Path(__file__).resolve().parents[1] / "definitions" / "guard_patrol.json").read_text()
    tuner = Tuner("guard_patrol.json", text)
    panel = TuningPanel()
    width = chars_across(430.0)
    longest = 0
    for group in range(len(tuner.groups())):
        for knob in tuner.knobs(group):
            lines, _ = panel._text(knob, width)
            assert " ".join(lines) == " ".join(knob.description.split())
            assert all(len(line) <= width for line in lines)
            longest = max(longest, len(lines))
    assert longest >= 5
