"""Neighbour pairs, nearest agents and agent target facts, compiled.

:func:`neighbour_query` is ``Sense._compute_neighbours`` in one kernel: the
candidate rows are binned in a uniform grid (a counting sort by cell, cells at
least the padded view distance wide, so the 3 x 3 cells around an observer
hold everything it can see; an axis of a wrapped world with fewer than 3
cells is searched whole), then each observer's candidates get the exact tests
of ``Sense._seen`` (distance within its view distance, not itself, inside its
field of view) on the shortest-image offset ``pos[j] - pos[i]`` computed as
``world.spatial.displacement_columns`` does. An observer over its
``max_neighbours`` keeps its nearest (``sense.nearest_first``: equal distances
keep the lower row). Pairs come out sorted by ``(i, j)`` in the CSR layout of
``Neighbours``. The grid only chooses candidates; which pairs are kept and
their numbers depend on the exact tests alone, so they equal the NumPy path's.

An observer visits the cells within some radius of it, row of cells by row
of cells in ascending cell order (rows kept in cell order, ``sim/cell_order.py``,
then come nearly in row order), and every seen candidate is written down,
branch-free. Over its cap it keeps its nearest: the cap-th distance is found
by narrowing histograms of squared distances (:func:`_threshold`), the pairs
nearer (or as near, of a lower row) kept in the order measured, so a few
passes, and a sort of the kept only when rows came out of order (:func:`_sort`). In a crowd
where the cap binds, :func:`grid_shape` makes cells of a few points, and an
observer over its cap first visits only the cells within 1.25 times the
previous observer's cap-th distance (its neighbour in cell order, as crowded),
widening when its own cap-th pair is not surely inside (a cell outside is
wholly farther). So a cap costs less than no cap (issue 25:
``benchmarks/results_dense.md``), where the heap of the nearest this replaced
cost more than measuring everything (issue 23 had it, after a sort of every
pair seen took minutes at 200,000 agents seeing ~3,500 each).

Coordinates are copied into cell order once per query, so an observer's
candidates are read from contiguous memory.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from behaviortk.format.cells import fit_cells
from behaviortk.jit.compile import inline, kernel
from behaviortk.vec import coincident, coincident_push, separation_term
from behaviortk.world.spatial import shortest, shortest_near

#: Cells per candidate point at most (and 16 at least): bounds the grid's memory.
CELLS_PER_POINT = 4

#: In a dense crowd a cell holds about an observer's cap over this many points on average
#: (``grid_shape``): 8 to 32 measured alike at 5,000 and 200,000 prey of evade_or_flock in
#: 800 x 600 (cap 64), 4 (cells at least the radius wide at 5,000) a quarter slower.
CAP_PER_CELL = 8

#: A fine grid's cells are at least the radius over this wide: an observer's stencil spans at
#: most 33 x 33 cells (its count, and the room for the pairs, are summed over them).
MAX_REACH = 16


@inline
def separation_pair(i: int, j: int, dx: float, dy: float) -> tuple[float, float]:
    """Separation's term of pair ``(i, j)`` with offset ``(dx, dy)``, as
    ``steering.kernels.separation_force`` takes it: coincident pairs pushed apart."""
    if coincident(dx, dy):
        return coincident_push(i, j)
    return separation_term(dx, dy)


@inline
def cell_of(x: float, size: float, n_cells: int, wrap: bool) -> int:
    """The cell column (or row) of coordinate ``x``: folded on wrapped worlds, clamped inside."""
    if wrap and not (0.0 <= x < size):
        x = x - size * math.floor(x / size)
    c = int(x * (n_cells / size)) if math.isfinite(x) else 0
    if c < 0:
        return 0
    if c >= n_cells:
        return n_cells - 1
    return c


def grid_shape(
    width: float, height: float, radius: float, points: int, cap: int | None = None
) -> tuple[int, int, int, int]:
    """``(nx, ny, reach_x, reach_y)``: cells per axis, each at least ``radius`` wide (at most
    ``CELLS_PER_POINT`` per point, 16 at least), and how many cells an observer looks
    across on each side (1: its 3 x 3 cells).

    Half-radius cells with a 5 x 5 stencil measure fewer candidates but cost
    more than they save, in sparse and dense crowds alike (measured at 50,000
    agents of evade_or_flock and flocking_lj_obstacles). Except when observers
    keep at most ``cap`` and the crowd is so dense that a cell holding
    ``cap / CAP_PER_CELL`` points on average is at most half the radius wide:
    cells are then that wide, so an observer over its cap visits a few cells
    close around it (:func:`neighbour_query`; at 200,000 agents of
    evade_or_flock: ~200 candidates measured per observer instead of ~14,000).
    """
    max_cells = max(16, CELLS_PER_POINT * points)
    side = radius
    if cap is not None and points > 0 and math.isfinite(radius):
        dense = math.sqrt(max(cap, 1) / CAP_PER_CELL * width * height / points)
        if dense <= 0.5 * radius:
            side = max(dense, radius / MAX_REACH)
    side = max(side, math.sqrt(width * height / max_cells))
    nx, ny = fit_cells(max(1, int(width // side)), max(1, int(height // side)), max_cells)
    reach_x = max(1, math.ceil(radius / (width / nx)))
    reach_y = max(1, math.ceil(radius / (height / ny)))
    return nx, ny, reach_x, reach_y


@kernel
def bin_points(
    pos: np.ndarray,
    lo: int,
    hi: int,
    width: float,
    height: float,
    wrap: bool,
    nx: int,
    ny: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``lo:hi`` by cell (stable counting sort): ``(start, rows, xs, ys)``.

    The rows of cell ``c`` are ``rows[start[c]:start[c + 1]]``, ascending;
    ``xs``/``ys`` are their coordinates in that order.
    """
    m = hi - lo
    cell = np.empty(m, dtype=np.int64)
    start = np.zeros(nx * ny + 1, dtype=np.int64)
    for k in range(m):
        cx = cell_of(pos[lo + k, 0], width, nx, wrap)
        c = cell_of(pos[lo + k, 1], height, ny, wrap) * nx + cx
        cell[k] = c
        start[c + 1] += 1
    for c in range(nx * ny):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    rows = np.empty(m, dtype=np.int64)
    xs = np.empty(m)
    ys = np.empty(m)
    for k in range(m):
        slot = fill[cell[k]]
        fill[cell[k]] += 1
        rows[slot] = lo + k
        xs[slot] = pos[lo + k, 0]
        ys[slot] = pos[lo + k, 1]
    return start, rows, xs, ys


