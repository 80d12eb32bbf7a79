"""Minimum-image geometry and the per-tick spatial index.

Every module that measures "from a to b" goes through :func:`displacement`, so
wrapped (toroidal) worlds are handled in one place.

Neighbour sets (``sense/sensing.py``) come from :class:`CloseQuery`: the points of a
row range binned once in a full-stencil grid (``grid.CellGrid``), then
measured against a chunk of observers at a time, so memory follows the chunk,
never the density (``benchmarks/bench_memory.py``). :meth:`SpatialIndex.pairs`
(all pairs at once: the half-stencil grid of ``grid_pairs`` within one range,
measured in ``benchmarks/bench_neighbours.py`` at 2.7 ms against 6.2 ms for
``cKDTree`` build + ``query_pairs`` at 10,000 agents with ~8 neighbours each,
else a tree) stays as the unchunked reference the tests compare with. A scipy
``cKDTree`` (``boxsize`` on wrapped worlds) proposes nearest agents; the exact distances
choose among them.

The index returns candidate pairs within a slightly padded radius; callers
filter them with their own exact distance (see ``sense/sensing.py``), so the result
does not depend on the index's rounding or traversal order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from behaviortk.vec import Array, clip, formula, select
from behaviortk.world.grid import CellGrid, grid_pair_chunks
from behaviortk.world.state import World

if TYPE_CHECKING:
    from scipy.spatial import cKDTree

#: Padding of query radii so the exact filter downstream never misses a pair.
RADIUS_PAD_REL = 1e-9
RADIUS_PAD_ABS = 1e-9

IntArray = np.ndarray

#: ``nearest`` goes brute force when one side has at most this many rows (e.g. 3
#: predators among 10,000 prey): a loop over the small side, vectorised over the
#: other, costs about 0.25 ms at 10,000 where building or querying a tree costs 1.6-1.8 ms.
SMALL_SIDE = 16

#: Relative and absolute slack between a k-d tree's distances and the exact ones: a row
#: the tree left out is at least its last distance minus this.
TREE_SLACK = 1e-9

#: How many times more candidates each further round of :meth:`SpatialIndex.nearest` takes.
NEAREST_GROWTH = 8


@formula
def minimum_image(d: Any, size: Any) -> Any:
    """The shortest image of the offset ``d`` along a wrapped axis of length ``size``:
    ``d - size * round(d / size)`` (halves to even, as ``np.round``)."""
    return d - size * np.rint(d / size)


@formula
def shortest(d: Any, size: Any, wrap: Any) -> Any:
    """The offset ``d`` along an axis as :func:`displacement` measures it (compiled loops)."""
    return select(wrap, minimum_image(d, size), d)


@formula
def shortest_near(d: Any, size: Any, wrap: Any) -> Any:
    """:func:`shortest` for offsets nearly always within half the world (neighbour pairs).

    There ``d / size`` lies within ``[-0.5, 0.5]``, which rounds (halves to even) to a zero
    of ``d``'s sign, so the minimum image is ``d + 0.0`` (``-0.0`` becomes ``0.0`` as in the
    subtraction): the same bits, and a compiled loop skips the division.
    """
    return select(wrap, select(np.abs(d) < 0.5 * size, d + 0.0, minimum_image(d, size)), d)


@formula
def fold(p: Any, size: Any, top: Any) -> Any:
    """The coordinate ``p`` folded into ``[0, size)``; ``top`` is the float just below ``size``.

    ``p - size * floor(p / size)`` is several times faster than ``np.mod``; the two
    corrections catch the rounding of ``p / size`` next to a multiple of ``size``.
    """
    q = p - size * np.floor(p / size)
    q = select(q < 0.0, q + size, q)
    q = select(q >= size, q - size, q)
    return clip(q, 0.0, top)


@formula
def wrap_axis(p: Any, size: Any, top: Any) -> Any:
    """:func:`fold` for coordinates nearly always inside the world: well inside,
    ``floor(p / size)`` is 0 and the answer ``p + 0.0`` (as the subtraction gives it), the
    same bits without the division in a compiled loop."""
    return select((p >= 0.0) & (p < 0.999999 * size), p + 0.0, fold(p, size, top))


def displacement(a: Array, b: Array, world: World) -> Array:
    """Vector from ``a`` to ``b`` (``b - a``); the shortest image on wrapped worlds.

    ``a`` and ``b`` broadcast against each other (``(N, 2)`` and ``(2,)`` both work).
    """
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if world.edges != "wrap":
        return d
    return np.asarray(minimum_image(d, world.size))


def displacement_columns(pos: Array, i: IntArray, j: IntArray, world: World) -> tuple[Array, Array]:
    """``displacement(pos[i], pos[j], world)`` as x and y columns, gathered with ``np.take``."""
    x = pos[:, 0]
    y = pos[:, 1]
    dx = np.take(x, j) - np.take(x, i)
    dy = np.take(y, j) - np.take(y, i)
    if world.edges == "wrap":
        return minimum_image(dx, world.width), minimum_image(dy, world.height)
    return dx, dy


def wrap_positions(pos: Array, world: World) -> Array:
    """Positions folded into ``[0, width) x [0, height)`` (never equal to the size)."""
    size = world.size
    return np.asarray(wrap_axis(pos, size, np.nextafter(size, 0.0)))


def padded(radius: float) -> float:
    return float(radius) * (1.0 + RADIUS_PAD_REL) + RADIUS_PAD_ABS


def observer_rows(a: slice | IntArray) -> IntArray:
    """The rows of ``a`` (a range, or already rows) as an int64 array."""
    if isinstance(a, slice):
        return np.arange(a.start, max(a.start, a.stop), dtype=np.int64)
    return np.asarray(a, dtype=np.int64)


class SpatialIndex:
    """One tick's positions: grid pair searches, and trees over row ranges built lazily."""

    def __init__(self, world: World, pos: Array, *, use_grid: bool = True) -> None:
        self.world = world
        self.use_grid = use_grid
        self.pos = pos
        self._folded: Array | None = None
        self._trees: dict[tuple[int, int], cKDTree] = {}

    @property
    def _points(self) -> Array:
        """Positions folded into the world on wrapped worlds (computed on first use: the
        compiled neighbour and nearest kernels fold as they bin and never ask)."""
        if self._folded is None:
            w = self.world
            self._folded = wrap_positions(self.pos, w) if w.edges == "wrap" else self.pos
        return self._folded

    def tree(self, rows: slice) -> cKDTree:
        key = (int(rows.start), int(rows.stop))
        found = self._trees.get(key)
        if found is None:
            # imported here: scipy.spatial costs ~0.3 s, and validating a file loads this module
            from scipy.spatial import cKDTree

            box = self.world.size if self.world.edges == "wrap" else None
            # balanced_tree=False builds about twice as fast and queries as fast
            found = cKDTree(
                self._points[rows], boxsize=box, balanced_tree=False, compact_nodes=False
            )
            self._trees[key] = found
        return found

    def pairs(self, a: slice, b: slice, radius: float) -> tuple[IntArray, IntArray]:
        """Directed candidate pairs ``(i, j)``, global rows, ``i`` in ``a``, ``j`` in ``b``.

        Contains every pair closer than ``radius`` (and maybe a few just beyond:
        the radius is padded), never ``i == j``. Unordered.
        """
        empty = np.zeros(0, dtype=np.int64)
        if a.stop <= a.start or b.stop <= b.start or not radius >= 0:
            return empty, empty
        r = padded(radius)
        if a.start == b.start and a.stop == b.stop:
            lo, hi = self.unordered_pairs(a, r)
            return np.concatenate([lo, hi]), np.concatenate([hi, lo])
        m = self.tree(a).sparse_distance_matrix(self.tree(b), r, output_type="ndarray")
        i = m["i"].astype(np.int64) + a.start
        j = m["j"].astype(np.int64) + b.start
        keep = i != j
        return i[keep], j[keep]

    def unordered_pairs(self, rows: slice, radius: float) -> tuple[IntArray, IntArray]:
        """Each pair of ``rows`` within ``radius`` once, as global ``(lo, hi)``
        (:meth:`unordered_pair_chunks` joined)."""
        parts = list(self.unordered_pair_chunks(rows, radius))
        if len(parts) == 1:
            return parts[0]
        if not parts:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty.copy()
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def unordered_pair_chunks(
        self, rows: slice, radius: float
    ) -> Iterator[tuple[IntArray, IntArray]]:
        """:meth:`unordered_pairs` a chunk at a time (``grid.grid_pair_chunks``: memory follows
        ``grid.PAIR_BUDGET``) when the uniform grid fits the world, else the tree's at once."""
        found = None
        if self.use_grid:
            w = self.world
            found = grid_pair_chunks(
                self._points[rows], w.width, w.height, radius, w.edges == "wrap"
            )
        if found is None:
            p = self.tree(rows).query_pairs(radius, output_type="ndarray").astype(np.int64)
            yield p[:, 0] + rows.start, p[:, 1] + rows.start
            return
        for chunk in found:
            lo = np.minimum(chunk.i, chunk.j)
            lo += rows.start
            hi = np.maximum(chunk.i, chunk.j)
            hi += rows.start
            yield lo, hi

    def sorted_pairs(self, a: slice, b: slice, radius: float) -> tuple[IntArray, IntArray]:
        """:meth:`pairs` sorted by ``(i, j)``: one ``np.sort`` of ``i << 32 | j`` keys
        (several times faster than an argsort plus gathers)."""
        i, j = self.pairs(a, b, radius)
        keys = (i << 32) | j
        keys.sort()
        return keys >> 32, keys & 0xFFFFFFFF

    def close_query(self, b: slice, radius: float) -> CloseQuery:
        """Pairs closer than ``radius`` between any observers and the rows ``b`` (a full-stencil grid)."""
        return CloseQuery(self, b, radius)

    def k_nearest(self, rows: IntArray, b: slice, k: int, bound: float) -> tuple[Array, IntArray]:
        """The tree's ``k`` nearest rows of ``b`` to each of ``rows`` within ``bound``, by
        its own distances: ``(distance, local index into b)``, both ``(len(rows), k)``;
        missing entries have distance inf and index ``b.stop - b.start``."""
        n = rows.shape[0]
        dist, idx = self.tree(b).query(self._points[rows], k=k, distance_upper_bound=bound)
        return (
            np.asarray(dist, dtype=np.float64).reshape(n, k),
            np.asarray(idx, dtype=np.int64).reshape(n, k),
        )

    def nearest(self, a: slice | IntArray, b: slice, radius: float) -> tuple[IntArray, Array]:
        """For each row of ``a`` (a range, or sorted rows: the agents that think this tick,
        ``sim/think.py``): the closest row of ``b`` other than itself within ``radius``.

        Returns ``(index, distance)`` per row of ``a``; index -1 and distance inf
        where there is none. Exactly brute force's answer (:meth:`_nearest_small`): the
        smallest ``d^2`` from :func:`displacement`, equal ones to the lower row; a large
        group asks the tree for a few candidates, and again for more where the tree's
        rounding could hide a nearer or lower row (``sense/nearest_loops.py`` is the same
        on a grid, compiled).
        """
        obs = observer_rows(a)
        n_a = obs.size
        index = np.full(n_a, -1, dtype=np.int64)
        dist = np.full(n_a, np.inf)
        if n_a == 0 or b.stop <= b.start or not radius >= 0:
            return index, dist
        if min(n_a, b.stop - b.start) <= SMALL_SIDE:
            return self._nearest_small(a, b, radius, index, dist)
        overlap = int(obs[0]) < b.stop and b.start <= int(obs[-1])
        n_b = b.stop - b.start
        k = 3 if overlap else 2  # oneself, the nearest and the next: is the nearest sure?
        bound = padded(radius) if np.isfinite(radius) else np.inf
        best = np.full(n_a, np.inf)  # squared distance to index's row
        looking = np.arange(n_a)
        while looking.size:
            k = min(k, n_b)
            pick, d2, again = self._nearest_round(obs[looking], b, k, bound, overlap)
            index[looking], best[looking] = pick, d2
            looking = looking[again] if k < n_b else looking[:0]
            k *= NEAREST_GROWTH
        dd = np.sqrt(best)
        found = np.isfinite(dd) & (dd <= radius)
        index[~found] = -1
        dist[found] = dd[found]
        return index, dist

    def _nearest_round(
        self, own: IntArray, b: slice, k: int, bound: float, overlap: bool
    ) -> tuple[IntArray, Array, np.ndarray]:
        """The nearest row of ``b`` to each row ``own`` among the tree's ``k`` nearest: the
        smallest ``d^2`` (from :func:`displacement`, as :meth:`_nearest_small`), then the
        lowest row. Returns it, its ``d^2`` and which rows must look again: those whose
        nearest is not nearer than every row the tree left out (its ``k``-th distance less
        ``TREE_SLACK``), so the tree's rounding never hides a nearer or lower row."""
        n_b = b.stop - b.start
        tree_dist, idx = self.k_nearest(own, b, k, bound)
        cand = np.where(idx < n_b, idx + b.start, -1)
        if overlap:
            cand[cand == own[:, None]] = -1
        first = np.full(own.size, np.inf)
        pick = np.full(own.size, -1, dtype=np.int64)
        safe = np.maximum(cand, 0)
        for c in range(k):  # the candidates column by column: the smallest d^2, then row
            j = cand[:, c]
            dx, dy = displacement_columns(self.pos, own, safe[:, c], self.world)
            d2 = np.where(j >= 0, dx * dx + dy * dy, np.inf)
            better = (d2 < first) | ((d2 == first) & (j < pick) & (j >= 0))
            first = np.where(better, d2, first)
            pick = np.where(better, j, pick)
        last = tree_dist[:, k - 1]
        unseen = last * (1.0 - TREE_SLACK) - TREE_SLACK  # nobody left out is nearer than this
        return pick, first, np.isfinite(last) & (np.sqrt(first) >= unseen)

    def _nearest_small(
        self, a: slice | IntArray, b: slice, radius: float, index: IntArray, dist: Array
    ) -> tuple[IntArray, Array]:
        """:meth:`nearest` by brute force, looping over whichever side is small.

        Distances use the same :func:`displacement` and ``sqrt(x*x + y*y)`` as the
        tree path, so the figures are the same; on exact ties the lower row wins.
        """
        pa, pb = self.pos[a], self.pos[b]
        ia = observer_rows(a)
        ib = np.arange(b.start, b.stop, dtype=np.int64)
        if ib.size <= ia.size:
            best = np.full(ia.size, np.inf)
            pick = np.full(ia.size, -1, dtype=np.int64)
            for t in range(ib.size):
                d = displacement(pa, pb[t], self.world)
                d2 = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]
                d2 = np.where(ia == ib[t], np.inf, d2)
                better = d2 < best
                best = np.where(better, d2, best)
                pick = np.where(better, ib[t], pick)
        else:
            best = np.empty(ia.size)
            pick = np.empty(ia.size, dtype=np.int64)
            for r in range(ia.size):
                d = displacement(pa[r], pb, self.world)
                d2 = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]
                d2 = np.where(ib == ia[r], np.inf, d2)
                j = int(np.argmin(d2))
                best[r], pick[r] = d2[j], ib[j]
        dd = np.sqrt(best)
        inside = np.isfinite(dd) & (dd <= radius)
        index[inside] = pick[inside]
        dist[inside] = dd[inside]
        return index, dist


