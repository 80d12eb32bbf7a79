"""A block of text taller than its box, scrolled: the Info tab (the agent's facts, its tree
as text, its blackboard) with the mouse wheel and a scrollbar that drags, as the Tune
tab's rows scroll."""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.viewer.layout import Rect

SCROLL_W = 6.0
"""The scrollbar's width, at the box's right edge."""
WHEEL_PX = 42.0
"""Pixels one notch of the wheel scrolls (three lines of the Info tab's text)."""
MIN_THUMB = 16.0


class TextScroll:
    """How far the text is scrolled (pixels from its top) and where its scrollbar is."""

    def __init__(self) -> None:
        self.scroll = 0.0
        self.dragging = False
        self.bar: tuple[Rect, Rect, float] | None = None  # track, thumb, most scroll
        self._about: Any = None

    def follow(self, about: Any) -> None:
        """Back to the top when the text is about something else (another agent)."""
        if about != self._about:
            self._about, self.scroll = about, 0.0

    def wheel(self, notches: float) -> None:
        """The wheel turned (up: positive): toward the top."""
        self.scroll = max(self.scroll - notches * WHEEL_PX, 0.0)

    def place(self, box: Rect, total: float) -> float:
        """The scroll kept within ``total`` pixels of text in ``box``; lays the scrollbar out
        (none when it all fits). Returns the scroll."""
        most = max(total - box.height, 0.0)
        self.scroll = float(np.clip(self.scroll, 0.0, most))
        if most <= 0.0:
            self.bar = None
            return self.scroll
        track = Rect(box.x1 - SCROLL_W - 2, box.y0 + 2, box.x1 - 2, box.y1 - 2)
        thumb_h = max(track.height * box.height / total, MIN_THUMB)
        top = track.y1 - (track.height - thumb_h) * self.scroll / most
        self.bar = (track, Rect(track.x0, top - thumb_h, track.x1, top), most)
        return self.scroll

    def press(self, x: float, y: float) -> bool:
        """A click on the scrollbar: scroll there, and drag from now on."""
        if self.bar is None or not self.bar[0].inset(-4).contains(x, y):
            return False
        self.dragging = True
        self.drag(y)
        return True

    def drag(self, y: float) -> None:
        if self.dragging and self.bar is not None:
            track, _, most = self.bar
            self.scroll = float(np.clip((track.y1 - y) / max(track.height, 1e-9), 0, 1)) * most

    def release(self) -> None:
        self.dragging = False
