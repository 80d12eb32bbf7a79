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
from typing import Any, Protocol, cast

import numpy as np

from behaviortk.format.budget import (
    BYTES_PER_CANDIDATE,
    BYTES_PER_OBSERVER,
    LEVEL_MARGIN,
    NEIGHBOUR_LEVELS,
    NEIGHBOUR_WORKING_SET,
)
from behaviortk.registry import Registries, default
from behaviortk.sense.held import HeldPairs, Thinking, held_nearest, held_pairs
from behaviortk.vec import EPS, Array, formula, length_xy, normalize, normalize_xy, select
from behaviortk.world.grid import chunk_bounds
from behaviortk.world.sight import FOV_COS_TOLERANCE
from behaviortk.world.spatial import (
    CloseQuery,
    IntArray,
    SpatialIndex,
    displacement,
    displacement_columns,
    observer_rows,
)
from behaviortk.world.state import Agents, World
from behaviortk.world.visible_nearest import nearest_visible

#: Bytes of candidate pairs one neighbour query holds at once (a module constant:
#: tests lower it to force many chunks); NEIGHBOUR_LEVELS (0 turns the nearest-first
#: shortcut off) and LEVEL_MARGIN come from ``format/budget.py`` too.
NEIGHBOUR_BUDGET = NEIGHBOUR_WORKING_SET

#: An observer is done at a level when its cap-th nearest is within the level's radius
#: times this: sqrt rounding can then not hide a pair at the same distance just outside.
LEVEL_SURE = 1.0 - 1e-9

BlackboardPoints = Callable[[str, str, np.ndarray], Array]
TargetFn = Callable[[Any, "Sense", str], "TargetFacts"]
"""A target kind's implementation: ``fn(spec, sense, group) -> TargetFacts`` for the group's rows."""


