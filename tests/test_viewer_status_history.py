"""The History tab (issue 26): every status change kept of the selected agent, the last 200,
newest first, scrolled by the wheel, PgUp / PgDn and a scrollbar; drawn headless.

The scene: agent ``a-0`` runs ``selector [blackboard_compare go == true, seek]`` and the
test sets ``go`` before each step, true on even ticks. From tick 1 on, every tick changes
the three nodes (in flat order: the selector, the compare, the seek): odd ticks (go false)
``SUCCESS -> RUNNING``, ``SUCCESS -> FAILURE``, ``INVALID -> RUNNING``; even ticks the
reverse. Selected before tick 0, the agent's nodes were all INVALID: tick 0 changes the
selector and the compare to SUCCESS. After ticks 0..79 that is 2 + 79 x 3 = 239 changes;
the ring keeps the last 200 (from the compare of tick 13 on), so the list, newest first,
shows on line ``i`` the change of tick ``79 - i // 3`` to the seek, the compare or the
selector (``i % 3``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import arcade
import numpy as np
import pytest
from engine_support import FLIPS, definition

from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation
from behaviortk.viewer import palette
from behaviortk.viewer.agent_notes import AgentNotes
from behaviortk.viewer.app import ViewerView
from behaviortk.viewer.hud import HudInfo
from behaviortk.viewer.painter import Overlay2D, PanelState
from behaviortk.viewer.scene import ViewOptions
from behaviortk.viewer.session import Session
from behaviortk.viewer.status_history import LINE, WHEEL_LINES
from behaviortk.viewer.tree_frame import frame_from_sim
from tests.viewer_support import painter, pixel_at, window

ROOT = {
    "type": "selector",
    "memory": False,
    "children": [
        {"type": "blackboard_compare", "key": "go", "value": True},
        {"type": "seek", "target": {"kind": "point", "at": [200, 200]}},
    ],
}
SEEK, COMPARE, SELECTOR = "selector/seek[1]", "selector/blackboard_compare[0]", "selector"
SHOWN_COMPARE = "…ector/blackboard_compare[0]"  # cut at the front to the node column
ODD = {SELECTOR: "SUCCESS -> RUNNING", COMPARE: "SUCCESS -> FAILURE", SEEK: "INVALID -> RUNNING"}


def flipping() -> Simulation:
    painter().notes = AgentNotes()  # the session's one painter: no agent followed yet
    d = definition(
        ROOT, positions=[[100, 100]], blackboard={"go": {"type": "bool", "default": False}}
    )
    return Simulation(load_text(json.dumps(d), "flips.json"))


def step(sim: Simulation) -> None:
    sim.blackboard(0)["go"] = sim.tick % 2 == 0  # the tick about to run: true when even
    sim.step()


def expected(i: int, last: int = 79) -> tuple[int, str, str]:
    """Line ``i`` of the list (newest first) after ticks 0..``last``: tick, node, from -> to."""
    tick, node = last - i // 3, (SEEK, COMPARE, SELECTOR)[i % 3]
    was, now = ODD[node].split(" -> ")
    return tick, node, ODD[node] if tick % 2 else f"{now} -> {was}"


def parse(line: str) -> tuple[int, str, str]:
    tick, node, was, arrow, now = line.split()
    assert arrow == "->"
    return int(tick), node, f"{was} -> {now}"


def shown(i: int, last: int = 79) -> tuple[int, str, str]:
    """``expected`` as the list writes it: the compare's path cut at the front."""
    tick, node, change = expected(i, last)
    return tick, SHOWN_COMPARE if node == COMPARE else node, change


def listed(p: Any) -> tuple[list[str], list[str]]:
    """The History tab's head (4 lines) and its list lines, as drawn."""
    texts = p.pool("history").texts()
    return texts[:4], texts[4:]


