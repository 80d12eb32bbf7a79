"""Breakpoints in the live viewer (headless window, synthetic events): ``b`` and right-click
on the tree panel's node, the red dot, the pause at the hit with the agent selected and the
status line saying why.

guard_patrol (py_trees): guard 0 first runs ``chase`` on tick 106, guard 1 on tick 165
(``tests/test_breakpoints.py`` holds those against the trace's statuses).
"""

from __future__ import annotations

from pathlib import Path

import arcade
import numpy as np
import pytest

from behaviortk.tree.status import FAILURE, RUNNING, SUCCESS
from behaviortk.viewer import palette
from behaviortk.viewer.app import ViewerView
from behaviortk.viewer.session import Session
from behaviortk.viewer.tree_layout import BOX_H, layout_tree
from behaviortk.viewer.tree_panel import HEADER, PAD
from tests.test_viewer_app import frame, key, send
from tests.viewer_support import count_color, window

GUARDS = Path(__file__).resolve().parents[1] / "definitions" / "guard_patrol.json"
CHASE = "guard/decide[2]/chase[0]"
SEES = "guard/decide[2]/chase[0]/sees intruder[0]"


@pytest.fixture
def view():
    win = window()
    v = ViewerView(Session(GUARDS), win, watch=False)
    win.show_view(v)
    yield v
    v.on_hide_view()


def index_of(v: ViewerView, path: str) -> int:
    return [n.path for n in v.session.sim.trees["guards"].nodes].index(path)


def box(v: ViewerView, index: int) -> tuple[float, float]:
    """Screen centre of node ``index``'s box (zoom 1, no pan), from the layout rules."""
    tree = v.panel.tree
    assert tree._last is not None
    lay = layout_tree(tree._last[0].tree, tree.collapsed)
    rect = v.painter.layout.content
    return rect.x0 + PAD + lay.x[index] + 20.0, rect.y1 - HEADER - PAD - lay.y[index] - BOX_H / 2


def corner(v: ViewerView, index: int) -> tuple[float, float]:
    """Screen point of node ``index``'s top-left corner, where its red dot sits."""
    tree = v.panel.tree
    assert tree._last is not None
    lay = layout_tree(tree._last[0].tree, tree.collapsed)
    rect = v.painter.layout.content
    return rect.x0 + PAD + lay.x[index], rect.y1 - HEADER - PAD - lay.y[index]


def red_near(img: np.ndarray, xy: tuple[float, float], r: int = 8) -> int:
    x, y = round(xy[0]), img.shape[0] - 1 - round(xy[1])
    return count_color(img[y - r : y + r + 1, x - r : x + r + 1], palette.BREAKPOINT)


def show_guard(v: ViewerView) -> None:
    key(v, arcade.key.TAB)  # guard 0: its tree in the panel
    assert v.session.opts.selected == 0
    frame(v)


def run_until_paused(v: ViewerView, most: int = 400) -> None:
    dt = v.session.sim.dt
    for _ in range(most):
        send(v, "on_fixed_update", 8 * dt + 1e-9)
        if v.session.paused:
            return
    raise AssertionError("no breakpoint paused the viewer")