class CloseQuery:
    """Pairs closer than a radius between chosen observers (any rows) and the rows ``b``.

    The points of ``b`` are binned once (``grid.CellGrid``, full stencil), so
    observers can be asked about a few at a time: memory follows the
    candidates of the observers asked (:meth:`candidates` tells how many
    beforehand), never the whole crowd. Wrapped worlds of fewer than 3 cells
    are handled by the grid too. Like :meth:`SpatialIndex.pairs`, the radius is
    padded and callers apply their own exact test.
    """

    def __init__(self, index: SpatialIndex, b: slice, radius: float) -> None:
        w = index.world
        self.points = index._points
        self.b = b
        self.radius = float(radius)
        self.grid = CellGrid(self.points[b], w.width, w.height, padded(radius), w.edges == "wrap")
        self.cell_side = max(w.width / self.grid.nx, w.height / self.grid.ny)
        """Longest side of a cell (at least the radius)."""

    def cells(self, rows: IntArray) -> IntArray:
        return self.grid.cells(self.points[rows])

    def candidates(self, rows: IntArray, cells: IntArray | None = None) -> IntArray:
        """Points of ``b`` each observer in ``rows`` will be measured against (itself included)."""
        return self.grid.candidate_counts(self.cells(rows) if cells is None else cells)

    def pairs(self, rows: IntArray, cells: IntArray | None = None) -> tuple[IntArray, IntArray]:
        """``(i, j)``: observer ``i`` (one of ``rows``, which must be sorted) and ``j`` (a row of
        ``b``) closer than the radius, sorted by ``(i, j)``. Includes ``i == j`` when an
        observer is one of ``b``: callers drop it with their exact test."""
        if rows.size == 0 or self.b.stop <= self.b.start:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        keys = self.grid.close_pairs(
            self.points[rows], self.cells(rows) if cells is None else cells
        )
        i = keys >> 32
        if int(rows[-1]) - int(rows[0]) + 1 == rows.size:  # a range: no gather needed
            i += int(rows[0])
        else:
            i = np.take(rows, i)
        keys &= 0xFFFFFFFF
        keys += self.b.start
        return i, keys
