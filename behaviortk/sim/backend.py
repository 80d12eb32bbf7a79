"""``Kernels``: what a Simulation and its ``Sense`` call when they run on compiled kernels.

Each method answers exactly what its NumPy counterpart answers (named in its
docstring); a case a kernel does not cover returns None and the caller takes
the NumPy path. :meth:`Kernels.warm` compiles (or loads from the disk cache)
every kernel once on small inputs, so the first tick is not slowed down by it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from behaviortk.leaves import conditions_loops
from behaviortk.sense import nearest_loops
from behaviortk.sense import query_loops as spatial
from behaviortk.sense.sensing import FOV_COS_TOLERANCE, Neighbours, TargetFacts
from behaviortk.sim.cell_order import cell_order
from behaviortk.steering import combiner_loops as kcomb
from behaviortk.steering import flock_loops, memory_loops, shape_loops
from behaviortk.steering.act_loops import act
from behaviortk.vec import Array
from behaviortk.world import integrate_loops, streams_loops
from behaviortk.world import non_penetration_loops as knp
from behaviortk.world.spatial import SMALL_SIDE, padded
from behaviortk.world.state import World


class QueriedNeighbours(Neighbours):
    """``Neighbours`` from :func:`spatial.neighbour_query`: the offsets and every observer's
    flocking sums at once, the pairs (``i``, ``j``, ``d``, ``dist``) computed on first use.

    Flocking leaves on kernels read ``sums`` (one pass over the pairs, shared by
    separation, alignment and cohesion, summed in the same order as the pairs);
    a NumPy leaf, a plugin or a condition with a radius asks for the pairs.
    """

    sums: Array

    def __init__(self, offsets: np.ndarray, sums: Array, make: Callable[[], Any]) -> None:
        # a frozen dataclass: set through __dict__
        self.__dict__.update(offsets=offsets, sums=sums, _make=make, _pairs=None)

    def _get(self) -> tuple[np.ndarray, np.ndarray, Array, Array]:
        pairs = self.__dict__["_pairs"]
        if pairs is None:
            pairs = self.__dict__["_pairs"] = tuple(self.__dict__["_make"]())
        return pairs

    @property
    def i(self) -> np.ndarray:
        return self._get()[0]

    @property
    def j(self) -> np.ndarray:
        return self._get()[1]

    @property
    def d(self) -> Array:
        return self._get()[2]

    @property
    def dist(self) -> Array:
        return self._get()[3]


class DrawnLater:
    """``Kernels.uniforms`` not drawn yet (``sense.DrawnLater``): the whole table on first use,
    or only the rows a leaf reads (the compiled wander asks for its rows alone)."""

    def __init__(self, seed: int, ids: np.ndarray, tick: int, slots: int) -> None:
        self.seed, self.tick, self.slots = np.uint64(seed % 2**64), np.uint64(tick % 2**64), slots
        self.ids = np.ascontiguousarray(ids, dtype=np.int64)

    def table(self) -> np.ndarray:
        return streams_loops.uniforms(self.seed, self.ids, self.tick, self.slots)

    def rows(self, rows: np.ndarray, first: int, width: int) -> np.ndarray:
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        return streams_loops.uniforms_rows(self.seed, self.ids, rows, self.tick, first, width)


class Kernels:
    """The compiled path (see the package docstring)."""

    name = "numba"
    act = staticmethod(act)
    integrate = staticmethod(integrate_loops.integrate)
    cell_order = staticmethod(cell_order)

    # -------------------------------------------------------------- sense
    @staticmethod
    def uniforms(seed: int, ids: np.ndarray, tick: int, slots: int) -> np.ndarray:
        """``world.streams.uniforms``, bit for bit (``world/streams_loops.py``)."""
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        return streams_loops.uniforms(np.uint64(seed % 2**64), ids, np.uint64(tick % 2**64), slots)

    @staticmethod
    def uniforms_later(seed: int, ids: np.ndarray, tick: int, slots: int) -> DrawnLater:
        """:meth:`uniforms`, drawn when (and where) first read."""
        return DrawnLater(seed, ids, tick, slots)

    @staticmethod
    def neighbours(world: World, agents: Any, a: slice, b: slice) -> Neighbours:
        """``Sense._compute_neighbours(a, b)``: the same pairs, offsets and distances
        (:class:`QueriedNeighbours`: pairs made when first asked for)."""
        n_a = max(0, a.stop - a.start)
        view = np.ascontiguousarray(agents.view_distance[a], dtype=np.float64)
        radius = float(view.max()) if n_a else 0.0
        if n_a == 0 or b.stop <= b.start or not radius >= 0:
            none = np.zeros(0, dtype=np.int64)
            offsets = np.zeros(n_a + 1, dtype=np.int64)
            return Neighbours(none, none.copy(), offsets, np.zeros((0, 2)), np.zeros(0))
        half = 0.5 * agents.fov[a]
        fov = float(half.min()) < np.pi
        if float(half.max()) == float(half.min()):
            cos_limit = np.full(n_a, float(np.cos(half[0])) - FOV_COS_TOLERANCE)
            all_round = np.zeros(n_a, dtype=np.bool_)
        else:
            cos_limit = np.cos(np.minimum(half, np.pi)) - FOV_COS_TOLERANCE
            all_round = np.ascontiguousarray(half >= np.pi)
        cap = np.ascontiguousarray(agents.max_neighbours[a], dtype=np.int64)
        nx, ny, rx, ry = spatial.grid_shape(
            world.width, world.height, padded(radius), b.stop - b.start, int(cap.max())
        )
        args = (
            agents.pos,
            agents.vel,
            agents.heading,
            view,
            np.ascontiguousarray(cos_limit, dtype=np.float64),
            all_round,
            cap,
            a.start,
            a.stop,
            b.start,
            b.stop,
            float(world.width),
            float(world.height),
            world.edges == "wrap",
            fov,
            a.start < b.stop and b.start < a.stop,
            nx,
            ny,
            rx,
            ry,
        )
        offsets, sums, *_ = spatial.neighbour_query(*args, False)
        return QueriedNeighbours(offsets, sums, lambda: spatial.neighbour_query(*args, True)[2:])

    @staticmethod
    def nearest(
        world: World, pos: Array, a: slice, b: slice, radius: float
    ) -> tuple[np.ndarray, Array] | None:
        """``SpatialIndex.nearest``: brute force when one side has at most ``SMALL_SIDE`` rows
        (the same tie rules), else a grid of ``b`` searched in rings (``nearest_loops``)."""
        n_a = max(0, a.stop - a.start)
        n_b = max(0, b.stop - b.start)
        if n_a == 0 or n_b == 0 or not radius >= 0:
            return None
        w, h, wrap = float(world.width), float(world.height), world.edges == "wrap"
        if min(n_a, n_b) <= SMALL_SIDE:
            return spatial.nearest_small(
                pos, a.start, a.stop, b.start, b.stop, float(radius), w, h, wrap
            )
        nx, ny = nearest_loops.grid_shape(w, h, n_b)
        return nearest_loops.nearest_grid(
            pos, a.start, a.stop, b.start, b.stop, float(radius), w, h, wrap, nx, ny
        )

    @staticmethod
    def nearest_visible(
        world: World, pos: Array, a: slice, b: slice, heading: Array, reach: Array, half: Array
    ) -> tuple[np.ndarray, Array]:
        """``world.visible_nearest.nearest_visible(index, a, b, heading, reach, half)``: a grid
        of ``b`` searched in rings, line of sight nearest first (``nearest_loops``)."""
        n_a = max(0, a.stop - a.start)
        n_b = max(0, b.stop - b.start)
        if n_a == 0 or n_b == 0:
            return np.full(n_a, -1, dtype=np.int64), np.full(n_a, np.inf)
        w, h = float(world.width), float(world.height)
        nx, ny = nearest_loops.grid_shape(w, h, n_b)
        f64 = np.float64
        return nearest_loops.visible_grid(
            pos, a.start, a.stop, b.start, b.stop,
            np.ascontiguousarray(heading, dtype=f64),
            np.ascontiguousarray(reach, dtype=f64),
            np.ascontiguousarray(np.cos(np.minimum(half, np.pi)) - FOV_COS_TOLERANCE, dtype=f64),
            np.ascontiguousarray(half >= np.pi),
            w, h, world.edges == "wrap",
            np.ascontiguousarray(world.obstacle_pos, f64).reshape(-1, 2),
            np.ascontiguousarray(world.obstacle_radius, f64),
            np.ascontiguousarray(world.wall_a, f64).reshape(-1, 2),
            np.ascontiguousarray(world.wall_b, f64).reshape(-1, 2),
            nx, ny,
        )  # fmt: skip

    @staticmethod
    def agent_facts(world: World, agents: Any, own: Array, agent: np.ndarray) -> TargetFacts:
        """``Sense.agent_facts(own, agent)`` (``agents.n > 0``)."""
        pos, vel, rows, valid = spatial.agent_facts(
            np.ascontiguousarray(own, dtype=np.float64),
            agents.pos,
            agents.vel,
            np.ascontiguousarray(agent, dtype=np.int64),
            float(world.width),
            float(world.height),
            world.edges == "wrap",
        )
        return TargetFacts(pos=pos, vel=vel, agent=rows, valid=valid)

    @staticmethod
    def in_range(
        pos: Array, facts: TargetFacts, radius: float, hysteresis: float, prev: np.ndarray
    ) -> np.ndarray:
        """``conditions.in_range`` from the target's facts (positions of the group's rows;
        ``leaves/conditions_loops.py``)."""
        return conditions_loops.in_range(
            np.ascontiguousarray(pos, dtype=np.float64),
            np.ascontiguousarray(facts.pos, dtype=np.float64),
            np.ascontiguousarray(facts.valid, dtype=np.bool_),
            float(radius),
            float(hysteresis),
            np.ascontiguousarray(prev, dtype=np.bool_),
        )

    # ------------------------------------------------------- integrate
    @staticmethod
    def relax(
        world: World, radius: Array, kinds: tuple[np.ndarray, ...], x: Array, y: Array,
        old_x: Array, old_y: Array, pairs: tuple[np.ndarray, ...],
        obstacles: tuple[np.ndarray, np.ndarray], walls: tuple[np.ndarray, np.ndarray],
        slack: float, skin: float, passes: int, over_relaxation: float, margin: float,
        touched: np.ndarray, scratch: dict[str, np.ndarray],
    ) -> tuple[int, bool]:  # fmt: skip
        """``NonPenetration._relax``'s passes until the lists must be built again (a push
        took an agent ``slack`` from where it began; ``world/non_penetration_loops.py``):
        ``(passes run, rebuild)``; ``x``, ``y``, ``touched`` changed in place. ``scratch``
        (the caller's, kept between ticks) holds the kernel's work arrays."""
        return knp.run(
            world, radius, kinds, x, y, old_x, old_y, pairs, obstacles, walls, slack, skin,
            passes, over_relaxation, margin, touched, scratch,
        )  # fmt: skip

    @staticmethod
    def candidates(
        world: World, x: Array, y: Array, radius: Array, reach: float, inv_mass: Array
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Non-penetration's candidate pairs (int32 rows, sorted by ``(i, j)``;
        ``world/non_penetration_loops.candidates``); None where its grid does not fit."""
        return knp.candidates(world, x, y, radius, reach, inv_mass)

    @staticmethod
    def kinds(radius: Array, inv_mass: Array) -> tuple[np.ndarray, ...]:
        """The agents' kinds of radius and inverse mass (``world/non_penetration_loops.kinds``)."""
        return knp.kinds(radius, inv_mass)

    @staticmethod
    def renumbered(
        i: np.ndarray, j: np.ndarray, new_row: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Pairs ``(i, j)`` after the agents moved to ``new_row[old row]``, sorted again
        (``world/non_penetration_loops.renumbered``)."""
        return knp.renumbered(
            np.ascontiguousarray(i, dtype=np.int32),
            np.ascontiguousarray(j, dtype=np.int32),
            np.ascontiguousarray(new_row, dtype=np.int64),
        )

    @staticmethod
    def pair_index(i: np.ndarray, j: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
        """The passes' per-agent index of the pairs ``(i, j)`` of ``n`` agents
        (``world/non_penetration_loops.pair_index``)."""
        return knp.pair_index(i, j, n)

    @staticmethod
    def fold(world: World, pos: Array, moved: np.ndarray) -> None:
        """Fold the ``moved`` rows of ``pos`` (N, 2) back into a wrapped world, in place
        (``NonPenetration.apply``'s last step)."""
        if world.edges == "wrap":
            knp.fold(pos, moved, float(world.width), float(world.height))

    @staticmethod
    def drift(world: World, x: Array, y: Array, anchor_x: Array, anchor_y: Array) -> float:
        """The farthest any agent is from its anchor (minimum image): how far the agents
        have moved since non-penetration's lists were built."""
        w, h = float(world.width), float(world.height)
        return float(knp.drift(x, y, anchor_x, anchor_y, w, h, world.edges == "wrap"))

    # --------------------------------------------------------------- warm
    @staticmethod
    def warm() -> None:
        """Compile (or load from the cache) every kernel on tiny inputs of the real types."""
        n = 4
        pos = np.array([[1.0, 1.0], [2.0, 1.5], [3.0, 2.0], [1.5, 3.0]])
        vel = np.ones((n, 2))
        head = np.tile([1.0, 0.0], (n, 1))
        f = np.ones(n)
        i64 = np.arange(n, dtype=np.int64)
        yes = np.ones(n, dtype=np.bool_)
        out = np.empty((n, 2))
        none = np.empty((0, 2))
        streams_loops.uniforms(np.uint64(1), i64, np.uint64(0), 2)
        streams_loops.uniforms_rows(np.uint64(1), i64, i64[:2], np.uint64(0), 1, 2)
        for pairs in (False, True):
            spatial.neighbour_query(
                pos, vel, head, f, f, ~yes, i64, 0, n, 0, n, 10.0, 10.0, True, True, True, 3, 3,
                1, 1, pairs,
            )  # fmt: skip
        spatial.nearest_small(pos, 0, 2, 2, n, 5.0, 10.0, 10.0, True)
        nearest_loops.nearest_grid(pos, 0, 2, 2, n, 5.0, 10.0, 10.0, True, 2, 2)
        nearest_loops.visible_grid(
            pos, 0, 2, 2, n, head, f, f, yes, 10.0, 10.0, True, np.ones((1, 2)), np.ones(1),
            none, none, 2, 2,
        )  # fmt: skip
        spatial.agent_facts(pos, pos, vel, i64, 10.0, 10.0, True)
        conditions_loops.in_range(pos, pos, yes, 1.0, 0.5, yes)
        outs = [np.empty((n, 2)) for _ in range(4)] + [np.empty(n), np.empty(n)]
        integrate_loops.step(
            pos, vel, head, vel, f, f, f, f, f, f, f, False, f, f, 0.1, 10.0, 10.0, 0, *outs
        )
        integrate_loops.smooth(np.zeros((2, n, 2)), 0, head, head, np.empty((n, 2)))
        kcomb.accumulate_rows(np.zeros((n, 2)), i64, vel, f)
        acted = np.zeros((n, 3), dtype=np.bool_)
        kcomb.accumulate_acted(np.zeros((n, 2)), i64, vel, f, acted, 1, 0)
        kcomb.request_rows(np.ones((n, 3), dtype=np.bool_))
        memory_loops.wander(
            i64, pos, vel, head, f, f, np.zeros((n, 2)), np.zeros((n, 2)),
            True, 1.0, 1.0, 1.0, 0.1, False, 1.0, out,
        )  # fmt: skip
        offsets = np.zeros(n + 1, dtype=np.int64)
        flock_loops.flock(i64, i64, offsets, i64, pos, pos, vel, f, 1.0, -1.0, 1.0, out, none, out)
        sums = np.zeros((n, spatial.SUMS))
        flock_loops.flock_sums(i64, i64, offsets, sums, pos, vel, f, 1.0, -1.0, 1.0, out, none, out)
        kinds = i64[:3] % 3
        flock_loops.flock_blend(i64, i64, offsets, sums, pos, vel, f, f, kinds, f[:3], 1.0, out)
        obstacles, radii = np.ones((1, 2)), np.ones(1)
        shape_loops.obstacle_avoidance(
            i64, pos, vel, head, f, f, obstacles, radii, 1.0, 1.0, 1.0, out
        )
        shape_loops.lj_avoidance(
            i64, pos, head, obstacles, radii, 0.0, 1.0, 1.0, 2.5, 9.0, 1.0, out
        )
        shape_loops.wall_avoidance(
            i64, pos, head, obstacles, obstacles, obstacles, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, out
        )
        memory_loops.path_following(
            i64, i64, pos, vel, f, yes, pos, np.zeros(n, np.int64), 1.0, True, 2.0, 1.0, out
        )
        knp.warm()
        forces = np.ones((2, n, 2))
        kcomb.blend(forces, i64, f, 1.0, out)
        kcomb.prioritized_sum(forces, i64, f, 1.0, out)
        kcomb.first_nonzero(forces, i64, f, 1e-3, 1.0, out)
        kcomb.prioritized_dither(forces, i64, f, np.zeros((n, 2)), 0, np.ones(2), 1.0, out)