def test_b_on_the_selected_node_sets_a_breakpoint_and_the_run_pauses_where_it_hits(view):
    show_guard(view)
    chase = index_of(view, CHASE)
    before = frame(view)
    send(view, "on_mouse_press", *box(view, chase), arcade.MOUSE_BUTTON_LEFT, 0)
    send(view, "on_mouse_release", *box(view, chase), arcade.MOUSE_BUTTON_LEFT, 0)
    assert view.panel.tree.selected == chase
    key(view, arcade.key.B)
    assert view.session.break_marks("guards") == {chase: RUNNING}
    assert [p.spec for p in view.session.sim.breakpoints] == [f"{CHASE}=RUNNING"]
    after = frame(view)
    assert red_near(before, corner(view, chase)) == 0 and red_near(after, corner(view, chase)) > 40
    assert count_color(after, palette.NODE_SELECTED) > 40  # the selected node's outline
    key(view, arcade.key.TAB)  # guard 1 selected: the dot is the group's, it stays
    run_until_paused(view)
    s = view.session
    assert s.sim.tick == 107 and s.hit.tick == 106 and s.hit.agent == 0
    assert s.opts.selected == s.sim.row_of(0)  # the agent that hit is selected
    assert view.panel.tab == "tree" and view.panel.tree.selected == chase
    img = frame(view)
    reason = f"breakpoint: {CHASE} became RUNNING for agent 0 at tick 106"
    assert view.painter.note.text == reason
    assert count_color(img, palette.NOTE_BG) > 1000  # the status line's band
    send(view, "on_fixed_update", 10 * s.sim.dt)
    assert s.sim.tick == 107  # paused
    key(view, arcade.key.SPACE)  # resume: the note goes, the run goes on to the next hit
    assert s.break_note == "" and s.hit is None
    run_until_paused(view)
    assert (s.hit.tick, s.hit.agent) == (165, 1) and s.opts.selected == s.sim.row_of(1)


def test_b_cycles_running_success_failure_off_and_a_condition_starts_at_success(view):
    show_guard(view)
    s = view.session
    chase, sees = index_of(view, CHASE), index_of(view, SEES)
    view.panel.tree.selected = chase
    seen = []
    for _ in range(4):
        key(view, arcade.key.B)
        seen.append(s.break_marks("guards").get(chase))
    assert seen == [RUNNING, SUCCESS, FAILURE, None]
    assert s.sim.breakpoints == ()
    view.panel.tree.selected = sees
    key(view, arcade.key.B)
    assert s.break_marks("guards") == {sees: SUCCESS}


def test_right_click_on_a_node_sets_its_breakpoint_and_restart_keeps_it(view):
    show_guard(view)
    s = view.session
    chase = index_of(view, CHASE)
    send(view, "on_mouse_press", *box(view, chase), arcade.MOUSE_BUTTON_RIGHT, 0)
    send(view, "on_mouse_release", *box(view, chase), arcade.MOUSE_BUTTON_RIGHT, 0)
    assert view.panel.tree.selected == chase and s.break_marks("guards") == {chase: RUNNING}
    key(view, arcade.key.PERIOD)  # one tick, paused
    key(view, arcade.key.R)  # a new simulation: the breakpoint is set on it again
    assert s.sim.tick == 0 and [p.spec for p in s.sim.breakpoints] == [f"{CHASE}=RUNNING"]
    key(view, arcade.key.SPACE)
    run_until_paused(view)
    assert s.hit.tick == 106


def test_b_without_a_selected_node_or_agent_does_nothing(view):
    key(view, arcade.key.B)  # no agent selected
    show_guard(view)
    key(view, arcade.key.B)  # no node selected
    assert view.session.sim.breakpoints == ()


def test_a_right_click_in_a_replays_tree_only_selects_the_node(tmp_path: Path):
    """A recording has no breakpoints: the replay window's tree panel selects, nothing more."""
    from behaviortk.record.jsonl import TraceWriter
    from behaviortk.record.reader import open_recording
    from behaviortk.sim.simulation import Simulation
    from behaviortk.viewer.replay import ReplaySession
    from behaviortk.viewer.replay_app import ReplayView

    trace = tmp_path / "guards.jsonl"
    sim = Simulation(GUARDS)
    with trace.open("w") as out:
        writer = TraceWriter(out, sim)
        sim.run(3, writer.on_tick)
        writer.finish(sim)
    win = window()
    v = ReplayView(ReplaySession(open_recording(trace)), win)
    win.show_view(v)
    key(v, arcade.key.TAB)
    frame(v)
    chase = [n.path for n in v.session.sim.trees["guards"].nodes].index(CHASE)
    send(v, "on_mouse_press", *box(v, chase), arcade.MOUSE_BUTTON_RIGHT, 0)
    send(v, "on_mouse_release", *box(v, chase), arcade.MOUSE_BUTTON_RIGHT, 0)
    assert v.panel.tree.selected == chase
    frame(v)  # drawn without a breakpoint to show
