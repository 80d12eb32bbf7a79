"""World <-> screen mapping: the world is fitted, aspect kept, into a screen rectangle."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from behaviortk.vec import Array


@dataclass(frozen=True)
class Viewport:
    world_width: float
    world_height: float
    left: float
    bottom: float
    width: float
    height: float

    @property
    def scale(self) -> float:
        """Pixels per world unit (the same on both axes)."""
        return float(min(self.width / self.world_width, self.height / self.world_height))

    @property
    def origin(self) -> Array:
        """Screen position of world (0, 0): the fitted world is centred in the rectangle."""
        s = self.scale
        return np.array(
            [
                self.left + 0.5 * (self.width - s * self.world_width),
                self.bottom + 0.5 * (self.height - s * self.world_height),
            ]
        )

    def to_screen(self, pts: Array) -> Array:
        return self.origin + np.asarray(pts, dtype=np.float64) * self.scale

    def to_world(self, pts: Array) -> Array:
        return (np.asarray(pts, dtype=np.float64) - self.origin) / self.scale

    def world_rect(self) -> tuple[float, float, float, float]:
        """Screen (x0, y0, x1, y1) of the world's bounds."""
        o = self.origin
        s = self.scale
        return (
            float(o[0]),
            float(o[1]),
            float(o[0] + s * self.world_width),
            float(o[1] + s * self.world_height),
        )
