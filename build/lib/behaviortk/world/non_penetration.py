"""Non-penetration: after integration, push overlapping agents apart and out of obstacles and walls.

Buckland (*Programming Game AI by Example*, ch. 3, "Ensuring Zero Overlap",
``EnforceNonPenetrationConstraint``) moves each vehicle, after its update,
away from every vehicle it overlaps along the line between their centres by
the whole overlap, one vehicle at a time: O(n^2) per tick, and each move sees
the moves made before it, so the result depends on the order of the vehicles.

Here the same constraint is relaxed for all agents at once. Where we depart
from the book, and why:

- **Pairs from a grid, kept for a few ticks** (instead of testing every pair).
  Candidate pairs, closer than ``r_i + r_j + skin``, come from the uniform-grid
  pair search (``world/overlap.close_pairs``, minimum image on wrapped worlds)
  and are reused while no agent has moved more than ``skin / 2`` since (a
  Verlet list: a pair missing from the list was at least ``r_i + r_j + skin``
  apart and each of its agents moved less than ``skin / 2``, so it cannot
  overlap). The skin is ``SKIN_RADII`` largest radii. The lists are rebuilt
  when agents spawn or despawn, when obstacles or walls move, before the passes
  once an agent has moved ``REBUILD_AT`` of the skin, and between passes when a
  push took an agent half the skin away. On compiled kernels the next lists are
  built on another thread once an agent has moved ``PREPARE_AT`` of the skin,
  from the positions of that tick, and taken up when ready (a tick or two
  later); the passes give the same positions whichever lists they use. When
  the compiled path re-sorts agents into new rows, the lists are renumbered
  rather than built.
- **Both agents of a pair move, in relaxation passes.** A pass pushes every
  overlapping pair apart along its centre line, sharing the overlap in inverse
  proportion to mass (equal masses: half each; an agent of an external group,
  which the game places, never moves and the other takes the whole overlap).
  The moves of a pass are measured from where the agents were when it began
  and added to the positions with ``np.add.at``, pair after pair in the
  lists' order (sorted by rows), so both paths add them in the same order.
  One pass separates an isolated pair; in a packed cluster the pushes of a
  pass partly cancel, so each pair is pushed ``OVER_RELAXATION`` times its
  overlap (successive over-relaxation) and passes repeat, up to the world's
  ``non_penetration_passes``, stopping as soon as nothing overlaps. A pass after
  the first only measures the pairs of agents the previous pass moved (nothing
  else can have come closer). Coincident agents split along a fixed direction
  per pair (``vec.coincident_direction``).
- **Pushed a little beyond contact.** A pair closer than ``r_i + r_j`` (one that
  overlaps) is pushed to ``(r_i + r_j) * (1 + CONTACT_MARGIN)``: in a cluster the
  passes approach their target only asymptotically, and the margin lets them
  stop outside contact instead of leaving every pair of the cluster a hair
  inside; the gap between contact and the target keeps a pair just pushed from
  being pushed again for its rounding, and a pair at rest from being pushed
  every tick. (Pushing pairs already within half the margin of contact, as this
  module once did, pushed a quarter more pairs in packed flocks and ran more
  passes: 7.6 a tick against 7.2 in evade_or_flock at 50,000 agents.)
- **Obstacles and walls too, last in each pass.** After the pairs, agents are
  pushed out of obstacle circles (to obstacle radius + agent radius from the
  centre) and off wall segments (to their radius from the closest point); an
  agent whose move this tick crossed a wall is put back on the side it came
  from. Buckland only steers around these (obstacle and wall avoidance).

Only positions change; velocities and headings are kept, as in the book. The
pushed positions are folded into a wrapped world again, or clamped inside a
bounded one.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.vec import EPS, Array, coincident_direction
from behaviortk.world.overlap import close_pairs
from behaviortk.world.rows import keep_room
from behaviortk.world.spatial import wrap_positions
from behaviortk.world.state import Agents, World

IntArray = np.ndarray

#: Default of the world's ``non_penetration_passes``: the most relaxation passes per tick.
DEFAULT_PASSES = 10

#: Skin of the candidate lists, in largest agent radii: a wider skin lasts more ticks
#: but holds more pairs to measure every tick (the results do not depend on it). In
#: evade_or_flock at 50,000 agents (radii 5 and 8, flocks packed: most candidates touch)
#: 3 radii (24 units) held a tenth more pairs than 2 and rebuilt every 5 ticks instead of
#: 4; 5 radii (40 units) hold 2 % more than 3 and rebuild every 8 (on compiled kernels,
#: where a build costs about as much as the passes of a tick, 7 % less time per tick).
SKIN_RADII = 5.0

#: The lists are rebuilt before the passes once an agent has moved this fraction of the
#: skin since they were built, so the passes' own pushes have ``(0.5 - REBUILD_AT) * skin``
#: to spend before the lists are unsafe (half the skin; then they are built again).
REBUILD_AT = 0.375

#: On compiled kernels, the next lists are built on another thread once an agent has moved
#: this fraction of the skin (before ``REBUILD_AT``, when the tick would have to build them
#: itself): a build costs about as much as a tick's passes at 50,000 agents, and the
#: second core is idle while the tick runs.
PREPARE_AT = 0.25

#: Fewer agents than this build their lists in the tick: handing a small build to the other
#: thread costs more than the build.
AHEAD_MIN = 4096

#: Pairs are pushed to (r_i + r_j) * (1 + CONTACT_MARGIN), obstacles and walls likewise.
CONTACT_MARGIN = 0.02

#: Each pass moves an overlapping pair this many times its remaining overlap (successive
#: over-relaxation): in a cluster the pushes of one pass partly cancel, and over-relaxing
#: makes up for it. 60 agents of radius 5 dropped into a 40 x 40 square settle in about
#: 25 passes instead of 60-85 with 1.0 (``tests/test_non_penetration.py``).
OVER_RELAXATION = 1.6

_EMPTY = np.zeros(0, dtype=np.int64)
_NONE = np.zeros(0)


def _fold(v: Array, size: float) -> Array:
    """Coordinates folded into ``[0, size)`` (what ``spatial.wrap_positions`` does, per column)."""
    v = v - size * np.floor(v * (1.0 / size))
    return np.where((v >= size) | (v < 0.0), 0.0, v)


def _short(d: Array, size: float, wrap: bool) -> Array:
    """``d`` (modified in place) as the shortest image along an axis of length ``size``."""
    if wrap:
        d -= size * np.round(d * (1.0 / size))
    return d


Moves = tuple[IntArray, np.ndarray, np.ndarray]
"""``(rows, mx, my)``: rows that move and their moves (summed per distinct row, ascending,
but for :func:`pair_moves`: one move per pair side, in order)."""


def summed(rows: IntArray, mx: Array, my: Array, n: int) -> Moves:
    """Moves of ``rows`` (repeated rows add up, in a fixed order) per distinct row.

    ``np.bincount`` over positions among the distinct rows: the work follows the
    moves, not the number of agents ``n``.
    """
    if rows.size * 16 < n:
        moved = distinct(rows, n)
        at = np.searchsorted(moved, rows)
    else:  # many: a table from row to its place among the moved rows
        mark = np.zeros(n, dtype=bool)
        mark[rows] = True
        moved = np.flatnonzero(mark)
        place = np.empty(n, dtype=np.int64)
        place[moved] = np.arange(moved.size)
        at = np.take(place, rows)
    return (
        moved,
        np.bincount(at, weights=mx, minlength=moved.size),
        np.bincount(at, weights=my, minlength=moved.size),
    )


def distinct(values: IntArray, size: int) -> IntArray:
    """The distinct ``values`` (each in ``[0, size)``), ascending.

    A sort for a few values, a mark table for many: both much faster than
    ``np.unique``, which hashes.
    """
    if values.size * 16 < size:
        v = np.sort(values)
        keep = np.ones(v.size, dtype=bool)
        np.not_equal(v[1:], v[:-1], out=keep[1:])
        return v[keep]
    mark = np.zeros(size, dtype=bool)
    mark[values] = True
    return np.flatnonzero(mark)


def pair_moves(
    x: Array,
    y: Array,
    i: IntArray,
    j: IntArray,
    contact: Array,
    share: Array,
    world: World,
    margin: float = CONTACT_MARGIN,
    over_relaxation: float = OVER_RELAXATION,
) -> Moves | None:
    """One relaxation pass over the pairs ``(i, j)``; None when none overlaps.

    ``contact`` is each pair's ``r_i + r_j`` and ``share`` agent ``i``'s part of
    a push (``w_i / (w_i + w_j)``, ``w`` = inverse mass, 0 for an agent that
    never moves; agent ``j`` takes the rest). A pair closer than ``contact`` is pushed
    apart along its centre line by ``over_relaxation * (c - distance)``, ``c = contact *
    (1 + margin)``. The moves are returned one per pair side (not summed), pair after pair
    in list order, agent ``i``'s before agent ``j``'s: :meth:`NonPenetration._add_in_order`
    adds them to the positions in that order (the compiled passes add them so too).
    """
    wrap = world.edges == "wrap"
    dx = _short(np.take(x, j) - np.take(x, i), world.width, wrap)
    dy = _short(np.take(y, j) - np.take(y, i), world.height, wrap)
    d2 = dx * dx + dy * dy
    hit = np.flatnonzero(d2 < contact * contact)
    if hit.size == 0:
        return None
    i, j, dx, dy = np.take(i, hit), np.take(j, hit), np.take(dx, hit), np.take(dy, hit)
    dist = np.sqrt(np.take(d2, hit))
    apart = dist > EPS
    inv = 1.0 / np.where(apart, dist, 1.0)
    ux, uy = dx * inv, dy * inv  # unit vector from i to j
    if not apart.all():
        fixed = coincident_direction(i[~apart], j[~apart])
        ux[~apart], uy[~apart] = fixed[:, 0], fixed[:, 1]
    push = np.take(contact, hit) * (1.0 + margin) - dist
    push *= over_relaxation
    part = np.take(share, hit)
    si = push * part
    sj = push - si
    free = np.stack([part > 0.0, part < 1.0], axis=1).ravel()  # agents that never move
    rows = np.stack([i, j], axis=1).ravel()[free]  # i's move, then j's, pair after pair
    mx = np.stack([-ux * si, ux * sj], axis=1).ravel()[free]
    return rows, mx, np.stack([-uy * si, uy * sj], axis=1).ravel()[free]


def pair_constants(
    radius: Array, inv_mass: Array, i: IntArray, j: IntArray
) -> tuple[IntArray, IntArray, Array, Array]:
    """The pairs that can move (not both fixed) with their ``contact`` and ``share``."""
    wi, wj = np.take(inv_mass, i), np.take(inv_mass, j)
    total = wi + wj
    keep = np.flatnonzero(total > 0.0)
    i, j = np.take(i, keep), np.take(j, keep)
    contact = np.take(radius, i) + np.take(radius, j)
    return i, j, contact, np.take(wi, keep) / np.take(total, keep)


def obstacle_moves(
    x: Array,
    y: Array,
    radius: Array,
    a: IntArray,
    o: IntArray,
    world: World,
    margin: float = CONTACT_MARGIN,
) -> Moves | None:
    """Moves of agents ``a`` out of obstacles ``o`` (candidate pairs); None when none is inside.

    An agent closer to an obstacle's centre than ``obstacle radius + agent
    radius`` goes straight out along the centre line to
    ``(obstacle radius + agent radius) * (1 + margin)`` (from the very centre:
    along +x).
    """
    wrap = world.edges == "wrap"
    dx = _short(np.take(x, a) - world.obstacle_pos[o, 0], world.width, wrap)
    dy = _short(np.take(y, a) - world.obstacle_pos[o, 1], world.height, wrap)
    contact = world.obstacle_radius[o] + np.take(radius, a)
    d2 = dx * dx + dy * dy
    hit = np.flatnonzero(d2 < contact * contact)
    if hit.size == 0:
        return None
    a, dx, dy = np.take(a, hit), np.take(dx, hit), np.take(dy, hit)
    limit = np.take(contact, hit) * (1.0 + margin)
    dist = np.sqrt(np.take(d2, hit))
    apart = dist > EPS
    push = (limit - dist) / np.where(apart, dist, 1.0)
    n = x.shape[0]
    return summed(a, np.where(apart, dx * push, limit), np.where(apart, dy * push, 0.0), n)


def wall_moves(
    x: Array,
    y: Array,
    old_x: Array,
    old_y: Array,
    radius: Array,
    a: IntArray,
    k: IntArray,
    world: World,
    margin: float = CONTACT_MARGIN,
) -> Moves | None:
    """Moves of agents ``a`` off walls ``k`` (candidate pairs); None when none touches a wall.

    ``old_x``/``old_y`` are the positions before this tick's move. An agent
    whose move crossed the segment (or that sits exactly on it) goes back to the
    side it came from, ``r = radius * (1 + margin)`` from the wall's line;
    otherwise an agent closer than its radius to the segment
    goes straight away from the segment's closest point to ``r``. On wrapped worlds positions are taken
    as the image nearest the wall's midpoint.
    """
    wrap = world.edges == "wrap"
    wa, wb, normal = world.wall_a[k], world.wall_b[k], world.wall_normal[k]
    ax, ay = wa[:, 0], wa[:, 1]
    ex, ey = wb[:, 0] - ax, wb[:, 1] - ay
    nx, ny = normal[:, 0], normal[:, 1]
    cx, cy = ax + 0.5 * ex, ay + 0.5 * ey
    px = cx + _short(np.take(x, a) - cx, world.width, wrap)
    py = cy + _short(np.take(y, a) - cy, world.height, wrap)
    qx = px - _short(np.take(x, a) - np.take(old_x, a), world.width, wrap)
    qy = py - _short(np.take(y, a) - np.take(old_y, a), world.height, wrap)
    r = np.take(radius, a) * (1.0 + margin)
    e2 = ex * ex + ey * ey
    s_new = (px - ax) * nx + (py - ay) * ny  # signed distance to the wall's line
    s_old = (qx - ax) * nx + (qy - ay) * ny
    lam = s_old / np.where(s_old != s_new, s_old - s_new, 1.0)  # where the move met the line
    at = ((qx + lam * (px - qx) - ax) * ex + (qy + lam * (py - qy) - ay) * ey) / e2
    crossed = (s_old * s_new < 0.0) & (at >= 0.0) & (at <= 1.0)
    t = np.clip(((px - ax) * ex + (py - ay) * ey) / e2, 0.0, 1.0)
    ox, oy = px - (ax + t * ex), py - (ay + t * ey)
    dist = np.sqrt(ox * ox + oy * oy)
    back = crossed | (dist <= EPS)
    hit = np.flatnonzero(back | (dist < np.take(radius, a)))
    if hit.size == 0:
        return None
    back, s_new, s_old, r, dist = (np.take(v, hit) for v in (back, s_new, s_old, r, dist))
    nx, ny, ox, oy = (np.take(v, hit) for v in (nx, ny, ox, oy))
    side = np.where(s_old != 0.0, np.sign(s_old), np.where(s_new != 0.0, np.sign(s_new), 1.0))
    across = side * (r - side * s_new)
    out = (r - dist) / np.where(back, 1.0, dist)
    a = np.take(a, hit)
    n = x.shape[0]
    return summed(
        a, np.where(back, across * nx, out * ox), np.where(back, across * ny, out * oy), n
    )


class NonPenetration:
    """The constraint of one simulation: at most ``passes`` passes a tick, and the
    candidate lists kept between ticks. See the module docstring."""

    def __init__(
        self,
        passes: int = DEFAULT_PASSES,
        skin_radii: float = SKIN_RADII,
        over_relaxation: float = OVER_RELAXATION,
        kernels: Any = None,
    ) -> None:
        if passes < 1:
            raise ValueError(f"non-penetration needs at least 1 pass, got {passes}")
        self.passes = int(passes)
        self.skin_radii = float(skin_radii)
        self.over_relaxation = float(over_relaxation)
        self.kernels = kernels
        """Compiled kernels (``sim.backend.Kernels``) running the passes, or None (NumPy)."""
        self._scratch: dict[str, Any] = {}  # the compiled passes' work arrays
        self.builds = 0
        """How many times the candidate lists were built (for benchmarks and tests)."""
        self.built_ahead = 0
        """How many of those were built on the other thread and taken up."""
        self.last_passes = 0
        """Passes the last tick ran (fewer than ``passes`` when everything was apart sooner)."""
        self._ids: np.ndarray | None = None
        """``Agents.ids`` the lists were made for: a new array whenever rows change."""
        self._ids_then = _EMPTY
        """Its values then (a spawn writes new agents' ids into the memory of the old array)."""
        self._static: tuple[bytes, ...] = ()
        self._anchor_x = np.zeros(0)
        self._anchor_y = np.zeros(0)
        self._skin = 0.0
        self._pairs: tuple[IntArray, IntArray, Array, Array] = (_EMPTY, _EMPTY, _NONE, _NONE)
        """Candidate pairs ``(i, j, contact, share)``; lists built on compiled kernels hold
        int32 rows and leave ``contact`` and ``share`` empty (the kernel works them out)."""
        self._inv_mass = _NONE
        self._kinds: tuple[np.ndarray, ...] | None = None
        self._obstacles = (_EMPTY, _EMPTY)
        self._walls = (_EMPTY, _EMPTY)
        self._next: tuple[Future[Lists], np.ndarray] | None = None
        """Lists being built on another thread (compiled kernels), with the ids they are for."""

    def apply(self, world: World, agents: Agents, before: Array, fixed: np.ndarray) -> None:
        """Push ``agents`` apart and out of obstacles and walls (``agents.pos`` is replaced).

        ``before`` holds the positions before this tick's move; ``fixed`` (N,) bool
        marks the agents that never move (external groups).
        """
        n = agents.n
        if n == 0:
            return
        if self.kernels is not None:
            self._apply_compiled(world, agents, before, fixed)
            return
        x = np.array(agents.pos[:, 0])
        y = np.array(agents.pos[:, 1])
        if self._stale(world, agents, x, y):
            self._build(world, agents, x, y, fixed)
        touched = self._relax(world, agents, x, y, before, fixed)
        if touched.size == 0:
            return
        if world.edges == "wrap":  # the rows pushed may have left the world: fold them back in
            x[touched] = _fold(np.take(x, touched), world.width)
            y[touched] = _fold(np.take(y, touched), world.height)
        agents.pos = keep_room(np.stack([x, y], axis=1), agents.ids)

    # ----------------------------------------------------------------- lists
    @staticmethod
    def _static_key(world: World) -> tuple[bytes, ...]:
        return tuple(
            a.tobytes()
            for a in (world.obstacle_pos, world.obstacle_radius, world.wall_a, world.wall_b)
        )

    def _stale(self, world: World, agents: Agents, x: Array, y: Array) -> bool:
        if self._ids is not agents.ids or self._anchor_x.shape[0] != x.shape[0]:
            return True
        if self._static != self._static_key(world):
            return True
        return self._moved_too_far(world, x, y, REBUILD_AT)

    def _moved_too_far(
        self, world: World, x: Array, y: Array, fraction: float, rows: IntArray | None = None
    ) -> bool:
        """Has any agent (of ``rows``) moved ``fraction * skin`` or more since the lists were built?"""
        wrap = world.edges == "wrap"
        if rows is None:
            dx = _short(x - self._anchor_x, world.width, wrap)
            dy = _short(y - self._anchor_y, world.height, wrap)
        else:
            dx = _short(np.take(x, rows) - np.take(self._anchor_x, rows), world.width, wrap)
            dy = _short(np.take(y, rows) - np.take(self._anchor_y, rows), world.height, wrap)
        dx *= dx
        dy *= dy
        dx += dy
        limit = fraction * self._skin
        return bool(dx.size) and bool(dx.max() >= limit * limit)

    def _build(self, world: World, agents: Agents, x: Array, y: Array, fixed: np.ndarray) -> None:
        self._next = None  # lists being built elsewhere are older than these
        lists = make_lists(
            world, agents.radius, agents.mass, fixed, np.array(x), np.array(y), self.skin_radii,
            self.kernels,
        )  # fmt: skip
        self._take(lists, agents.ids)

    def _take(self, lists: Lists, ids: np.ndarray) -> None:
        self.builds += 1
        self._pairs = lists.pairs
        self._inv_mass = lists.inv_mass
        self._kinds = lists.kinds
        self._obstacles, self._walls = lists.obstacles, lists.walls
        self._ids, self._ids_then = ids, ids.copy()
        self._static = lists.static
        self._skin = lists.skin
        self._anchor_x, self._anchor_y = lists.anchor_x, lists.anchor_y
        if lists.index is not None:  # the compiled passes' per-agent index, made with the lists
            self._scratch["index"] = lists.index
            self._scratch["indexed"] = lists.pairs[0]

    # -------------------------------------------------- on compiled kernels
    def _apply_compiled(
        self, world: World, agents: Agents, before: Array, fixed: np.ndarray
    ) -> None:
        """:meth:`apply` on compiled kernels: the positions are pushed in place (the
        integrator made them this tick) and folded back in place; lists are made ahead on
        another thread (``PREPARE_AT``)."""
        assert self.kernels is not None
        pos = agents.pos
        if pos is before or pos.dtype != np.float64 or not pos.flags.c_contiguous:
            pos = np.array(pos, dtype=np.float64)
        elif not pos.flags.writeable:
            pos = pos.copy()
        x, y = pos[:, 0], pos[:, 1]
        if self._ids is not None and self._ids is not agents.ids:
            self._renumber(agents)
        drift = self._drift(world, agents, x, y)
        ready = self._next is not None and (drift >= REBUILD_AT or self._next[0].done())
        if ready and self._take_next(world, agents):
            drift = self._drift(world, agents, x, y)
        if drift >= REBUILD_AT:
            self._build(world, agents, x, y, fixed)
            drift = 0.0
        elif drift >= PREPARE_AT and self._next is None and agents.n >= AHEAD_MIN:
            self._prepare(world, agents, x, y, fixed)
        moved = self._relax_compiled(world, agents, x, y, before, fixed, drift)
        if moved.any():
            self.kernels.fold(world, pos, moved)
        agents.pos = keep_room(pos, agents.ids)

    def _renumber(self, agents: Agents) -> None:
        """Follow the agents to new rows (the compiled path keeps large groups in grid-cell
        order, re-sorting them every few ticks): the lists, their anchors and the kinds
        move with them, and the pairs are sorted by their new rows, as a build would
        leave them. When agents came or went, nothing changes (the lists are built)."""
        assert self.kernels is not None and self._ids is not None
        old, new = self._ids_then, agents.ids
        n = int(new.shape[0])
        if n == 0 or old.shape[0] != n or self._pairs[2].size:
            return
        place = np.full(int(max(old.max(), new.max())) + 1, -1, dtype=np.int64)
        place[new] = np.arange(n)
        new_row = place[old]
        if (new_row < 0).any():
            return

        def moved(v: np.ndarray) -> np.ndarray:
            out = np.empty_like(v)
            out[new_row] = v
            return out

        i, j = self.kernels.renumbered(self._pairs[0], self._pairs[1], new_row)
        self._pairs = (i, j, _NONE, _NONE)
        self._inv_mass = moved(self._inv_mass)
        if self._kinds is not None:
            self._kinds = (moved(self._kinds[0]), *self._kinds[1:])
        self._obstacles = (np.take(new_row, self._obstacles[0]), self._obstacles[1])
        self._walls = (np.take(new_row, self._walls[0]), self._walls[1])
        self._anchor_x, self._anchor_y = moved(self._anchor_x), moved(self._anchor_y)
        self._ids, self._ids_then = new, new.copy()
        self._next = None  # lists being built for the old rows

    def _drift(self, world: World, agents: Agents, x: Array, y: Array) -> float:
        """How far the agents have moved since the lists were built, in skins (the most
        any one has; infinite when the lists do not fit the agents or the obstacles)."""
        if self._ids is not agents.ids or self._anchor_x.shape[0] != x.shape[0]:
            return float("inf")
        if self._static != self._static_key(world) or not self._skin > 0.0:
            return float("inf")
        assert self.kernels is not None
        return float(self.kernels.drift(world, x, y, self._anchor_x, self._anchor_y)) / self._skin

    def _prepare(self, world: World, agents: Agents, x: Array, y: Array, fixed: np.ndarray) -> None:
        """Start building the next lists on another thread, from copies of this tick's state."""
        work = (
            world, agents.radius.copy(), agents.mass.copy(), fixed.copy(), np.array(x),
            np.array(y), self.skin_radii, self.kernels,
        )  # fmt: skip
        self._next = (_builder().submit(make_lists, *work), agents.ids)

    def _take_next(self, world: World, agents: Agents) -> bool:
        """Take up the lists built on the other thread (waiting for them) if they still fit:
        the same agents in the same rows, the same obstacles and walls."""
        assert self._next is not None
        future, ids = self._next
        self._next = None
        try:
            lists = future.result(timeout=WAIT_AHEAD)
        except Exception:  # the tick builds its own lists instead (a timeout included)
            return False
        if ids is not agents.ids or lists.static != self._static_key(world):
            return False
        self._take(lists, ids)
        self.built_ahead += 1
        return True

    # ---------------------------------------------------------------- passes
    def _relax(
        self, world: World, agents: Agents, x: Array, y: Array, before: Array, fixed: np.ndarray
    ) -> IntArray:
        """Up to ``passes`` passes over the lists, moving ``x`` and ``y`` in place; the rows moved.

        The first pass measures every candidate, later ones only those of the
        agents the previous pass moved. When a push takes an agent half the skin
        from where the lists were built, they are built again where the agents
        now are and the next pass measures everything.
        """
        radius = agents.radius
        old_x = np.ascontiguousarray(before[:, 0])
        old_y = np.ascontiguousarray(before[:, 1])
        bounded = world.edges != "wrap"
        n = agents.n
        dirty: IntArray | None = None  # None: everything
        touched: list[IntArray] = []
        self.last_passes = 0
        for _ in range(self.passes):
            self.last_passes += 1
            i, j, contact, share = self._pairs
            ao, oo = self._obstacles
            aw, ww = self._walls
            moved: list[IntArray] = []
            sel = None if dirty is None else _touching(dirty, n, i, j)
            if i.size and (sel is None or sel.size):
                pairs = (i, j, contact, share)
                if sel is not None:
                    pairs = (np.take(i, sel), np.take(j, sel), contact[sel], share[sel])
                found = pair_moves(x, y, *pairs, world, over_relaxation=self.over_relaxation)
                self._add_in_order(x, y, found, moved)
            if ao.size:
                sel = None if dirty is None else _touching(_union(dirty, moved, n), n, ao)
                if sel is None or sel.size:
                    a, o = (ao, oo) if sel is None else (np.take(ao, sel), np.take(oo, sel))
                    self._add(x, y, obstacle_moves(x, y, radius, a, o, world), moved)
            if aw.size:
                sel = None if dirty is None else _touching(_union(dirty, moved, n), n, aw)
                if sel is None or sel.size:
                    a, k = (aw, ww) if sel is None else (np.take(aw, sel), np.take(ww, sel))
                    found = wall_moves(x, y, old_x, old_y, radius, a, k, world)
                    self._add(x, y, found, moved)
            if not moved:
                break
            dirty = _union(_EMPTY, moved, n)
            touched.append(dirty)
            if bounded:  # keep pushed agents inside the world before the next pass measures
                x[dirty] = np.clip(x[dirty], 0.0, world.width)
                y[dirty] = np.clip(y[dirty], 0.0, world.height)
            if self._moved_too_far(world, x, y, 0.5, dirty):  # the pushes outran the skin
                self._build(world, agents, x, y, fixed)
                dirty = None
        return _union(_EMPTY, touched, n)

    def _relax_compiled(
        self, world: World, agents: Agents, x: Array, y: Array, before: Array, fixed: np.ndarray,
        drift: float,
    ) -> np.ndarray:  # fmt: skip
        """:meth:`_relax` on the compiled kernel (``world/non_penetration_loops.py``): the same
        passes and positions. ``drift``: the farthest any agent is from where the lists were
        built, in skins; the kernel returns when a push may have taken an agent half the
        skin from there, and the lists are built again. The rows moved, as an (N,) bool mask."""
        assert self.kernels is not None
        old_x, old_y = before[:, 0], before[:, 1]  # read only near walls
        if self._kinds is None:  # lists made by the NumPy constraint
            self._kinds = self.kernels.kinds(agents.radius, self._inv_mass)
        touched = np.zeros(agents.n, dtype=bool)
        left = self.passes
        self.last_passes = 0
        while left > 0:
            ran, rebuild = self.kernels.relax(
                world, agents.radius, self._kinds, x, y, old_x, old_y, self._pairs,
                self._obstacles, self._walls, (0.5 - drift) * self._skin, self._skin, left,
                self.over_relaxation, CONTACT_MARGIN, touched, self._scratch,
            )  # fmt: skip
            self.last_passes += ran
            left -= ran
            if not rebuild:
                break
            self._build(world, agents, x, y, fixed)
            drift = 0.0
        return touched

    @staticmethod
    def _add_in_order(x: Array, y: Array, found: Moves | None, moved: list[IntArray]) -> None:
        """Add the moves of ``found`` (rows may repeat) one by one, in their order."""
        if found is None:
            return
        rows, mx, my = found
        np.add.at(x, rows, mx)
        np.add.at(y, rows, my)
        moved.append(distinct(rows, x.shape[0]))

    @staticmethod
    def _add(x: Array, y: Array, found: Moves | None, moved: list[IntArray]) -> None:
        if found is None:
            return
        rows, mx, my = found
        x[rows] += mx
        y[rows] += my
        moved.append(rows)


@dataclass(frozen=True)
class Lists:
    """Candidate lists made at one moment: pairs ``(i, j, contact, share)`` (on compiled
    kernels int32 rows, ``contact`` and ``share`` left empty: the kernel works them out),
    (agent, obstacle) and (agent, wall) candidates, the positions they were made at, and
    on compiled kernels the passes' per-agent index of the pairs and the agents' kinds
    (radius and inverse mass, ``world/non_penetration_loops.kinds``)."""

    pairs: tuple[IntArray, IntArray, Array, Array]
    inv_mass: Array
    obstacles: tuple[IntArray, IntArray]
    walls: tuple[IntArray, IntArray]
    skin: float
    anchor_x: Array
    anchor_y: Array
    static: tuple[bytes, ...]
    index: tuple[np.ndarray, ...] | None
    kinds: tuple[np.ndarray, ...] | None


def make_lists(
    world: World, radius: Array, mass: Array, fixed: np.ndarray, x: Array, y: Array,
    skin_radii: float, kernels: Any,
) -> Lists:  # fmt: skip
    """The candidate lists of agents at ``x``, ``y`` (kept as the lists' anchors: pass
    arrays nobody changes). Safe on another thread: it reads ``world`` and its arguments
    only."""
    static = NonPenetration._static_key(world)
    skin = skin_radii * float(radius.max())
    inv_mass = np.where(fixed, 0.0, 1.0 / mass)
    # the compiled search takes the coordinates as they are (cells clamped, minimum image)
    found = None if kernels is None else kernels.candidates(world, x, y, radius, skin, inv_mass)
    index = kinds = None
    if found is None:
        pos = np.stack([x, y], axis=1)
        if world.edges == "wrap":
            pos = wrap_positions(pos, world)
        i, j = close_pairs(world, pos, radius, skin)
        keys = (i << 32) | j  # sorted by (i, j): the compiled search's order, so the
        keys.sort()  # moves add up in the same order on both paths
        i, j = keys >> 32, keys & 0xFFFFFFFF
        pairs = pair_constants(radius, inv_mass, i, j)
    else:  # the kernel works out each pair's contact and share from radius and inv_mass
        pairs = (*found, _NONE, _NONE)
    if kernels is not None:
        index = kernels.pair_index(pairs[0], pairs[1], x.shape[0])
        kinds = kernels.kinds(radius, inv_mass)
    ao, oo, aw, ww = near_static(x, y, radius, world, skin)
    free = ~np.take(fixed, ao)
    ao, oo = ao[free], oo[free]
    free = ~np.take(fixed, aw)
    aw, ww = aw[free], ww[free]
    return Lists(pairs, inv_mass, (ao, oo), (aw, ww), skin, x, y, static, index, kinds)


_BUILDER: tuple[int, ThreadPoolExecutor] | None = None
_BUILDER_LOCK = threading.Lock()

#: Seconds a tick waits for lists built ahead before building its own (a thread that
#: never answers must not hang the simulation).
WAIT_AHEAD = 10.0


def _builder() -> ThreadPoolExecutor:
    """The one thread that builds lists ahead for every simulation of the process (a new
    one in a forked child, where the parent's thread does not run)."""
    global _BUILDER
    with _BUILDER_LOCK:
        if _BUILDER is None or _BUILDER[0] != os.getpid():
            _BUILDER = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="behaviortk-lists"))
        return _BUILDER[1]


