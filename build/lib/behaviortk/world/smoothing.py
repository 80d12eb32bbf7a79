"""Heading smoothing: the mean of the last k headings (Buckland's ``Smoother``).

Buckland (Programming Game AI by Example, ch. 3, "Smoothing") averages the last
ten headings so a vehicle's drawn direction does not jitter when steering
forces fight. The ring buffer starts filled with the first heading (Buckland
starts it with zero vectors, which only shrinks the early averages), and the
average is normalised, keeping the previous smoothed heading where the
average is zero (headings that cancel).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.vec import EPS, Array, formula, length_xy, select


@formula
def unit_or_keep(x: Any, y: Any, kx: Any, ky: Any, least: Any) -> tuple[Any, Any]:
    """``(x, y)`` normalised where longer than ``least``, else ``(kx, ky)`` (the direction kept
    when there is none: a stopped vehicle's heading, headings that cancel)."""
    n = length_xy(x, y)
    ok = n > least
    inv = 1.0 / select(ok, n, 1.0)
    return select(ok, x * inv, kx), select(ok, y * inv, ky)


class HeadingSmoother:
    """Ring buffer of shape ``(k, N, 2)``; ``update`` pushes one tick's headings."""

    def __init__(self, k: int, first: Array) -> None:
        if k < 1:
            raise ValueError(f"heading smoothing needs k >= 1, got {k}")
        self.k = k
        self.history = np.repeat(np.asarray(first, dtype=np.float64)[None], k, axis=0)
        self.next = 0

    def rerow(self, src: np.ndarray, heading: Array) -> HeadingSmoother:
        """The buffer for new rows: row ``r`` keeps old row ``src[r]``'s history; rows with
        ``src < 0`` (new agents) start filled with their ``heading``."""
        history = np.repeat(np.asarray(heading, dtype=np.float64)[None], self.k, axis=0)
        kept = src >= 0
        history[:, kept] = self.history[:, src[kept]]
        out = HeadingSmoother(self.k, heading)
        out.history, out.next = history, self.next
        return out

    def fits(self, k: int, n: int) -> bool:
        return self.k == k and self.history.shape[1] == n

    def update(self, heading: Array, previous: Array) -> Array:
        """Push ``heading`` and return the normalised mean (``previous`` where it is zero)."""
        self.history[self.next] = heading
        self.next = (self.next + 1) % self.k
        mean = self.history.mean(axis=0)
        hx, hy = unit_or_keep(mean[:, 0], mean[:, 1], previous[:, 0], previous[:, 1], EPS)
        return np.stack([hx, hy], axis=1)
