"""Where a frame is drawn: the window, or an offscreen image of any size (renders).

Both give the painter the same five things: a size, ``drawing()`` around a
frame, ``clear``, ``clipped(rect)`` (a scissor box) and ``snapshot()``. The
offscreen canvas is a framebuffer with its own projection, so
``behaviortk render --size W H`` is not limited by the hidden window arcade
makes in headless mode (which cannot be resized).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from behaviortk.viewer.layout import Rect


def _scissor(rect: Rect) -> tuple[int, int, int, int]:
    x0, y0 = int(np.floor(rect.x0)), int(np.floor(rect.y0))
    return (x0, y0, max(int(np.ceil(rect.x1)) - x0, 0), max(int(np.ceil(rect.y1)) - y0, 0))


class WindowCanvas:
    def __init__(self, window: Any) -> None:
        self.window = window
        self.ctx = window.ctx

    @property
    def width(self) -> int:
        return int(self.window.width)

    @property
    def height(self) -> int:
        return int(self.window.height)

    @contextmanager
    def drawing(self) -> Iterator[None]:
        yield

    def clear(self, color: tuple[int, int, int, int]) -> None:
        self.window.clear(color=color)

    @contextmanager
    def clipped(self, rect: Rect) -> Iterator[None]:
        self.ctx.scissor = _scissor(rect)
        try:
            yield
        finally:
            self.ctx.scissor = None

    def snapshot(self) -> np.ndarray:
        """``(H, W, 3) uint8``, row 0 at the top."""
        import arcade

        img = arcade.get_image(0, 0, self.width, self.height)
        return np.asarray(img.convert("RGB"))


class Canvas(WindowCanvas):
    """An offscreen ``size`` image (one framebuffer, reused for every frame)."""

    def __init__(self, ctx: Any, size: tuple[int, int]) -> None:
        self.ctx = ctx
        self.size = (int(size[0]), int(size[1]))
        self._texture = ctx.texture(self.size, components=4)
        self.fbo = ctx.framebuffer(color_attachments=[self._texture])

    @property
    def width(self) -> int:
        return self.size[0]

    @property
    def height(self) -> int:
        return self.size[1]

    @contextmanager
    def drawing(self) -> Iterator[None]:
        from pyglet.math import Mat4

        ctx = self.ctx
        with self.fbo.activate():
            projection, view = ctx.projection_matrix, ctx.view_matrix
            ctx.projection_matrix = Mat4.orthogonal_projection(
                0, self.width, 0, self.height, -100, 100
            )
            ctx.view_matrix = Mat4()
            try:
                yield
            finally:
                ctx.projection_matrix, ctx.view_matrix = projection, view

    def clear(self, color: tuple[int, int, int, int]) -> None:
        self.fbo.clear(color=color)

    def snapshot(self) -> np.ndarray:
        with self.fbo.activate():
            data = self.fbo.read(components=3)
        img = np.frombuffer(data, dtype=np.uint8).reshape(self.height, self.width, 3)
        return np.ascontiguousarray(img[::-1])
