"""A still window stops redrawing (a paused viewer used a whole core) until input wakes it."""

from __future__ import annotations

from typing import Any

import pytest

from behaviortk.viewer import idle
from behaviortk.viewer.idle import AWAKE_SECONDS, HEARTBEAT, IdleWindow


class FakeView:
    def __init__(self) -> None:
        self.paused = True

    def still(self) -> bool:
        return self.paused


def window_at(monkeypatch: pytest.MonkeyPatch, view: Any) -> IdleWindow:
    """An IdleWindow's drawing rule without a GL window: the class's methods on a bare object."""
    win = IdleWindow.__new__(IdleWindow)
    win._awake_until, win._drawn_at, win.skipped = 0.0, 0.0, 0
    monkeypatch.setattr(IdleWindow, "current_view", property(lambda self: view))
    return win


def test_a_still_view_draws_only_on_input_and_on_the_heartbeat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    view = FakeView()
    win = window_at(monkeypatch, view)
    win._drawn_at = 100.0
    assert not win.should_draw(100.1)  # paused, nothing happened
    assert win.should_draw(100.0 + HEARTBEAT)  # the heartbeat
    monkeypatch.setattr(idle.time, "monotonic", lambda: 100.2)
    win.wake()  # a key, a click, a resize...
    assert win.should_draw(100.2) and win.should_draw(100.2 + AWAKE_SECONDS - 0.01)
    assert not win.should_draw(100.2 + AWAKE_SECONDS + 0.01)
    view.paused = False  # running: every frame
    assert win.should_draw(100.21)


def test_every_input_event_wakes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    win = window_at(monkeypatch, FakeView())
    woke: list[str] = []
    monkeypatch.setattr(IdleWindow, "wake", lambda self, seconds=0.0: woke.append("x"))
    monkeypatch.setattr("pyglet.event.EventDispatcher.dispatch_event", lambda *a: None)
    win._enable_event_queue = False  # pyglet's own dispatch: straight to the handlers
    for event in ("on_key_press", "on_mouse_motion", "on_resize", "on_expose", "on_draw"):
        win.dispatch_event(event)
    assert len(woke) == 4  # not on_draw


def test_a_view_without_still_always_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    win = window_at(monkeypatch, object())  # the compiling screen, say
    win._drawn_at = 100.0
    assert win.should_draw(100.01)


def test_the_live_and_replay_views_say_when_they_are_still(tmp_path: Any) -> None:
    from pathlib import Path

    from behaviortk.viewer.app import ViewerView
    from behaviortk.viewer.session import Session
    from tests.viewer_support import window

    scene = Path(__file__).resolve().parents[1] / "definitions" / "seek_and_arrive.json"
    view = ViewerView(Session(scene), window(), watch=False)
    view.session.paused = True
    assert view.still()
    view.session.paused = False
    assert not view.still()
