"""The nearest agent of a large group, compiled: the group binned once, rings of cells.

``Sense.nearest`` and ``Sense.nearest_visible`` when the group searched is large (95,238
prey each looking for the nearest of 4,762 predators: issue 25). The group's rows are
binned in a grid of about ``PER_CELL`` of them a cell (``query_loops.bin_points``); an
observer measures rings of cells around its own, nearest first, skipping a cell wholly
farther than what it already holds and stopping at the first ring that is.

The answers are brute force's, bit for bit: each candidate's distance is computed as
the reference computes it, and the rings only decide which candidates are measured
(any left out is provably farther, with a margin over rounding).

- :func:`nearest_grid`: the smallest ``(d^2, row)`` (equal distances: the lower row)
  over the group, never oneself, found when ``sqrt(d^2) <= radius``, the offset taken
  as ``SpatialIndex._nearest_small`` and ``query_loops.nearest_small`` take it;
- :func:`visible_grid`: ``world/visible_nearest.py``'s answer: the nearest (then lowest)
  row the observer can see, the distance that of ``Sense.agent_facts`` (``own +
  displacement``), within its reach and field of view (``sight.in_view_columns``) and,
  in that order, the first whose line of sight is clear (``sight_loops.blocked``).
"""

from __future__ import annotations

import math

import numpy as np

from behaviortk.format.cells import grid_cells
from behaviortk.jit.compile import inline_ir, kernel
from behaviortk.sense.query_loops import ascending_ranges, bin_points, cell_gap, cell_of, wrapped
from behaviortk.vec import EPS
from behaviortk.world.sight_loops import blocked
from behaviortk.world.spatial import shortest, shortest_near

#: Rows of the searched group per cell on average: an observer finds its nearest within a
#: ring or two of cells (9 to 25 of them, a few dozen candidates).
PER_CELL = 1


