"""A window that stops redrawing while nothing on it can change.

A paused viewer drew 60 identical frames a second and used a whole core (97 %
at 3 agents on software GL). ``IdleWindow`` skips a frame, flip included, so the
screen keeps the last one, while its view says it is still (``still()``: paused,
not scrubbing) and no input arrived in the last ``AWAKE_SECONDS``; any key,
mouse, resize or expose event wakes it, and it still draws every ``HEARTBEAT``
seconds so a change made elsewhere (a reload's banner) shows soon.
"""

from __future__ import annotations

import time
from typing import Any

import arcade

WAKE_EVENTS = frozenset(
    {
        "on_key_press",
        "on_key_release",
        "on_text",
        "on_mouse_press",
        "on_mouse_release",
        "on_mouse_drag",
        "on_mouse_motion",
        "on_mouse_scroll",
        "on_mouse_enter",
        "on_mouse_leave",
        "on_resize",
        "on_expose",
        "on_show",
        "on_activate",
    }
)
AWAKE_SECONDS = 0.25
"""How long after an event frames are drawn (a click's effects, both buffers)."""
HEARTBEAT = 0.5
"""The longest a still window goes without drawing."""


class IdleWindow(arcade.Window):
    """``arcade.Window`` that draws only when its view may look different."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._awake_until = 0.0
        self._drawn_at = 0.0
        self.skipped = 0  # frames not drawn (tests and the curious)
        super().__init__(*args, **kwargs)

    def wake(self, seconds: float = AWAKE_SECONDS) -> None:
        self._awake_until = max(self._awake_until, time.monotonic() + seconds)

    def dispatch_event(self, event_type: str, *args: Any) -> Any:
        if event_type in WAKE_EVENTS:
            self.wake()
        return super().dispatch_event(event_type, *args)

    def should_draw(self, now: float) -> bool:
        still = getattr(self.current_view, "still", None)
        if still is None or not still():
            return True
        return now >= self._drawn_at + HEARTBEAT or now < self._awake_until

    def draw(self, dt: float) -> None:
        now = time.monotonic()
        if not self.should_draw(now):
            self.skipped += 1
            return
        self._drawn_at = now
        super().draw(dt)