@inline
def _stencil(c: int, n_cells: int, wrap: bool, reach: int) -> tuple[int, int]:
    """First and last (inclusive, possibly beyond the grid when wrapped) cell to visit:
    ``reach`` cells on each side, the whole axis of a wrapped world too narrow for that."""
    if wrap and n_cells < 2 * reach + 1:
        return 0, n_cells - 1
    if wrap:
        return c - reach, c + reach
    return max(c - reach, 0), min(c + reach, n_cells - 1)


@inline
def wrapped(c: int, n_cells: int) -> int:
    if c < 0:
        return c + n_cells
    if c >= n_cells:
        return c - n_cells
    return c


@inline
def _measure(
    s: int,
    rows: np.ndarray,
    xs: np.ndarray,
    ys: np.ndarray,
    i: int,
    xi: float,
    yi: float,
    hx: float,
    hy: float,
    r2: float,
    cl: float,
    test_fov: bool,
    overlap: bool,
    width: float,
    height: float,
    wrap: bool,
) -> tuple[int, float, float, float, bool]:
    """Candidate ``s`` seen from observer ``i``: ``(row, dx, dy, distance, seen)``, the exact
    tests of ``Sense._seen`` (within the view, not itself, inside the field of view)."""  # fmt: skip
    j = rows[s]
    dx = shortest_near(xs[s] - xi, width, wrap)
    dy = shortest_near(ys[s] - yi, height, wrap)
    d2 = dx * dx + dy * dy
    dist = math.sqrt(d2)
    seen = (d2 <= r2) & ((j != i) | (not overlap))
    seen &= (hx * dx + hy * dy >= dist * cl) | (not test_fov)
    return j, dx, dy, dist, seen


