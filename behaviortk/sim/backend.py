"""``Kernels``: what a Simulation and its ``Sense`` call when they run on compiled kernels.

Each method answers exactly what its NumPy counterpart answers (named in its
docstring); a case a kernel does not cover returns None and the caller takes
the NumPy path. :data:`WARM` compiles (or loads from the disk cache) each kernel
on tiny inputs, :func:`warm_row_loop` a leaf's generated loop, so that the
kernels a Simulation needs (``sim/kernel_plan.py``) are ready before its first tick.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from behaviortk.engines.batch import status_loops
from behaviortk.leaves import conditions_loops
from behaviortk.sense import held_loops, nearest_loops
from behaviortk.sense import query_loops as spatial
from behaviortk.sense.sensing import (
    FOV_COS_TOLERANCE,
    LazyNeighbours,
    Neighbours,
    TargetFacts,
    facts_at,
)
from behaviortk.sim import think_loops
from behaviortk.sim.cell_order import cell_order
from behaviortk.steering import combiner_loops as kcomb
from behaviortk.steering import flock_loops, jobs, memory_loops, orca_loops, row_loops, shape_loops
from behaviortk.steering.act_loops import act
from behaviortk.vec import Array
from behaviortk.world import integrate_loops, streams_loops
from behaviortk.world import non_penetration_loops as knp
from behaviortk.world.spatial import SMALL_SIDE, observer_rows, padded
from behaviortk.world.state import World


class QueriedNeighbours(LazyNeighbours):
    """``Neighbours`` from :func:`spatial.neighbour_query`: the offsets and every observer's
    flocking sums at once, the pairs (``i``, ``j``, ``d``, ``dist``) computed on first use.

    Flocking leaves on kernels read ``sums`` (one pass over the pairs, shared by
    separation, alignment and cohesion, summed in the same order as the pairs);
    a NumPy leaf, a plugin or a condition with a radius asks for the pairs.
    """

    sums: Array
    identities: np.ndarray | None
    """Each pair's ``j``, made in the query's pass when asked for (else None)."""

    def __init__(
        self,
        offsets: np.ndarray,
        sums: Array,
        make: Callable[[], Any],
        identities: np.ndarray | None = None,
    ) -> None:
        super().__init__(offsets, make)
        self.__dict__.update(sums=sums, identities=identities)


Binned = tuple[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""``(nx, ny, start, rows, xs, ys)``: some rows of one tick's positions by grid cell."""


