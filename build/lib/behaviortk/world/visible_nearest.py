"""The nearest agent each observer can see, exactly, without a loop over agents.

"Can see" is the test of ``can_see`` (``world.sight.sees``, whose parts
``in_view`` and ``line_blocked`` are applied here): within the observer's
reach (its view distance, or less), inside its field of view, and no obstacle
or wall across the line. In rounds:

1. the ``k`` nearest agents of each observer still looking (one k-d tree query,
   ``SpatialIndex.k_nearest``, bounded by the reach), sorted by (distance, row);
   a loop over the ``k`` columns takes the first that passes, testing the line
   of sight only for observers still looking (vectorised over them);
2. an observer whose answer may lie beyond its ``k`` candidates (none of them
   seen, or a tie at the last one's distance, while the tree says more agents
   are within reach) is looked at again with ``GROWTH`` times as many, until
   its candidates hold every agent within its reach.

Observers are taken a chunk at a time so that candidates stay within
``SEARCH_BUDGET`` bytes. Ties in distance go to the lower row. Distances and
positions are computed as ``Sense.agent_facts`` and ``can_see`` compute them
(``own + displacement``), so ``can_see`` of the answer is true for every
observer that has one.
"""

from __future__ import annotations

import numpy as np

from behaviortk.vec import Array
from behaviortk.world.grid import chunk_bounds
from behaviortk.world.sight import in_view_columns, line_blocked
from behaviortk.world.spatial import TREE_SLACK, SpatialIndex, padded

#: How many nearest agents the first round looks at (one more when the observers are
#: among the observed: their own row comes first and is dropped), and how many times
#: more each further round looks at.
CANDIDATES = 4
GROWTH = 8

#: Bytes of candidates one query holds at once, and what one candidate costs.
SEARCH_BUDGET = 32 * 1024 * 1024
BYTES_PER_CANDIDATE = 128


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
    k = CANDIDATES + int(a.start < b.stop and b.start < a.stop)
    rows = np.arange(n_a, dtype=np.int64)  # positions in ``a`` still looking
    while rows.size:
        k = min(k, n_b)
        again = []
        cost = np.full(rows.size, k * BYTES_PER_CANDIDATE)
        for lo, hi in chunk_bounds(cost, SEARCH_BUDGET):
            part = rows[lo:hi]
            again.append(_round(index, a, b, part, k, heading, reach, half, best, best_dist))
        rows = np.concatenate(again)
        k *= GROWTH
    return best, best_dist


def _round(
    index: SpatialIndex,
    a: slice,
    b: slice,
    rows: np.ndarray,
    k: int,
    heading: Array,
    reach: Array,
    half: Array,
    best: np.ndarray,
    best_dist: Array,
) -> np.ndarray:
    """One round for the observers ``rows`` (sorted positions in ``a``, a range or not):
    fills ``best`` where the answer is sure, returns the rows to look at again."""
    n_b = b.stop - b.start
    limit = float(np.max(reach[rows]))
    bound = padded(limit) if np.isfinite(limit) else np.inf
    own = rows + a.start
    tree_dist, idx = index.k_nearest(own, b, k, bound)
    cand = np.where(idx < n_b, idx + b.start, -1)
    cand[cand == own[:, None]] = -1
    _first_visible(index, own, cand, heading[rows], reach[rows], half[rows], rows, best, best_dist)
    if k >= n_b:
        return rows[:0]
    last = tree_dist[:, k - 1]
    unseen = last * (1.0 - TREE_SLACK) - TREE_SLACK  # nobody left out is closer than this
    more = np.isfinite(last) & (np.minimum(best_dist[rows], reach[rows]) >= unseen)
    return rows[more]


def _first_visible(
    index: SpatialIndex,
    own: np.ndarray,
    cand: np.ndarray,
    heading: Array,
    reach: Array,
    half: Array,
    slots: np.ndarray,
    best: np.ndarray,
    best_dist: Array,
) -> None:
    """The first of each observer's candidates (``cand`` (n, k), -1 for none) it can see,
    in (distance, row) order, into ``best[slots]``.

    The three tests of ``sees``: reach and field of view for every candidate at once,
    then the line of sight rank by rank (the nearest passing candidate of every
    observer still looking, then the next...). Positions and distances are computed as
    ``Sense.agent_facts`` and ``can_see`` compute them, ``target = p + displacement(p,
    q)`` and ``dist = |target - p|``, on x and y columns (gathered with ``np.take``).
    """
    n = own.shape[0]
    r, c = np.nonzero(cand >= 0)
    j = cand[r, c]
    i = np.take(own, r)
    x, y = index.pos[:, 0], index.pos[:, 1]
    px, py = np.take(x, i), np.take(y, i)
    dx, dy = np.take(x, j) - px, np.take(y, j) - py
    w = index.world
    if w.edges == "wrap":
        dx -= w.width * np.round(dx / w.width)
        dy -= w.height * np.round(dy / w.height)
    tx, ty = px + dx, py + dy
    dx, dy = tx - px, ty - py
    dist = np.sqrt(dx * dx + dy * dy)
    hx, hy = np.take(heading[:, 0], r), np.take(heading[:, 1], r)
    passing = (dist <= np.take(reach, r)) & in_view_columns(hx, hy, dx, dy, dist, np.take(half, r))
    keep = np.flatnonzero(passing)
    r, j, dist = np.take(r, keep), np.take(j, keep), np.take(dist, keep)
    order = np.lexsort((j, dist, r))
    r, j, dist = np.take(r, order), np.take(j, order), np.take(dist, order)
    keep = np.take(keep, order)
    points = np.stack([px[keep], py[keep], tx[keep], ty[keep]], axis=1)
    count = np.bincount(r, minlength=n)
    start = np.cumsum(count) - count
    looking = count > 0
    rank = 0
    while True:
        rows = np.flatnonzero(looking & (count > rank))
        if rows.size == 0:
            break
        at = start[rows] + rank
        segment = points[at]
        ok = ~line_blocked(segment[:, :2], segment[:, 2:], w)
        found, at = rows[ok], at[ok]
        best[slots[found]] = j[at]
        best_dist[slots[found]] = dist[at]
        looking[found] = False
        rank += 1