@inline
def cell_gap(x: float, cell: int, target: int, side: float, whole: bool) -> float:
    """How far along one axis coordinate ``x`` (in cell ``cell``) is from every point of
    the stencil column ``target`` (unwrapped: -1 is the column left of 0) at least;
    0 for its own column or an axis searched whole."""
    if whole or target == cell:
        return 0.0
    if target > cell:
        return max(target * side - x, 0.0)
    return max(x - (target + 1) * side, 0.0)


@inline
def _span(
    f: float, c: int, n_cells: int, size: float, rho: float, reach: int, wrap: bool
) -> tuple[int, int]:
    """First and last cell (inclusive, unwrapped) along one axis within ``rho`` of coordinate
    ``f`` (in cell ``c``), inside the stencil's ``reach``: every cell whose :func:`cell_gap` is at
    most ``rho``, the own cell always (``f`` may lie outside a bounded world)."""
    lo, hi = _stencil(c, n_cells, wrap, reach)
    if wrap and n_cells < 2 * reach + 1:
        return lo, hi
    scale = n_cells / size
    if rho * scale < reach + 1:
        lo = max(lo, min(c, math.floor((f - rho) * scale)))
        hi = min(hi, max(c, math.floor((f + rho) * scale)))
    return lo, hi


@inline
def ascending_ranges(lo: int, hi: int, n_cells: int) -> tuple[int, int, int, int]:
    """Unwrapped cells ``lo..hi`` as two ranges (inclusive) whose wrapped ids ascend: the
    cells past the world's far edge (ids from 0) first."""
    if lo < 0:
        return 0, hi, lo, -1
    if hi >= n_cells:
        return n_cells, hi, lo, n_cells - 1
    return lo, hi, 0, -1


@inline
def _kth(a: np.ndarray, n: int, kth: int) -> Any:
    """The ``kth`` smallest (0-based) of ``a[:n]``, reordering ``a`` (Hoare's selection)."""
    lo, hi = 0, n - 1
    while lo < hi:
        x, y, z = a[lo], a[(lo + hi) >> 1], a[hi]
        pivot = max(min(x, y), min(max(x, y), z))  # the median of three
        i, j = lo, hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if kth <= j:
            hi = j
        elif kth >= i:
            lo = i
        else:
            return a[kth]
    return a[kth]


@inline
def _window(
    runs: np.ndarray,
    start: np.ndarray,
    fx: float,
    fy: float,
    cx: int,
    cy: int,
    rho: float,
    nx: int,
    ny: int,
    width: float,
    height: float,
    rx: int,
    ry: int,
    wrap: bool,
) -> int:
    """The binned rows of the cells within ``rho`` of ``(fx, fy)`` (in cell ``(cx, cy)``), as
    runs ``runs[q] = (first, stop)`` in ascending cell order: a row of cells is consecutive
    (two runs where it wraps). Returns how many runs."""
    side_y = height / ny
    whole_y = wrap and ny < 2 * ry + 1
    m = 0
    y0, y1 = _span(fy, cy, ny, height, rho, ry, wrap)
    ya, yb, yc, yd = ascending_ranges(y0, y1, ny)
    for part in range(2):
        for gy in range(ya, yb + 1) if part == 0 else range(yc, yd + 1):
            ey = cell_gap(fy, cy, gy, side_y, whole_y)
            if ey > rho:
                continue
            row = wrapped(gy, ny) * nx
            x0, x1 = _span(fx, cx, nx, width, math.sqrt(rho * rho - ey * ey), rx, wrap)
            xa, xb, xc, xd = ascending_ranges(x0, x1, nx)
            for run in range(2):
                lo, hi = (xa, xb) if run == 0 else (xc, xd)
                if hi >= lo:
                    runs[m, 0] = start[row + wrapped(lo, nx)]
                    runs[m, 1] = start[row + wrapped(hi, nx) + 1]
                    m += 1
    return m


