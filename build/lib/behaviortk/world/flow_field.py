"""Distance fields to a goal on a grid, and their gradient read at agents' positions.

The ``flow`` steering primitive follows the gradient of a distance field, after
Elijah Emerson, "Crowd Pathfinding and Steering Using Flow Field Tiles" (*Game
AI Pro*, 2013: one integration field per goal, shared by every agent) and
Treuille, Cooper & Popovic, "Continuum Crowds" (SIGGRAPH 2006: agents move
against the gradient of a potential that grows with the distance to the goal).

The grid covers the world's rectangle with square cells of ``cell_size``
(``ceil(width / cell_size)`` by ``ceil(height / cell_size)``; cell ``(row j,
column i)`` spans ``[i h, (i + 1) h] x [j h, (j + 1) h]``). A cell is blocked
when an obstacle's disc, grown by the agents' radius, covers any part of it, or
when a wall segment, thickened into a capsule of the agents' radius, touches it
(edges and corners count: a wall lying on a grid line blocks the cells of both
sides, and nothing leaks diagonally through a wall). Growing by the radius is
the configuration-space obstacle: the field then leads the centre of an agent
of that radius around corners instead of onto them.

The distance is ``scipy.sparse.csgraph.dijkstra`` (``min_only=True``) from every
goal cell at once over the 8-connected graph of free cells, edges ``h`` along
the axes and ``h sqrt(2)`` on the diagonals, a diagonal step allowed only when
both cells it passes by are free (no corner cutting). Where Treuille et al.
solve the Eikonal equation (fast marching), this is Dijkstra on a grid:
distances are up to about 8 % too long off the axes and diagonals (the
octile distance ``max + (sqrt(2) - 1) min`` of the offsets: 1 cell across and
2 up is walked as one diagonal and one straight step, 2.414 cells for 2.236;
the worst, 8.2 %, is 22.5 degrees off an axis).

The gradient of each cell is the central difference of the distance with its
axis neighbours (one-sided where a neighbour has no distance, zero along an
axis where neither has). A blocked cell, or one from which the goal cannot be
reached, takes the gradient of a second field, the distance to the nearest cell
that reaches the goal over every cell (blocked or not), so an agent pushed into
one walks back out toward the nearest good cell (through what blocks the way:
the field has no better answer there; wall avoidance and non-penetration keep
agents out of walls). Agents outside the grid read the nearest edge cells.
The field does not wrap on a wrapped world (no way across the world's edge).

With a ``clearance``, cells near blocked ones cost more to cross (up to twice,
next to one, falling linearly to the plain cost ``clearance`` farther): the
discomfort of Treuille et al.'s unit cost field, so the way through a door runs
down its middle rather than along a jamb (where every shortest path bends).

Fields are cached by goal, cell size, radius, clearance and world geometry
(:func:`field_for`), so a goal's field is computed once, not every tick.
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.vec import Array
from behaviortk.world.state import World, Zone

MAX_CELLS = 100_000_000
"""The largest grid a flow field may have (``nx * ny``)."""

BYTES_PER_CELL = 300
"""Peak memory of a field per cell, with a margin: a 1,000 x 1,000 grid with a clearance (three
Dijkstra runs over 8-connected graphs) peaked 243 MB above the start on the development VM
(and took 2.9 s)."""

CACHE_SIZE = 16
"""Fields kept (least recently used dropped first): goals, cell sizes and geometries."""

SQRT2 = math.sqrt(2.0)

DISCOMFORT = 1.0
"""Extra cost of crossing a cell next to a blocked one, with a ``clearance`` (twice the cost)."""

# (di, dj, length in cells) of the 8 neighbours: the axes, then the diagonals
NEIGHBOURS = (
    (1, 0, 1.0),
    (-1, 0, 1.0),
    (0, 1, 1.0),
    (0, -1, 1.0),
    (1, 1, SQRT2),
    (1, -1, SQRT2),
    (-1, 1, SQRT2),
    (-1, -1, SQRT2),
)


class FlowFieldError(ValueError):
    """A field that cannot be made: too many cells, or no free cell for the goal."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Goal:
    """Where a field leads: a point, or a zone (its cells: those whose centre is inside it)."""

    point: tuple[float, float] | None = None
    zone: Zone | None = None

    def key(self) -> tuple[Any, ...]:
        if self.zone is None:
            return ("point", self.point)
        z = self.zone
        return ("zone", z.kind, *z.center.tolist(), z.radius, *z.low.tolist(), *z.high.tolist())

    @property
    def centre(self) -> tuple[float, float]:
        if self.zone is not None:
            return (float(self.zone.center[0]), float(self.zone.center[1]))
        assert self.point is not None
        return self.point


