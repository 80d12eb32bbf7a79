"""The replay timeline: a track under the world, a filled part up to the shown tick, a handle.

Pure geometry (screen pixels, y up) plus the mapping between x and recorded
ticks, so the window, the headless render and the tests share one layout:
``Timeline.of_window`` puts it in the band the painter leaves free at the
bottom (``BAND``), left of the side panel. Dragging maps x to the nearest
recorded tick; the drawn handle sits at the shown tick.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from behaviortk.viewer import geometry as geo
from behaviortk.viewer.gpu import TriangleSoup

BAND = 40
"""Pixels the painter reserves under the world for the timeline."""
LABEL_WIDTH = 360
"""Pixels at the track's left for the tick / time / speed label."""
TRACK = (70, 76, 96, 255)
PLAYED = (90, 160, 255, 255)
HANDLE = (255, 255, 255, 255)
BAND_BG = (12, 14, 20, 255)
HIT_SLACK = 8.0


@dataclass(frozen=True)
class Timeline:
    """The track from ``x0`` to ``x1`` at height ``y`` over the recorded ``ticks``."""

    x0: float
    x1: float
    y: float
    ticks: np.ndarray  # (T,) recorded ticks, ascending
    band: tuple[float, float, float, float]  # the whole band (x0, y0, x1, y1)

    @classmethod
    def of_window(cls, width: int, panel_width: int, margin: int, ticks: np.ndarray) -> Timeline:
        right = width - panel_width - margin
        band = (0.0, 0.0, float(width - panel_width), float(BAND))
        return cls(
            x0=float(margin + LABEL_WIDTH),
            x1=float(max(right - 8, margin + LABEL_WIDTH + 1)),
            y=BAND / 2.0,
            ticks=np.asarray(ticks, dtype=np.int64),
            band=band,
        )

    def fraction(self, index: int) -> float:
        """Where recorded tick number ``index`` sits along the track, 0..1 (by tick value)."""
        t = self.ticks
        if t.size <= 1 or t[-1] == t[0]:
            return 0.0
        return float((t[index] - t[0]) / (t[-1] - t[0]))

    def x_of(self, index: int) -> float:
        return self.x0 + self.fraction(index) * (self.x1 - self.x0)

    def index_at(self, x: float) -> int:
        """The recorded tick nearest to screen ``x`` (clamped to the track's ends)."""
        t = self.ticks
        if t.size == 0:
            return 0
        f = min(max((x - self.x0) / max(self.x1 - self.x0, 1e-9), 0.0), 1.0)
        target = t[0] + f * (t[-1] - t[0])
        i = int(np.searchsorted(t, target))
        if i >= t.size:
            return int(t.size - 1)
        if i > 0 and target - t[i - 1] <= t[i] - target:
            return i - 1
        return i

    def hit(self, x: float, y: float) -> bool:
        """A press here grabs the timeline (the track, its ends and a little around)."""
        return self.x0 - HIT_SLACK <= x <= self.x1 + HIT_SLACK and 0 <= y <= BAND

    def shapes(self, index: int) -> TriangleSoup:
        soup = TriangleSoup()
        soup.add(geo.quads(*self.band), BAND_BG)
        soup.add(geo.quads(self.x0, self.y - 3, self.x1, self.y + 3), TRACK)
        x = self.x_of(index)
        soup.add(geo.quads(self.x0, self.y - 3, x, self.y + 3), PLAYED)
        soup.add(geo.quads(x - 4, self.y - 10, x + 4, self.y + 10), HANDLE)
        return soup


def label(
    tick: int, index: int, count: int, time: float, playing: bool, speed: float, live: bool = True
) -> str:
    """``tick 240 (241/400)  4.02 s  paused x1``: the trace's tick (``--tick``, the HUD's),
    which recorded tick of how many, the simulated time, and in a window (``live``)
    playing or paused and the speed."""
    where = f"tick {tick} ({index + 1}/{count})  {time:.2f} s"
    return f"{where}  {'playing' if playing else 'paused'} x{speed:g}" if live else where
