"""Where agents have been: the last positions of every agent, kept by id, drawn as fading lines.

``Trails.record(sim)`` after each tick stores one ``(N, 2)`` copy of the
positions in a ring of ``length`` slots (one array write, whatever N). Rows are
matched by agent id, so spawns and despawns between ticks leave survivors'
trails intact. ``shapes`` builds the segments of the marked agents in one
vectorised pass; a jump longer than half the world (an agent wrapping across an
edge) is not drawn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.vec import Array
from behaviortk.viewer import geometry as geo
from behaviortk.viewer import palette
from behaviortk.viewer.gpu import TriangleSoup

TRAIL_WIDTH = 1.5


class Trails:
    def __init__(self, length: int = 90) -> None:
        self.length = int(length)
        self._pos: Array = np.zeros((self.length, 0, 2))  # ring of positions, NaN = none
        self._ids: np.ndarray = np.zeros(0, dtype=np.int64)
        self._next = 0  # ring slot written next
        self._count = 0  # slots filled
        self._tick: int | None = None

    def clear(self) -> None:
        self._pos = np.zeros((self.length, 0, 2))
        self._ids = np.zeros(0, dtype=np.int64)
        self._next = self._count = 0
        self._tick = None

    def _follow_ids(self, ids: np.ndarray) -> None:
        """Re-order the stored columns to ``ids`` (new agents start empty)."""
        if ids.shape == self._ids.shape and np.array_equal(ids, self._ids):
            return
        moved = np.full((self.length, ids.size, 2), np.nan)
        if self._ids.size and ids.size:
            order = np.argsort(self._ids)
            at = np.searchsorted(self._ids, ids, sorter=order)
            at = np.minimum(at, self._ids.size - 1)
            found = self._ids[order[at]] == ids
            moved[:, found] = self._pos[:, order[at[found]]]
        self._pos, self._ids = moved, ids.copy()

    def record(self, sim: Any) -> None:
        """Store the current positions (once per tick; a restart to an earlier tick clears)."""
        tick = int(getattr(sim, "tick", 0))
        if self._tick is not None and tick <= self._tick:
            if tick == self._tick:
                return
            self.clear()
        ids = np.asarray(getattr(sim.agents, "ids", np.arange(sim.agents.n)), dtype=np.int64)
        self._follow_ids(ids)
        self._pos[self._next] = sim.agents.pos
        self._next = (self._next + 1) % self.length
        self._count = min(self._count + 1, self.length)
        self._tick = tick

    def history(self) -> Array:
        """``(K, N, 2)`` oldest first (K filled slots)."""
        k = self._count
        order = (self._next - k + np.arange(k)) % self.length
        return self._pos[order]

    def shapes(self, sim: Any, vp: Any, rows: np.ndarray, soup: TriangleSoup) -> None:
        """The trails of the ``rows`` marked (a bool mask over the current agents)."""
        hist = self.history()
        if hist.shape[0] < 2 or hist.shape[1] != rows.size or not rows.any():
            return
        h = hist[:, rows]  # (K, M, 2)
        a, b = h[:-1].reshape(-1, 2), h[1:].reshape(-1, 2)
        age = np.repeat(np.arange(h.shape[0] - 1, dtype=np.float64), h.shape[1])
        half = 0.5 * np.array([sim.world.width, sim.world.height])
        ok = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
        ok &= (np.abs(b - a) <= half).all(axis=1)
        if not ok.any():
            return
        verts = geo.segments(vp.to_screen(a[ok]), vp.to_screen(b[ok]), TRAIL_WIDTH)
        colors = np.empty((int(ok.sum()), 4), dtype=np.uint8)
        colors[:] = palette.TRAIL
        fade = 40.0 + 200.0 * age[ok] / max(h.shape[0] - 2, 1)  # older: fainter
        colors[:, 3] = fade.astype(np.uint8)
        soup.add(verts, np.repeat(colors, 6, axis=0))
