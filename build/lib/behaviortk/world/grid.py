"""Uniform-grid pair search: all unordered pairs closer than a radius.

Cells are at least ``radius`` wide, agents are binned by a stable argsort of
their cell id, and each agent is paired with the later agents of its own cell
and every agent of four "forward" cells ((+1,0), (-1,+1), (0,+1), (+1,+1)), so
each unordered pair is examined once. The variable-length candidate lists
are expanded with ``np.repeat`` (no Python loop over agents), a chunk of
agents at a time (:data:`PAIR_BUDGET`), so memory follows the chunk, never
the density: 200,000 agents of radius 5 and 8 in an 800 x 600 world measure
96 million candidates, which at once took 4.6 GB (issue 23). Measured against
``cKDTree.query_pairs`` in ``benchmarks/bench_neighbours.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from behaviortk.format.budget import NEIGHBOUR_WORKING_SET
from behaviortk.format.cells import grid_cells
from behaviortk.vec import Array

PAIR_BUDGET = NEIGHBOUR_WORKING_SET
"""Bytes of candidate pairs :func:`grid_pair_chunks` holds at once (tests lower it)."""

BYTES_PER_PAIR_CANDIDATE = 64
"""Peak bytes per candidate inside one chunk: its two rows, offsets (x, y) and the
expansion's run starts, 8 bytes each, and the test's temporaries."""

#: The four forward neighbour cells of the half stencil (the own cell is handled apart).
FORWARD_DX = np.array([1, -1, 0, 1])
FORWARD_DY = np.array([0, 1, 1, 1])


def grid_shape(width: float, height: float, radius: float, n: int) -> tuple[int, int]:
    """Cells per axis: as many as fit with cells >= radius, at most ~4 per agent and
    at most 65535 (so cell ids fit uint16, which NumPy sorts by radix); closed form
    (``world.cells``), instant on any world."""
    return grid_cells(width, height, radius, min(max(16, 4 * n), 65535))


def chunk_bounds(cost: np.ndarray, budget: int) -> Iterator[tuple[int, int]]:
    """Consecutive ``(lo, hi)`` ranges whose ``cost`` sums to at most ``budget``
    (a single item that costs more gets a range of its own)."""
    ends = np.cumsum(cost)
    lo, n = 0, int(cost.shape[0])
    while lo < n:
        done = int(ends[lo - 1]) if lo else 0
        hi = max(lo + 1, int(np.searchsorted(ends, done + budget, side="right")))
        yield lo, hi
        lo = hi


@dataclass(frozen=True)
class PairChunk:
    """Pairs of one chunk of :func:`grid_pair_chunks`: local rows ``i``, ``j`` (unordered),
    the offset ``points[j] - points[i]`` (minimum image) and how many candidates were measured."""

    i: np.ndarray
    j: np.ndarray
    dx: Array
    dy: Array
    candidates: int


def grid_pair_chunks(
    points: Array, width: float, height: float, radius: float, wrap: bool
) -> Iterator[PairChunk] | None:
    """Every unordered pair of local rows with distance <= ``radius`` once, a chunk at a time
    (the candidates of a chunk take at most :data:`PAIR_BUDGET` bytes, unless a single
    agent's do).

    On wrapped worlds ``points`` must lie in ``[0, width) x [0, height)`` and
    distances are minimum-image; None when the grid has fewer than 3 cells on an
    axis (a half stencil would then visit a cell twice): use a tree instead.
    """
    n = points.shape[0]
    nx, ny = grid_shape(width, height, radius, n)
    if wrap and (nx < 3 or ny < 3):
        return None
    x = np.ascontiguousarray(points[:, 0])
    y = np.ascontiguousarray(points[:, 1])
    cx = np.clip((x * (nx / width)).astype(np.int64), 0, nx - 1)
    cy = np.clip((y * (ny / height)).astype(np.int64), 0, ny - 1)
    cell = cy * nx + cx
    # cell ids < 65535: a stable sort of uint16 is a radix sort (~5x faster than int64)
    order = np.argsort(cell.astype(np.uint16), kind="stable")
    empty_cell = nx * ny
    count = np.bincount(cell, minlength=empty_cell + 1)
    start = np.cumsum(count) - count
    cell_s = np.take(cell, order)
    xs = np.take(x, order)
    ys = np.take(y, order)

    ncx = np.take(cx, order)[:, None] + FORWARD_DX
    ncy = np.take(cy, order)[:, None] + FORWARD_DY
    if wrap:
        near = (ncy % ny) * nx + (ncx % nx)
    else:
        inside = (ncx >= 0) & (ncx < nx) & (ncy < ny)
        near = np.where(inside, ncy * nx + ncx, empty_cell)
    del ncx, ncy
    k = np.arange(n)
    base = np.empty((n, 5), dtype=np.int64)
    cnt = np.empty((n, 5), dtype=np.int64)
    base[:, 0] = k + 1
    cnt[:, 0] = np.take(start, cell_s) + np.take(count, cell_s) - k - 1
    base[:, 1:] = np.take(start, near)
    cnt[:, 1:] = np.take(count, near)
    del near, cell_s
    per_agent = cnt.sum(axis=1)

    def chunks() -> Iterator[PairChunk]:
        budget = max(1, int(PAIR_BUDGET) // BYTES_PER_PAIR_CANDIDATE)
        for lo, hi in chunk_bounds(per_agent, budget):
            cnt_flat = cnt[lo:hi].ravel()
            total = int(cnt_flat.sum())
            first = np.cumsum(cnt_flat) - cnt_flat
            a = np.repeat(k[lo:hi], per_agent[lo:hi])
            b = np.repeat(base[lo:hi].ravel() - first, cnt_flat)
            del first
            b += np.arange(total)
            dx = np.take(xs, b) - np.take(xs, a)
            dy = np.take(ys, b) - np.take(ys, a)
            if wrap:
                dx -= width * np.round(dx * (1.0 / width))
                dy -= height * np.round(dy * (1.0 / height))
            close = np.flatnonzero(dx * dx + dy * dy <= radius * radius)
            yield PairChunk(
                i=np.take(order, np.take(a, close)),
                j=np.take(order, np.take(b, close)),
                dx=np.take(dx, close),
                dy=np.take(dy, close),
                candidates=total,
            )

    return chunks()


def grid_pairs(
    points: Array, width: float, height: float, radius: float, wrap: bool
) -> tuple[np.ndarray, np.ndarray] | None:
    """Unordered pairs ``(lo, hi)`` of local rows with distance <= ``radius``
    (:func:`grid_pair_chunks` joined; None where it is)."""
    found = grid_pair_chunks(points, width, height, radius, wrap)
    if found is None:
        return None
    lo: list[np.ndarray] = []
    hi: list[np.ndarray] = []
    for chunk in found:
        lo.append(np.minimum(chunk.i, chunk.j))
        hi.append(np.maximum(chunk.i, chunk.j))
    if not lo:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    return np.concatenate(lo), np.concatenate(hi)


def stencil_offsets(n_cells: int, wrap: bool) -> np.ndarray:
    """Cell offsets along one axis that reach every cell within one cell, each once.

    -1, 0, +1; on a wrapped axis of fewer than 3 cells those would visit a cell
    twice, so the offsets are then 0..n-1 (every cell of the axis).
    """
    if wrap and n_cells < 3:
        return np.arange(n_cells)
    return np.array([-1, 0, 1])


class CellGrid:
    """Points binned into a uniform grid, for close pairs a few observers at a time.

    Cells are at least ``radius`` wide, so every point within ``radius`` of an
    observer lies in the observer's cell or one of its 8 neighbours (the full
    stencil; an axis of a wrapped world with fewer than 3 cells is covered
    whole). Unlike :func:`grid_pairs` (half stencil, each unordered pair once)
    this answers "which points are close to *these* observers", so observers
    can be taken a chunk at a time, in row order.

    The cell table has a border of ghost cells: empty on bounded worlds, on
    wrapped worlds a copy of the cell across the edge together with the shift
    (a whole width or height) that brings its points next to the observer. A
    stencil cell is then the observer's cell id plus a constant, and the
    short-way displacement a plain difference (no rounding per pair), except
    along a wrapped axis of fewer than 3 cells, which is rounded.
    """

    def __init__(
        self, points: Array, width: float, height: float, radius: float, wrap: bool
    ) -> None:
        n = points.shape[0]
        self.width, self.height, self.wrap = float(width), float(height), wrap
        self.radius = float(radius)
        nx, ny = grid_shape(width, height, radius, n)
        self.nx, self.ny = nx, ny
        self.round_x = wrap and nx < 3
        self.round_y = wrap and ny < 3
        cx, cy = self._xy(points)
        # interior ids < 65535 (grid_shape): a stable sort of uint16 is a radix sort, and
        # sorts the padded ids below in the same order
        self.order = np.argsort((cy * nx + cx).astype(np.uint16), kind="stable")
        cell = (cy + 1) * (nx + 2) + (cx + 1)
        self.xs = np.take(points[:, 0], self.order)  # coordinates in cell order: gathers stay local
        self.ys = np.take(points[:, 1], self.order)
        width_p = nx + 2
        count = np.bincount(cell, minlength=width_p * (ny + 2)).reshape(ny + 2, width_p)
        start = (np.cumsum(count) - count.ravel()).reshape(ny + 2, width_p)
        shift_x = np.zeros((ny + 2, width_p))
        shift_y = np.zeros((ny + 2, width_p))
        if wrap:  # ghost cells: the cell across the edge, and its shift
            for table in (count, start):
                table[0, :] = table[ny, :]
                table[ny + 1, :] = table[1, :]
                table[:, 0] = table[:, nx]
                table[:, nx + 1] = table[:, 1]
            if not self.round_x:
                shift_x[:, 0], shift_x[:, nx + 1] = self.width, -self.width
            if not self.round_y:
                shift_y[0, :], shift_y[ny + 1, :] = self.height, -self.height
        self.count = count.ravel()
        self.start = start.ravel()
        self.shift_x = shift_x.ravel()
        self.shift_y = shift_y.ravel()
        sx = stencil_offsets(nx, wrap)
        sy = stencil_offsets(ny, wrap)
        self.stencil = (sy[:, None] * width_p + sx[None, :]).ravel()  # row-major: y, then x

    def _xy(self, points: Array) -> tuple[np.ndarray, np.ndarray]:
        x = np.ascontiguousarray(points[:, 0])
        y = np.ascontiguousarray(points[:, 1])
        cx = np.clip((x * (self.nx / self.width)).astype(np.int64), 0, self.nx - 1)
        cy = np.clip((y * (self.ny / self.height)).astype(np.int64), 0, self.ny - 1)
        return cx, cy

    def cells(self, points: Array) -> np.ndarray:
        """Padded cell ids of ``points`` (clipped into the grid's interior)."""
        cx, cy = self._xy(points)
        return (cy + 1) * (self.nx + 2) + (cx + 1)

    def candidate_counts(self, cell: np.ndarray) -> np.ndarray:
        """Points in the stencil of each observer cell (``cell`` from :meth:`cells`)."""
        total = np.zeros(cell.shape[0], dtype=np.int64)
        for delta in self.stencil.tolist():
            total += np.take(self.count, cell + delta)
        return total

    def close_pairs(self, points: Array, cell: np.ndarray) -> np.ndarray:
        """Keys ``observer << 32 | point`` (local rows) of the pairs within ``radius``, sorted.

        ``points`` are the observers and ``cell`` their :meth:`cells`. Every
        candidate of their stencils is measured (no Python loop over observers):
        a run per observer and stencil cell, expanded with one ``np.repeat`` of
        run ids, each candidate then gathered from the cell-ordered coordinates.
        The keys come grouped by observer, so the stable sort (timsort) only
        orders each observer's run. Includes the observer itself when it is one
        of the points.
        """
        near = cell[:, None] + self.stencil  # (m, S) padded cell ids
        ref_x = np.take(self.shift_x, near)
        ref_x += np.ascontiguousarray(points[:, 0])[:, None]
        ref_y = np.take(self.shift_y, near)
        ref_y += np.ascontiguousarray(points[:, 1])[:, None]
        cnt = np.take(self.count, near).ravel()
        first = np.take(self.start, near).ravel()
        del near
        first -= np.cumsum(cnt) - cnt  # slot = first[run] + candidate number
        run = np.repeat(np.arange(cnt.size, dtype=np.int64), cnt)
        del cnt
        slot = np.take(first, run)
        del first
        slot += np.arange(slot.size)
        dx = np.take(self.xs, slot)
        dx -= np.take(ref_x.ravel(), run)
        dy = np.take(self.ys, slot)
        dy -= np.take(ref_y.ravel(), run)
        del ref_x, ref_y
        if self.round_x:
            dx -= self.width * np.round(dx * (1.0 / self.width))
        if self.round_y:
            dy -= self.height * np.round(dy * (1.0 / self.height))
        dx *= dx
        dy *= dy
        dx += dy
        del dy
        close = np.flatnonzero(dx <= self.radius * self.radius)
        del dx
        keys = np.take(run, close)
        keys //= self.stencil.size
        keys <<= 32
        keys |= np.take(self.order, np.take(slot, close))
        keys.sort(kind="stable")
        return keys