#: An observer over its cap first measures the cells within this times the distance of the
#: previous observer's farthest kept pair (rows in cell order: its neighbour, as crowded).
GUESS = 1.25

#: ... unless those cells would cover more than this share of its whole view's (the cells
#: reach a cell side beyond): then a miss would cost more than the guess saves.
SAVES = 0.5


@inline
def _wider(rho: float, short: float, least: float, reach: float) -> float:
    """The next radius of a window that held ``short`` times too few: its area times that
    (and :data:`GUESS` again), 1.5 times at least and ``least`` at least, or the whole
    ``reach`` beyond four times."""
    grow = math.sqrt(short) * GUESS
    return reach if grow > 4.0 else min(max(max(grow, 1.5) * rho, least), reach)


#: Buckets of the histogram :func:`_threshold` narrows the cap-th distance with.
BUCKETS = 64

#: Candidates :func:`_threshold` ranks directly (all pairs compared: fewer comparisons than
#: a histogram's passes cost, at 24 and below), and how many it ranks at most; more left
#: in one bucket (equal distances, coincident agents) go to :func:`_kth`.
FEW = 24
RANKED = 64


@inline
def _ranked(dist: np.ndarray, rows: np.ndarray, c: int, kth: int) -> tuple[float, int]:
    """The ``(distance, row)`` of rank ``kth`` (0-based, by distance then row) among
    ``dist[:c]``, ``rows[:c]``: each one's rank counted over all of them, branch-free."""
    for a in range(c):
        da, ja = dist[a], rows[a]
        rank = 0
        for b in range(c):
            rank += (dist[b] < da) | ((dist[b] == da) & (rows[b] < ja))
        if rank == kth:
            return da, ja
    return np.inf, -1


@inline
def _threshold(
    cj: np.ndarray,
    cdist: np.ndarray,
    n: int,
    k: int,
    top: float,
    counts: np.ndarray,
    bucket: np.ndarray,
    pool: np.ndarray,
    scratch: np.ndarray,
) -> tuple[float, int]:
    """``(t, jt)``: the ``k`` nearest of the ``n`` seen candidates (``0 < k < n``) are those
    nearer than ``t`` and those at ``t`` of row at most ``jt`` (equal distances keep the
    lower rows, as ``sense.nearest_first``).

    A histogram of squared distances over ``[0, top^2]`` (farther ones in the last bucket)
    finds the bucket holding the ``k``-th; that bucket alone is bucketed again over its own
    range, until a few candidates are left, which :func:`_ranked` ranks. Every
    bucket is monotone in the distance, so candidates of lower buckets are nearer and
    those of higher ones farther: a few passes without a branch on the data, where a
    selection over all of them costs several times more (issue 25).
    """
    kth = k - 1
    below = 0  # candidates of the buckets before the pool's: all nearer than t
    c = n
    lo = 0.0
    hi = top * top
    level = 0
    while c > FEW and hi > lo and level < 4:
        scale = BUCKETS / (hi - lo)
        counts[:] = 0
        for q in range(c):
            d = cdist[pool[q] if level else q]
            b = int(min(max((d * d - lo) * scale, 0.0), BUCKETS - 1.0))
            bucket[q] = b
            counts[b] += 1
        b = 0
        while counts[b] <= kth:
            kth -= counts[b]
            below += counts[b]
            b += 1
        m = 0
        lo = np.inf
        hi = 0.0
        for q in range(c):
            s = pool[q] if level else q
            d2 = cdist[s] * cdist[s]
            inside = bucket[q] == b
            pool[m] = s
            lo = min(lo, d2) if inside else lo
            hi = max(hi, d2) if inside else hi
            m += 1 if inside else 0
        c = m
        level += 1
    for q in range(c):
        s = pool[q] if level else q
        scratch[q] = cdist[s]
        bucket[q] = cj[s]
    if c <= RANKED:
        return _ranked(scratch, bucket, c, kth)
    # many as near as each other (coincident agents): a selection, then the ties' rows
    t = _kth(scratch, c, kth)
    less = below
    tied = 0
    for q in range(c):
        s = pool[q] if level else q
        less += 1 if cdist[s] < t else 0
        bucket[tied] = cj[s]
        tied += 1 if cdist[s] == t else 0
    if tied == k - less:
        return t, np.iinfo(np.int64).max
    return t, _kth(bucket, tied, k - less - 1)