def grid_shape(width: float, height: float, cell_size: float) -> tuple[int, int]:
    """(rows ny, columns nx) of the grid covering ``width`` x ``height``."""
    return max(1, math.ceil(height / cell_size)), max(1, math.ceil(width / cell_size))


def available_memory() -> int:
    """Bytes of memory available now (``MemAvailable`` of /proc/meminfo, else free pages)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return 1 << 62  # unknown: do not refuse


def too_many_cells(width: float, height: float, cell_size: float) -> str:
    """Why the grid is too large, or '' (computed without making it): more than
    :data:`MAX_CELLS` cells, or more memory than is available (``BYTES_PER_CELL`` each)."""
    ny, nx = grid_shape(width, height, cell_size)
    grid = f"cell_size {cell_size:g} makes a grid of {nx:,} x {ny:,} = {nx * ny:,} cells over the {width:g} x {height:g} world"
    if nx * ny > MAX_CELLS:
        return f"{grid}; the limit is {MAX_CELLS:,} (use a larger cell_size)"
    need, have = nx * ny * BYTES_PER_CELL, available_memory()
    if need > have:
        return (
            f"{grid}, whose field needs about {need / 2**30:.1f} GiB of memory; "
            f"{have / 2**30:.1f} GiB are available (use a larger cell_size)"
        )
    return ""


@dataclass(frozen=True)
class FlowField:
    """A goal's distance field and its gradient, per cell (arrays ``(ny, nx)``)."""

    cell_size: float
    distance: Array  # (ny, nx) distance to the goal; inf where blocked or unreachable
    gradient: Array  # (ny, nx, 2) per cell (see the module docstring)
    blocked: np.ndarray  # (ny, nx) bool
    goal: np.ndarray  # (ny, nx) bool: the goal's free cells

    @property
    def shape(self) -> tuple[int, int]:
        ny, nx = self.distance.shape
        return int(ny), int(nx)

    def cells_of(self, pos: Array) -> tuple[np.ndarray, np.ndarray]:
        """(row, column) of the cell holding each position, clamped into the grid."""
        ny, nx = self.shape
        i = np.clip(np.floor(pos[:, 0] / self.cell_size), 0, nx - 1).astype(np.int64)
        j = np.clip(np.floor(pos[:, 1] / self.cell_size), 0, ny - 1).astype(np.int64)
        return j, i

    def at_goal(self, pos: Array) -> np.ndarray:
        """(n,) bool: which positions stand in a goal cell."""
        j, i = self.cells_of(pos)
        return np.asarray(self.goal[j, i], dtype=bool)

    def reachable(self, pos: Array) -> np.ndarray:
        """(n,) bool: which positions stand in a cell with a finite distance."""
        j, i = self.cells_of(pos)
        return np.asarray(np.isfinite(self.distance[j, i]), dtype=bool)

    def lookup(self, pos: Array) -> Array:
        """Bilinear interpolation of the cell gradients at ``pos`` (n, 2), between the four cell
        centres around each position (clamped to the outer centres at the grid's edge)."""
        return bilinear(self.gradient, self.cell_size, pos)


def bilinear(values: Array, cell_size: float, pos: Array) -> Array:
    """``values`` (ny, nx, k) given at cell centres ``((i + 1/2) h, (j + 1/2) h)``, read at
    ``pos`` (n, 2) by bilinear interpolation; positions beyond the outer centres are clamped."""
    ny, nx = values.shape[:2]
    u = np.clip(pos[:, 0] / cell_size - 0.5, 0.0, nx - 1.0)
    v = np.clip(pos[:, 1] / cell_size - 0.5, 0.0, ny - 1.0)
    i0 = np.minimum(np.floor(u).astype(np.int64), max(nx - 2, 0))
    j0 = np.minimum(np.floor(v).astype(np.int64), max(ny - 2, 0))
    i1 = np.minimum(i0 + 1, nx - 1)
    j1 = np.minimum(j0 + 1, ny - 1)
    fx = (u - i0)[:, None]
    fy = (v - j0)[:, None]
    return np.asarray(
        (1 - fx) * (1 - fy) * values[j0, i0]
        + fx * (1 - fy) * values[j0, i1]
        + (1 - fx) * fy * values[j1, i0]
        + fx * fy * values[j1, i1],
        dtype=np.float64,
    )


