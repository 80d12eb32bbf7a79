"""A pool of text labels drawn as one pyglet batch, reused frame after frame.

Panels put a few dozen short labels on the screen each frame (tree node names,
forces, legend entries, widget values). Making ``arcade.Text`` objects every
frame is slow; the pool keeps them, changes only what differs (``arcade.Text``
setters skip equal values) and hides the ones a frame does not use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MONO = ("DejaVu Sans Mono", "Liberation Mono", "Courier New")


@dataclass(frozen=True)
class Label:
    """One label as a frame asks for it (what tests read back)."""

    text: str
    x: float
    y: float
    color: tuple[int, int, int, int]
    size: float = 9.0
    anchor_x: str = "left"
    anchor_y: str = "center"
    bold: bool = False


class LabelPool:
    def __init__(self) -> None:
        import pyglet

        self._batch = pyglet.graphics.Batch()
        self._texts: list[Any] = []
        self.labels: list[Label] = []  # this frame's, in order

    def show(self, labels: list[Label]) -> None:
        """Make the pool show exactly ``labels`` (call once per frame, then ``draw``)."""
        import arcade

        self.labels = list(labels)
        while len(self._texts) < len(labels):
            self._texts.append(arcade.Text("", 0, 0, font_name=MONO, batch=self._batch))
        for text, label in zip(self._texts, labels, strict=False):
            if text.font_size != label.size:
                text.font_size = label.size
            if text.anchor_x != label.anchor_x:
                text.anchor_x = label.anchor_x
            if text.anchor_y != label.anchor_y:
                text.anchor_y = label.anchor_y
            if bool(text.bold) != label.bold:
                text.bold = label.bold
            if tuple(text.color) != label.color:
                text.color = label.color
            text.text = label.text
            if text.position != (label.x, label.y):
                text.position = (label.x, label.y)
            if not text.visible:
                text.visible = True
        for text in self._texts[len(labels) :]:
            if text.visible:
                text.visible = False

    def draw(self) -> None:
        self._batch.draw()

    def texts(self) -> list[str]:
        return [label.text for label in self.labels]
