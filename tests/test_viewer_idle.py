"""A still window stops redrawing (a paused viewer used a whole core) until input wakes it.

The rule is tested on a stand-in object carrying the window's fields, never on a bare
``arcade.Window``: one made without its GL context would break the shared context of
every later viewer test when it is collected.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from behaviortk.viewer import idle
from behaviortk.viewer.idle import AWAKE_SECONDS, HEARTBEAT, WAKE_EVENTS, IdleWindow


class FakeView:
    def __init__(self) -> None:
        self.paused = True

    def still(self) -> bool:
        return self.paused


def stand_in(view: Any, drawn_at: float = 0.0) -> Any:
    return SimpleNamespace(current_view=view, _awake_until=0.0, _drawn_at=drawn_at)


def test_a_still_view_draws_only_on_input_and_on_the_heartbeat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    view = FakeView()
    win = stand_in(view, drawn_at=100.0)
    assert not IdleWindow.should_draw(win, 100.1)  # paused, nothing happened
    assert IdleWindow.should_draw(win, 100.0 + HEARTBEAT)  # the heartbeat
    monkeypatch.setattr(idle.time, "monotonic", lambda: 100.2)
    IdleWindow.wake(win)  # a key, a click, a resize...
    assert IdleWindow.should_draw(win, 100.2)
    assert IdleWindow.should_draw(win, 100.2 + AWAKE_SECONDS - 0.01)
    assert not IdleWindow.should_draw(win, 100.2 + AWAKE_SECONDS + 0.01)
    view.paused = False  # running: every frame
    assert IdleWindow.should_draw(win, 100.21)


def test_input_events_wake_it_and_drawing_does_not() -> None:
    for event in ("on_key_press", "on_mouse_motion", "on_mouse_press", "on_resize", "on_expose"):
        assert event in WAKE_EVENTS
    assert "on_draw" not in WAKE_EVENTS and "on_update" not in WAKE_EVENTS


def test_a_view_without_still_always_draws() -> None:
    assert IdleWindow.should_draw(stand_in(object(), drawn_at=100.0), 100.01)  # compiling


def test_the_live_view_says_when_it_is_still() -> None:
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
