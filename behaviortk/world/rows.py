"""Rearranging agents: stacking groups and moving rows when agents spawn or despawn.

Agents of one group stay contiguous and groups keep the definition's order, so
a group's rows remain a slice. Every per-agent array of ``Agents`` follows the
same row map.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Sequence
from dataclasses import fields
from itertools import chain
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np

from behaviortk.world.state import Agents

PER_AGENT = tuple(
    f.name
    for f in fields(Agents)
    if f.name not in ("names", "group_names", "group", "slices", "smoother")
)
"""Fields of ``Agents`` that are arrays with one row per agent."""


def slices_of(group: np.ndarray, group_names: Sequence[str]) -> dict[str, slice]:
    """Each group's contiguous rows (an empty slice for a group without agents)."""
    counts = (
        np.bincount(group, minlength=len(group_names))
        if group.size
        else np.zeros(len(group_names), dtype=np.int64)
    )
    starts = np.concatenate([[0], np.cumsum(counts)])
    return {name: slice(int(starts[k]), int(starts[k + 1])) for k, name in enumerate(group_names)}


def stack(parts: Sequence[Agents], group_names: Sequence[str]) -> Agents:
    """One ``Agents`` of several, in order; each part's group must be one of ``group_names``."""
    index = {name: k for k, name in enumerate(group_names)}
    group = np.concatenate(
        [np.array([index[n] for n in p.group_names], dtype=np.int64)[p.group] for p in parts]
        or [np.zeros(0, dtype=np.int64)]
    )
    arrays = {name: np.concatenate([getattr(p, name) for p in parts]) for name in PER_AGENT}
    make: Any = Agents  # the per-agent arrays are keyword arguments by name
    return make(
        names=list(chain.from_iterable(p.names for p in parts)),
        group_names=list(group_names),
        group=group,
        slices=slices_of(group, group_names),
        **arrays,
    )


def rearrange(old: Agents, src: np.ndarray, names: list[str]) -> Agents:
    """Agents whose row ``r`` is ``old``'s row ``src[r]`` (a permutation within groups);
    ``names`` are the new rows' names. One gather per array; groups must stay contiguous."""
    arrays = {}
    for name in (*PER_AGENT, "group"):
        arr = getattr(old, name)
        out = empty_rows(src.size, arr.shape[1:], old.ids, arr.dtype)  # keeps the spare rows
        np.take(arr, src, axis=0, out=out, mode="clip")  # src is valid: no buffered copy
        arrays[name] = out
    make: Any = Agents
    return make(
        names=names,
        group_names=list(old.group_names),
        slices=slices_of(arrays["group"], old.group_names),
        **arrays,
    )


def carry(dst: np.ndarray, src: np.ndarray, source: np.ndarray, axis: int = 0) -> None:
    """Row ``r`` of ``dst`` (along ``axis``, 0 or 1) takes row ``source[r]`` of ``src``; rows
    where ``source`` is -1 (new agents) keep ``dst``'s. When every row has a source (the
    cell-order re-sort: a permutation) that is one ``np.take`` into ``dst``, several times
    faster than a masked store."""
    n = source.shape[0]
    whole = n == dst.shape[axis] and dst.dtype == src.dtype
    if whole and (n == 0 or int(source.min()) >= 0):
        np.take(src, source, axis=axis, out=dst, mode="clip")  # indices valid: no buffering
        return
    kept = np.flatnonzero(source >= 0)
    if axis == 0:
        dst[kept] = src[source[kept]]
    else:
        dst[:, kept] = src[:, source[kept]]


def pick(values: list[str], rows: list[int]) -> list[str]:
    """``[values[r] for r in rows]`` at C speed."""
    if not rows:
        return []
    picked = itemgetter(*rows)(values)
    return [picked] if len(rows) == 1 else list(picked)


# ---------------------------------------------------------------- moves in place (spawn, despawn)
#
# A game spawns and despawns agents every frame; rebuilding every per-agent array for one
# agent would cost a whole tick. So the spawns and despawns of a frame move only the rows
# they must, together, in place, inside arrays that keep spare rows (capacity grown
# geometrically):
#
# * within a group, new agents take the rows of despawned ones (an overwrite: nobody else
#   moves), then the rows after the group's survivors; despawned rows left over are filled
#   by the group's last survivors (swap-remove: the agents' order within a group carries no
#   meaning; ids name them);
# * the groups after a changed one slide as whole blocks (one memmove per array, no Python
#   per agent), so groups stay contiguous and keep their own local rows.

