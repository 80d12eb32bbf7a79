"""What agents that do not think this tick keep perceiving (think-rate LOD, ``sim/think.py``).

An agent that does not think keeps its last decision: the same steering leaves act
every tick, on the current positions of the *same* targets. So the queries that
choose who a target is (the nearest agent, the nearest visible agent, the
neighbour set) are answered afresh only for the agents that think; every other
agent keeps the identities its last think found, and the facts of those agents
are read from the current state (a held "pursue the nearest predator" pursues
that predator where it is now, even if another came nearer). A held target that
has despawned is missing (its leaf gives no force until the agent thinks again).
Targets that are not chosen by a query (points, zones, the pointer, blackboard
points, one agent by id, a centroid of a group, a plugin's kind) are read afresh
for everyone: there is no identity to hold.

The identities are kept by agent id (ids are never reused), so spawns, despawns
and re-sorted rows keep them: target ids in a dense array indexed by observer id,
neighbour pairs as rows with a copy of the ids they were taken under, mapped to the
current rows when the rows changed. Only the thinking rows are queried (``Sense``
passes the fresh answers in), which is where the time goes. Every observer's
neighbour count is known at once (a condition reads it); the pairs of the whole
group, each observer's block from the fresh query or from what it holds, are put
together when first read (flocking, in the act phase). The passes over every
agent and every held pair have compiled twins in ``held_loops.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from behaviortk.vec import Array
from behaviortk.world.rows import RowCopy
from behaviortk.world.spatial import displacement_columns

Pairs = tuple[np.ndarray, np.ndarray, Array, Array]
"""``(i, j, d, dist)`` of neighbour pairs, sorted by ``(i, j)``."""
Fresh = tuple[np.ndarray, np.ndarray, Callable[[], tuple[Array, Array]]]
"""``(j, offsets, measured)`` of the thinkers' query: CSR over the thinkers, in row order;
``measured()`` gives the pairs' ``(d, dist)`` (made when a reader of measured pairs asks)."""


class HeldPairs:
    """One tick's neighbour pairs of a group that does not all think: each observer's
    count now; its pairs (``arrays``), only who they are (``identities``, what the next
    tick holds) or, compiled, the flocking sums (``sums``) worked out when first asked for.

    They stay valid while ``agents.ids`` is the array object ``under``; ``ids`` is a copy of
    the ids then, to find the agents again after the rows changed."""

    def __init__(
        self,
        start: int,
        offsets: np.ndarray,
        merge: Callable[[bool], Pairs] | None,
        ids: np.ndarray,
        sums: Callable[[], tuple[Array, np.ndarray]] | None = None,
    ) -> None:
        self.start = start  # the group's first row then: observer k is row start + k
        self.offsets = offsets
        self._merge: Callable[[bool], Pairs] | None = merge
        self._sums = sums
        self._pairs: Pairs | None = None
        self._held: np.ndarray | None = None
        self.under = ids
        self.ids = ids.copy()

    @classmethod
    def restored(
        cls, start: int, offsets: np.ndarray, j: np.ndarray, ids: np.ndarray, under: np.ndarray
    ) -> HeldPairs:
        """Pairs a snapshot saved (``sim/snapshot_lod.py``): their ``identities`` ``j`` (all
        the next tick reads of them), the ids then, and ``under``, today's ``agents.ids``
        when the rows are still those."""
        pairs = cls(start, offsets, None, ids)
        pairs._held, pairs.under = j, under
        return pairs

    def arrays(self) -> Pairs:
        """``(i, j, d, dist)`` of every pair, measured on the tick they were made for."""
        if self._pairs is None:
            assert self._merge is not None
            self._pairs = self._merge(True)
        return self._pairs

    def identities(self) -> np.ndarray:
        """The neighbour row of every pair (``j``), in the order of ``arrays``."""
        if self._held is None and self._pairs is not None:
            return self._pairs[1]
        if self._held is None:
            assert self._merge is not None
            self._held = self._merge(False)[1]
        return self._held

    def sums(self) -> Array | None:
        """Every observer's flocking sums (``query_loops.SUMS``), or None off the compiled path
        (the pass that sums also gives ``identities``)."""
        if self._sums is None:
            return None
        sums, held = self._sums()
        if self._held is None:
            self._held = held
        return sums


