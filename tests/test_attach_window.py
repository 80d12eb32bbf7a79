"""The attach window (headless, synthetic events) on a game served in this process.

The game is guard_patrol served with ``sim.serve()``; the window is ``AttachView`` on a
``Remote`` to it. Each frame the attached window draws is compared with what the live
viewer (``ViewerView`` on the very same Simulation) draws of the same tick: the world
(agents where the game has them) and the side panel (the selected agent's streamed
statuses, the why beside each condition, time in status) pixel for pixel, the info tab's
text (blackboard, requests) and the History tab's lines word for word. Breakpoints set
with ``b`` hold the game inside ``step()`` until space; a game that stops serving is said
in the banner.
Guard 0 first runs ``chase`` on tick 106 (``tests/test_viewer_breaks.py``).
"""

from __future__ import annotations

from pathlib import Path

import arcade
import numpy as np
import pytest

from behaviortk.sim import Simulation
from behaviortk.tree.status import FAILURE, RUNNING, STATUS_NAMES, SUCCESS
from behaviortk.viewer import palette
from behaviortk.viewer.app import ViewerView
from behaviortk.viewer.attach_app import AttachView
from behaviortk.viewer.attached import AttachSession
from behaviortk.viewer.remote import Remote
from behaviortk.viewer.session import Session
from tests.test_attach import until
from tests.test_viewer_app import frame, key, send
from tests.test_viewer_breaks import box, corner, red_near
from tests.viewer_support import count_color, window

GUARDS = Path(__file__).resolve().parents[1] / "definitions" / "guard_patrol.json"
CHASE = "guard/decide[2]/chase[0]"


@pytest.fixture
def game():
    sim = Simulation(GUARDS, "batch")
    remote = Remote("127.0.0.1", sim.serve())
    win = window()
    view = AttachView(AttachSession(remote), win)
    win.show_view(view)
    assert until(lambda: sim.server.attached == 1)
    yield sim, view
    remote.close()
    if sim.server is not None:
        sim.server.close()


def caught_up(view: AttachView, sim: Simulation) -> None:
    """Until the window shows the game's last tick (the frame crossed the socket)."""
    assert until(lambda: (send(view, "on_update", 0.0), view.attached.sim.tick == sim.tick)[1])


def both(view: AttachView, sim: Simulation) -> Simulation:
    """One call of the game's ``step()`` and one update of the window."""
    sim.step()
    send(view, "on_update", 0.0)
    return sim


def facts_in(view: AttachView, sim: Simulation, agent: int) -> None:
    """The game steps (it takes the viewer's controls in ``step()``) until its frames carry
    the facts of ``agent``, then the window catches up."""

    def carried() -> bool:
        sim.step()
        send(view, "on_update", 0.0)
        return agent in (view.attached.sim.facts or {})

    assert until(carried)
    caught_up(view, sim)


def drawn(v: ViewerView) -> np.ndarray:
    """``v``'s frame (the window shows another view: draw this one directly)."""
    v.on_draw()
    return v.painter.snapshot()


def cut(img: np.ndarray, rect) -> np.ndarray:
    """The pixels of a layout rectangle (y up) of an image whose row 0 is the top."""
    h = img.shape[0]
    return img[h - round(rect.y1) : h - round(rect.y0), round(rect.x0) : round(rect.x1)]


def test_the_window_draws_what_the_live_viewer_draws_of_the_games_tick(game) -> None:
    sim, view = game
    local = ViewerView(Session(GUARDS, sim=sim), window(), watch=False)
    for _ in range(30):
        sim.step()
    caught_up(view, sim)
    guard = int(sim.ids[0])
    where = view.painter.viewport(sim.world).to_screen(sim.agents.pos[0])
    send(view, "on_mouse_press", float(where[0]), float(where[1]), arcade.MOUSE_BUTTON_LEFT, 0)
    send(view, "on_mouse_release", float(where[0]), float(where[1]), arcade.MOUSE_BUTTON_LEFT, 0)
    assert view.attached.selected_id == guard
    facts_in(view, sim, guard)  # the game, told by the click, sends the guard's why and blackboard
    local.session.select_id(guard)
    for tick in range(3):
        if tick:
            sim.step()
            caught_up(view, sim)
        mine, theirs = drawn(view), drawn(local)
        lay = view.painter.layout
        assert lay is not None and local.painter.layout is not None
        for rect in (lay.world, lay.content):  # the world, the tree panel (tabs differ: no Tune)
            assert rect == getattr(
                local.painter.layout, "world" if rect is lay.world else "content"
            )
            assert np.array_equal(cut(mine, rect), cut(theirs, rect))
    assert count_color(cut(mine, lay.content), palette.NODE_RUNNING) > 300  # streamed statuses
    assert any("in_range" in n or "can_see" in n for n in view.panel.tree._last[0].notes)
    hud = view.painter.hud.text
    assert f"attached to {view.attached.remote.where}, 0 frames dropped" in hud
    view.panel.tab = local.panel.tab = "info"
    drawn(view), drawn(local)
    assert "Blackboard" in view.painter.panel.text
    assert view.painter.panel.text == local.painter.panel.text
    view.panel.tab = local.panel.tab = "history"
    drawn(view), drawn(local)
    lines = view.painter.pool("history").texts()
    assert lines[0] == f"Status history: {sim.agents.names[0]}"
    assert lines == local.painter.pool("history").texts()