@inline
def _more_room(need: int, done: int, of: int) -> int:
    """The pairs' next room when ``need`` no longer fit after ``done`` of ``of`` observers: as
    many per observer as so far, for all of them, an eighth more (a pre-pass counting every
    observer's candidates cost a tenth of the query of the thinkers alone)."""
    return max(need + 16, need * of // done + need * of // (8 * done))


@inline
def _longer(a: np.ndarray, kept: int, size: int) -> np.ndarray:
    """``a``'s first ``kept`` entries in a new array of ``size``. Copied entry by entry: a
    slice assignment costs numba seconds of cold compile (its shape check's error)."""
    out = np.empty(size, dtype=a.dtype)
    for q in range(kept):
        out[q] = a[q]
    return out


#: Shell sort's gaps (Ciura's, 2001), the largest first; those below the count sort it.
GAPS = (701, 301, 132, 57, 23, 10, 4, 1)


@inline
def _sort(keys: np.ndarray, n: int) -> None:
    """``keys[:n]`` ascending, in place: insertion sort (rows kept in cell order come nearly
    sorted), over gaps first past 64 keys (Shell's sort). Not numba's ``ndarray.sort``: its
    quicksort costs about a second of the neighbour query's cold compile (issue 25)."""
    for gap in GAPS:
        if gap >= n or (gap > 1 and n <= 64):
            continue
        for q in range(gap, n):
            key = keys[q]
            b = q
            while b >= gap and keys[b - gap] > key:
                keys[b] = keys[b - gap]
                b -= gap
            keys[b] = key


@kernel
def observer_span(
    view: np.ndarray, fov: np.ndarray, cap: np.ndarray, lo: int, hi: int
) -> tuple[float, float, float, int]:
    """``(max view, min fov, max fov, max cap)`` of rows ``lo:hi`` (``hi > lo``) in one pass,
    NaN as NumPy's ``max`` and ``min`` give it (what the neighbour query's grid and field
    of view are set from)."""
    v_max, f_min, f_max, c_max = view[lo], fov[lo], fov[lo], cap[lo]
    v_nan, f_nan = False, False
    for r in range(lo, hi):
        v, f = view[r], fov[r]
        v_nan |= v != v
        f_nan |= f != f
        v_max = max(v_max, v)
        f_min = min(f_min, f)
        f_max = max(f_max, f)
        c_max = max(c_max, cap[r])
    if v_nan:
        v_max = np.nan
    if f_nan:
        f_min = f_max = np.nan
    return v_max, f_min, f_max, c_max


NO_PAIRS, IDENTITIES, PAIRS = 0, 1, 2
"""What :func:`neighbour_query` writes of the pairs: none, their ``j`` alone, all of them."""

SUMS = 6
"""Per-observer sums of :func:`neighbour_query`: separation (x, y), neighbour velocity
(x, y) and offset to the neighbours (x, y), each over the kept pairs in row order."""


@kernel
def neighbour_query(
    pos: np.ndarray,
    vel: np.ndarray,
    heading: np.ndarray,
    view: np.ndarray,
    cos_limit: np.ndarray,
    all_round: np.ndarray,
    first: int,
    shared: bool,
    cap: np.ndarray,
    observers: np.ndarray,
    b_lo: int,
    b_hi: int,
    width: float,
    height: float,
    wrap: bool,
    fov: bool,
    overlap: bool,
    nx: int,
    ny: int,
    rx: int,
    ry: int,
    start: np.ndarray,
    rows: np.ndarray,
    xs: np.ndarray,
    ys: np.ndarray,
    want_pairs: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Neighbours of the sorted rows ``observers`` (a group's rows, or the ones that think
    this tick: ``sim/think.py``) among rows ``b_lo:b_hi``.

    Returns ``(offsets, sums, i, j, d, dist)``: the CSR offsets (per observer
    ``k``, row ``observers[k]``), the flocking sums of every observer (``SUMS`` columns, in
    the order and with the rules of ``steering.kernels``: Buckland's separation
    terms, ``flock_loops.separation_pair``, velocities,
    offsets) and the pairs themselves: all of them with ``want_pairs`` ``PAIRS``, only ``j``
    with ``IDENTITIES`` (who they are: what think-rate LOD holds), else none (empty).

    ``view`` and ``cap`` are per row (``agents.view_distance``, ``max_neighbours``);
    ``cos_limit`` (``cos(fov / 2)`` minus the tolerance) and ``all_round`` (fov covers
    360 degrees) per row from row ``first``, or with ``shared`` one value for every
    observer. With ``fov`` False no observer has a field-of-view test. ``start, rows, xs,
    ys``: rows ``b_lo:b_hi`` binned on the ``nx`` x ``ny`` grid (:func:`bin_points`). Observers are taken in row order; rows
    kept in cell order (``order.py``) make consecutive observers share cells.
    """
    n_a = observers.shape[0]
    every = want_pairs == PAIRS
    size = n_a + 16 if want_pairs != NO_PAIRS else 0  # the room, grown as needed (_more_room)
    out_j = np.empty(size, dtype=np.int64)
    size = size if every else 0
    out_i = np.empty(size, dtype=np.int64)
    out_d = np.empty((size, 2))
    out_dist = np.empty(size)
    offsets = np.zeros(n_a + 1, dtype=np.int64)
    sums = np.empty((n_a, SUMS))
    fullest = 0  # most points in one cell: the stencil holds at most (cells visited) x that
    for c in range(nx * ny):
        fullest = max(fullest, start[c + 1] - start[c])
    room = min(nx, 2 * rx + 1) * min(ny, 2 * ry + 1)
    room = min(room * fullest, b_hi - b_lo)
    cj = np.empty(room, dtype=np.int64)  # an observer's seen candidates, by slot
    cdx = np.empty(room)
    cdy = np.empty(room)
    cdist = np.empty(room)
    counts = np.empty(BUCKETS, dtype=np.int64)  # the selection's work arrays
    bucket = np.empty(room, dtype=np.int64)
    pool = np.empty(room, dtype=np.int64)
    scratch = np.empty(room)
    kept = np.empty(room, dtype=np.int64)  # the kept slots, in the order measured
    keys = np.empty(room, dtype=np.int64)  # row << shift | slot: the kept pairs in row order
    shift = 0
    while (1 << shift) < room:
        shift += 1
    mask = (1 << shift) - 1
    runs = np.empty((2 * min(ny, 2 * ry + 1), 2), dtype=np.int64)  # a window's rows
    side_x = width / nx
    side_y = height / ny
    diagonal = math.sqrt(side_x * side_x + side_y * side_y)
    longest = max(side_x, side_y)
    finest = 0.5 * min(side_x, side_y)  # a window widens to half a cell at least
    guess = np.inf  # the farthest kept pair of the previous observer over its cap
    p = 0
    for k in range(n_a):
        i = observers[k]
        xi = pos[i, 0]
        yi = pos[i, 1]
        hx = heading[i, 0]
        hy = heading[i, 1]
        r2 = view[i] * view[i]
        f = 0 if shared else i - first
        cl = cos_limit[f]
        test_fov = fov and not all_round[f]
        limit = max(cap[i], 0)
        cx = cell_of(xi, width, nx, wrap)
        cy = cell_of(yi, height, ny, wrap)
        fx = xi - width * math.floor(xi / width) if wrap else xi  # where cell_of put it
        fy = yi - height * math.floor(yi / height) if wrap else yi
        margin = 1e-9 * (width + height + abs(fx) + abs(fy))  # over any rounding of bins
        reach = view[i] * (1.0 + 1e-9) + 1e-9  # cells farther than this hold nobody seen
        rho = min(GUESS * guess + 2.0 * margin, reach)
        if (rho + longest) * (rho + longest) > SAVES * (reach + longest) * (reach + longest):
            rho = reach
        t = np.inf
        jt = np.iinfo(np.int64).max
        n = 0
        ordered = True
        while limit > 0:
            m = _window(runs, start, fx, fy, cx, cy, rho, nx, ny, width, height, rx, ry, wrap)
            if rho < reach:  # too few points there to hold the cap: wider, unmeasured
                held = 0
                for q in range(m):
                    held += runs[q, 1] - runs[q, 0]
                if held < 2 * limit:
                    rho = _wider(rho, 2.0 * limit / max(held, 1), finest, reach)
                    continue
            # the runs in ascending cell order: rows kept in cell order then come in row
            # order; every seen candidate written, branch-free
            n = 0
            last = -1
            ordered = True
            for q in range(m):
                for s in range(runs[q, 0], runs[q, 1]):
                    j, dx, dy, dist, seen = _measure(
                        s, rows, xs, ys, i, xi, yi, hx, hy, r2, cl, test_fov, overlap,
                        width, height, wrap,
                    )  # fmt: skip
                    cj[n], cdx[n], cdy[n], cdist[n] = j, dx, dy, dist
                    ordered &= (j > last) | (not seen)
                    last = j if seen else last
                    n += 1 if seen else 0
            covered = rho >= reach
            if n > limit:
                top = min(rho + diagonal, reach)
                t, jt = _threshold(cj, cdist, n, limit, top, counts, bucket, pool, scratch)
                if covered or t < rho - margin:
                    break
                rho = min(t + 4.0 * margin, reach)  # the cap-th is within t: one more try
            elif covered:
                break
            else:  # fewer than the cap so near
                rho = _wider(rho, (limit + 1.0) / max(n, 1), finest, reach)
        guess = t if n > limit else np.inf
        if n > limit:  # the kept: nearer than t, or at t and not above row jt
            m = 0
            last = -1
            ordered = True
            for q in range(n):
                j = cj[q]
                keep = (cdist[q] < t) | ((cdist[q] == t) & (j <= jt))
                kept[m] = q
                ordered &= (j > last) | (not keep)
                last = j if keep else last
                m += 1 if keep else 0
            n = m
        else:
            for q in range(n):
                kept[q] = q
        if not ordered:  # the kept pairs' slots in row order (rows are unique)
            for q in range(n):
                keys[q] = (cj[kept[q]] << shift) | kept[q]
            _sort(keys, n)
            for q in range(n):
                kept[q] = keys[q] & mask
        if want_pairs != NO_PAIRS and p + n > out_j.shape[0]:
            size = _more_room(p + n, k + 1, n_a)
            out_j = _longer(out_j, p, size)
            size = size if every else 0
            out_i = _longer(out_i, p if every else 0, size)
            wider = np.empty((size, 2))
            for q in range(p if every else 0):  # not a slice assignment: see _longer
                wider[q, 0] = out_d[q, 0]
                wider[q, 1] = out_d[q, 1]
            out_d = wider
            out_dist = _longer(out_dist, p if every else 0, size)
        sx = sy = ax = ay = ox = oy = 0.0
        for q in range(n):
            slot = kept[q]
            j = cj[slot]
            dx = cdx[slot]
            dy = cdy[slot]
            if want_pairs != NO_PAIRS:
                out_j[p + q] = j
            if every:
                out_i[p + q] = i
                out_d[p + q, 0] = dx
                out_d[p + q, 1] = dy
                out_dist[p + q] = cdist[slot]
            tx, ty = separation_pair(i, j, dx, dy)
            sx += tx
            sy += ty
            ax += vel[j, 0]
            ay += vel[j, 1]
            ox += dx
            oy += dy
        p += n
        offsets[k + 1] = p
        sums[k, 0] = sx
        sums[k, 1] = sy
        sums[k, 2] = ax
        sums[k, 3] = ay
        sums[k, 4] = ox
        sums[k, 5] = oy
    m = p if every else 0
    p = 0 if want_pairs == NO_PAIRS else p
    return offsets, sums, out_i[:m], out_j[:p], out_d[:m], out_dist[:m]


@kernel
def nearest_small(
    pos: np.ndarray,
    observers: np.ndarray,
    b_lo: int,
    b_hi: int,
    radius: float,
    width: float,
    height: float,
    wrap: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """``SpatialIndex._nearest_small``: the closest row of ``b`` (not itself) per row of the
    sorted ``observers`` (a group's rows, or those that think this tick).

    Brute force over the smaller side, with its tie rules: looping over ``b``
    the first (lowest) ``b`` row at the smallest distance wins, looping over
    ``a`` the first minimum of each row. Returns ``(row or -1, distance or inf)``.
    """
    n_a = observers.shape[0]
    n_b = b_hi - b_lo
    best = np.empty(n_a)
    pick = np.empty(n_a, dtype=np.int64)
    # no row is in both: no "not oneself" test
    apart = n_a == 0 or observers[n_a - 1] < b_lo or b_hi <= observers[0]
    if n_b <= n_a:  # a few b rows: strict < keeps the lowest one
        for r in range(n_a):
            i = observers[r]
            xi, yi = pos[i, 0], pos[i, 1]
            b2 = np.inf
            bj = -1
            for j in range(b_lo, b_hi):
                dx = shortest_near(pos[j, 0] - xi, width, wrap)
                dy = shortest_near(pos[j, 1] - yi, height, wrap)
                d2 = dx * dx + dy * dy
                if not apart:
                    d2 = np.inf if i == j else d2
                better = d2 < b2
                b2 = d2 if better else b2
                bj = j if better else bj
            best[r] = b2
            pick[r] = bj
    else:  # many b rows: every distance (vectorises), then the first smallest
        d2s = np.empty(n_b)
        for r in range(n_a):
            i = observers[r]
            xi, yi = pos[i, 0], pos[i, 1]
            b2 = np.inf
            for q in range(n_b):
                j = b_lo + q
                dx = shortest_near(pos[j, 0] - xi, width, wrap)
                dy = shortest_near(pos[j, 1] - yi, height, wrap)
                d2 = dx * dx + dy * dy
                if not apart:
                    d2 = np.inf if i == j else d2
                d2s[q] = d2
                b2 = min(b2, d2)
            q = 0
            while d2s[q] != b2:
                q += 1
            best[r] = b2
            pick[r] = b_lo + q
    index = np.empty(n_a, dtype=np.int64)
    dist = np.empty(n_a)
    for r in range(n_a):
        dd = math.sqrt(best[r])
        found = math.isfinite(dd) and dd <= radius
        index[r] = pick[r] if found else -1
        dist[r] = dd if found else np.inf
    return index, dist


@kernel
def agent_facts(
    own: np.ndarray,
    pos: np.ndarray,
    vel: np.ndarray,
    agent: np.ndarray,
    width: float,
    height: float,
    wrap: bool,
    only: np.ndarray,
    every: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``Sense.agent_facts``: agents ``agent`` (global rows, -1: none) seen from positions
    ``own``; unless ``every``, of the rows ``only`` alone, ``agent`` given for them (both in
    their order)."""
    m = own.shape[0] if every else only.shape[0]
    tpos = np.empty((m, 2))  # every entry written below: no zeroing pass first
    tvel = np.empty((m, 2))
    valid = np.empty(m, dtype=np.bool_)
    out = np.empty(m, dtype=np.int64)
    for k in range(m):
        r = k if every else only[k]
        a = agent[k]
        if a < 0:
            tpos[k, 0] = tpos[k, 1] = tvel[k, 0] = tvel[k, 1] = 0.0
            valid[k] = False
            out[k] = -1
            continue
        ox, oy = own[r, 0], own[r, 1]
        tpos[k, 0] = ox + shortest(pos[a, 0] - ox, width, wrap)
        tpos[k, 1] = oy + shortest(pos[a, 1] - oy, height, wrap)
        tvel[k, 0] = vel[a, 0]
        tvel[k, 1] = vel[a, 1]
        valid[k] = True
        out[k] = a
    return tpos, tvel, out, valid