def test_the_history_tab_lists_every_change_kept_newest_first_and_scrolls() -> None:
    sim, p = flipping(), painter()
    panel, opts = PanelState(tab="history"), ViewOptions(selected=0)
    draw = lambda: p.draw(sim, opts, HudInfo(), Overlay2D(panel=panel))  # noqa: E731
    draw()  # selected at the start (sim.tick 0)
    for _ in range(80):
        step(sim)
        p.record(sim, 0)  # as the live viewer does after each step
    draw()
    h = panel.history
    assert h.total == 200 and p.notes.count == 239 and 20 <= h.rows < 200
    head, lines = listed(p)
    assert head[:3] == [
        "Status history: a-0",
        "since selected at start; the last 200 kept",
        f"changes 1-{h.rows} of 200, newest first (39 older dropped)",
    ]
    assert head[3].split() == ["tick", "node", "from", "->", "to"]
    assert lines[:4] == [
        "  79  selector/seek[1]              INVALID -> RUNNING",
        f"  79  {SHOWN_COMPARE}  SUCCESS -> FAILURE",
        "  79  selector                      SUCCESS -> RUNNING",
        "  78  selector/seek[1]              RUNNING -> INVALID",
    ]
    assert len(lines) == h.rows
    assert [parse(line) for line in lines] == [shown(i) for i in range(h.rows)]

    # the scrollbar: a thumb as tall as the share shown, at the top of its track
    assert h.bar is not None
    track, thumb = h.bar
    assert thumb.height == pytest.approx(track.height * h.rows / 200)
    assert thumb.y1 == track.y1
    img = p.snapshot()
    middle = np.array([(thumb.x0 + thumb.x1) / 2, (thumb.y0 + thumb.y1) / 2])
    np.testing.assert_allclose(pixel_at(img, middle), palette.SLIDER_FILL[:3], atol=2)
    below = np.array([middle[0], thumb.y0 - 10])
    np.testing.assert_allclose(pixel_at(img, below), palette.SLIDER_TRACK[:3], atol=2)

    # five notches down: 15 lines further, the thumb lower by 15 / (200 - rows) of its run
    h.wheel(-5)
    draw()
    first = int(5 * WHEEL_LINES)
    head, lines = listed(p)
    assert (
        head[2] == f"changes {first + 1}-{first + h.rows} of 200, newest first (39 older dropped)"
    )
    assert lines[0] == "  74  selector/seek[1]              RUNNING -> INVALID"
    assert parse(lines[0]) == shown(first)
    track, thumb = h.bar
    run = track.height - thumb.height
    assert thumb.y1 == pytest.approx(track.y1 - run * first / (200 - h.rows))

    # PgDn: a page on, the last line of the page before now the first
    h.page(1)
    draw()
    assert h.first == first + h.rows - 1
    assert parse(listed(p)[1][0]) == shown(first + h.rows - 1)

    # a press at the bottom of the track: the oldest kept, the thumb at the bottom
    assert h.press(track.x0 + 1, track.y0 + 1)
    h.release()
    draw()
    head, lines = listed(p)
    assert head[2] == f"changes {201 - h.rows}-200 of 200, newest first (39 older dropped)"
    assert lines[-1] == f"  13  {SHOWN_COMPARE}  SUCCESS -> FAILURE"  # the oldest kept
    assert h.bar[1].y0 == pytest.approx(track.y0)
    img = p.snapshot()
    thumb = h.bar[1]
    middle = np.array([(thumb.x0 + thumb.x1) / 2, (thumb.y0 + thumb.y1) / 2])
    np.testing.assert_allclose(pixel_at(img, middle), palette.SLIDER_FILL[:3], atol=2)

    # the thumb dragged half its run up from where it was grabbed follows the mouse
    grab = middle[1] + 3.0
    assert h.press(thumb.x0 + 1, grab)
    assert h.first == 200 - h.rows  # a press on the thumb does not move it
    h.drag(grab + run / 2)
    h.release()
    draw()
    assert h.first == round((200 - h.rows) / 2)
    assert h.bar[1].y0 == pytest.approx(track.y0 + run / 2, abs=run / (200 - h.rows))

    # scrolled down, new changes come in above: the lines in view stay in view
    in_view = listed(p)[1]
    for _ in range(2):
        step(sim)
        p.record(sim, 0)
    draw()
    assert listed(p)[1] == in_view and h.first == round((200 - h.rows) / 2) + 6
    # at the top, the newest show as they come
    h.wheel(1000)
    step(sim)
    p.record(sim, 0)
    draw()
    assert parse(listed(p)[1][0]) == shown(0, last=82)
    assert listed(p)[0][2].startswith(f"changes 1-{h.rows} of 200")


