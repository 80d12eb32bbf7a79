"""World <-> screen mapping: a region of the world is fitted, aspect kept, into a screen rectangle.

The region defaults to the whole world; ``behaviortk render --region x0 y0 x1 y1 --zoom Z``
and the window's wheel zoom and drag pan choose another (``view_region``). Shapes
outside the screen rectangle are clipped by the painter's scissor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from behaviortk.vec import Array

Region = tuple[float, float, float, float]  # world x0, y0, x1, y1


def view_region(width: float, height: float, region: Region | None, zoom: float = 1.0) -> Region:
    """The world rectangle shown: ``region`` (default the whole world) shrunk around its
    centre by ``zoom`` (2 shows half the width and half the height, twice as large)."""
    x0, y0, x1, y1 = region if region is not None else (0.0, 0.0, width, height)
    cx, cy = 0.5 * (x0 + x1), 0.5 * (y0 + y1)
    z = max(float(zoom), 1e-6)
    hw, hh = 0.5 * (x1 - x0) / z, 0.5 * (y1 - y0) / z
    return (cx - hw, cy - hh, cx + hw, cy + hh)


@dataclass(frozen=True)
class Viewport:
    world_width: float
    world_height: float
    left: float
    bottom: float
    width: float
    height: float
    region: Region | None = None  # the world rectangle fitted in; None: the whole world

    @property
    def shown(self) -> Region:
        return self.region or (0.0, 0.0, float(self.world_width), float(self.world_height))

    @property
    def scale(self) -> float:
        """Pixels per world unit (the same on both axes)."""
        x0, y0, x1, y1 = self.shown
        return float(min(self.width / max(x1 - x0, 1e-9), self.height / max(y1 - y0, 1e-9)))

    @property
    def origin(self) -> Array:
        """Screen position of world (0, 0): the fitted region is centred in the rectangle."""
        s = self.scale
        x0, y0, x1, y1 = self.shown
        return np.array(
            [
                self.left + 0.5 * (self.width - s * (x1 - x0)) - s * x0,
                self.bottom + 0.5 * (self.height - s * (y1 - y0)) - s * y0,
            ]
        )

    def to_screen(self, pts: Array) -> Array:
        return self.origin + np.asarray(pts, dtype=np.float64) * self.scale

    def to_world(self, pts: Array) -> Array:
        return (np.asarray(pts, dtype=np.float64) - self.origin) / self.scale

    def world_rect(self) -> tuple[float, float, float, float]:
        """Screen (x0, y0, x1, y1) of the world's bounds, clipped to the screen rectangle."""
        o = self.origin
        s = self.scale
        x0 = max(float(o[0]), self.left)
        y0 = max(float(o[1]), self.bottom)
        x1 = min(float(o[0] + s * self.world_width), self.left + self.width)
        y1 = min(float(o[1] + s * self.world_height), self.bottom + self.height)
        return (x0, y0, max(x0, x1), max(y0, y1))

    def uv_rect(self) -> tuple[float, float, float, float]:
        """The part of the world ``world_rect`` shows, as fractions of its width and height."""
        x0, y0, x1, y1 = self.world_rect()
        a = self.to_world(np.array([x0, y0]))
        b = self.to_world(np.array([x1, y1]))
        w, h = float(self.world_width), float(self.world_height)
        return (float(a[0]) / w, float(a[1]) / h, float(b[0]) / w, float(b[1]) / h)
