"""Sense: the facts of one tick, computed lazily over all agents and cached.

Built once per tick by the simulation. Conditions and steering primitives ask
for what they need (neighbour sets, nearest agents, target positions); each
answer is computed once, vectorised, and cached by what was asked, so both
engines read the very same arrays. Loops run over groups or target specs,
never over agents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.registry import Registries, default
from behaviortk.vec import Array
from behaviortk.world.spatial import SpatialIndex, displacement, displacement_columns
from behaviortk.world.state import Agents, World

#: Cosine slack of the field-of-view test, so a neighbour exactly on the
#: boundary angle (fov / 2) counts as seen despite rounding in cos().
FOV_COS_TOLERANCE = 1e-9

BlackboardPoints = Callable[[str, str, np.ndarray], Array]
TargetFn = Callable[[Any, "Sense", str], "TargetFacts"]
"""A target kind's implementation: ``fn(spec, sense, group) -> TargetFacts`` for the group's rows."""


@dataclass(frozen=True)
class Neighbours:
    """Directed neighbour pairs of one group, sorted by ``(i, j)``.

    ``i`` and ``j`` are global agent rows; the pairs of the group's ``k``-th row
    are ``offsets[k]:offsets[k + 1]`` (CSR layout), so per-agent sums are
    ``np.add.reduceat`` or ``np.bincount`` over ``i`` in a fixed order.
    """

    i: np.ndarray  # (P,) int64 observer row
    j: np.ndarray  # (P,) int64 neighbour row
    offsets: np.ndarray  # (n_group + 1,) int64
    d: Array  # (P, 2) pos[j] - pos[i], shortest image on wrapped worlds
    dist: Array  # (P,) |d|

    @property
    def count(self) -> np.ndarray:
        """Neighbours per group row."""
        return np.diff(self.offsets)


@dataclass(frozen=True)
class TargetFacts:
    """Where a target is for each row of a group; ``valid`` False where there is none."""

    pos: Array  # (n, 2) nearest image as seen from the agent
    vel: Array  # (n, 2)
    agent: np.ndarray  # (n,) int64 global row of the target agent, -1 if not an agent
    valid: np.ndarray  # (n,) bool


class Sense:
    """Per-tick sensed facts; ``pointer`` and ``blackboard_points`` may be set after creation."""

    def __init__(
        self,
        world: World,
        agents: Agents,
        rand: Array,
        tick: int,
        time: float,
        *,
        blackboard_points: BlackboardPoints | None = None,
        pointer: Array | None = None,
        registries: Registries | None = None,
    ) -> None:
        self.registries = default() if registries is None else registries
        """Where target kinds and condition implementations are looked up."""
        self.world = world
        self.agents = agents
        self.rand = rand
        self.tick = tick
        self.time = time
        self.blackboard_points = blackboard_points
        self.pointer = None if pointer is None else np.asarray(pointer, dtype=np.float64)
        self.index = SpatialIndex(world, agents.pos)
        self._neighbours: dict[tuple[str, str], Neighbours] = {}
        self._nearest: dict[tuple[str, str, float], tuple[np.ndarray, Array]] = {}
        self._targets: dict[tuple[Any, str], TargetFacts] = {}

    # ----------------------------------------------------------------- rows
    def rows(self, group: str) -> slice:
        """The contiguous rows of ``group``."""
        try:
            return self.agents.slices[group]
        except KeyError:
            known = ", ".join(self.agents.slices)
            raise KeyError(f"unknown group {group!r}; groups are: {known}") from None

    def other_rows(self, group: str, of: str) -> slice:
        """Rows named by ``of``: "same" (the group itself), "any" (everyone) or a group name."""
        if of == "same":
            return self.rows(group)
        if of == "any":
            return slice(0, self.agents.n)
        return self.rows(of)

    # ----------------------------------------------------------- neighbours
    def neighbours(self, group: str, of: str = "same") -> Neighbours:
        """Agents of ``of`` within each ``group`` agent's view distance and field of view."""
        key = (group, of)
        found = self._neighbours.get(key)
        if found is None:
            found = self._compute_neighbours(self.rows(group), self.other_rows(group, of))
            self._neighbours[key] = found
        return found

    def neighbour_count(self, group: str, of: str = "same") -> np.ndarray:
        return self.neighbours(group, of).count

    def _compute_neighbours(self, a: slice, b: slice) -> Neighbours:
        """Candidates from the spatial index, sorted, then the exact tests.

        Everything works on 1-D columns gathered with ``np.take`` (much faster
        than fancy indexing of ``(N, 2)`` arrays); filtering keeps the order.
        """
        ag = self.agents
        n_a = a.stop - a.start
        view = ag.view_distance[a]
        half = 0.5 * ag.fov[a]
        radius = float(view.max()) if n_a else 0.0
        i, j = self.index.sorted_pairs(a, b, radius)
        dx, dy = displacement_columns(ag.pos, i, j, self.world)
        d2 = dx * dx + dy * dy
        if n_a and float(view.min()) == radius:
            keep = d2 <= radius * radius
        else:
            vd = np.take(ag.view_distance, i)
            keep = d2 <= vd * vd
        dist = np.sqrt(d2)
        if n_a and float(half.min()) < np.pi:
            along = np.take(ag.heading[:, 0], i) * dx + np.take(ag.heading[:, 1], i) * dy
            if float(half.max()) == float(half.min()):
                cos_half = float(np.cos(half[0])) - FOV_COS_TOLERANCE
                keep &= along >= dist * cos_half
            else:
                half_i = np.take(0.5 * ag.fov, i)
                cos_i = np.cos(np.minimum(half_i, np.pi)) - FOV_COS_TOLERANCE
                keep &= (half_i >= np.pi) | (along >= dist * cos_i)
        if not keep.all():
            idx = np.flatnonzero(keep)
            i, j = np.take(i, idx), np.take(j, idx)
            dx, dy, dist = np.take(dx, idx), np.take(dy, idx), np.take(dist, idx)
        counts = np.bincount(i - a.start, minlength=n_a) if n_a else np.zeros(0, np.int64)
        offsets = np.zeros(n_a + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        d = np.empty((i.shape[0], 2))
        d[:, 0] = dx
        d[:, 1] = dy
        return Neighbours(i=i, j=j, offsets=offsets, d=d, dist=dist)

    # -------------------------------------------------------------- nearest
    def nearest(
        self, group: str, of_group: str, radius: float | None = None
    ) -> tuple[np.ndarray, Array]:
        """Closest agent of ``of_group`` (not oneself) within ``radius`` per row of ``group``.

        Returns ``(agent row or -1, distance or inf)``; ``radius`` None means unlimited.
        """
        r = np.inf if radius is None else float(radius)
        key = (group, of_group, r)
        found = self._nearest.get(key)
        if found is None:
            found = self.index.nearest(self.rows(group), self.other_rows(group, of_group), r)
            self._nearest[key] = found
        return found

    # -------------------------------------------------------------- targets
    def target(self, spec: Any, group: str) -> TargetFacts:
        """Facts about the target ``spec`` (a registered target kind) for ``group``'s rows."""
        key = (spec, group)
        found = self._targets.get(key)
        if found is None:
            found = self._compute_target(spec, group)
            self._targets[key] = found
        return found

    def _compute_target(self, spec: Any, group: str) -> TargetFacts:
        resolve: TargetFn = self.registries.targets.impl(spec.kind)
        return resolve(spec, self, group)

    def agent_facts(self, own: Array, agent: np.ndarray) -> TargetFacts:
        """Facts of target agents (global rows, -1 = none) seen from positions ``own``."""
        valid = agent >= 0
        safe = np.where(valid, agent, 0)
        if self.agents.n == 0:
            return self.point_facts(own, None)
        pos = own + displacement(own, self.agents.pos[safe], self.world)
        vel = self.agents.vel[safe].copy()
        pos[~valid] = 0.0
        vel[~valid] = 0.0
        return TargetFacts(pos=pos, vel=vel, agent=np.where(valid, agent, -1), valid=valid)

    def point_facts(self, own: Array, point: Array | None) -> TargetFacts:
        """Facts of one fixed point seen from positions ``own`` (invalid when None or not finite)."""
        n = own.shape[0]
        vel = np.zeros((n, 2))
        agent = np.full(n, -1, dtype=np.int64)
        if point is None or not np.all(np.isfinite(point)):
            return TargetFacts(np.zeros((n, 2)), vel, agent, np.zeros(n, dtype=bool))
        pos = own + displacement(own, np.broadcast_to(point, (n, 2)), self.world)
        return TargetFacts(pos, vel, agent, np.ones(n, dtype=bool))

    def blackboard_facts(self, own: Array, group: str, rows: slice, key: str) -> TargetFacts:
        """Facts of the points stored under ``key`` on the agents' blackboards."""
        n = own.shape[0]
        if self.blackboard_points is None:
            return self.point_facts(own, None)
        row_idx = np.arange(rows.start, rows.stop, dtype=np.int64)
        points = np.asarray(self.blackboard_points(group, key, row_idx), dtype=np.float64)
        points = points.reshape(n, 2)
        valid = np.asarray(np.isfinite(points).all(axis=1), dtype=bool)
        safe = np.where(valid[:, None], points, own)
        pos = own + displacement(own, safe, self.world)
        pos[~valid] = 0.0
        return TargetFacts(pos, np.zeros((n, 2)), np.full(n, -1, dtype=np.int64), valid)