# ------------------------------------------------------------------ blocked cells
def _centres(lo: int, hi: int, h: float) -> Array:
    return (np.arange(lo, hi, dtype=np.float64) + 0.5) * h


def _window(lo: float, hi: float, h: float, n: int) -> tuple[int, int]:
    """Cell indices [a, b) whose span meets [lo, hi] (clamped to the grid)."""
    return max(0, math.floor(lo / h) - 1), min(n, math.floor(hi / h) + 2)


def block_discs(blocked: np.ndarray, h: float, centres: Array, radii: Array) -> None:
    """Mark the cells a disc covers any part of: centre-to-square distance < radius."""
    ny, nx = blocked.shape
    for (cx, cy), r in zip(centres.tolist(), radii.tolist(), strict=True):
        i0, i1 = _window(cx - r, cx + r, h, nx)
        j0, j1 = _window(cy - r, cy + r, h, ny)
        if i0 >= i1 or j0 >= j1:
            continue
        dx = np.maximum(np.abs(_centres(i0, i1, h) - cx) - h / 2, 0.0)
        dy = np.maximum(np.abs(_centres(j0, j1, h) - cy) - h / 2, 0.0)
        blocked[j0:j1, i0:i1] |= dy[:, None] ** 2 + dx[None, :] ** 2 < r * r


def _point_segment(px: Array, py: Array, a: Array, b: Array) -> Array:
    """Distance from points (px, py) to the segment a-b."""
    d = b - a
    t = np.clip(((px - a[0]) * d[0] + (py - a[1]) * d[1]) / float(d @ d), 0.0, 1.0)
    return np.asarray(np.hypot(px - a[0] - t * d[0], py - a[1] - t * d[1]), dtype=np.float64)


def _point_box(p: Array, lox: Array, loy: Array, hix: Array, hiy: Array) -> Array:
    dx = np.maximum(np.maximum(lox - p[0], p[0] - hix), 0.0)
    dy = np.maximum(np.maximum(loy - p[1], p[1] - hiy), 0.0)
    return np.asarray(np.hypot(dx, dy), dtype=np.float64)


def segment_box_distance(
    a: Array, b: Array, lox: Array, loy: Array, hix: Array, hiy: Array
) -> Array:
    """Distance from the segment a-b to closed boxes (0 where they meet).

    They meet when no separating axis exists among x, y and the segment's normal;
    otherwise the distance between two disjoint convex shapes is reached at a
    vertex of one of them: an end of the segment or a corner of the box.
    """
    nx_, ny_ = -(b[1] - a[1]), b[0] - a[0]
    s = nx_ * a[0] + ny_ * a[1]
    proj = [nx_ * x + ny_ * y for x, y in ((lox, loy), (lox, hiy), (hix, loy), (hix, hiy))]
    pmin = np.minimum(np.minimum(proj[0], proj[1]), np.minimum(proj[2], proj[3]))
    pmax = np.maximum(np.maximum(proj[0], proj[1]), np.maximum(proj[2], proj[3]))
    meet = (
        (min(a[0], b[0]) <= hix)
        & (max(a[0], b[0]) >= lox)
        & (min(a[1], b[1]) <= hiy)
        & (max(a[1], b[1]) >= loy)
        & (pmin <= s)
        & (s <= pmax)
    )
    dist = np.minimum(_point_box(a, lox, loy, hix, hiy), _point_box(b, lox, loy, hix, hiy))
    for x, y in ((lox, loy), (lox, hiy), (hix, loy), (hix, hiy)):
        dist = np.minimum(dist, _point_segment(x, y, a, b))
    return np.asarray(np.where(meet, 0.0, dist), dtype=np.float64)


def block_walls(blocked: np.ndarray, h: float, wall_a: Array, wall_b: Array, grow: float) -> None:
    """Mark the cells whose closed square lies within ``grow`` of a wall segment."""
    ny, nx = blocked.shape
    for a, b in zip(wall_a, wall_b, strict=True):
        i0, i1 = _window(min(a[0], b[0]) - grow, max(a[0], b[0]) + grow, h, nx)
        j0, j1 = _window(min(a[1], b[1]) - grow, max(a[1], b[1]) + grow, h, ny)
        if i0 >= i1 or j0 >= j1:
            continue
        lox = (np.arange(i0, i1, dtype=np.float64) * h)[None, :]
        loy = (np.arange(j0, j1, dtype=np.float64) * h)[:, None]
        d = segment_box_distance(a, b, lox, loy, lox + h, loy + h)
        blocked[j0:j1, i0:i1] |= d <= grow