@dataclass(frozen=True)
class Neighbours:
    """Directed neighbour pairs of one group, sorted by ``(i, j)``.

    Each observer's pairs are the agents within its view distance and field of
    view, at most its ``max_neighbours`` nearest (equal distances: lower row).
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


class LazyNeighbours(Neighbours):
    """``Neighbours`` whose offsets are known at once and whose pairs (``i``, ``j``, ``d``,
    ``dist``) are made by ``make`` on first use (a query that summed as it went, or held
    pairs merged: ``sense/held.py``)."""

    def __init__(self, offsets: np.ndarray, make: Callable[[], Any]) -> None:
        # a frozen dataclass: set through __dict__
        self.__dict__.update(offsets=offsets, _make=make, _pairs=None)

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


class CountedNeighbours(LazyNeighbours):
    """``LazyNeighbours`` made from each row's count (the thinkers' while they decide: the
    others none), which is what a condition reads; the offsets summed when first read."""

    def __init__(self, count: np.ndarray, make: Callable[[], Any]) -> None:
        self.__dict__.update(_count=count, _make=make, _pairs=None)

    @property
    def count(self) -> np.ndarray:
        return cast(np.ndarray, self.__dict__["_count"])

    @property
    def offsets(self) -> np.ndarray:
        found = self.__dict__.get("_offsets")
        if found is None:
            counts = self.__dict__["_count"]
            found = self.__dict__["_offsets"] = np.zeros(counts.size + 1, dtype=np.int64)
            np.cumsum(counts, out=found[1:])
        return cast(np.ndarray, found)


class HeldNeighbours(LazyNeighbours):
    """The neighbours of a group that does not all think (``sense/held.py``): counts at once;
    pairs, or on compiled kernels the flocking sums (what compiled flocking reads), when
    first asked for."""

    def __init__(self, held: HeldPairs) -> None:
        super().__init__(held.offsets, held.arrays)
        self.__dict__.update(_held=held)

    def __getattr__(self, name: str) -> Any:
        if name == "sums":  # only on compiled kernels (getattr(nb, "sums", None) elsewhere)
            sums = self.__dict__["_held"].sums()
            if sums is None:
                raise AttributeError(name)
            self.__dict__["sums"] = sums
            return sums
        raise AttributeError(name)


@dataclass(frozen=True)
class TargetFacts:
    """Where a target is for each row of a group; ``valid`` False where there is none."""

    pos: Array  # (n, 2) nearest image as seen from the agent
    vel: Array  # (n, 2)
    agent: np.ndarray  # (n,) int64 global row of the target agent, -1 if not an agent
    valid: np.ndarray  # (n,) bool


class RowFacts(TargetFacts):
    """``TargetFacts`` known at some rows alone (``rows``: the thinkers while a think-rate
    LOD group decides, ``Sense.deciding_rows``), held as ``some``, in the order of ``rows``:
    what built-in conditions and leaf statuses read (:func:`facts_at`). The group-sized
    arrays (no target at the other rows) are made when first read."""

    def __init__(self, n: int, rows: IntArray, some: TargetFacts) -> None:
        self.__dict__.update(n=n, rows=rows, some=some, _full=None)

    def _full_facts(self) -> TargetFacts:
        full: TargetFacts | None = self.__dict__["_full"]
        if full is None:
            n, rows, some = self.__dict__["n"], self.__dict__["rows"], self.__dict__["some"]
            pos, vel = np.zeros((n, 2)), np.zeros((n, 2))
            agent, valid = np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=bool)
            pos[rows], vel[rows], agent[rows], valid[rows] = (
                some.pos,
                some.vel,
                some.agent,
                some.valid,
            )
            full = self.__dict__["_full"] = TargetFacts(pos, vel, agent, valid)
        return full

    @property
    def pos(self) -> Array:
        return self._full_facts().pos

    @property
    def vel(self) -> Array:
        return self._full_facts().vel

    @property
    def agent(self) -> np.ndarray:
        return self._full_facts().agent

    @property
    def valid(self) -> np.ndarray:
        return self._full_facts().valid


def facts_at(facts: TargetFacts, rows: IntArray) -> TargetFacts:
    """``facts`` of ``rows`` alone (in their order)."""
    if isinstance(facts, RowFacts) and facts.__dict__["rows"] is rows:
        some: TargetFacts = facts.__dict__["some"]
        return some
    return TargetFacts(
        pos=facts.pos[rows], vel=facts.vel[rows], agent=facts.agent[rows], valid=facts.valid[rows]
    )


def target_heading(agents: Agents, facts: TargetFacts) -> Array:
    """The target agent's heading; a target that is not an agent heads along its velocity
    (zero when it is still: a point, a zone)."""
    safe = np.where(facts.agent >= 0, facts.agent, 0)
    n = facts.agent.shape[0]
    own = agents.heading[safe] if agents.n else np.zeros((n, 2))
    return np.where((facts.agent >= 0)[:, None], own, normalize(facts.vel))


@formula
def frame_xy(thx: Any, thy: Any) -> tuple[Any, Any]:
    """The unit forward axis of a target heading ``(thx, thy)``: +x where it has none."""
    hx, hy = normalize_xy(thx, thy)
    none = length_xy(hx, hy) <= EPS
    return select(none, 1.0, hx), select(none, 0.0, hy)


@formula
def offset_point(
    tx: Any, ty: Any, thx: Any, thy: Any, offset_x: Any, offset_y: Any
) -> tuple[Any, Any]:
    """A target's offset ``[forward, left]`` in world coordinates: along its frame's forward
    axis (:func:`frame_xy` of its heading ``thx, thy``) and that axis turned left."""
    hx, hy = frame_xy(thx, thy)
    return hx * offset_x + -hy * offset_y + tx, hy * offset_x + hx * offset_y + ty


def nearest_first(dist: Array, offsets: np.ndarray, cap: np.ndarray) -> np.ndarray | None:
    """Indices of the pairs to keep so that each observer keeps its ``cap`` nearest.

    The pairs of observer ``o`` are ``offsets[o]:offsets[o + 1]``, in neighbour-row
    order; equal distances keep the lower neighbour row, as a sort by
    ``(observer, dist, j)`` keeping rank < cap would. Vectorised: the cap-th
    distance of each observer over its cap (``_kth_smallest``) is a threshold,
    pairs below it stay, and pairs at it stay in row order until the cap is
    reached. None when no observer is over its cap (everything stays).
    """
    count = np.diff(offsets)
    cap = np.asarray(cap, dtype=np.int64)
    over = np.flatnonzero(count > cap)
    if over.size == 0:
        return None
    if over.size == count.size and _all_equal(count) and _all_equal(cap) and cap[0] > 0:
        return _nearest_rectangle(dist, count.size, int(cap[0]))
    c = count[over]
    k = cap[over]
    threshold = _kth_smallest(dist, offsets, over, k)
    n = int(c.sum())
    owner = np.repeat(np.arange(over.size), c)
    src = np.repeat(offsets[over] - (np.cumsum(c) - c), c)
    src += np.arange(n)
    dv = np.take(dist, src)
    t = np.take(threshold, owner)
    less = dv < t
    tied = dv == t
    del dv, t
    room = k - np.bincount(owner[less], minlength=over.size)
    tied_before = np.cumsum(tied) - tied  # tied pairs earlier in the whole array
    first_tied = np.take(tied_before, np.cumsum(c) - c)  # ... at each observer's first pair
    rank = tied_before - np.take(first_tied, owner)
    keep_over = less | (tied & (rank < np.take(room, owner)))
    keep = np.ones(dist.shape[0], dtype=bool)
    keep[src] = keep_over
    return np.flatnonzero(keep)


def _all_equal(a: np.ndarray) -> bool:
    return bool(a[0] == a.min() == a.max())


def _nearest_rectangle(dist: Array, m: int, k: int) -> np.ndarray:
    """:func:`nearest_first` when all ``m`` observers have as many pairs, more than ``k``
    (a dense crowd): the distances are a rectangle, one row per observer."""
    block = dist.reshape(m, -1)
    t = np.partition(block, k - 1, axis=1)[:, k - 1 : k]
    less = block < t
    tied = block == t
    room = k - np.count_nonzero(less, axis=1)[:, None]
    rank = np.cumsum(tied, axis=1)  # 1 for the first tied pair of a row
    keep = less
    keep |= tied & (rank <= room)
    return np.flatnonzero(keep)


def _kth_smallest(dist: Array, offsets: np.ndarray, rows: np.ndarray, k: np.ndarray) -> Array:
    """The ``k``-th smallest distance (1-based) of each observer in ``rows``.

    Observers are batched by ``k`` and by count rounded up to a power of two, and
    each batch is padded with inf into a rectangle for one ``np.partition``
    along its rows (linear time), so padding at most doubles a batch.
    """
    out = np.full(rows.size, -np.inf)
    count = offsets[rows + 1] - offsets[rows]
    width = np.ceil(np.log2(np.maximum(count, 1))).astype(np.int64)
    batch = k * 64 + width
    for key in np.unique(batch[k > 0]).tolist():
        sel = np.flatnonzero(batch == key)
        c = count[sel]
        kth = int(k[sel[0]]) - 1
        m = int(c.sum())
        row = np.repeat(np.arange(sel.size), c)
        col = np.arange(m) - np.repeat(np.cumsum(c) - c, c)
        pad = np.full((sel.size, int(c.max())), np.inf)
        pad[row, col] = np.take(dist, np.repeat(offsets[rows[sel]], c) + col)
        del row, col
        out[sel] = np.partition(pad, kth, axis=1)[:, kth]
    return out


@dataclass(frozen=True)
class _Test:
    """What a neighbour query tests, decided once for the whole observing group."""

    radius: float  # largest view distance of the group
    uniform_view: bool  # every observer sees exactly ``radius`` far
    fov: bool  # some observer does not see all round
    cos_half: float | None  # the group's cos(fov / 2) - tolerance when fov is uniform
    overlap: bool  # observers are among the observed: drop i == j


@dataclass
class _Pairs:
    """Pairs of one chunk: rows, offset ``pos[j] - pos[i]`` and distance."""

    i: np.ndarray
    j: np.ndarray
    dx: Array
    dy: Array
    dist: Array

    def take(self, idx: np.ndarray) -> _Pairs:
        return _Pairs(*(np.take(column, idx) for column in self.columns()))

    def where(self, mask: np.ndarray) -> _Pairs:
        return self if mask.all() else self.take(np.flatnonzero(mask))

    def columns(self) -> tuple[np.ndarray, ...]:
        return self.i, self.j, self.dx, self.dy, self.dist


def _merged(parts: list[_Pairs]) -> _Pairs:
    """Pairs of disjoint sets of observers, each sorted, merged into ``(i, j)`` order."""
    if len(parts) == 1:
        return parts[0]
    joined = _Pairs(*(np.concatenate(c) for c in zip(*(p.columns() for p in parts), strict=True)))
    keys = joined.i << 32
    keys |= joined.j
    return joined.take(np.argsort(keys, kind="stable"))  # sorted runs: timsort merges them


class _PairBuffer:
    """The result's columns, filled chunk by chunk.

    A single chunk is kept as it is; with more, the columns are allocated once
    at the given upper bound (pages past the end are never written, so they
    never become resident) and each chunk is copied in and dropped, so the
    result never exists twice.
    """

    def __init__(self, bound: int) -> None:
        self.bound = max(bound, 0)
        self.n = 0
        self.first: _Pairs | None = None
        self.columns: tuple[np.ndarray, np.ndarray, Array, Array] | None = None

    def add(self, pairs: _Pairs) -> None:
        if self.first is None and self.columns is None:
            self.first = pairs
            return
        if self.columns is None:
            size = max(self.bound, self.first.i.shape[0] + pairs.i.shape[0]) if self.first else 0
            self.columns = (
                np.empty(size, dtype=np.int64),
                np.empty(size, dtype=np.int64),
                np.empty((size, 2)),
                np.empty(size),
            )
            first, self.first = self.first, None
            if first is not None:
                self._copy(first)
        self._copy(pairs)

    def _copy(self, pairs: _Pairs) -> None:
        assert self.columns is not None
        start, stop = self.n, self.n + pairs.i.shape[0]
        if stop > self.columns[0].shape[0]:  # cannot happen (the bound is safe); grow anyway
            old = self.arrays()
            self.columns = (
                np.empty(2 * stop, dtype=np.int64),
                np.empty(2 * stop, dtype=np.int64),
                np.empty((2 * stop, 2)),
                np.empty(2 * stop),
            )
            for new, kept in zip(self.columns, old, strict=True):
                new[:start] = kept
        i, j, d, dist = self.columns
        i[start:stop] = pairs.i
        j[start:stop] = pairs.j
        d[start:stop, 0] = pairs.dx
        d[start:stop, 1] = pairs.dy
        dist[start:stop] = pairs.dist
        self.n = stop

    def arrays(self) -> tuple[np.ndarray, np.ndarray, Array, Array]:
        if self.columns is not None:
            n = self.n
            i, j, d, dist = self.columns
            return i[:n], j[:n], d[:n], dist[:n]
        if self.first is None:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 2)), np.zeros(0)
        p = self.first
        d = np.empty((p.i.shape[0], 2))
        d[:, 0] = p.dx
        d[:, 1] = p.dy
        return p.i, p.j, d, p.dist


def _levels(
    candidates: np.ndarray, cap: np.ndarray, half: Array, radius: float, cell_side: float
) -> np.ndarray:
    """The level of each observer: 0 (full view) or ``L`` (first within ``radius / 2**L``).

    An observer's candidates fill its 3 x 3 cells (of side ``cell_side``); at
    that density, the disc of radius ``r`` within its field of view holds
    about ``candidates * pi r^2 / (3 cell_side)^2 * fov / 360`` of them. The
    level is the deepest (each halves the radius, a quarter of the area) at
    which that still makes ``LEVEL_MARGIN`` times the cap, at most
    ``NEIGHBOUR_LEVELS``. Only a guess: a wrong one costs time, never a
    different answer.
    """
    levels = np.zeros(candidates.shape[0], dtype=np.int64)
    if NEIGHBOUR_LEVELS <= 0 or not radius > 0 or not cell_side > 0:
        return levels
    seen = np.minimum(half / np.pi, 1.0) * (np.pi * radius * radius / (3.0 * cell_side) ** 2)
    ratio = candidates * seen / (LEVEL_MARGIN * np.maximum(cap, 1))
    deep = ratio >= 4.0
    levels[deep] = np.floor(np.log(ratio[deep]) / np.log(4.0)).astype(np.int64)
    return np.minimum(levels, NEIGHBOUR_LEVELS)


class DrawnLater(Protocol):
    """A tick's random table not drawn yet (``world/streams.py``: each number depends only on
    the seed, the agent's id, the tick and the slot, so any part is drawn alone)."""

    def table(self) -> Array:
        """The whole table, agents x slots."""
        ...

    def rows(self, rows: np.ndarray, first: int, width: int) -> Array:
        """``table()[rows, first:first + width]``."""
        ...