def test_the_history_says_when_it_started_and_fits_without_a_scrollbar() -> None:
    """Selected after tick 9 (sim.tick 10), the head says so; two ticks later its 6 changes
    fit: no scrollbar. The Info tab says how many there are and the latest."""
    sim, p = flipping(), painter()
    for _ in range(10):
        step(sim)
    panel, opts = PanelState(tab="history"), ViewOptions(selected=0)
    p.draw(sim, opts, HudInfo(), Overlay2D(panel=panel))
    head, lines = listed(p)
    assert head[1:3] == ["since selected at tick 9; the last 200 kept", "no status changes yet"]
    assert lines == []
    for _ in range(2):
        step(sim)
        p.draw(sim, opts, HudInfo(), Overlay2D(panel=panel))
    head, lines = listed(p)
    assert head[2] == "changes 1-6 of 6, newest first" and panel.history.bar is None
    assert [parse(line) for line in lines] == [shown(i, last=11) for i in range(6)]
    panel.tab = "info"
    p.draw(sim, opts, HudInfo(), Overlay2D(panel=panel))
    assert (
        "Status history: 6 changes since selected at tick 9\n"
        "  latest 11: selector/seek[1] INVALID -> RUNNING\n"
        "  (the last 200: the History tab, or PgUp / PgDn)"
    ) in p.panel.text


@pytest.fixture
def view(tmp_path: Path):
    """The live window on an agent whose `chance` flips its branch most ticks."""
    path = tmp_path / "flips.json"
    path.write_text(json.dumps(definition(FLIPS, positions=[[100, 100]])))
    win = window()
    v = ViewerView(Session(path), win, watch=False)
    win.show_view(v)
    yield v
    v.on_hide_view()


def send(v: ViewerView, *event: object) -> None:
    v.window.dispatch_event(*event)
    v.window.dispatch_events()


def test_a_fast_run_misses_no_tick_between_two_frames(view) -> None:
    """At x16 one update runs 8 ticks before the next frame: the history has the changes of
    each of them, as an agent's notes taken after every step of the same run have."""
    s = view.session
    send(view, "on_key_press", arcade.key.TAB, 0)
    send(view, "on_draw")  # selected at the start
    for _ in range(4):
        send(view, "on_key_press", arcade.key.PLUS, 0)
    assert s.speed == 16.0
    send(view, "on_fixed_update", 8 * s.sim.dt + 1e-9)
    assert s.sim.tick == 8
    send(view, "on_draw")
    same, notes = Simulation(s.sim.scenario), AgentNotes()
    for tick in range(9):
        if tick:
            same.step()
        frame = frame_from_sim(same, 0)
        assert frame is not None
        notes.record(same, 0, frame.tree, frame.status)
    assert len({c.tick for c in notes.history}) > 2  # changes on several of the 8 ticks
    assert list(view.painter.notes.history) == list(notes.history)


def test_pgdn_the_wheel_and_the_scrollbar_in_the_window(view) -> None:
    """PgDn opens the History tab, then pages; the wheel over the list scrolls it; a press
    and drag on the scrollbar moves it; PgUp pages back. Nothing else moves."""
    s = view.session
    send(view, "on_key_press", arcade.key.TAB, 0)
    send(view, "on_key_press", arcade.key.SPACE, 0)
    for _ in range(150):
        s.step_once()
    send(view, "on_draw")
    h = view.panel.history
    send(view, "on_key_press", arcade.key.PAGEDOWN, 0)
    assert view.panel.tab == "history" and h.first == 0
    send(view, "on_draw")
    assert h.total > h.rows  # more changes than lines: it scrolls
    newest = str(view.painter.pool("history").texts()[4])
    send(view, "on_key_press", arcade.key.PAGEDOWN, 0)
    assert h.first == h.rows - 1
    send(view, "on_key_press", arcade.key.PAGEUP, 0)
    assert h.first == 0
    lay = view.painter.layout
    assert lay is not None
    x, y = (lay.content.x0 + lay.content.x1) / 2, lay.content.y0 + 5 * LINE
    send(view, "on_mouse_scroll", x, y, 0.0, -2.0)
    assert h.first == 2 * WHEEL_LINES
    send(view, "on_draw")
    assert view.painter.pool("history").texts()[4] != newest
    assert h.bar is not None
    track = h.bar[0]
    send(view, "on_mouse_press", track.x0 + 2, track.y0 + 1, arcade.MOUSE_BUTTON_LEFT, 0)
    assert h.first == h.most  # the track's bottom: the oldest
    send(view, "on_mouse_drag", track.x0 + 2, track.y1 - 1, 0, 200, arcade.MOUSE_BUTTON_LEFT, 0)
    send(view, "on_mouse_release", track.x0 + 2, track.y1 - 1, arcade.MOUSE_BUTTON_LEFT, 0)
    assert h.first == 0 and not h.dragging
    send(view, "on_draw")
    assert view.painter.pool("history").texts()[4] == newest
    assert s.opts.selected == 0 and s.sim.tick == 150 and s.opts.zoom == 1.0
