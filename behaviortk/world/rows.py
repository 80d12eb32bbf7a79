"""Rearranging agents: stacking groups and moving rows when agents spawn or despawn.

Agents of one group stay contiguous and groups keep the definition's order, so
a group's rows remain a slice. Every per-agent array of ``Agents`` follows the
same row map.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from itertools import chain
from operator import itemgetter
from typing import Any

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


def rearrange(old: Agents, src: np.ndarray, names: list[str], fresh: Agents | None) -> Agents:
    """Agents whose row ``r`` is ``old``'s row ``src[r]``, or, where ``src[r] < 0``, the next
    row of ``fresh`` (in order); ``names`` are the new rows' names. One gather per array;
    groups must stay contiguous."""
    new = np.flatnonzero(src < 0)
    safe = np.where(src < 0, 0, src)
    index = {name: k for k, name in enumerate(old.group_names)}
    arrays = {}
    for name in (*PER_AGENT, "group"):
        arr = getattr(old, name)
        out = empty_rows(src.size, arr.shape[1:], old.ids, arr.dtype)  # keeps the spare rows
        np.take(arr, safe, axis=0, out=out)
        if fresh is not None:
            added = getattr(fresh, name)
            if name == "group":
                added = np.array([index[n] for n in fresh.group_names], dtype=np.int64)[added]
            out[new] = added
        arrays[name] = out
    make: Any = Agents
    return make(
        names=names,
        group_names=list(old.group_names),
        slices=slices_of(arrays["group"], old.group_names),
        **arrays,
    )


def pick(values: list[str], rows: list[int]) -> list[str]:
    """``[values[r] for r in rows]`` at C speed."""
    if not rows:
        return []
    picked = itemgetter(*rows)(values)
    return [picked] if len(rows) == 1 else list(picked)


# ---------------------------------------------------------------- moves in place (spawn, despawn)
#
# A game spawns and despawns agents every frame; rebuilding every per-agent array for one
# agent would cost a whole tick. So a spawn or despawn moves only the rows it must, in
# place, inside arrays that keep spare rows (capacity grown geometrically):
#
# * within a group, despawned rows are filled by the group's last survivors (swap-remove:
#   the agents' order within a group carries no meaning; ids name them) and new agents are
#   appended after the survivors;
# * the groups after a changed one slide as whole blocks (one memmove per array, no Python
#   per agent), so groups stay contiguous and keep their own local rows.


def room(arr: np.ndarray) -> int:
    """Rows ``arr``'s memory holds from its first row on (its length, or its buffer's)."""
    return int(_buffer(arr).shape[0])


def _buffer(arr: np.ndarray) -> np.ndarray:
    """The whole buffer behind ``arr`` when ``arr`` is its first rows (spare rows
    included), else ``arr`` itself."""
    base = arr.base
    if base is None:
        return arr
    if (
        isinstance(base, np.ndarray)
        and base.shape[0] > arr.shape[0]
        and base.dtype == arr.dtype
        and base.shape[1:] == arr.shape[1:]
        and base.flags.c_contiguous
        and arr.flags.c_contiguous
        and base.__array_interface__["data"][0] == arr.__array_interface__["data"][0]
    ):
        return base
    return arr


def grown(rows: int) -> int:
    """The capacity to allocate for ``rows`` rows: half again as many (amortised O(1) a row)."""
    return rows + (rows >> 1) + 16


def _writable(arr: np.ndarray, rows: int) -> np.ndarray:
    """The buffer behind ``arr`` when it holds ``rows`` rows, else a new one with ``arr``'s
    rows copied in (and room to grow)."""
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


@dataclass(frozen=True)
class GroupMove:
    """One group's rows in a spawn or despawn: the swap-remove inside the group, then the
    group's block at its new start. Local rows ``holes`` (despawned, below ``n_kept``)
    take the survivors at ``fillers``; new agents take local rows ``n_kept .. n_new``."""

    old_start: int
    old_n: int
    new_start: int
    n_kept: int
    n_new: int
    holes: np.ndarray
    fillers: np.ndarray

    @property
    def changed(self) -> bool:
        """Whether the group's own rows change (not only where its block sits)."""
        return self.n_new != self.old_n or self.holes.size > 0

    def old_rows(self, local: np.ndarray) -> np.ndarray:
        """The old local rows of survivors now at local rows ``local`` (each < ``n_kept``)."""
        out = np.array(local, dtype=np.int64)
        if self.holes.size:
            at = np.minimum(np.searchsorted(self.holes, out), self.holes.size - 1)
            hit = self.holes[at] == out
            out[hit] = self.fillers[at[hit]]
        return out

    def keep(self) -> np.ndarray:
        """The old local rows of the survivors in their new order (``RowChange.keep``)."""
        keep = np.arange(self.n_kept, dtype=np.int64)
        keep[self.holes] = self.fillers
        return keep