_last_room: tuple[Any, int] = (None, 0)  # the last array ``room`` measured (weakly) and its room


def room(arr: np.ndarray) -> int:
    """Rows ``arr``'s memory holds from its first row on (its length, or its buffer's).

    Asked several times a tick of the same array (the integrators make their new arrays
    with the room of ``Agents.ids``): the last answer is kept (an array's buffer and offset
    never change)."""
    global _last_room
    if arr.base is None:
        return int(arr.shape[0])
    last, found = _last_room  # one tuple: another thread sees a whole pair or the other
    if last is not None and last() is arr:
        return found
    found = int(_buffer(arr).shape[0])
    _last_room = (weakref.ref(arr), found)
    return found


def _buffer(arr: np.ndarray) -> np.ndarray:
    """The whole buffer behind ``arr`` when ``arr`` is its first rows (spare rows
    included), else ``arr`` itself."""
    base = arr.base
    if (
        isinstance(base, np.ndarray)
        and base.shape[0] > arr.shape[0]
        and base.dtype == arr.dtype
        and base.shape[1:] == arr.shape[1:]
        and base.flags.c_contiguous
        and arr.flags.c_contiguous
        and arr.shape[0] > 0
        and np.shares_memory(arr[:1], base[:1])  # the same first row: arr starts the buffer
    ):
        return base
    return arr


