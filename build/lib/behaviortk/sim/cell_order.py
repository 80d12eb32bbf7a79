"""Agents of large groups kept in grid-cell order on the compiled path.

The neighbour query visits each observer's 3 x 3 cells; when the rows of a
group follow the cells (row-major, stable within a cell), consecutive
observers read the same few candidates and the neighbours' velocities sit next
to each other in memory, so the query runs from cache (about 1.5 times faster
at 50,000 agents here; ``benchmarks/bench_crowd.py``). Every ``SORT_EVERY``
ticks the Simulation re-sorts each tree-controlled group of at least
``SORT_MIN`` agents by the cells of its own neighbour grid, as a row
permutation (``Simulation._rearrange``, the path spawns and despawns take):
agents keep their ids and every bit of state, only their rows move. Smaller
groups fit in cache and keep their order; so does a Simulation with debug
geometry on (the viewer and ``render``, which follow agents they show).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.sense import query_loops as spatial
from behaviortk.world.spatial import padded

SORT_EVERY = 32
"""Ticks between re-sorts (agents move a cell or two in that time: the order stays good)."""

SORT_MIN = 4096
"""Groups with fewer agents keep their rows."""


def cell_order(sim: Any) -> dict[str, np.ndarray] | None:
    """Each group's new order of its local rows, or None when nothing moves (or it is not time)."""
    if sim.tick % SORT_EVERY or sim.debug.enabled:
        return None
    ag, world = sim.agents, sim.world
    keep: dict[str, np.ndarray] = {}
    moved = False
    for name, rows in ag.slices.items():
        n = rows.stop - rows.start
        order = np.arange(n, dtype=np.int64)
        if n >= SORT_MIN and name in sim.trees:
            radius = padded(float(ag.view_distance[rows].max()))
            cap = int(ag.max_neighbours[rows].max())
            nx, ny, _, _ = spatial.grid_shape(world.width, world.height, radius, n, cap)
            _, by_cell, _, _ = spatial.bin_points(
                ag.pos, rows.start, rows.stop, float(world.width), float(world.height),
                world.edges == "wrap", nx, ny,
            )  # fmt: skip
            found = by_cell - rows.start
            if not np.array_equal(found, order):
                order, moved = found, True
        keep[name] = order
    return keep if moved else None