class RowPlan:
    """Every group's :class:`GroupMove` of one spawn or despawn, worked out once and applied
    to each per-agent array (first axis: every agent) with a few slice copies."""

    def __init__(
        self, slices: dict[str, slice], gone: dict[str, np.ndarray], added: dict[str, int]
    ) -> None:
        """``gone``: each group's sorted local rows that leave; ``added``: agents joining."""
        self.moves: dict[str, GroupMove] = {}
        start = 0
        none = np.zeros(0, dtype=np.int64)
        for name, rows in slices.items():
            old_n = rows.stop - rows.start
            out = gone.get(name, none)
            n_kept = old_n - out.size
            holes = out[out < n_kept]
            tail = np.ones(old_n - n_kept, dtype=bool)
            tail[out[out >= n_kept] - n_kept] = False
            fillers = n_kept + np.flatnonzero(tail)
            n_new = n_kept + added.get(name, 0)
            self.moves[name] = GroupMove(rows.start, old_n, start, n_kept, n_new, holes, fillers)
            start += n_new
        moves = list(self.moves.values())
        self.old_n = sum(m.old_n for m in moves)
        self.new_n = start
        swaps = [m for m in moves if m.holes.size]
        self.dst = np.concatenate([m.old_start + m.holes for m in swaps]) if swaps else None
        self.src = np.concatenate([m.old_start + m.fillers for m in swaps]) if swaps else None
        slides = [m for m in moves if m.new_start != m.old_start and m.n_kept]
        if any(m.new_start > m.old_start for m in slides):
            slides.reverse()  # blocks slide right: the last first, so none overwrites the next
        self.slides = [(m.new_start, m.old_start, m.n_kept) for m in slides]
        self.fresh = [
            (name, m.new_start + m.n_kept, m.new_start + m.n_new)
            for name, m in self.moves.items()
            if m.n_new > m.n_kept
        ]

    def apply(self, arr: np.ndarray, fresh: dict[str, Any] | Any) -> np.ndarray:
        """``arr`` after the plan, in place where it has room; new agents' rows from
        ``fresh[group]`` (one value, or one row each), or ``fresh`` itself when not a dict."""
        full = _writable(arr, max(self.old_n, self.new_n))
        if self.dst is not None:
            full[self.dst] = full[self.src]
        for new, old, n in self.slides:
            full[new : new + n] = full[old : old + n]
        for name, lo, hi in self.fresh:
            full[lo:hi] = fresh.get(name, 0) if isinstance(fresh, dict) else fresh
        return full[: self.new_n]

    def names(self, names: list[str], fresh: dict[str, list[str]]) -> None:
        """``Agents.names`` after the plan, in place (groups from the last: earlier rows stay)."""
        for name, m in reversed(self.moves.items()):
            s = m.old_start
            for hole, filler in zip(m.holes.tolist(), m.fillers.tolist(), strict=True):
                names[s + hole] = names[s + filler]
            names[s + m.n_kept : s + m.old_n] = fresh.get(name, [])

    def source_rows(self) -> np.ndarray:
        """Every new row's old row (-1 for a new agent): the whole map, for state kept apart."""
        parts = []
        for m in self.moves.values():
            local = np.full(m.n_new, -1, dtype=np.int64)
            local[: m.n_kept] = m.keep()
            parts.append(np.where(local >= 0, m.old_start + local, -1))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def moved_rows(self) -> np.ndarray:
        """The new rows whose agent is not the one there before (to re-index ids by)."""
        parts = []
        for m in self.moves.values():
            if m.new_start != m.old_start:
                parts.append(np.arange(m.new_start, m.new_start + m.n_new))
            else:
                parts += [
                    m.new_start + m.holes,
                    np.arange(m.new_start + m.n_kept, m.new_start + m.n_new),
                ]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def move_local(arr: np.ndarray, m: GroupMove, fresh: Any) -> np.ndarray:
    """One group's per-agent array (first axis: its agents) after ``m``, in place where it
    has room; ``fresh`` fills new agents' rows."""
    full = _writable(arr, max(m.old_n, m.n_new))
    if m.holes.size:
        full[m.holes] = full[m.fillers]
    if m.n_new > m.n_kept:
        full[m.n_kept : m.n_new] = fresh
    return full[: m.n_new]


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
    out[: m.n_kept] = arr[: m.n_kept]
    if m.holes.size:
        out[m.holes] = arr[m.fillers]
    out[m.n_kept :] = fresh
    return out