@dataclass
class HeldPerception:
    """Per query, what each agent perceived when it last thought (lives as long as the run)."""

    targets: dict[tuple[Any, ...], np.ndarray] = field(default_factory=dict)
    """Query key -> target agent id per observer id (-1: none found)."""
    pairs: dict[tuple[str, str], HeldPairs] = field(default_factory=dict)
    """``(group, of)`` -> the neighbour pairs of every observer of the group."""
    copies: dict[tuple[Any, ...], RowCopy] = field(default_factory=dict)
    """Query key -> its ``targets`` store in row order (the compiled pass reads that)."""

    def in_rows(self, key: tuple[Any, ...], store: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """``store.take(ids)`` (``ids``: ``agents.ids``), kept while the rows and the store stay."""
        copy = self.copies.get(key)
        if copy is None:
            copy = self.copies[key] = RowCopy()
        return copy.of(store, ids)


@dataclass
class Thinking:
    """This tick's thinkers and the perception the others hold (handed to ``Sense``)."""

    rows: dict[str, np.ndarray]
    """Group -> its sorted local rows that think this tick (groups that do not all think)."""
    held: HeldPerception
    row_of: np.ndarray
    """Agent id -> its current row, -1 once despawned (every id handed out has an entry)."""

    def thinkers(self, group: str, start: int) -> np.ndarray | None:
        """The global rows of ``group`` that think this tick, None when all of them do."""
        local = self.rows.get(group)
        return None if local is None else local + start


def held_nearest(
    thinking: Thinking,
    key: tuple[Any, ...],
    group: str,
    rows: slice,
    agents: Any,
    world: Any,
    fresh: tuple[np.ndarray, Array],
    kernels: Any = None,
) -> tuple[np.ndarray, Array]:
    """``(target row or -1, distance or inf)`` for every row of ``group`` (``rows``):
    ``fresh`` (the query's answer for its thinking rows) where the agent thinks, else the
    target its last think found, where it is now."""
    local = thinking.rows[group]
    row_of = thinking.row_of
    ids = agents.ids[rows]
    store = thinking.held.targets.get(key)
    if store is None or store.size < row_of.size:
        more = np.full(row_of.size, -1, dtype=np.int64)
        if store is not None:
            more[: store.size] = store
        store = thinking.held.targets[key] = more
    if kernels is not None:  # the same, reading the store in row order (written through)
        in_rows = thinking.held.in_rows(key, store, agents.ids)[rows]
        args = (in_rows, store, ids, agents.ids, row_of, agents.pos, rows.start, local, fresh)
        found: tuple[np.ndarray, Array] = kernels.held_targets(*args, world)
        return found
    agent, dist = fresh
    store[ids.take(local)] = np.where(agent >= 0, agents.ids.take(agent), -1)
    held = store.take(ids)
    target = np.where(held >= 0, row_of.take(held), -1)  # take(-1) is masked out
    own = np.arange(rows.start, rows.stop, dtype=np.int64)
    dx, dy = displacement_columns(agents.pos, own, target, world)
    out = np.where(target >= 0, np.sqrt(dx * dx + dy * dy), np.inf)
    target[local] = agent  # the thinkers' own answers, bit for bit
    out[local] = dist
    return target, out


def held_pairs(
    thinking: Thinking,
    key: tuple[str, str],
    rows: slice,
    agents: Any,
    world: Any,
    fresh: Fresh,
    kernels: Any = None,
    fresh_sums: Array | None = None,
) -> HeldPairs:
    """The neighbour pairs of group ``key[0]`` (``rows``): ``fresh`` (``(j, offsets,
    measured)`` of the query of its thinking rows; compiled, ``fresh_sums`` too) for the
    agents that think, the pairs of their last think, measured when merged, for the
    others; kept for the next tick."""
    local = thinking.rows[key[0]]
    n = rows.stop - rows.start
    fj, fo, measured = fresh
    old = thinking.held.pairs.get(key)
    if old is None:
        ho, hj = np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    else:
        ho, hj = _current(old, agents.ids, thinking.row_of, rows)
    if kernels is not None:
        thinks, offsets = kernels.held_offsets(n, local, fo, ho)
    else:
        thinks = np.zeros(n, dtype=bool)
        thinks[local] = True
        counts = np.diff(ho)
        counts[local] = np.diff(fo)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
    pos, vel = agents.pos, agents.vel

    def merge(measure: bool) -> Pairs:
        if kernels is not None:
            fd, fdist = measured() if measure else (np.zeros((0, 2)), np.zeros(0))
            args = (rows.start, offsets, thinks, fo, fj, fd, fdist, ho, hj, pos, world)
            out: Pairs = kernels.merge_pairs(*args, measure)
            return out
        return merged(rows.start, offsets, local, thinks, fresh, ho, hj, pos, world)

    sums = None
    if kernels is not None and fresh_sums is not None:

        def sums() -> tuple[Array, np.ndarray]:
            args = (rows.start, offsets, thinks, fo, fj, fresh_sums, ho, hj, pos, vel, world)
            found: tuple[Array, np.ndarray] = kernels.held_sums(*args)
            return found

    pairs = HeldPairs(rows.start, offsets, merge, agents.ids, sums)
    thinking.held.pairs[key] = pairs
    return pairs


def merged(
    start: int,
    offsets: np.ndarray,
    local: np.ndarray,
    thinks: np.ndarray,
    fresh: Fresh,
    ho: np.ndarray,
    hj: np.ndarray,
    pos: Array,
    world: Any,
) -> Pairs:
    """Every observer's block at ``offsets``: the thinkers' (``local``) from ``fresh``, the
    others' their held pairs ``ho``/``hj`` measured now; placed, not sorted."""
    fj, fo, measured = fresh
    fd, fdist = measured()
    n = thinks.size
    total = int(offsets[-1])
    observers = np.arange(start, start + n, dtype=np.int64)
    held_counts = np.where(thinks, 0, np.diff(ho))
    keep = np.repeat(~thinks, np.diff(ho))
    hi, hj = np.repeat(observers, held_counts), hj[keep]
    hx, hy = displacement_columns(pos, hi, hj, world)
    at = np.repeat(offsets[local] - fo[:-1], np.diff(fo)) + np.arange(fj.size)  # fresh pairs
    rest = np.ones(total, dtype=bool)
    rest[at] = False
    there = np.flatnonzero(rest)  # the held pairs fill the other places, in order
    i = np.repeat(observers, np.diff(offsets))
    j = np.empty(total, dtype=np.int64)
    j[at], j[there] = fj, hj
    d = np.empty((total, 2))
    d[at] = fd
    d[there, 0], d[there, 1] = hx, hy
    dist = np.empty(total)
    dist[at], dist[there] = fdist, np.sqrt(hx * hx + hy * hy)
    return i, j, d, dist


def _current(
    old: HeldPairs, ids: np.ndarray, row_of: np.ndarray, rows: slice
) -> tuple[np.ndarray, np.ndarray]:
    """``old``'s pairs in today's rows: per-observer offsets and neighbour rows (sorted by
    observer, then neighbour); pairs with a despawned agent dropped."""
    j = old.identities()
    if old.under is ids:
        return old.offsets, j
    observers = np.arange(old.start, old.start + old.offsets.size - 1, dtype=np.int64)
    i = np.repeat(observers, np.diff(old.offsets))
    i = row_of.take(old.ids.take(i))
    j = row_of.take(old.ids.take(j))
    keep = (i >= 0) & (j >= 0)
    i, j = i[keep], j[keep]
    order = np.lexsort((j, i))
    i, j = i[order], j[order]
    n = rows.stop - rows.start
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(i - rows.start, minlength=n), out=offsets[1:])
    return offsets, j