def binned(
    world: World, pos: Array, b: slice, shape: tuple[int, int] | None, kept: dict | None
) -> Binned:
    """Rows ``b`` of ``pos`` binned (``query_loops.bin_points``) on the grid ``shape``, or on
    whatever grid ``kept`` (one tick's bins, by rows: ``Sense``) holds them on, else
    ``nearest_loops.grid_shape``'s; kept there. The neighbour query and a large group's
    nearest search of the same rows share one binning a tick (any grid serves the second)."""
    key = (b.start, b.stop)
    held = None if kept is None else kept.get(key)
    if held is not None and held[0] is pos and (shape is None or held[1][:2] == shape):
        found: Binned = held[1]  # the same positions object: binned this tick
        return found
    w, h, wrap = float(world.width), float(world.height), world.edges == "wrap"
    nx, ny = nearest_loops.grid_shape(w, h, b.stop - b.start) if shape is None else shape
    found = (nx, ny, *spatial.bin_points(pos, b.start, b.stop, w, h, wrap, nx, ny))
    if kept is not None:
        kept[key] = (pos, found)
    return found


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
    due_rows = staticmethod(think_loops.due_rows)
    """``sim/think.py``'s who-thinks pass (``think_loops.py``)."""
    held_requests = staticmethod(status_loops.held_requests)
    """``EngineBase.start_emitted``'s copy of the held requests (``status_loops.py``)."""
    copy_rows = staticmethod(status_loops.copy_rows)
    """The thinkers' rows of a condition's hysteresis (``engines/facts.py``)."""

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
    def neighbours(
        world: World,
        agents: Any,
        a: slice | np.ndarray,
        b: slice,
        pairs: bool = False,
        identities: bool = False,
        bins: dict | None = None,
    ) -> Neighbours:
        """``Sense._compute_neighbours(a, b)``: the same pairs, offsets and distances
        (:class:`QueriedNeighbours`: pairs made when first asked for; with ``pairs``, made
        at once, in the same pass; with ``identities``, their ``j`` made at once: who a
        think-rate LOD group holds). ``a`` is a range or sorted rows (the agents that think
        this tick, ``sim/think.py``); ``bins``: the tick's binned rows (:func:`binned`)."""
        observers = observer_rows(a)
        n_a = observers.size
        # the observers' settings read by row in the kernel; what the grid and the field of
        # view need from the rows they span (no per-observer copies: think-rate LOD's
        # thinkers are a quarter of the rows, spread)
        span = slice(int(observers[0]), int(observers[-1]) + 1) if n_a else slice(0, 0)
        view_all = np.ascontiguousarray(agents.view_distance, dtype=np.float64)
        cap = np.ascontiguousarray(agents.max_neighbours, dtype=np.int64)
        fov_all = np.ascontiguousarray(agents.fov, dtype=np.float64)
        radius, fov_min, fov_max, cap_max = (
            spatial.observer_span(view_all, fov_all, cap, span.start, span.stop)
            if n_a
            else (0.0, 0.0, 0.0, 0)
        )
        if n_a == 0 or b.stop <= b.start or not radius >= 0:
            none = np.zeros(0, dtype=np.int64)
            offsets = np.zeros(n_a + 1, dtype=np.int64)
            empty = (none, none.copy(), np.zeros((0, 2)), np.zeros(0))
            if pairs or identities:  # held perception reads the sums too: nobody seen, all zero
                who = none.copy() if identities else None
                return QueriedNeighbours(offsets, np.zeros((n_a, spatial.SUMS)), lambda: empty, who)
            return Neighbours(empty[0], empty[1], offsets, empty[2], empty[3])
        narrowest, widest = 0.5 * float(fov_min), 0.5 * float(fov_max)
        fov = narrowest < np.pi
        shared = narrowest == widest  # one cosine for every observer
        if shared:
            cos_limit = np.array([float(np.cos(narrowest)) - FOV_COS_TOLERANCE])
            all_round = np.zeros(1, dtype=np.bool_)
        else:  # per row of the span, from its first row
            half = 0.5 * fov_all[span]
            cos_limit = np.cos(np.minimum(half, np.pi)) - FOV_COS_TOLERANCE
            all_round = np.ascontiguousarray(half >= np.pi)
        nx, ny, rx, ry = spatial.grid_shape(
            world.width, world.height, padded(radius), b.stop - b.start, int(cap_max)
        )
        args = (
            agents.pos,
            agents.vel,
            agents.heading,
            view_all,
            np.ascontiguousarray(cos_limit, dtype=np.float64),
            all_round,
            span.start,
            shared,
            cap,
            observers,
            b.start,
            b.stop,
            float(world.width),
            float(world.height),
            world.edges == "wrap",
            fov,
            int(observers[0]) < b.stop and b.start <= int(observers[-1]),
            nx,
            ny,
            rx,
            ry,
            *binned(world, agents.pos, b, (nx, ny), bins)[2:],
        )
        if pairs:  # the sums as well, and the pairs already made
            offsets, sums, *made = spatial.neighbour_query(*args, spatial.PAIRS)
            return QueriedNeighbours(offsets, sums, lambda: made)
        writes = spatial.IDENTITIES if identities else spatial.NO_PAIRS
        found = spatial.neighbour_query(*args, writes)
        offsets, sums, identity = found[0], found[1], found[3] if identities else None
        return QueriedNeighbours(
            offsets, sums, lambda: spatial.neighbour_query(*args, spatial.PAIRS)[2:], identity
        )

    @staticmethod
    def nearest(
        world: World,
        pos: Array,
        a: slice | np.ndarray,
        b: slice,
        radius: float,
        bins: dict | None = None,
    ) -> tuple[np.ndarray, Array] | None:
        """``SpatialIndex.nearest``: brute force when one side has at most ``SMALL_SIDE`` rows
        (the same tie rules), else a grid of ``b`` searched in rings (``nearest_loops``). ``a``
        is a range or sorted rows (the agents that think this tick); ``bins``: the tick's
        binned rows (:func:`binned`: ``b`` binned by the neighbour query serves as well)."""
        observers = observer_rows(a)
        n_a = observers.size
        n_b = max(0, b.stop - b.start)
        if n_a == 0 or n_b == 0 or not radius >= 0:
            return None
        w, h, wrap = float(world.width), float(world.height), world.edges == "wrap"
        if min(n_a, n_b) <= SMALL_SIDE:
            return spatial.nearest_small(pos, observers, b.start, b.stop, float(radius), w, h, wrap)
        grid = binned(world, pos, b, None, bins)
        return nearest_loops.nearest_grid(
            pos, observers, b.start, b.stop, float(radius), w, h, wrap, *grid
        )

    @staticmethod
    def held_targets(
        held_rows: np.ndarray,
        store: np.ndarray,
        ids: np.ndarray,
        all_ids: np.ndarray,
        row_of: np.ndarray,
        pos: Array,
        start: int,
        local: np.ndarray,
        fresh: tuple[np.ndarray, Array],
        world: World,
    ) -> tuple[np.ndarray, Array]:
        """``sense/held.held_nearest`` in one kernel (``sense/held_loops.py``)."""
        agent = np.ascontiguousarray(fresh[0], dtype=np.int64)
        dist = np.ascontiguousarray(fresh[1], dtype=np.float64)
        return held_loops.held_targets(
            held_rows, store, ids, all_ids, row_of, pos, start, local, agent, dist,
            float(world.width), float(world.height), world.edges == "wrap",
        )  # fmt: skip

    held_offsets = staticmethod(held_loops.held_offsets)
    """``sense/held.held_pairs``' who thinks and offsets, in one pass (``held_loops.py``)."""

    @staticmethod
    def merge_pairs(
        start: int,
        offsets: np.ndarray,
        thinks: np.ndarray,
        fo: np.ndarray,
        fj: np.ndarray,
        fd: Array,
        fdist: Array,
        ho: np.ndarray,
        hj: np.ndarray,
        pos: Array,
        world: World,
        measure: bool,
    ) -> tuple[np.ndarray, np.ndarray, Array, Array]:
        """``sense/held.merged``: the held and fresh pairs in one pass (``held_loops.py``);
        without ``measure`` only the neighbour rows."""
        fd = np.ascontiguousarray(fd, dtype=np.float64).reshape(-1, 2)
        return held_loops.merge_pairs(
            start, offsets, thinks, fo, fj, fd, np.ascontiguousarray(fdist, dtype=np.float64),
            ho, hj, pos, float(world.width), float(world.height), world.edges == "wrap", measure,
        )  # fmt: skip

    @staticmethod
    def held_sums(
        start: int,
        offsets: np.ndarray,
        thinks: np.ndarray,
        fo: np.ndarray,
        fj: np.ndarray,
        fresh: Array,
        ho: np.ndarray,
        hj: np.ndarray,
        pos: Array,
        vel: Array,
        world: World,
    ) -> tuple[Array, np.ndarray]:
        """Every observer's flocking sums, held pairs measured now, and every pair's
        neighbour row, in one pass (``held_loops.py``)."""
        return held_loops.held_sums(
            start, offsets, thinks, fo, fj, fresh, ho, hj, pos, vel, float(world.width),
            float(world.height), world.edges == "wrap",
        )  # fmt: skip

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
    def agent_facts(
        world: World, agents: Any, own: Array, agent: np.ndarray, only: np.ndarray | None = None
    ) -> TargetFacts:
        """``Sense.agent_facts(own, agent)`` (``agents.n > 0``); with ``only``, the facts of
        those rows alone (``agent`` given for them), in their order."""
        pos, vel, rows, valid = spatial.agent_facts(
            np.ascontiguousarray(own, dtype=np.float64),
            agents.pos,
            agents.vel,
            np.ascontiguousarray(agent, dtype=np.int64),
            float(world.width),
            float(world.height),
            world.edges == "wrap",
            _I64 if only is None else np.ascontiguousarray(only, dtype=np.int64),
            only is None,
        )
        return TargetFacts(pos=pos, vel=vel, agent=rows, valid=valid)

    @staticmethod
    def in_range(
        pos: Array,
        facts: TargetFacts,
        radius: float,
        hysteresis: float,
        prev: np.ndarray,
        only: np.ndarray | None = None,
    ) -> np.ndarray:
        """``conditions.in_range`` from the target's facts (positions of the group's rows;
        ``leaves/conditions_loops.py``); with ``only``, at those rows alone (false elsewhere)."""
        if only is not None:
            facts = facts_at(facts, only)
        return conditions_loops.in_range(
            np.ascontiguousarray(pos, dtype=np.float64),
            np.ascontiguousarray(facts.pos, dtype=np.float64),
            np.ascontiguousarray(facts.valid, dtype=np.bool_),
            float(radius),
            float(hysteresis),
            np.ascontiguousarray(prev, dtype=np.bool_),
            _I64 if only is None else np.ascontiguousarray(only, dtype=np.int64),
            only is None,
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


# ------------------------------------------------------------------- warm
# Each kernel compiled (or loaded from the disk cache) on tiny inputs of the types its
# callers pass, so that its first real call runs at once. ``sim/kernel_plan.py`` says which
# of them a Simulation needs; the names are its words, in the order a tick first calls them.
_N = 4
_POS = np.array([[1.0, 1.0], [2.0, 1.5], [3.0, 2.0], [1.5, 3.0]])
_VEL = np.ones((_N, 2))
_HEAD = np.tile([1.0, 0.0], (_N, 1))
_F = np.ones(_N)
_I64 = np.arange(_N, dtype=np.int64)
_YES = np.ones(_N, dtype=np.bool_)
_OFFSETS = np.zeros(_N + 1, dtype=np.int64)
_STEPS = np.arange(_N + 1, dtype=np.int64)
_OBSTACLES, _RADII = np.ones((1, 2)), np.ones(1)
_NONE = np.empty((0, 2))


def _out() -> Array:
    return np.empty((_N, 2))


def _cell_order() -> None:
    spatial.bin_points(_POS, 0, _N, 10.0, 10.0, True, 3, 3)


def _neighbour_query() -> None:
    spatial.observer_span(_F, _F, _I64, 0, _N)
    spatial.neighbour_query(
        _POS, _VEL, _HEAD, _F, _F, ~_YES, 0, False, _I64, _I64, 0, _N, 10.0, 10.0, True, True,
        True, 3, 3, 1, 1, *spatial.bin_points(_POS, 0, _N, 10.0, 10.0, True, 3, 3),
        spatial.NO_PAIRS,
    )  # fmt: skip


def _flock() -> None:
    out = _out()
    flock_loops.flock(
        _I64, _I64, _OFFSETS, _I64, _POS, _POS, _VEL, _F, 1.0, -1.0, 1.0, out, _NONE, out
    )


def _flock_sums() -> None:
    out, sums = _out(), np.zeros((_N, spatial.SUMS))
    flock_loops.flock_sums(
        _I64, _I64, _OFFSETS, sums, _POS, _VEL, _F, 1.0, -1.0, 1.0, out, _NONE, out
    )


def _flock_blend() -> None:
    sums, kinds = np.zeros((_N, spatial.SUMS)), _I64[:3] % 3
    flock_loops.flock_blend(
        _I64, _I64, _OFFSETS, sums, _POS, _VEL, _F, _F, kinds, _F[:3], 1.0, _out()
    )


def _wander() -> None:
    memory_loops.wander(
        _I64, _POS, _VEL, _HEAD, _F, _F, np.zeros((_N, 2)), np.zeros((_N, 2)),
        True, 1.0, 1.0, 1.0, 0.1, False, 1.0, _out(),
    )  # fmt: skip


def _integrate() -> None:
    outs = [np.empty((_N, 2)) for _ in range(4)] + [np.empty(_N), np.empty(_N)]
    integrate_loops.step(
        _POS, _VEL, _HEAD, _VEL, _F, _F, _F, _F, _F, _F, _F, False, _F, _F, 0.1, 10.0, 10.0, 0,
        *outs,
    )  # fmt: skip


def _wall_avoidance() -> None:
    walls = _OBSTACLES
    shape_loops.wall_avoidance(
        _I64, _POS, _HEAD, walls, walls, walls, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, _out()
    )


def _path_following() -> None:
    cursor = np.zeros(_N, np.int64)
    memory_loops.path_following(
        _I64, _I64, _POS, _VEL, _F, _YES, _POS, cursor, 1.0, True, 2.0, 1.0, _out()
    )


def _orca() -> None:
    orca_loops.orca(
        _I64, _I64, _OFFSETS, _I64[:0], _NONE, _YES, _POS, _VEL, _F, _F, _F, _POS, _YES,
        _OBSTACLES, _RADII, _OBSTACLES, _OBSTACLES, 2.0, 2.0, -1.0, 100.0, 1.0, True, 0.1, 1.0,
        _out(),
    )  # fmt: skip


def _held_merge() -> None:
    offsets = np.arange(_N + 1, dtype=np.int64)
    for measure in (False, True):
        held_loops.merge_pairs(
            0, offsets, _YES, offsets, _I64, _POS, _F, offsets, _I64, _POS, 10.0, 10.0, True,
            measure,
        )  # fmt: skip


def _held_sums() -> None:
    offsets = np.arange(_N + 1, dtype=np.int64)
    held_loops.held_sums(
        0, offsets, _YES, offsets, _I64, np.zeros((_N, spatial.SUMS)), offsets, _I64, _POS, _VEL,
        10.0, 10.0, True,
    )  # fmt: skip


def _forces() -> Array:
    return np.ones((2, _N, 2))


WARM: dict[str, Callable[[], Any]] = {
    "cell_order": _cell_order,
    "neighbour_query": _neighbour_query,
    "nearest_small": lambda: spatial.nearest_small(_POS, _I64[:2], 2, _N, 5.0, 10.0, 10.0, True),
    "nearest_grid": lambda: nearest_loops.nearest_grid(
        _POS,
        _I64[:2],
        2,
        _N,
        5.0,
        10.0,
        10.0,
        True,
        2,
        2,
        *spatial.bin_points(_POS, 2, _N, 10.0, 10.0, True, 2, 2),
    ),
    "visible_grid": lambda: nearest_loops.visible_grid(
        _POS,
        0,
        2,
        2,
        _N,
        _HEAD,
        _F,
        _F,
        _YES,
        10.0,
        10.0,
        True,
        _OBSTACLES,
        _RADII,
        _NONE,
        _NONE,
        2,
        2,
    ),
    "agent_facts": lambda: spatial.agent_facts(
        _POS, _POS, _VEL, _I64, 10.0, 10.0, True, _I64, True
    ),
    "in_range": lambda: conditions_loops.in_range(_POS, _POS, _YES, 1.0, 0.5, _YES, _I64, True),
    "uniforms": lambda: streams_loops.uniforms(np.uint64(1), _I64, np.uint64(0), 2),
    "uniforms_rows": lambda: streams_loops.uniforms_rows(
        np.uint64(1), _I64, _I64[:2], np.uint64(0), 1, 2
    ),
    "request_rows": lambda: kcomb.request_rows(np.ones((_N, 3), dtype=np.bool_)),
    "wander": _wander,
    "flock": _flock,
    "flock_sums": _flock_sums,
    "flock_blend": _flock_blend,
    "obstacle_avoidance": lambda: shape_loops.obstacle_avoidance(
        _I64, _POS, _VEL, _HEAD, _F, _F, _OBSTACLES, _RADII, 1.0, 1.0, 1.0, _out()
    ),
    "lj_avoidance": lambda: shape_loops.lj_avoidance(
        _I64, _POS, _HEAD, _OBSTACLES, _RADII, 0.0, 1.0, 1.0, 2.5, 9.0, 1.0, _out()
    ),
    "wall_avoidance": _wall_avoidance,
    "path_following": _path_following,
    "orca": _orca,
    "blend": lambda: kcomb.blend(_forces(), _I64, _F, 1.0, _out()),
    "prioritized_sum": lambda: kcomb.prioritized_sum(_forces(), _I64, _F, 1.0, _out()),
    "first_nonzero": lambda: kcomb.first_nonzero(_forces(), _I64, _F, 1e-3, 1.0, _out()),
    "prioritized_dither": lambda: kcomb.prioritized_dither(
        _forces(), _I64, _F, np.zeros((_N, 2)), 0, np.ones(2), 1.0, _out()
    ),
    "accumulate_acted": lambda: kcomb.accumulate_acted(
        np.zeros((_N, 2)), _I64, _VEL, _F, np.zeros((_N, 3), dtype=np.bool_), 1, 0
    ),
    "accumulate_rows": lambda: kcomb.accumulate_rows(np.zeros((_N, 2)), _I64, _VEL, _F),
    "integrate": _integrate,
    "heading_smoothing": lambda: integrate_loops.smooth(
        np.zeros((2, _N, 2)), 0, _HEAD, _HEAD, np.empty((_N, 2))
    ),
    "think_due": lambda: think_loops.due_rows(
        _I64, _I64, _I64, _YES, True, 3, 2, 4, _I64.copy(), _I64.copy()
    ),
    "held_statuses": lambda: status_loops.transposed(np.zeros((3, _N), dtype=np.int8), _N),
    "held_requests": lambda: (
        status_loops.held_requests(np.zeros((_N, 2), dtype=bool), _I64[:1]),
        status_loops.copy_rows(~_YES, _YES, _I64[:1]),
    ),
    "held_offsets": lambda: held_loops.held_offsets(_N, _I64[:2], _STEPS, _STEPS),
    "held_targets": lambda: held_loops.held_targets(
        _I64.copy(),
        _I64.copy(),
        _I64,
        _I64,
        _I64,
        _POS,
        0,
        _I64[:2],
        _I64[:2],
        _F[:2],
        10.0,
        10.0,
        True,
    ),
    "held_merge": _held_merge,
    "held_sums": _held_sums,
    "non_penetration": knp.warm_passes,
    "close_pairs": knp.warm_candidates,
    "fold": knp.warm_fold,
    "renumbered": knp.warm_renumbered,
}
"""Every hand-written kernel by name (``sim/kernel_plan.py``'s words), in the order a tick
first calls them: name -> compile it (or load it from the disk cache) on tiny inputs."""


def warm(names: Iterable[str] | None = None) -> None:
    """Compile (or load) the kernels ``names`` (default: all of :data:`WARM`)."""
    for name in WARM if names is None else names:
        WARM[name]()


def warm_row_loop(model: Any, agents: Any, world: World) -> None:
    """Compile (or load) the generated loop of leaf ``model`` (a class with ``ROWS``,
    ``steering/row_loops.py``) for these agents' and world's columns, on no rows: the
    types ``steering/jobs.py`` hands it, so its first real call runs at once."""
    declared = jobs.declared(model)
    assert declared is not None, f"{type(model).__name__} has no ROWS"
    rows = np.zeros(0, dtype=np.int64)
    facts = TargetFacts(np.zeros((0, 2)), np.zeros((0, 2)), rows, np.zeros(0, dtype=np.bool_))
    target = facts if declared.targeted else None
    other = facts if declared.other else None
    row_loops.run(declared, model, agents, world, rows, rows, target, other, 1.0, np.zeros((0, 2)))