def test_b_holds_the_game_at_its_breakpoint_until_space(game) -> None:
    sim, view = game
    sim.step()
    caught_up(view, sim)
    key(view, arcade.key.TAB)  # guard 0
    facts_in(view, sim, int(sim.ids[0]))
    frame(view)
    chase = [n.path for n in sim.trees["guards"].nodes].index(CHASE)
    send(view, "on_mouse_press", *box(view, chase), arcade.MOUSE_BUTTON_LEFT, 0)
    send(view, "on_mouse_release", *box(view, chase), arcade.MOUSE_BUTTON_LEFT, 0)
    key(view, arcade.key.B)  # sent to the game: sim.break_on(node=CHASE, status=RUNNING, ...)
    assert until(
        lambda: both(view, sim) and view.attached.break_marks("guards") == {chase: RUNNING}
    )
    assert [p.spec for p in sim.breakpoints] == [f"{CHASE}=RUNNING"]
    assert red_near(frame(view), corner(view, chase)) > 40
    key(view, arcade.key.TAB)  # guard 1 selected: the game's hit selects guard 0 again
    for _ in range(400):
        sim.step()
        if sim.server.paused:
            break
    assert sim.hit is not None and sim.hit.node == CHASE and sim.hit.tick == 106
    held = sim.tick
    for _ in range(5):
        sim.step()  # the game goes on calling step(): held, it returns at once
    assert sim.tick == held
    caught_up(view, sim)
    s = view.attached
    assert s.paused and s.hit is not None and s.selected_id == sim.hit.agent
    assert view.panel.tab == "tree" and view.panel.tree.selected == chase
    frame(view)
    assert view.painter.note.text == sim.hit.reason()
    key(view, arcade.key.PERIOD)  # one step, held again
    assert until(lambda: (sim.step(), sim.tick == held + 1)[1])
    for _ in range(5):
        sim.step()
    assert sim.tick == held + 1
    key(view, arcade.key.SPACE)  # resume
    assert until(lambda: (sim.step(), sim.tick > held + 3)[1])
    caught_up(view, sim)
    assert not s.paused and s.break_note == ""
    view.panel.tree.selected = chase
    frame(view)
    for code in (SUCCESS, FAILURE, None):  # SUCCESS, FAILURE, off, in the game
        if code == FAILURE:  # a right-click on the node does what b does
            send(view, "on_mouse_press", *box(view, chase), arcade.MOUSE_BUTTON_RIGHT, 0)
            send(view, "on_mouse_release", *box(view, chase), arcade.MOUSE_BUTTON_RIGHT, 0)
        else:
            key(view, arcade.key.B)
        wanted = {} if code is None else {chase: code}
        assert until(lambda w=wanted: both(view, sim) and s.break_marks("guards") == w)
        spec = [] if code is None else [f"{CHASE}={STATUS_NAMES[code]}"]
        assert [p.spec for p in sim.breakpoints] == spec


def test_a_game_that_stops_serving_is_said_and_the_window_stays(game) -> None:
    sim, view = game
    sim.step()
    caught_up(view, sim)
    sim.server.close()
    assert until(lambda: (send(view, "on_update", 0.0), view.attached.errors != [])[1])
    for symbol in (arcade.key.R, arcade.key.COMMA):  # nothing to restart or step back to
        key(view, symbol)
    img = frame(view)  # no traceback: the last frame is drawn, with the banner
    assert (
        view.painter.banner.text
        == f"the game at {view.attached.remote.where} has gone; its last frame stays"
    )
    assert f"GONE   was attached to {view.attached.remote.where}" in view.painter.hud.text
    assert count_color(img, palette.ERROR_BG) > 1000
    assert view.attached.sim.tick == sim.tick
