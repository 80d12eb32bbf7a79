"""Which agents overlap: closer to another agent than the sum of their radii.

The overlap figure of a tick is the fraction of agents that overlap at least
one other agent. Pairs come from the spatial index's uniform grid (each
unordered pair once, ``SpatialIndex.unordered_pair_chunks``) searched within
twice the largest radius, a chunk at a time, then tested exactly; distances
are minimum-image on wrapped worlds. No loop over agents: ``bench``, the trace summary,
non-penetration and a metrics layer all call :func:`close_pairs` /
:func:`overlapping`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from behaviortk.vec import Array
from behaviortk.world.spatial import SpatialIndex, displacement_columns
from behaviortk.world.state import Agents, World

IntArray = np.ndarray


def close_pair_chunks(
    world: World, pos: Array, radius: Array, reach: float = 0.0
) -> Iterator[tuple[IntArray, IntArray]]:
    """:func:`close_pairs` a chunk at a time (memory follows ``grid.PAIR_BUDGET``)."""
    n = int(pos.shape[0])
    if n < 2:
        return
    search = 2.0 * float(radius.max()) + float(reach)
    for lo, hi in SpatialIndex(world, pos).unordered_pair_chunks(slice(0, n), search):
        dx, dy = displacement_columns(pos, lo, hi, world)
        limit = np.take(radius, lo) + np.take(radius, hi) + reach
        keep = np.flatnonzero(dx * dx + dy * dy < limit * limit)
        yield np.take(lo, keep), np.take(hi, keep)


def close_pairs(
    world: World, pos: Array, radius: Array, reach: float = 0.0
) -> tuple[IntArray, IntArray]:
    """Unordered pairs ``(i, j)``, ``i < j``, closer than ``r_i + r_j + reach`` (minimum image).

    ``reach >= 0`` widens the test: non-penetration keeps pairs that are nearly
    touching as candidates for its relaxation passes.
    """
    parts = list(close_pair_chunks(world, pos, radius, reach))
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def overlapping(world: World, pos: Array, radius: Array) -> np.ndarray:
    """(N,) bool: the agents closer to at least one other than the sum of their radii
    (never holding all the pairs: one chunk's at a time)."""
    n = int(pos.shape[0])
    mask = np.zeros(n, dtype=bool)
    for i, j in close_pair_chunks(world, pos, radius):
        mask[i] = True
        mask[j] = True
    return mask


def overlap_fraction(world: World, agents: Agents) -> float:
    """The tick's overlap figure: the fraction of agents that overlap another (0 without agents)."""
    if agents.n == 0:
        return 0.0
    return float(np.count_nonzero(overlapping(world, agents.pos, agents.radius))) / agents.n


class OverlapLog:
    """The overlap figure of tick after tick: the last one, the largest and the mean.

    ``run --headless``, traces and ``bench`` keep one; ``summary`` is what they report.
    """

    def __init__(self) -> None:
        self.ticks = 0
        self.last = 0.0
        self.max = 0.0
        self.total = 0.0

    def add(self, fraction: float) -> None:
        self.ticks += 1
        self.last = float(fraction)
        self.max = max(self.max, self.last)
        self.total += self.last

    def measure(self, world: World, agents: Agents) -> float:
        """Add the overlap figure of the agents as they are now; returns it."""
        fraction = overlap_fraction(world, agents)
        self.add(fraction)
        return fraction

    @property
    def mean(self) -> float:
        return self.total / self.ticks if self.ticks else 0.0

    def summary(self) -> dict[str, float | int]:
        """``{"ticks", "last", "max", "mean"}``: fractions of the agents, 0 before any tick."""
        return {"ticks": self.ticks, "last": self.last, "max": self.max, "mean": self.mean}

    def describe(self) -> str:
        """One line for people: the figures as percentages."""
        return (
            f"overlap (agents closer to another than the sum of their radii): "
            f"{percent(self.max)} at most, {percent(self.mean)} mean, "
            f"{percent(self.last)} after the last of {self.ticks} ticks"
        )


def percent(fraction: float) -> str:
    """A fraction as a percentage with 3 significant digits: one agent in 50,000 still shows."""
    return f"{100.0 * fraction:.3g}%"
