"""The interactive viewer driven by synthetic events on the real evade_or_flock simulation.

One hidden arcade window serves every test; each test shows a fresh view on it
and sends key / mouse events through ``window.dispatch_event``, exactly as
pyglet delivers them.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import arcade
import numpy as np
import pytest
from PIL import Image

from behaviortk.cli import main
from behaviortk.sim.simulation import Simulation
from behaviortk.viewer import palette
from behaviortk.viewer.app import ViewerView
from behaviortk.viewer.session import Session
from tests.viewer_support import count_color, window

DEMO = Path(__file__).resolve().parents[1] / "definitions" / "evade_or_flock.json"


@pytest.fixture
def definition(tmp_path: Path) -> Path:
    """A copy of evade_or_flock with one obstacle to drag, writable for reload tests."""
    data = json.loads(DEMO.read_text())
    data["obstacles"] = [{"at": [400.0, 300.0], "radius": 30.0}]
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(data, indent=2))
    return path


@pytest.fixture
def view(definition: Path):
    win = window()
    v = ViewerView(Session(definition), win, watch=False)
    win.show_view(v)
    yield v
    v.on_hide_view()


def send(v: ViewerView, *event: object) -> None:
    """Queue an event as pyglet does for OS input, then let the window deliver its queue."""
    v.window.dispatch_event(*event)
    v.window.dispatch_events()


def key(v: ViewerView, symbol: int) -> None:
    send(v, "on_key_press", symbol, 0)


def screen_of(v: ViewerView, world_xy: np.ndarray) -> tuple[int, int]:
    p = v.painter.viewport(v.session.sim.world).to_screen(world_xy)
    return round(float(p[0])), round(float(p[1]))


def frame(v: ViewerView) -> np.ndarray:
    send(v, "on_draw")
    return v.painter.snapshot()


def test_fixed_updates_step_at_the_scenario_dt_and_speed_scales_them(view):
    dt = view.session.sim.dt
    send(view, "on_fixed_update", 3 * dt + 1e-9)
    assert view.session.sim.tick == 3
    key(view, arcade.key.PLUS)
    send(view, "on_fixed_update", dt + 1e-9)
    assert view.session.sim.tick == 5  # x2: two ticks per dt of real time
    key(view, arcade.key.MINUS)
    key(view, arcade.key.MINUS)
    send(view, "on_fixed_update", dt + 1e-9)
    assert view.session.sim.tick == 5  # x0.5: half a tick accumulated
    send(view, "on_fixed_update", dt + 1e-9)
    assert view.session.sim.tick == 6


def test_space_pauses_and_period_steps_one_tick(view):
    dt = view.session.sim.dt
    key(view, arcade.key.SPACE)
    send(view, "on_fixed_update", 10 * dt)
    assert view.session.sim.tick == 0
    key(view, arcade.key.PERIOD)
    assert view.session.sim.tick == 1
    key(view, arcade.key.SPACE)
    send(view, "on_fixed_update", dt + 1e-9)
    assert view.session.sim.tick == 2


def test_restart_gives_the_same_state_as_a_fresh_run(view, definition):
    for _ in range(5):
        key(view, arcade.key.PERIOD)
    key(view, arcade.key.R)
    assert view.session.sim.tick == 0
    fresh = Simulation(definition)
    np.testing.assert_array_equal(view.session.sim.agents.pos, fresh.agents.pos)
    key(view, arcade.key.PERIOD)
    fresh.step()
    np.testing.assert_array_equal(view.session.sim.agents.pos, fresh.agents.pos)


def test_tab_cycles_and_click_selects_an_agent_and_the_panel_shows_its_tree(view):
    key(view, arcade.key.TAB)
    assert view.session.opts.selected == 0
    key(view, arcade.key.TAB)
    assert view.session.opts.selected == 1
    target = 61  # a predator
    x, y = screen_of(view, view.session.sim.agents.pos[target])
    send(view, "on_mouse_press", x, y, arcade.MOUSE_BUTTON_LEFT, 0)
    assert view.session.opts.selected == target
    key(view, arcade.key.PERIOD)
    frame(view)
    tree_labels = view.painter.pool("tree.body").texts()
    assert "pursue prey" in tree_labels  # the graphical tree: the predator's one leaf
    key(view, arcade.key.BRACKETLEFT)  # tree -> history -> info (tree, tune, info, history)
    assert view.panel.tab == "history"
    key(view, arcade.key.BRACKETLEFT)
    assert view.panel.tab == "info"
    frame(view)
    text = view.painter.panel.text
    assert view.session.sim.agents.names[target] in text
    assert "Tree" in text and "Requests" in text and "Blackboard" in text
    assert any(s in text for s in ("[*]", "[✓]", "[✕]"))


def test_dragging_moves_the_obstacle_and_sets_the_pointer(view):
    pos = view.session.sim.agents.pos  # no agent under the click: it would be selected instead
    pos[np.hypot(pos[:, 0] - 400.0, pos[:, 1] - 300.0) < 40.0] += 80.0
    x, y = screen_of(view, np.array([400.0, 300.0]))
    send(view, "on_mouse_press", x, y, arcade.MOUSE_BUTTON_LEFT, 0)
    assert view.session.dragging == 0
    tx, ty = screen_of(view, np.array([500.0, 200.0]))
    send(view, "on_mouse_drag", tx, ty, tx - x, ty - y, arcade.MOUSE_BUTTON_LEFT, 0)
    send(view, "on_mouse_release", tx, ty, arcade.MOUSE_BUTTON_LEFT, 0)
    scale = view.painter.viewport(view.session.sim.world).scale
    np.testing.assert_allclose(
        view.session.sim.world.obstacle_pos[0], [500.0, 200.0], atol=1 / scale
    )
    np.testing.assert_allclose(view.session.sim.pointer, [500.0, 200.0], atol=1 / scale)
    assert view.session.dragging is None


def test_overlay_keys_toggle_and_help_lists_them(view):
    key(view, arcade.key.C)
    assert "crosshair" in view.session.opts.overlays
    key(view, arcade.key.C)
    assert "crosshair" not in view.session.opts.overlays
    key(view, arcade.key.H)
    frame(view)
    assert "crosshair" in view.painter.help.text and "[off]" in view.painter.help.text


def test_crosshair_overlay_appears_for_evading_prey(view):
    """After the predators close in, evade records its predicted point (seed 000's crosshair)."""
    for _ in range(40):
        view.session.sim.step()
    off = frame(view)
    key(view, arcade.key.C)
    on = frame(view)
    if view.session.sim.debug.of_kind("crosshair"):
        assert count_color(off, palette.CROSSHAIR, 3) == 0
        assert count_color(on, palette.CROSSHAIR, 3) > 20
    else:
        pytest.fail("no evade/pursuit crosshair recorded in 40 ticks of evade_or_flock")


def test_invalid_reload_shows_errors_and_the_last_good_world_keeps_stepping(view, definition):
    before = frame(view)
    assert count_color(before, palette.ERROR_BG, 4) == 0
    definition.write_text('{"world": {"width": -5}')  # broken JSON and a bad width
    assert view.session.reload() is False
    send(view, "on_fixed_update", 2 * view.session.sim.dt + 1e-9)
    assert view.session.sim.tick == 2
    img = frame(view)
    assert count_color(img, palette.ERROR_BG, 4) > 1000
    assert "invalid" in view.painter.banner.text
    good = json.loads(DEMO.read_text())
    definition.write_text(json.dumps(good))
    assert view.session.reload() is True
    assert view.session.sim.tick == 0 and view.session.errors == []


def test_the_file_watcher_triggers_the_reload(definition):
    win = window()
    v = ViewerView(Session(definition), win, watch=True)
    win.show_view(v)
    try:
        time.sleep(0.3)  # let the watcher thread start
        definition.write_text("{ not json")
        deadline = time.monotonic() + 10.0
        while not v.session.errors and time.monotonic() < deadline:
            time.sleep(0.05)
            send(v, "on_update", 0.05)
        assert v.session.errors and "invalid" in v.session.errors[0]
    finally:
        v.on_hide_view()


def test_an_exception_in_a_step_is_shown_and_pauses(view, monkeypatch):
    def broken() -> None:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(view.session.sim, "step", broken)
    send(view, "on_fixed_update", view.session.sim.dt + 1e-9)
    assert view.session.paused
    assert "ZeroDivisionError: boom" in view.session.errors[0]
    frame(view)
    assert "boom" in view.painter.banner.text


def test_render_command_writes_png_and_gif(tmp_path, capsys):
    png = tmp_path / "f.png"
    assert main(["render", str(DEMO), "--ticks", "3", "--out", str(png), "--overlay", "all"]) == 0
    assert Image.open(png).size[0] > 500
    gif = tmp_path / "a.gif"
    assert main(["render", str(DEMO), "--ticks", "6", "--every", "2", "--out", str(gif)]) == 0
    with Image.open(gif) as im:
        assert im.n_frames == 4  # tick 0, 2, 4, 6
    assert main(["render", str(DEMO), "--ticks", "1", "--out", str(tmp_path / "x.txt")]) == 2
    assert main(["render", str(tmp_path / "missing.json"), "--out", str(png)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "missing.json" in err
