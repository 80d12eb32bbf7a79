"""The nearest agent each observer can see, exactly, without a loop over agents.

"Can see" is ``world.sight.sees``, the test of ``can_see``: within the observer's
reach (its view distance, or less), inside its field of view, and no obstacle
or wall across the line. Two passes:

1. the ``CANDIDATES`` nearest agents of each observer (one k-d tree query,
   ``SpatialIndex.tree``), sorted by (distance, row); the column loop then
   takes the first that passes, testing the line of sight only for observers
   still looking (at most ``CANDIDATES`` vectorised steps);
2. observers whose answer may lie beyond their candidates (all of them hidden
   or out of view, or a tie at the last candidate's distance, while the tree
   says more agents are within reach) are searched again over every agent
   within their reach (``CloseQuery``, a chunk of observers at a time within a
   memory budget), keeping the nearest that passes.

Ties in distance go to the lower row. Distances and positions are computed as
``Sense.agent_facts`` and ``can_see`` compute them (``own + displacement``), so
``can_see`` of the answer is true for every observer that has one.
"""

from __future__ import annotations

import numpy as np

from behaviortk.vec import Array
from behaviortk.world.sight import sees
from behaviortk.world.spatial import SpatialIndex, chunk_bounds, displacement, padded

#: How many nearest agents the first pass looks at (one more when the observers are
#: among the observed: their own row comes first and is dropped).
CANDIDATES = 8

#: Bytes of candidate pairs the second pass holds at once, and what one pair costs.
SEARCH_BUDGET = 32 * 1024 * 1024
BYTES_PER_PAIR = 256

#: Relative and absolute slack between the tree's distances and the exact ones: an
#: agent the tree left out is at least its last distance minus this.
TREE_SLACK = 1e-9


def nearest_visible(
    index: SpatialIndex,
    a: slice,
    b: slice,
    heading: Array,
    reach: Array,
    half: Array,
) -> tuple[np.ndarray, Array]:
    """For each row of ``a``: the nearest row of ``b`` (not itself) that it can see.

    ``heading``, ``reach`` and ``half`` (half the field of view, radians) are per row
    of ``a``. Returns ``(row or -1, distance or inf)``.
    """
    n_a = max(0, a.stop - a.start)
    n_b = max(0, b.stop - b.start)
    best = np.full(n_a, -1, dtype=np.int64)
    best_dist = np.full(n_a, np.inf)
    if n_a == 0 or n_b == 0 or not np.any(reach >= 0):
        return best, best_dist
    overlap = a.start < b.stop and b.start < a.stop
    k = min(CANDIDATES + int(overlap), n_b)
    limit = float(np.max(reach))
    bound = padded(limit) if np.isfinite(limit) else np.inf
    tree_dist, idx = index.k_nearest(a, b, k, bound)
    own = np.arange(a.start, a.stop, dtype=np.int64)
    cand = np.where(idx < n_b, idx + b.start, -1)
    cand[cand == own[:, None]] = -1
    _first_pass(index, own, cand, heading, reach, half, best, best_dist)
    # more agents may be within reach than the tree returned: its last column is a real one
    if k < n_b:
        last = tree_dist[:, k - 1]
        unseen = last * (1.0 - TREE_SLACK) - TREE_SLACK  # nobody left out is closer than this
        again = np.isfinite(last) & (np.minimum(best_dist, reach) >= unseen)
        rows = np.flatnonzero(again)
        if rows.size:
            _search(
                index, own[rows], b, heading[rows], reach[rows], half[rows], rows, best, best_dist
            )
    return best, best_dist


def _geometry(index: SpatialIndex, i: np.ndarray, j: np.ndarray) -> tuple[Array, Array, Array]:
    """(observer position, target's nearest image, distance) of pairs ``(i, j)``, computed
    as ``Sense.agent_facts`` and ``can_see`` do."""
    pos = index.pos
    p = pos[i]
    target = p + displacement(p, pos[j], index.world)
    d = target - p
    return p, target, np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])


def _first_pass(
    index: SpatialIndex,
    own: np.ndarray,
    cand: np.ndarray,
    heading: Array,
    reach: Array,
    half: Array,
    best: np.ndarray,
    best_dist: Array,
) -> None:
    """The first of each row's candidates it can see, in (distance, row) order; fills ``best``."""
    n_a, k = cand.shape
    real = cand >= 0
    r, c = np.nonzero(real)
    dist = np.full((n_a, k), np.inf)
    dist[r, c] = _geometry(index, own[r], cand[r, c])[2]
    row_key = np.where(real, cand, np.iinfo(np.int64).max)
    order = np.lexsort((row_key, dist), axis=1)
    cand = np.take_along_axis(cand, order, axis=1)
    dist = np.take_along_axis(dist, order, axis=1)
    looking = np.ones(n_a, dtype=bool)
    for col in range(k):
        rows = np.flatnonzero(looking & (cand[:, col] >= 0) & (dist[:, col] <= reach))
        if rows.size == 0:
            continue
        j = cand[rows, col]
        p, target, _ = _geometry(index, own[rows], j)
        ok = sees(
            p, heading[rows], target, np.ones(rows.size, bool), reach[rows], half[rows], index.world
        )
        found = rows[ok]
        best[found] = j[ok]
        best_dist[found] = dist[found, col]
        looking[found] = False


def _search(
    index: SpatialIndex,
    observers: np.ndarray,
    b: slice,
    heading: Array,
    reach: Array,
    half: Array,
    slots: np.ndarray,
    best: np.ndarray,
    best_dist: Array,
) -> None:
    """Every agent of ``b`` within reach of ``observers`` (sorted global rows), the nearest
    visible kept in ``best[slots]``; a chunk of observers at a time."""
    query = index.close_query(b, float(np.max(reach)))
    cells = query.cells(observers)
    cost = query.candidates(observers, cells) * BYTES_PER_PAIR + BYTES_PER_PAIR
    for lo, hi in chunk_bounds(cost, SEARCH_BUDGET):
        i, j = query.pairs(observers[lo:hi], cells[lo:hi])
        local = np.searchsorted(observers[lo:hi], i) + lo  # position in ``observers``
        keep = i != j
        i, j, local = i[keep], j[keep], local[keep]
        p, target, dist = _geometry(index, i, j)
        seen = sees(
            p, heading[local], target, np.ones(i.size, bool), reach[local], half[local], index.world
        )
        if not seen.any():
            continue
        local, j, dist = local[seen], j[seen], dist[seen]
        order = np.lexsort((j, dist, local))
        first = np.unique(local[order], return_index=True)[1]
        pick = order[first]
        slot = slots[local[pick]]
        best[slot] = j[pick]
        best_dist[slot] = dist[pick]
