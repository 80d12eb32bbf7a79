"""``sense/held.py``'s passes over every agent and every held pair, compiled (one loop each).

:func:`held_offsets` is who thinks and the offsets of ``held.held_pairs``;
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
from behaviortk.sense.query_loops import SUMS, separation_pair
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
def held_offsets(
    n: int, local: np.ndarray, fo: np.ndarray, ho: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(thinks, offsets)`` of ``held.held_pairs`` in one pass over the ``n`` observers:
    whether each thinks (``local``, sorted), and the CSR offsets of its pairs (a thinker's
    count from the fresh ``fo``, any other's from its held ``ho``)."""
    thinks = np.zeros(n, dtype=np.bool_)
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    t = 0
    for k in range(n):
        if t < local.shape[0] and local[t] == k:
            thinks[k] = True
            offsets[k + 1] = offsets[k] + fo[t + 1] - fo[t]
            t += 1
        else:
            offsets[k + 1] = offsets[k] + ho[k + 1] - ho[k]
    return thinks, offsets


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
    measure: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(i, j, d, dist)`` of every observer's block at ``offsets``: a thinker's (the
    ``t``-th) from the fresh pairs ``fo[t]:fo[t + 1]``, any other's from its held pairs
    ``ho[k]:ho[k + 1]`` (neighbour rows ``hj``), measured from the current positions.
    Without ``measure`` only ``j`` (``i``, ``d`` and ``dist`` empty): who is held."""
    n = thinks.shape[0]
    total = offsets[n]
    size = total if measure else 0
    out_i = np.empty(size, dtype=np.int64)
    out_j = np.empty(total, dtype=np.int64)
    out_d = np.empty((size, 2))
    out_dist = np.empty(size)
    t = 0
    for k in range(n):
        i = start + k
        p = offsets[k]
        if thinks[k]:
            for q in range(fo[t], fo[t + 1]):
                out_j[p] = fj[q]
                if measure:
                    out_i[p] = i
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
            out_j[p] = j
            if measure:
                dx = shortest_near(pos[j, 0] - xi, width, wrap)
                dy = shortest_near(pos[j, 1] - yi, height, wrap)
                out_i[p] = i
                out_d[p, 0] = dx
                out_d[p, 1] = dy
                out_dist[p] = math.sqrt(dx * dx + dy * dy)
            p += 1
    return out_i, out_j, out_d, out_dist


@kernel
def held_sums(
    start: int,
    offsets: np.ndarray,
    thinks: np.ndarray,
    fo: np.ndarray,
    fj: np.ndarray,
    fresh: np.ndarray,
    ho: np.ndarray,
    hj: np.ndarray,
    pos: np.ndarray,
    vel: np.ndarray,
    width: float,
    height: float,
    wrap: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Every observer's flocking sums, and the neighbour rows of every pair (``merge_pairs``
    without ``measure``, in the same pass): a thinker's (the ``t``-th) row ``fresh[t]`` of
    the query's sums and its fresh pairs ``fo[t]:fo[t + 1]``, any other's over its held
    pairs ``ho[k]:ho[k + 1]`` measured now, in the query's order and terms
    (``query_loops.neighbour_query``)."""
    n = thinks.shape[0]
    sums = np.empty((n, SUMS))
    out_j = np.empty(offsets[n], dtype=np.int64)
    t = 0
    for k in range(n):
        p = offsets[k]
        if thinks[k]:
            for c in range(SUMS):
                sums[k, c] = fresh[t, c]
            for q in range(fo[t], fo[t + 1]):
                out_j[p] = fj[q]
                p += 1
            t += 1
            continue
        i = start + k
        xi = pos[i, 0]
        yi = pos[i, 1]
        sx = sy = ax = ay = ox = oy = 0.0
        for q in range(ho[k], ho[k + 1]):
            j = hj[q]
            out_j[p] = j
            p += 1
            dx = shortest_near(pos[j, 0] - xi, width, wrap)
            dy = shortest_near(pos[j, 1] - yi, height, wrap)
            tx, ty = separation_pair(i, j, dx, dy)
            sx += tx
            sy += ty
            ax += vel[j, 0]
            ay += vel[j, 1]
            ox += dx
            oy += dy
        sums[k, 0] = sx
        sums[k, 1] = sy
        sums[k, 2] = ax
        sums[k, 3] = ay
        sums[k, 4] = ox
        sums[k, 5] = oy
    return sums, out_j
