"""``sense/held.py``'s passes over every agent and every held pair, compiled (one loop each).

:func:`held_targets` is ``held.held_nearest`` after the thinkers' answers are stored:
each row's held target id mapped to its current row and measured. :func:`merge_pairs`
is ``held.merge``: each observer's block of pairs, from the thinkers' fresh query or
from the pairs it holds (measured now), in row order. The offsets and distances use
the formulas of ``world/spatial.py`` (``shortest_near`` is ``displacement_columns``' bits),
so both paths give the same arrays.
"""

from __future__ import annotations

import math

import numpy as np

from behaviortk.jit.compile import kernel
from behaviortk.world.spatial import shortest_near


@kernel
def held_targets(
    store: np.ndarray,
    ids: np.ndarray,
    row_of: np.ndarray,
    pos: np.ndarray,
    start: int,
    width: float,
    height: float,
    wrap: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Per row ``start + k`` (id ``ids[k]``): the current row of the target id it holds
    (``store[id]``; -1: none, or despawned) and its distance (inf without one)."""
    n = ids.shape[0]
    target = np.empty(n, dtype=np.int64)
    dist = np.empty(n)
    for k in range(n):
        held = store[ids[k]]
        row = row_of[held] if held >= 0 else -1
        target[k] = row
        if row < 0:
            dist[k] = np.inf
            continue
        i = start + k
        dx = shortest_near(pos[row, 0] - pos[i, 0], width, wrap)
        dy = shortest_near(pos[row, 1] - pos[i, 1], height, wrap)
        dist[k] = math.sqrt(dx * dx + dy * dy)
    return target, dist


@kernel
def merge_pairs(
    start: int,
    offsets: np.ndarray,
    thinks: np.ndarray,
    fo: np.ndarray,
    fj: np.ndarray,
    fd: np.ndarray,
    fdist: np.ndarray,
    ho: np.ndarray,
    hj: np.ndarray,
    pos: np.ndarray,
    width: float,
    height: float,
    wrap: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(i, j, d, dist)`` of every observer's block at ``offsets``: a thinker's (the
    ``t``-th) from the fresh pairs ``fo[t]:fo[t + 1]``, any other's from its held pairs
    ``ho[k]:ho[k + 1]`` (neighbour rows ``hj``), measured from the current positions."""
    n = thinks.shape[0]
    total = offsets[n]
    out_i = np.empty(total, dtype=np.int64)
    out_j = np.empty(total, dtype=np.int64)
    out_d = np.empty((total, 2))
    out_dist = np.empty(total)
    t = 0
    for k in range(n):
        i = start + k
        p = offsets[k]
        if thinks[k]:
            for q in range(fo[t], fo[t + 1]):
                out_i[p] = i
                out_j[p] = fj[q]
                out_d[p, 0] = fd[q, 0]
                out_d[p, 1] = fd[q, 1]
                out_dist[p] = fdist[q]
                p += 1
            t += 1
            continue
        xi = pos[i, 0]
        yi = pos[i, 1]
        for q in range(ho[k], ho[k + 1]):
            j = hj[q]
            dx = shortest_near(pos[j, 0] - xi, width, wrap)
            dy = shortest_near(pos[j, 1] - yi, height, wrap)
            out_i[p] = i
            out_j[p] = j
            out_d[p, 0] = dx
            out_d[p, 1] = dy
            out_dist[p] = math.sqrt(dx * dx + dy * dy)
            p += 1
    return out_i, out_j, out_d, out_dist