class Sense:
    """Per-tick sensed facts; ``pointer`` and ``blackboard_points`` may be set after creation."""

    def __init__(
        self,
        world: World,
        agents: Agents,
        rand: Array | DrawnLater,
        tick: int,
        time: float,
        *,
        blackboard_points: BlackboardPoints | None = None,
        pointer: Array | None = None,
        registries: Registries | None = None,
        kernels: Any = None,
        thinking: Thinking | None = None,
        formations: Any = None,
    ) -> None:
        self.formations = formations
        """The groups' formations (``sense/formations.Formations``: slots and anchors), or
        None where nobody keeps one."""
        self.registries = default() if registries is None else registries
        """Where target kinds and condition implementations are looked up."""
        self.kernels = kernels
        """The compiled kernels (``sim.backend.Kernels``) answering neighbour, nearest
        and agent queries, or None: the NumPy code below."""
        self.world = world
        self.agents = agents
        self._rand = rand
        self.tick = tick
        self.time = time
        self.blackboard_points = blackboard_points
        self.pointer = None if pointer is None else np.asarray(pointer, dtype=np.float64)
        self.index = SpatialIndex(world, agents.pos)
        self._neighbours: dict[tuple[str, str], Neighbours] = {}
        self._nearest: dict[tuple[str, str, float], tuple[np.ndarray, Array]] = {}
        self._visible: dict[tuple[str, str, float], tuple[np.ndarray, Array]] = {}
        self._targets: dict[tuple[Any, str], TargetFacts] = {}
        self.thinking = thinking
        """This tick's thinkers of the groups that do not all think (``sense/held.py``): the
        queries that pick a target are made for them alone, the others keep theirs."""
        self.deciding = False
        """True while the engines compute the facts the trees read (``engines/base``). Only
        the thinkers' trees tick, so a group that does not all think is then answered for
        its thinkers alone (the other rows: no target, no neighbours; never read); what
        the others hold is measured when the act phase first asks (issue 25, item 6:
        sensing only for the agents that think)."""
        self._fresh: dict[tuple[Any, ...], Any] = {}  # the thinkers' answers, both phases
        self._bins: dict[tuple[Any, ...], Any] = {}  # compiled path: rows binned this tick
        self._decided: dict[tuple[Any, ...], Any] = {}  # the thinkers-only answers
        self._partial = 0  # thinkers-only answers handed out (targets built on them)

    @property
    def rand(self) -> Array:
        """The tick's random table (agents x slots), drawn on first use when given as a
        :class:`DrawnLater` (the compiled path: most ticks only a few rows are read)."""
        if not isinstance(self._rand, np.ndarray):
            self._rand = self._rand.table()
        return self._rand

    def rand_rows(self, rows: np.ndarray, first: int, width: int) -> Array:
        """``rand[rows, first:first + width]`` (a copy), the same numbers, without drawing the
        whole table when it has not been drawn yet."""
        if isinstance(self._rand, np.ndarray):
            return np.ascontiguousarray(self._rand[rows, first : first + width], dtype=np.float64)
        return self._rand.rows(rows, first, width)

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
    def neighbours(self, group: str, of: str = "same", pairs: bool = False) -> Neighbours:
        """Agents of ``of`` within each ``group`` agent's view distance and field of view.
        ``pairs``: the caller reads the pairs (``i``, ``j``, ``d``), so compiled kernels make
        them in the query's one pass (the same pairs as made later)."""
        key = (group, of)
        if self._thinkers(group) is not None and self.deciding:
            return self._thinkers_neighbours(group, of)
        found = self._neighbours.get(key)
        if found is None:
            if self._thinkers(group) is not None:
                found = self._held_neighbours(group, of)
            else:
                found = self._compute_neighbours(
                    self.rows(group), self.other_rows(group, of), pairs
                )
            self._neighbours[key] = found
        return found

    def neighbour_count(self, group: str, of: str = "same") -> np.ndarray:
        return self.neighbours(group, of).count

    def _compute_neighbours(self, a: slice | IntArray, b: slice, pairs: bool = False) -> Neighbours:
        """Neighbours of the rows ``a`` (a range, or sorted rows) among the rows ``b``, in
        bounded memory.

        Observers are taken a chunk at a time, in row order, so that their
        candidates (points of their 3 x 3 grid cells) cost at most
        ``NEIGHBOUR_BUDGET`` bytes; each chunk keeps the pairs that pass the
        exact tests, sorted by ``(i, j)``, at most ``max_neighbours`` per
        observer (:func:`nearest_first`), and is written straight into the
        result, whose size is bounded beforehand by ``min(cap, candidates)``
        per observer. Observers of a dense crowd are first measured within a
        fraction of their view (:meth:`_levels`); see :meth:`_chunk`.
        """
        if self.kernels is not None:
            return self.kernels.neighbours(self.world, self.agents, a, b, pairs, bins=self._bins)
        ag = self.agents
        rows = observer_rows(a)
        n_a = rows.size
        view = ag.view_distance[a]
        radius = float(view.max()) if n_a else 0.0
        half = 0.5 * ag.fov[a]
        offsets = np.zeros(n_a + 1, dtype=np.int64)
        if n_a == 0 or b.stop <= b.start or not radius >= 0:
            none = np.zeros(0, dtype=np.int64)
            return Neighbours(none, none.copy(), offsets, np.zeros((0, 2)), np.zeros(0))
        test = _Test(
            radius=radius,
            uniform_view=float(view.min()) == radius,
            fov=float(half.min()) < np.pi,
            cos_half=(
                float(np.cos(half[0])) - FOV_COS_TOLERANCE
                if float(half.max()) == float(half.min())
                else None
            ),
            overlap=int(rows[0]) < b.stop and b.start <= int(rows[-1]),
        )
        full = self.index.close_query(b, radius)
        cells = full.cells(rows)
        candidates = full.candidates(rows, cells)
        cap = ag.max_neighbours[a]
        bound = int(np.minimum(candidates, np.maximum(cap, 0)).sum())
        levels = _levels(candidates, cap, half, radius, full.cell_side)
        queries: dict[int, CloseQuery] = {0: full}
        for level in np.unique(levels[levels > 0]).tolist():
            finer = self.index.close_query(b, radius / 2.0**level)
            if finer.cell_side > 0.5 * full.cell_side:  # not finer: no help
                levels[levels == level] = 0
                continue
            queries[level] = finer
            picked = levels == level
            candidates[picked] = finer.candidates(rows[picked])  # what the first try costs
        cost = candidates * BYTES_PER_CANDIDATE + BYTES_PER_OBSERVER
        del candidates
        out = _PairBuffer(bound)
        budget = int(NEIGHBOUR_BUDGET)
        for lo, hi in chunk_bounds(cost, budget):
            out.add(self._chunk(rows[lo:hi], cells[lo:hi], levels[lo:hi], queries, test, budget))
        i, j, d, dist = out.arrays()
        local = i - rows[0] if isinstance(a, slice) else np.searchsorted(rows, i)
        np.cumsum(np.bincount(local, minlength=n_a), out=offsets[1:])
        return Neighbours(i=i, j=j, offsets=offsets, d=d, dist=dist)

    def _chunk(
        self,
        rows: np.ndarray,
        cells: np.ndarray,
        levels: np.ndarray,
        queries: dict[int, CloseQuery],
        test: _Test,
        budget: int,
    ) -> _Pairs:
        """The kept pairs of the observers ``rows`` (a chunk), sorted by ``(i, j)``.

        Observers at level 0 are measured within the full view distance. One at
        level ``L`` is measured first within ``view / 2**L`` on a finer grid; if
        it sees at least its cap there (with a rounding margin), its nearest
        ``cap`` are the same as with the full view (every pair at most as far as
        the cap-th one lies within the smaller radius, ties included), so that
        is its answer; otherwise it is measured again at level 0, a few at a
        time so that this too stays within the budget.
        """
        full = queries[0]
        if not levels.any():
            return self._seen(full, rows, cells, test, None)[0]
        parts: list[_Pairs] = []
        again = [rows[levels == 0]]
        for level in sorted(set(levels[levels > 0].tolist()), reverse=True):
            query = queries[level]
            found, failed = self._seen(query, rows[levels == level], None, test, query.radius)
            parts.append(found)
            again.append(failed)
        rest = np.sort(np.concatenate(again))
        if rest.size:
            rest_cells = full.cells(rest)
            cost = full.candidates(rest, rest_cells) * BYTES_PER_CANDIDATE + BYTES_PER_OBSERVER
            for lo, hi in chunk_bounds(cost, budget):
                parts.append(self._seen(full, rest[lo:hi], rest_cells[lo:hi], test, None)[0])
        return _merged(parts)

    def _seen(
        self,
        query: CloseQuery,
        rows: np.ndarray,
        cells: np.ndarray | None,
        test: _Test,
        limit: float | None,
    ) -> tuple[_Pairs, np.ndarray]:
        """Pairs of observers ``rows`` that pass the exact tests, nearest first up to each cap.

        With ``limit`` (a level's radius) only pairs that close count, and
        observers that do not see their cap within ``limit * LEVEL_SURE`` are
        returned apart (no pairs) to be measured again. Everything works on 1-D
        columns gathered with ``np.take`` (much faster than fancy indexing of
        ``(N, 2)`` arrays); filtering keeps the order.
        """
        ag = self.agents
        i, j = query.pairs(rows, cells)
        dx, dy = displacement_columns(ag.pos, i, j, self.world)
        d2 = dx * dx + dy * dy
        if test.uniform_view:
            keep = d2 <= test.radius * test.radius
        else:
            vd = np.take(ag.view_distance, i)
            keep = d2 <= vd * vd
            del vd
        if limit is not None:
            keep &= d2 <= limit * limit
        if test.overlap:
            keep &= i != j  # never oneself
        dist = np.sqrt(d2)
        del d2
        if test.fov:
            along = np.take(ag.heading[:, 0], i) * dx + np.take(ag.heading[:, 1], i) * dy
            if test.cos_half is not None:
                seen = along >= dist * test.cos_half
            else:
                half_i = np.take(0.5 * ag.fov, i)
                cos_i = np.cos(np.minimum(half_i, np.pi)) - FOV_COS_TOLERANCE
                seen = (half_i >= np.pi) | (along >= dist * cos_i)
            keep &= seen
            del along, seen
        pairs = _Pairs(i, j, dx, dy, dist).where(keep)
        del keep, i, j, dx, dy, dist
        cap = ag.max_neighbours[rows]
        failed = rows[:0]
        if limit is not None:
            if int(rows[-1]) - int(rows[0]) + 1 == rows.size:  # a range
                owner = pairs.i - int(rows[0])
            else:
                owner = np.searchsorted(rows, pairs.i)
            sure = np.bincount(owner[pairs.dist <= limit * LEVEL_SURE], minlength=rows.size)
            sure = sure >= cap
            if not sure.all():
                failed = rows[~sure]
                pairs = pairs.where(np.take(sure, owner))
            del owner
        offsets = np.empty(rows.size + 1, dtype=np.int64)
        offsets[:-1] = np.searchsorted(pairs.i, rows)
        offsets[-1] = pairs.i.shape[0]
        nearest = nearest_first(pairs.dist, offsets, cap)
        if nearest is not None:
            pairs = pairs.take(nearest)
        return pairs, failed

    # -------------------------------------------------------------- nearest
    def nearest(
        self, group: str, of_group: str, radius: float | None = None
    ) -> tuple[np.ndarray, Array]:
        """Closest agent of ``of_group`` (not oneself) within ``radius`` per row of ``group``.

        Returns ``(agent row or -1, distance or inf)``; ``radius`` None means unlimited.
        """
        r = np.inf if radius is None else float(radius)
        key = (group, of_group, r)
        if self._thinkers(group) is not None:
            return self._held_answer("nearest", key)
        found = self._nearest.get(key)
        if found is None:
            found = self._nearest[key] = self._nearest_of(self.rows(group), key)
        return found

    def _nearest_of(
        self, observers: slice | IntArray, key: tuple[str, str, float]
    ) -> tuple[np.ndarray, Array]:
        """:meth:`nearest`'s answer for ``observers`` (a range, or sorted rows)."""
        b, r = self.other_rows(key[0], key[1]), key[2]
        found = None
        if self.kernels is not None:
            found = self.kernels.nearest(
                self.world, self.agents.pos, observers, b, r, bins=self._bins
            )
        if found is None:
            found = self.index.nearest(observers, b, r)
        return found

    def nearest_visible(
        self, group: str, of_group: str, radius: float | None = None
    ) -> tuple[np.ndarray, Array]:
        """:meth:`nearest`, among the agents each row can see: within its view distance (and
        ``radius``), inside its field of view, no obstacle or wall across the line (the test
        of ``can_see``; ``world/visible_nearest.py``)."""
        r = np.inf if radius is None else float(radius)
        key = (group, of_group, r)
        if self._thinkers(group) is not None:
            return self._held_answer("visible", key)
        found = self._visible.get(key)
        if found is None:
            found = self._visible[key] = self._visible_of(key)
        return found

    def _visible_of(self, key: tuple[str, str, float]) -> tuple[np.ndarray, Array]:
        """:meth:`nearest_visible`'s answer for every row of the group."""
        rows, of, r = self.rows(key[0]), self.other_rows(key[0], key[1]), key[2]
        ag = self.agents
        look = (ag.heading[rows], np.minimum(ag.view_distance[rows], r), 0.5 * ag.fov[rows])
        if self.kernels is not None:
            found: tuple[np.ndarray, Array] = self.kernels.nearest_visible(
                self.world, ag.pos, rows, of, *look
            )
            return found
        return nearest_visible(self.index, rows, of, *look)

    # ------------------------------------------------ held perception (sense/held.py)
    def _thinkers(self, group: str) -> IntArray | None:
        """The global rows of ``group`` that think this tick; None when every one does."""
        if self.thinking is None:
            return None
        return self.thinking.thinkers(group, self.rows(group).start)

    def _fresh_answer(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """The thinkers' answer to query ``key``, made once a tick for both phases."""
        found = self._fresh.get(key)
        if found is None:
            found = self._fresh[key] = make()
        return found

    def thinkers_nearest(
        self, group: str, of_group: str, radius: float | None, visible: bool
    ) -> np.ndarray:
        """While ``group`` decides (:meth:`deciding_rows` not None): the nearest (or nearest
        visible) agent row of ``of_group`` of each thinker, in their order (-1: none)."""
        r = np.inf if radius is None else float(radius)
        self._partial += 1  # an answer for the thinkers alone
        agent: np.ndarray = self._fresh_nearest(
            "visible" if visible else "nearest", (group, of_group, r)
        )[0]
        return agent

    def _fresh_nearest(self, kind: str, key: tuple[str, str, float]) -> tuple[np.ndarray, Array]:
        """The thinkers' nearest-agent answer (``kind``: "nearest" or "visible") in their order,
        made once a tick for both phases."""
        thinkers = self._thinkers(key[0])
        assert thinkers is not None

        def make() -> tuple[np.ndarray, Array]:
            if kind == "nearest":
                return self._nearest_of(thinkers, key)
            agent, dist = self._visible_of(key)
            local = thinkers - self.rows(key[0]).start
            return agent[local], dist[local]

        found: tuple[np.ndarray, Array] = self._fresh_answer((kind, *key), make)
        return found

    def _held_answer(self, kind: str, key: tuple[str, str, float]) -> tuple[np.ndarray, Array]:
        """A nearest-agent answer (``kind``: "nearest" or "visible") for a group that does
        not all think, from its thinkers': theirs alone while :attr:`deciding`, else every
        row's, the others' held target measured now."""
        group = key[0]
        fresh = self._fresh_nearest(kind, key)
        if self.deciding:
            self._partial += 1
            found = self._decided.get((kind, *key))
            if found is None:
                rows = self.rows(group)
                n, local = rows.stop - rows.start, self._local_thinkers(group)
                agent, dist = np.full(n, -1, dtype=np.int64), np.full(n, np.inf)
                agent[local], dist[local] = fresh
                found = self._decided[(kind, *key)] = (agent, dist)
            return found
        cache = self._nearest if kind == "nearest" else self._visible
        found = cache.get(key)
        if found is None:
            assert self.thinking is not None
            rows, ag, world, kernels = self.rows(group), self.agents, self.world, self.kernels
            held_key = (kind, *key)
            found = held_nearest(self.thinking, held_key, group, rows, ag, world, fresh, kernels)
            cache[key] = found
        return found

    def deciding_rows(self, group: str) -> IntArray | None:
        """While :attr:`deciding`, the rows within ``group`` whose trees tick this tick
        (a group that does not all think); None when every row's facts are read. Built-in
        conditions and leaf statuses compute those rows alone."""
        if not self.deciding or self.thinking is None:
            return None
        return self.thinking.rows.get(group)

    def _local_thinkers(self, group: str) -> IntArray:
        """The rows within ``group`` that think this tick (the group does not all think)."""
        assert self.thinking is not None
        return self.thinking.rows[group]

    def _fresh_neighbours(self, group: str, of: str) -> Neighbours:
        """The thinkers' neighbour query, with its pairs (both phases read it)."""

        def make() -> Neighbours:
            thinkers, b = self._thinkers(group), self.other_rows(group, of)
            assert thinkers is not None
            if self.kernels is not None:  # who they are made at once: what is held
                found: Neighbours = self.kernels.neighbours(
                    self.world, self.agents, thinkers, b, identities=True, bins=self._bins
                )
                return found
            return self._compute_neighbours(thinkers, b)

        found: Neighbours = self._fresh_answer(("neighbours", group, of), make)
        return found

    def thinkers_neighbour_count(self, group: str, of: str = "same") -> np.ndarray:
        """While ``group`` decides (:meth:`deciding_rows` not None): each thinker's neighbour
        count, in their order."""
        self._partial += 1
        return np.diff(self._fresh_neighbours(group, of).offsets)

    def _thinkers_neighbours(self, group: str, of: str) -> Neighbours:
        """While :attr:`deciding`: the thinkers' neighbours, the other rows none."""
        self._partial += 1
        found: Neighbours | None = self._decided.get(("neighbours", group, of))
        if found is None:
            fresh = self._fresh_neighbours(group, of)
            rows = self.rows(group)
            counts = np.zeros(rows.stop - rows.start, dtype=np.int64)
            counts[self._local_thinkers(group)] = np.diff(fresh.offsets)
            found = CountedNeighbours(counts, lambda: (fresh.i, fresh.j, fresh.d, fresh.dist))
            self._decided[("neighbours", group, of)] = found
        return found

    def _held_neighbours(self, group: str, of: str) -> Neighbours:
        """Neighbours of every row of ``group``: queried for the thinkers, held for the rest."""
        assert self.thinking is not None
        rows = self.rows(group)
        fresh = self._fresh_neighbours(group, of)
        who = getattr(fresh, "identities", None)
        parts = (fresh.j if who is None else who, fresh.offsets, lambda: (fresh.d, fresh.dist))
        ag, world, sums = self.agents, self.world, getattr(fresh, "sums", None)
        held = held_pairs(self.thinking, (group, of), rows, ag, world, parts, self.kernels, sums)
        return HeldNeighbours(held)

    # -------------------------------------------------------------- targets
    def target(self, spec: Any, group: str) -> TargetFacts:
        """Facts about the target ``spec`` (a registered target kind) for ``group``'s rows."""
        key = (spec, group)
        found = self._targets.get(key)
        if found is not None:
            return found
        if not self.deciding or self._thinkers(group) is None:
            found = self._targets[key] = self._compute_target(spec, group)
            return found
        found = self._decided.get(("target", *key))
        if found is not None:
            self._partial += 1
            return found
        before = self._partial
        found = self._compute_target(spec, group)
        if self._partial == before:  # read nothing held: the same answer in both phases
            self._targets[key] = found
        else:
            self._decided[("target", *key)] = found
        return found

    def _compute_target(self, spec: Any, group: str) -> TargetFacts:
        resolve: TargetFn = self.registries.targets.impl(spec.kind)
        return resolve(spec, self, group)

    def agent_facts(
        self, own: Array, agent: np.ndarray, only: IntArray | None = None
    ) -> TargetFacts:
        """Facts of target agents (global rows, -1 = none) seen from positions ``own``;
        ``only``: the rows read (:meth:`deciding_rows`), ``agent`` given for them alone, in
        their order (:class:`RowFacts`: no target at the other rows)."""
        if self.agents.n == 0:
            return self.point_facts(own, None)
        if only is not None:
            if self.kernels is not None:
                some = self.kernels.agent_facts(self.world, self.agents, own, agent, only)
            else:
                some = self.agent_facts(own.take(only, axis=0), agent)
            return RowFacts(own.shape[0], only, some)
        if self.kernels is not None:
            return self.kernels.agent_facts(self.world, self.agents, own, agent)
        valid = agent >= 0
        safe = np.where(valid, agent, 0)
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