def blocked_cells(world: World, cell_size: float, radius: float) -> np.ndarray:
    """(ny, nx) bool: the cells obstacles (grown by ``radius``) and walls (capsules of
    ``radius``) block."""
    blocked = np.zeros(grid_shape(world.width, world.height, cell_size), dtype=bool)
    block_discs(blocked, cell_size, world.obstacle_pos, world.obstacle_radius + radius)
    block_walls(blocked, cell_size, world.wall_a, world.wall_b, radius)
    return blocked


def goal_cells(goal: Goal, shape: tuple[int, int], h: float) -> np.ndarray:
    """(ny, nx) bool: the cell holding the point; for a zone, the cells whose centre is inside
    it and the cell holding its centre (so a zone smaller than a cell still has one)."""
    ny, nx = shape
    cells = np.zeros(shape, dtype=bool)
    cx, cy = goal.centre
    cells[min(max(math.floor(cy / h), 0), ny - 1), min(max(math.floor(cx / h), 0), nx - 1)] = True
    z = goal.zone
    if z is not None:
        x = _centres(0, nx, h)[None, :]
        y = _centres(0, ny, h)[:, None]
        if z.kind == "circle":
            cells |= (x - cx) ** 2 + (y - cy) ** 2 <= z.radius**2
        else:
            cells |= (x >= z.low[0]) & (x <= z.high[0]) & (y >= z.low[1]) & (y <= z.high[1])
    return cells


# ------------------------------------------------------------------ distances
def grid_graph(free: np.ndarray, h: float, cost: Array | None = None) -> Any:
    """The 8-connected graph of ``free`` cells (CSR, node ``j * nx + i``), edges ``h`` and
    ``h sqrt(2)`` (times the mean ``cost`` of their two cells, when given); a diagonal only
    when both cells it passes by are free.

    Built row by row without sorting: each cell's (up to 8) neighbours in a fixed order,
    so the CSR arrays come straight from a ``(cells, 8)`` table (no COO sort: a 1,000 x
    1,000 grid in a fraction of the time)."""
    from scipy.sparse import csr_matrix

    ny, nx = free.shape
    n = ny * nx
    index = np.arange(n, dtype=np.int32).reshape(ny, nx)
    target = np.full((ny, nx, len(NEIGHBOURS)), -1, dtype=np.int32)
    weight = np.zeros((ny, nx, len(NEIGHBOURS)))
    flat = None if cost is None else cost.ravel()
    for k, (di, dj, steps) in enumerate(NEIGHBOURS):
        # the cells (j, i) whose neighbour (j + dj, i + di) is inside the grid
        rows = slice(max(0, -dj), ny - max(0, dj))
        cols = slice(max(0, -di), nx - max(0, di))
        rows_there = slice(max(0, dj), ny + min(0, dj))
        cols_there = slice(max(0, di), nx + min(0, di))
        ok = free[rows, cols] & free[rows_there, cols_there]
        if di and dj:  # no corner cutting: both orthogonal cells must be free too
            ok &= free[rows, cols_there] & free[rows_there, cols]
        there = index[rows_there, cols_there]
        target[rows, cols, k] = np.where(ok, there, -1)
        if flat is None:
            weight[rows, cols, k] = steps * h
        else:
            here = index[rows, cols]
            weight[rows, cols, k] = steps * h * (flat[here] + flat[there]) / 2.0
    edge = target >= 0
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(edge.reshape(n, -1).sum(axis=1), out=indptr[1:])
    return csr_matrix((weight[edge], target[edge], indptr), shape=(n, n))


def distances(free: np.ndarray, sources: np.ndarray, h: float, cost: Array | None = None) -> Array:
    """(ny, nx) shortest distance from the nearest of ``sources`` (bool) over the free cells
    (each step weighted by the mean ``cost`` of its two cells, when given)."""
    from scipy.sparse.csgraph import dijkstra

    starts = np.flatnonzero(sources)
    if starts.size == 0:
        return np.full(free.shape, np.inf)
    d = dijkstra(grid_graph(free, h, cost), directed=True, indices=starts, min_only=True)
    return np.asarray(d, dtype=np.float64).reshape(free.shape)