def grid_shape(width: float, height: float, points: int) -> tuple[int, int]:
    """Cells per axis for ``points`` rows of the searched group: about ``PER_CELL`` a cell."""
    return grid_cells(width, height, 0.0, max(1, points // PER_CELL))


@inline_ir
def _axis_gap(f: float, c: int, u: int, n_cells: int, side: float, wrap: bool) -> float:
    """How far coordinate ``f`` (in cell ``c``) is from cell ``c + u`` along one axis at
    least: on a wrapped axis, from the nearer of its two images."""
    g = cell_gap(f, c, c + u, side, False)
    if wrap and u != 0:
        g = min(g, cell_gap(f, c, c + u - n_cells if u > 0 else c + u + n_cells, side, False))
    return g


@inline_ir
def _offsets(c: int, n_cells: int, wrap: bool) -> tuple[int, int]:
    """The cell offsets along one axis around cell ``c`` that reach every cell once:
    ``-(n - 1) // 2`` to ``n // 2`` on a wrapped axis, to the grid's edges otherwise."""
    if wrap:
        return -((n_cells - 1) // 2), n_cells // 2
    return -c, n_cells - 1 - c


@inline_ir
def _block(
    runs: np.ndarray, start: np.ndarray, cx: int, cy: int, nx: int, ny: int, wrap: bool
) -> int:
    """Rings 0 and 1 around ``(cx, cy)`` (its 3 x 3 cells) as runs of the binned rows,
    ``runs[q] = (first, stop)``: each row of cells is consecutive (two runs where it
    wraps). Returns how many."""
    xlo, xhi = _offsets(cx, nx, wrap)
    ylo, yhi = _offsets(cy, ny, wrap)
    xa, xb, xc, xd = ascending_ranges(cx + max(-1, xlo), cx + min(1, xhi), nx)
    m = 0
    for uy in range(max(-1, ylo), min(1, yhi) + 1):
        row = wrapped(cy + uy, ny) * nx
        for part in range(2):
            lo, hi = (xa, xb) if part == 0 else (xc, xd)
            if hi >= lo:
                runs[m, 0] = start[row + wrapped(lo, nx)]
                runs[m, 1] = start[row + wrapped(hi, nx) + 1]
                m += 1
    return m


@inline_ir
def _last_ring(cx: int, cy: int, nx: int, ny: int, wrap: bool) -> int:
    """The farthest ring around cell ``(cx, cy)`` that holds a cell of the grid."""
    if wrap:
        return max(nx // 2, ny // 2)
    return max(cx, nx - 1 - cx, cy, ny - 1 - cy)


@inline_ir
def _ring(
    cells: np.ndarray,
    gaps: np.ndarray,
    ring: int,
    cx: int,
    cy: int,
    fx: float,
    fy: float,
    nx: int,
    ny: int,
    side_x: float,
    side_y: float,
    wrap: bool,
) -> int:
    """The cells ``ring`` cells away from ``(cx, cy)`` (Chebyshev), into ``cells``, and how
    far each is from ``(fx, fy)`` at least, into ``gaps``; returns how many. Over all rings
    each cell of the grid comes once (on a wrapped axis the offsets run from
    ``-(n - 1) // 2`` to ``n // 2``), and every cell of ring ``r + 1`` is at least
    ``r`` times the shorter side away."""
    xlo, xhi = _offsets(cx, nx, wrap)
    ylo, yhi = _offsets(cy, ny, wrap)
    m = 0
    for uy in range(max(-ring, ylo), min(ring, yhi) + 1):
        edge = uy == -ring or uy == ring  # a whole row of the ring, else its two ends
        ey = _axis_gap(fy, cy, uy, ny, side_y, wrap)
        row = wrapped(cy + uy, ny) * nx
        ux = max(-ring, xlo) if edge else -ring
        while ux <= min(ring, xhi):
            this = ux
            ux += 1 if edge else 2 * ring
            if this < xlo:
                continue
            ex = _axis_gap(fx, cx, this, nx, side_x, wrap)
            cells[m] = row + wrapped(cx + this, nx)
            gaps[m] = math.sqrt(ex * ex + ey * ey)
            m += 1
    return m


@inline_ir
def _folded(x: float, size: float, wrap: bool) -> float:
    """Where ``cell_of`` puts coordinate ``x``: folded into the world when it wraps."""
    if wrap and not (0.0 <= x < size):
        return x - size * math.floor(x / size)
    return x


@kernel
def nearest_grid(
    pos: np.ndarray,
    observers: np.ndarray,
    b_lo: int,
    b_hi: int,
    radius: float,
    width: float,
    height: float,
    wrap: bool,
    nx: int,
    ny: int,
    start: np.ndarray,
    rows: np.ndarray,
    xs: np.ndarray,
    ys: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """For each of the sorted rows ``observers`` (a group's, or those that think this tick):
    its nearest row of ``b`` (not itself) within ``radius``.

    Returns ``(row or -1, distance or inf)``, the answer of ``query_loops.nearest_small``
    (and ``SpatialIndex.nearest``): the smallest ``(d^2, row)``, found when ``sqrt(d^2)
    <= radius``. ``start, rows, xs, ys``: ``b`` binned on an ``nx`` x ``ny`` grid
    (``query_loops.bin_points``; :func:`grid_shape`, or the neighbour query's: any grid).
    """
    n_a = observers.shape[0]
    side_x, side_y = width / nx, height / ny
    near = min(side_x, side_y)
    # no row is in both: no "not oneself" test
    apart = n_a == 0 or observers[n_a - 1] < b_lo or b_hi <= observers[0]
    most = 8 * max(nx, ny) + 1
    cells = np.empty(most, dtype=np.int64)
    gaps = np.empty(most)
    runs = np.empty((most, 2), dtype=np.int64)
    index = np.empty(n_a, dtype=np.int64)
    dist = np.empty(n_a)
    for r in range(n_a):
        i = observers[r]
        xi, yi = pos[i, 0], pos[i, 1]
        cx, cy = cell_of(xi, width, nx, wrap), cell_of(yi, height, ny, wrap)
        fx, fy = _folded(xi, width, wrap), _folded(yi, height, wrap)
        margin = 1e-9 * (width + height + abs(fx) + abs(fy))  # over any rounding of bins
        b2 = np.inf
        bj = -1
        for ring in range(1, max(_last_ring(cx, cy, nx, ny, wrap), 1) + 1):
            far = min(math.sqrt(b2), radius)  # a candidate farther than this cannot win
            if ring > 1 and (ring - 1) * near - margin > far:
                break
            if ring == 1:  # rings 0 and 1: the 3 x 3 cells' runs
                m = _block(runs, start, cx, cy, nx, ny, wrap)
            else:  # cells of the ring, those wholly farther than ``far`` left out
                m = 0
                for q in range(
                    _ring(cells, gaps, ring, cx, cy, fx, fy, nx, ny, side_x, side_y, wrap)
                ):
                    runs[m, 0] = start[cells[q]]
                    runs[m, 1] = start[cells[q] + 1]
                    m += 1 if gaps[q] - margin <= far else 0
            for q in range(m):
                for s in range(runs[q, 0], runs[q, 1]):
                    j = rows[s]
                    dx = shortest_near(xs[s] - xi, width, wrap)
                    dy = shortest_near(ys[s] - yi, height, wrap)
                    d2 = dx * dx + dy * dy
                    if not apart:
                        d2 = np.inf if i == j else d2
                    better = (d2 < b2) | ((d2 == b2) & (j < bj))
                    b2 = d2 if better else b2
                    bj = j if better else bj
        dd = math.sqrt(b2)
        found = math.isfinite(dd) and dd <= radius
        index[r] = bj if found else -1
        dist[r] = dd if found else np.inf
    return index, dist


@kernel
def visible_grid(
    pos: np.ndarray,
    a_lo: int,
    a_hi: int,
    b_lo: int,
    b_hi: int,
    heading: np.ndarray,
    reach: np.ndarray,
    cos_half: np.ndarray,
    all_round: np.ndarray,
    width: float,
    height: float,
    wrap: bool,
    centres: np.ndarray,
    radii: np.ndarray,
    wall_a: np.ndarray,
    wall_b: np.ndarray,
    nx: int,
    ny: int,
) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``a``: the nearest row of ``b`` (not itself) it can see.

    ``world.visible_nearest.nearest_visible``'s answer, ``(row or -1, distance or inf)``.
    ``heading`` (n_a, 2), ``reach`` (its view distance, or less), ``cos_half`` (``cos`` of
    half its field of view, minus ``sight.FOV_COS_TOLERANCE``, computed by NumPy as
    ``sight.in_view_columns`` computes it) and ``all_round`` (half the field of view at
    least pi) are per row of ``a``. The candidates within reach and view are kept as the
    rings go; once no unmeasured agent can be nearer than some of them, those are tested
    for line of sight nearest first (then lowest row), and the first clear one is it.
    """
    start, rows, xs, ys = bin_points(pos, b_lo, b_hi, width, height, wrap, nx, ny)
    n_a = a_hi - a_lo
    side_x, side_y = width / nx, height / ny
    near = min(side_x, side_y)
    most = 8 * max(nx, ny) + 1
    cells = np.empty(most, dtype=np.int64)
    gaps = np.empty(most)
    runs = np.empty((most, 2), dtype=np.int64)
    room = max(b_hi - b_lo, 1)
    cand_j = np.empty(room, dtype=np.int64)  # candidates in reach and view, not yet tested
    cand_d = np.empty(room)
    cand_x = np.empty(room)
    cand_y = np.empty(room)
    index = np.full(n_a, -1, dtype=np.int64)
    dist = np.full(n_a, np.inf)
    for r in range(n_a):
        i = a_lo + r
        px, py = pos[i, 0], pos[i, 1]
        hx, hy = heading[r, 0], heading[r, 1]
        limit, cl, round_ = reach[r], cos_half[r], all_round[r]
        if not limit >= 0.0:
            continue
        cx, cy = cell_of(px, width, nx, wrap), cell_of(py, height, ny, wrap)
        fx, fy = _folded(px, width, wrap), _folded(py, height, wrap)
        margin = 1e-9 * (width + height + abs(fx) + abs(fy))  # over any rounding of bins
        rings = max(_last_ring(cx, cy, nx, ny, wrap), 1)
        n = 0
        ring = 1
        done = False
        while not done:
            last = ring >= rings or ring * near - margin > limit  # nobody farther in reach
            if ring == 1:  # rings 0 and 1: the 3 x 3 cells' runs
                m = _block(runs, start, cx, cy, nx, ny, wrap)
            else:  # cells of the ring, those wholly out of reach left out
                m = 0
                for q in range(
                    _ring(cells, gaps, ring, cx, cy, fx, fy, nx, ny, side_x, side_y, wrap)
                ):
                    runs[m, 0] = start[cells[q]]
                    runs[m, 1] = start[cells[q] + 1]
                    m += 1 if gaps[q] - margin <= limit else 0
            for q in range(m):
                for s in range(runs[q, 0], runs[q, 1]):
                    j = rows[s]
                    tx = px + shortest(xs[s] - px, width, wrap)  # as Sense.agent_facts
                    ty = py + shortest(ys[s] - py, height, wrap)
                    dx, dy = tx - px, ty - py
                    d = math.sqrt(dx * dx + dy * dy)
                    seen = (d <= limit) & (round_ | (hx * dx + hy * dy >= d * cl) | (d <= EPS))
                    cand_j[n], cand_d[n], cand_x[n], cand_y[n] = j, d, tx, ty
                    n += 1 if seen and j != i else 0
            sure = np.inf if last else ring * near - margin  # every agent nearer is measured
            while not done:  # the nearest sure candidate (then the lowest row), sight tested
                best = -1
                for q in range(n):
                    nearer = cand_d[q] < cand_d[best] or (
                        cand_d[q] == cand_d[best] and cand_j[q] < cand_j[best]
                    )
                    best = q if cand_d[q] < sure and (best < 0 or nearer) else best
                if best < 0:
                    break
                if not blocked(px, py, cand_x[best], cand_y[best], centres, radii, wall_a, wall_b):
                    index[r], dist[r] = cand_j[best], cand_d[best]
                    done = True
                else:  # blocked: dropped (its slot takes the last candidate)
                    n -= 1
                    cand_j[best], cand_d[best] = cand_j[n], cand_d[n]
                    cand_x[best], cand_y[best] = cand_x[n], cand_y[n]
            done = done or last
            ring += 1
    return index, dist