def _touching(rows: IntArray, n: int, *owners: IntArray) -> IntArray:
    """Indices of the list items (pairs: two owner columns) that involve one of ``rows``."""
    mark = np.zeros(n, dtype=bool)
    mark[rows] = True
    hit = np.take(mark, owners[0])
    for more in owners[1:]:
        hit |= np.take(mark, more)
    return np.flatnonzero(hit)


def _union(rows: IntArray, more: list[IntArray], n: int) -> IntArray:
    """The distinct rows of ``rows`` and ``more`` (all in ``[0, n)``), ascending."""
    return distinct(np.concatenate([rows, *more]), n) if more else rows


def near_static(
    x: Array, y: Array, radius: Array, world: World, reach: float
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Candidate (agent, obstacle) and (agent, wall) pairs closer than ``reach`` to touching.

    Returns ``(agents, obstacles, agents, walls)``. A loop over the obstacles and
    walls (few), vectorised over agents; minimum image on wrapped worlds.
    """
    wrap = world.edges == "wrap"
    ao, oo, aw, ww = [_EMPTY], [_EMPTY], [_EMPTY], [_EMPTY]
    for m in range(world.obstacle_pos.shape[0]):
        dx = _short(x - world.obstacle_pos[m, 0], world.width, wrap)
        dy = _short(y - world.obstacle_pos[m, 1], world.height, wrap)
        limit = world.obstacle_radius[m] + radius + reach
        near = np.flatnonzero(dx * dx + dy * dy < limit * limit)
        ao.append(near)
        oo.append(np.full(near.size, m, dtype=np.int64))
    for m in range(world.wall_a.shape[0]):
        (ax, ay), (bx, by) = world.wall_a[m], world.wall_b[m]
        ex, ey = bx - ax, by - ay
        px = ax + 0.5 * ex + _short(x - (ax + 0.5 * ex), world.width, wrap)
        py = ay + 0.5 * ey + _short(y - (ay + 0.5 * ey), world.height, wrap)
        t = np.clip(((px - ax) * ex + (py - ay) * ey) / (ex * ex + ey * ey), 0.0, 1.0)
        ox, oy = px - (ax + t * ex), py - (ay + t * ey)
        limit = radius + reach
        near = np.flatnonzero(ox * ox + oy * oy < limit * limit)
        aw.append(near)
        ww.append(np.full(near.size, m, dtype=np.int64))
    return np.concatenate(ao), np.concatenate(oo), np.concatenate(aw), np.concatenate(ww)