def axis_gradient(d: Array, h: float, axis: int) -> Array:
    """Finite difference of ``d`` along ``axis``: central where both neighbours are finite,
    one-sided where one is, zero where neither is (or where ``d`` itself is not finite)."""
    pad = [(0, 0), (0, 0)]
    pad[axis] = (1, 1)
    p = np.pad(d, pad, constant_values=np.inf)
    n = d.shape[axis]
    before = np.take(p, np.arange(0, n), axis=axis)
    after = np.take(p, np.arange(2, n + 2), axis=axis)
    fb, fa, fc = np.isfinite(before), np.isfinite(after), np.isfinite(d)
    with np.errstate(invalid="ignore"):
        central = (after - before) / (2 * h)
        forward = (after - d) / h
        backward = (d - before) / h
    out = np.where(fa & fb, central, np.where(fa, forward, np.where(fb, backward, 0.0)))
    return np.asarray(np.where(fc, out, 0.0), dtype=np.float64)


def gradient_of(d: Array, h: float) -> Array:
    """(ny, nx, 2) gradient of a field with ``inf`` where it is undefined."""
    return np.stack([axis_gradient(d, h, 1), axis_gradient(d, h, 0)], axis=-1)


def discomfort(blocked: np.ndarray, h: float, clearance: float) -> Array | None:
    """(ny, nx) cost of crossing each cell: ``1 + DISCOMFORT`` next to a blocked cell, falling
    linearly to 1 at ``clearance`` farther (None: no clearance, or nothing blocked)."""
    if clearance <= 0 or not blocked.any():
        return None
    near = distances(np.ones_like(blocked), blocked, h)  # h for a cell next to a blocked one
    return np.asarray(1.0 + DISCOMFORT * np.clip(1.0 - (near - h) / clearance, 0.0, 1.0))


def compute(
    world: World, goal: Goal, cell_size: float, radius: float, clearance: float = 0.0
) -> FlowField:
    """The field of ``goal``: raises :class:`FlowFieldError` on a grid too large or a goal
    whose cells are all blocked."""
    why = too_many_cells(world.width, world.height, cell_size)
    if why:
        raise FlowFieldError(why, "flow_grid_too_large")
    blocked = blocked_cells(world, cell_size, radius)
    goal_mask = goal_cells(goal, blocked.shape, cell_size) & ~blocked
    if not goal_mask.any():
        raise FlowFieldError(
            f"every cell of the goal is blocked by an obstacle or wall (grown by the agents' "
            f"radius {radius:g}, on cells of {cell_size:g}); move the goal away from them or "
            "use a smaller cell_size",
            "flow_goal_blocked",
        )
    d = distances(~blocked, goal_mask, cell_size, discomfort(blocked, cell_size, clearance))
    grad = gradient_of(d, cell_size)
    lost = ~np.isfinite(d)
    if lost.any() and (~lost).any():
        # the way back to the nearest cell that reaches the goal, over every cell
        escape = distances(np.ones_like(lost), ~lost, cell_size)
        grad[lost] = gradient_of(escape, cell_size)[lost]
    return FlowField(cell_size, d, grad, blocked, goal_mask)


_cache: OrderedDict[tuple[Any, ...], FlowField | FlowFieldError] = OrderedDict()
_lock = threading.Lock()


def geometry_key(world: World) -> tuple[Any, ...]:
    """What of the world a field depends on (obstacles may be dragged in the viewer)."""
    return (
        world.width,
        world.height,
        world.obstacle_pos.tobytes(),
        world.obstacle_radius.tobytes(),
        world.wall_a.tobytes(),
        world.wall_b.tobytes(),
    )


def field_for(
    world: World, goal: Goal, cell_size: float, radius: float, clearance: float = 0.0
) -> FlowField:
    """The field of ``goal`` on this world, computed on first use and cached (a field that
    cannot be made is cached as its :class:`FlowFieldError`, raised again on every call)."""
    key = (goal.key(), float(cell_size), float(radius), float(clearance), geometry_key(world))
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            if isinstance(found, FlowFieldError):
                raise found
            return found
    made: FlowField | FlowFieldError
    try:
        made = compute(world, goal, cell_size, radius, clearance)
    except FlowFieldError as exc:
        made = exc
    with _lock:
        _cache[key] = made
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    if isinstance(made, FlowFieldError):
        raise made
    return made