class RowCopy:
    """A per-agent-id array's values in row order (``values.take(ids)``, ``ids`` being
    ``agents.ids``), made again only when the rows or the array change (``agents.ids`` is a
    new array object whenever rows change). A pass over every row reads it in order, where a
    gather by id after the rows were sorted by cell (``sim/cell_order.py``) reads at random
    (about a third of a millisecond a pass at 100,000 agents); whoever writes ``values``
    writes the copy's rows too."""

    def __init__(self) -> None:
        self._values: np.ndarray | None = None
        self._ids: np.ndarray | None = None
        self._rows = np.zeros(0, dtype=np.int64)

    def of(self, values: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """``values.take(ids)``, kept while ``values`` and ``ids`` are these array objects."""
        if self._values is not values or self._ids is not ids:
            self._rows = values.take(ids)
            self._values, self._ids = values, ids
        return self._rows

    def write_back(self, values: np.ndarray) -> None:
        """The copy's rows written to ``values`` by id (a writer that wrote the copy alone)."""
        if self._values is values and self._ids is not None:
            values[self._ids] = self._rows


def grown(rows: int) -> int:
    """The capacity to allocate for ``rows`` rows: half again as many (amortised O(1) a row)."""
    return rows + (rows >> 1) + 16


def _writable(arr: np.ndarray, rows: int) -> np.ndarray:
    """``arr`` when it holds ``rows`` rows, else the buffer behind it when that does, else a
    new one with ``arr``'s rows copied in (and room to grow)."""
    if arr.shape[0] >= rows:
        return arr
    full = _buffer(arr)
    if full.shape[0] >= rows:
        return full
    buf = np.empty((grown(rows), *arr.shape[1:]), dtype=arr.dtype)
    buf[: arr.shape[0]] = arr
    return buf


def empty_rows(
    n: int, tail: tuple[int, ...], like: np.ndarray, dtype: Any = np.float64
) -> np.ndarray:
    """An uninitialised ``(n, *tail)`` array with the room ``like`` has (a tick's new state
    arrays keep the room spawns grow into)."""
    return np.empty((max(room(like), n), *tail), dtype=dtype)[:n]


def copied(value: np.ndarray, like: np.ndarray | None = None) -> np.ndarray:
    """A copy of ``value`` with the room ``like`` has (default: ``value``'s own)."""
    out = empty_rows(value.shape[0], value.shape[1:], value if like is None else like, value.dtype)
    out[...] = value
    return out


def keep_room(value: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``value`` in memory with ``like``'s room (a copy only when ``like`` has spare rows)."""
    if room(like) <= value.shape[0] or room(value) >= room(like):
        return value
    return copied(value, like)


Index = slice | np.ndarray
"""Rows to read or write: a run of rows (a frame's one spawn), or any rows."""

EMPTY = np.zeros(0, dtype=np.int64)


def index_of(rows: np.ndarray) -> Index:
    """``rows`` (ascending) as a slice when they are a run, else themselves (a slice store
    is the cheaper)."""
    n = rows.size
    if n == 1:
        first = rows.item()
        return slice(first, first + 1)
    if n and int(rows[-1]) - int(rows[0]) == n - 1:
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


class GroupMove(NamedTuple):
    """One group's rows in a batch of spawns and despawns: a few rows moved inside the
    group, then the group's block at its new start. New agents take local rows ``fresh``
    (in the order they spawned; ``fresh_at`` is the same, as an ``Index``): despawned
    rows first, then rows after the old ones; the despawned rows left over (``holes``) take
    the survivors at ``fillers``, the last ones. Every other survivor keeps its local row."""

    old_start: int
    old_n: int
    new_start: int
    n_new: int
    holes: np.ndarray
    fillers: np.ndarray
    fresh: np.ndarray
    fresh_at: Index

    @classmethod
    def of(
        cls, old_start: int, old_n: int, new_start: int, gone: np.ndarray, added: int
    ) -> GroupMove:
        """The move of a group losing the sorted local rows ``gone`` and gaining ``added``."""
        n_new = old_n - gone.size + added
        if n_new >= old_n:  # every despawned row takes a new agent; the rest follow
            fresh = gone
            if n_new > old_n:
                fresh = np.concatenate([gone, np.arange(old_n, n_new, dtype=np.int64)])
            return cls(old_start, old_n, new_start, n_new, EMPTY, EMPTY, fresh, index_of(fresh))
        inside = gone[gone < n_new]  # rows past n_new go: their survivors fill these
        tail = np.ones(old_n - n_new, dtype=bool)
        tail[gone[gone >= n_new] - n_new] = False
        fillers = n_new + np.flatnonzero(tail)
        fresh = inside[:added]
        return cls(
            old_start, old_n, new_start, n_new, inside[added:], fillers, fresh, index_of(fresh)
        )

    @property
    def changed(self) -> bool:
        """Whether the group's own rows change (not only where its block sits)."""
        return self.n_new != self.old_n or self.holes.size > 0 or self.fresh.size > 0

    @property
    def n_kept(self) -> int:
        """How many of the group's agents survive."""
        return self.n_new - self.fresh.size

    def source(self) -> np.ndarray:
        """Each new local row's old local row, -1 for a new agent (the whole map)."""
        src = np.arange(self.n_new, dtype=np.int64)
        src[self.holes] = self.fillers
        src[self.fresh] = -1
        return src


def shifted(at: Index, by: int) -> Index:
    """Index ``at`` moved ``by`` rows on."""
    if not by:
        return at
    if isinstance(at, slice):
        return slice(at.start + by, at.stop + by)
    return at + by


def rows_at(at: Index) -> np.ndarray:
    """The rows index ``at`` picks."""
    return np.arange(at.start, at.stop) if isinstance(at, slice) else at


class RowPlan:
    """Every group's :class:`GroupMove` of one batch of spawns and despawns, worked out once
    and applied to each per-agent array (first axis: every agent) with a few copies."""

    def __init__(
        self, slices: dict[str, slice], gone: dict[str, np.ndarray], added: dict[str, int]
    ) -> None:
        """``gone``: each group's sorted local rows that leave; ``added``: agents joining."""
        self.moves: dict[str, GroupMove] = {}
        self.fresh: list[tuple[str, Index]] = []  # each group's new agents' rows (new layout)
        holes: list[np.ndarray] = []
        fillers: list[np.ndarray] = []
        left: list[tuple[int, int, int]] = []
        right: list[tuple[int, int, int]] = []
        self.stays = True
        """Whether every group keeps its rows (its start and size): only fillers move."""
        start = self.old_n = 0
        for name, rows in slices.items():
            old_n = rows.stop - rows.start
            self.old_n += old_n
            out, n = gone.get(name), added.get(name, 0)
            if out is None and not n:
                m = GroupMove(rows.start, old_n, start, old_n, EMPTY, EMPTY, EMPTY, EMPTY)
            else:
                m = GroupMove.of(rows.start, old_n, start, EMPTY if out is None else out, n)
                if m.holes.size:
                    holes.append(m.old_start + m.holes)
                    fillers.append(m.old_start + m.fillers)
                if m.fresh.size:
                    self.fresh.append((name, shifted(m.fresh_at, start) if start else m.fresh_at))
            if start != rows.start or m.n_new != old_n:
                self.stays = False
                width = min(old_n, m.n_new)
                if start != rows.start and width:
                    (left if start < rows.start else right).append((start, rows.start, width))
            self.moves[name] = m
            start += m.n_new
        self.new_n = start
        self.dst: Index | None = None
        self.src: Index | None = None
        if holes:
            self.dst = index_of(np.concatenate(holes))
            self.src = index_of(np.concatenate(fillers))
        # blocks sliding left go first to last, then those sliding right last to first: a
        # block's new rows then never hold rows of a block still to move
        self.slides = left + right[::-1]
        self.in_place = self.stays and self.dst is None
        """Whether only new agents' rows are written (each takes a despawned agent's)."""

    @classmethod
    def overwrite(cls, slices: dict[str, slice], gone: dict[str, np.ndarray]) -> RowPlan:
        """The plan of the frame's usual batch: each group in ``gone`` gains as many agents
        as it loses, each new agent takes a despawned agent's row (``gone``: sorted local
        rows), nothing else moves; ``moves`` holds only those groups."""
        plan = cls.__new__(cls)
        plan.moves, plan.fresh = {}, []
        for name, local in gone.items():
            rows = slices[name]
            n = rows.stop - rows.start
            at = index_of(local)
            plan.moves[name] = GroupMove(rows.start, n, rows.start, n, EMPTY, EMPTY, local, at)
            plan.fresh.append((name, shifted(at, rows.start)))
        plan.old_n = plan.new_n = max((s.stop for s in slices.values()), default=0)
        plan.dst = plan.src = None
        plan.slides = []
        plan.stays = plan.in_place = True
        return plan

    def apply(self, arr: np.ndarray, fresh: dict[str, Any] | Any) -> np.ndarray:
        """``arr`` after the plan, in place where it has room; new agents' rows from
        ``fresh[group]`` (one value, or one row each), or ``fresh`` itself when not a dict."""
        full = arr if self.in_place else self.place(arr)
        by_group = isinstance(fresh, dict)
        for name, at in self.fresh:
            full[at] = fresh.get(name, 0) if by_group else fresh
        return full if self.in_place else self.trim(full)

    def apply_to(self, obj: Any, fields: Sequence[str], fresh: dict[str, dict[str, Any]]) -> None:
        """:meth:`apply` to each of ``obj``'s arrays ``fields`` (an array two fields share
        moves once), new agents' rows from ``fresh[group][field]``."""
        new_rows = [(at, fresh[name]) for name, at in self.fresh]
        if self.in_place:  # only new agents' rows are written: the arrays stay
            for field in fields:
                arr = getattr(obj, field)
                for at, rows in new_rows:
                    arr[at] = rows[field]
            return
        done: dict[int, np.ndarray] = {}
        for field in fields:
            arr = getattr(obj, field)
            moved = done.get(id(arr))
            if moved is None:
                full = self.place(arr)
                for at, rows in new_rows:
                    full[at] = rows[field]
                moved = done[id(arr)] = self.trim(full)
            setattr(obj, field, moved)

    def place(self, arr: np.ndarray) -> np.ndarray:
        """``arr``'s survivors where the plan puts them, in ``arr`` or the buffer behind it
        when they fit (else a grown copy); new agents' rows are left to the caller, then
        :meth:`trim`."""
        full = _writable(arr, max(self.old_n, self.new_n))
        if self.dst is not None:
            full[self.dst] = full[self.src]
        for new, old, n in self.slides:
            full[new : new + n] = full[old : old + n]
        return full

    def trim(self, full: np.ndarray) -> np.ndarray:
        """``full``'s first ``new_n`` rows (``full`` itself when that is all of it)."""
        return full if full.shape[0] == self.new_n else full[: self.new_n]

    def apply_across(self, arr: np.ndarray, new: np.ndarray) -> None:
        """The plan on ``arr``'s second axis (agents), in place, for a plan that ``stays``;
        new agents' rows take ``new``'s same rows (the heading smoother's ring buffer)."""
        if self.dst is not None:
            arr[:, self.dst] = arr[:, self.src]
        for _, at in self.fresh:
            arr[:, at] = new[at]

    def names(self, names: list[str], fresh: dict[str, list[str]]) -> None:
        """``Agents.names`` after the plan, in place (groups from the last: earlier rows stay)."""
        if self.in_place:  # new agents take despawned agents' rows: one store each
            for name, at in self.fresh:
                if isinstance(at, slice):
                    names[at] = fresh[name]
                else:
                    deque(map(names.__setitem__, at.tolist(), fresh[name]), maxlen=0)
            return
        for name, m in reversed(self.moves.items()):
            if not m.changed:  # its block slides with the list
                continue
            s = m.old_start
            for hole, filler in zip(m.holes.tolist(), m.fillers.tolist(), strict=True):
                names[s + hole] = names[s + filler]
            added = fresh.get(name, [])
            at = m.fresh_at
            if isinstance(at, slice):  # a run of rows (one new agent, a frame's shot)
                stop = min(at.stop, m.old_n)  # rows the group had; the rest are appended
                names[s + at.start : s + stop] = added[: stop - at.start]
            else:
                rows = (s + m.fresh[m.fresh < m.old_n]).tolist()  # the rest are appended
                deque(map(names.__setitem__, rows, added), maxlen=0)  # names[row] = new
            if m.n_new != m.old_n:  # the last new agents follow the old rows, or rows go
                appended = max(0, m.n_new - m.old_n)
                names[s + min(m.old_n, m.n_new) : s + m.old_n] = added[len(added) - appended :]

    def source_rows(self) -> np.ndarray:
        """Every new row's old row (-1 for a new agent): the whole map, for state kept apart."""
        parts = []
        for m in self.moves.values():
            local = m.source()
            parts.append(np.where(local >= 0, m.old_start + local, -1))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def moved(self) -> list[Index]:
        """The new rows whose agent is not the one there before (to re-index ids by)."""
        out: list[Index] = []
        for m in self.moves.values():
            start = m.new_start
            if start != m.old_start:
                out.append(slice(start, start + m.n_new))
            elif m.changed:
                if m.holes.size:
                    out.append(start + m.holes)
                if m.fresh.size:
                    out.append(shifted(m.fresh_at, start))
        return out


def move_local(arr: np.ndarray, m: GroupMove, fresh: Any) -> np.ndarray:
    """One group's per-agent array (first axis: its agents) after ``m``, in place where it
    has room; ``fresh`` fills new agents' rows."""
    if not m.holes.size and m.n_new <= arr.shape[0]:  # only new agents' rows change
        if m.fresh.size:
            arr[m.fresh_at] = fresh
        return arr if arr.shape[0] == m.n_new else arr[: m.n_new]
    full = _writable(arr, max(m.old_n, m.n_new))
    if m.holes.size:
        full[m.holes] = full[m.fillers]
    if m.fresh.size:
        full[m.fresh_at] = fresh
    return full if full.shape[0] == m.n_new else full[: m.n_new]


def lengthened(arr: np.ndarray, n: int, fill: Any) -> np.ndarray:
    """``arr`` with rows appended up to ``n`` (filled with ``fill``), in its room when it has it."""
    old = arr.shape[0]
    if n <= old:
        return arr
    full = _writable(arr, n)
    full[old:n] = fill
    return full[:n]


def moved_copy(arr: np.ndarray, m: GroupMove, fresh: Any) -> np.ndarray:
    """A new array: one group's ``arr`` after ``m`` (``arr`` itself is left as it was)."""
    out = np.empty((m.n_new, *arr.shape[1:]), dtype=arr.dtype)
    width = min(m.old_n, m.n_new)
    out[:width] = arr[:width]
    if m.holes.size:
        out[m.holes] = arr[m.fillers]
    if m.fresh.size:
        out[m.fresh_at] = fresh
    return out
