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
neighbour pairs as ``(observer, neighbour)`` rows with a copy of the ids they were
taken under, mapped to the current rows when the rows changed. Only the thinking
rows are queried (``Sense`` passes the fresh answers in), which is where the time
goes: the rest is a few gathers per agent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from behaviortk.vec import Array
from behaviortk.world.rows import grown
from behaviortk.world.spatial import displacement, displacement_columns

RowsOfIds = Callable[[np.ndarray], np.ndarray]
"""Agent ids -> their current rows, -1 where despawned (``Simulation``'s lookup)."""


@dataclass
class HeldPairs:
    """One group's neighbour pairs as of the tick they were made, every observer's.

    ``i``/``j`` are rows sorted by ``(i, j)``, valid while ``agents.ids`` is the array
    object ``under``; ``ids`` is a copy of the ids then, to find the agents again after
    the rows changed."""

    i: np.ndarray
    j: np.ndarray
    under: np.ndarray
    ids: np.ndarray


@dataclass
class HeldPerception:
    """Per query, what each agent perceived when it last thought (lives as long as the run)."""

    targets: dict[tuple[Any, ...], np.ndarray] = field(default_factory=dict)
    """Query key -> target agent id per observer id (-1: none found)."""
    pairs: dict[tuple[str, str], HeldPairs] = field(default_factory=dict)
    """``(group, of)`` -> the neighbour pairs of every observer of the group."""


@dataclass
class Thinking:
    """This tick's thinkers and the perception the others hold (handed to ``Sense``)."""

    rows: dict[str, np.ndarray]
    """Group -> its sorted local rows that think this tick (groups that do not all think)."""
    held: HeldPerception
    rows_of_ids: RowsOfIds

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
) -> tuple[np.ndarray, Array]:
    """``(target row or -1, distance or inf)`` for every row of ``group`` (``rows``):
    ``fresh`` (the query's answer for its thinking rows) where the agent thinks, else the
    target its last think found, where it is now."""
    local = thinking.rows[group]
    ids = agents.ids[rows]
    store = thinking.held.targets.get(key)
    top = int(ids.max()) + 1 if ids.size else 0
    if store is None or store.size < top:
        more = np.full(grown(top), -1, dtype=np.int64)
        if store is not None:
            more[: store.size] = store
        store = thinking.held.targets[key] = more
    agent, dist = fresh
    store[ids[local]] = np.where(agent >= 0, agents.ids[np.maximum(agent, 0)], -1)
    held = store[ids]
    target = np.where(held >= 0, thinking.rows_of_ids(np.maximum(held, 0)), -1)
    found = np.flatnonzero(target >= 0)
    out = np.full(ids.size, np.inf)
    d = displacement(agents.pos[rows.start + found], agents.pos[target[found]], world)
    out[found] = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])
    target[local] = agent  # the thinkers' own answers, bit for bit
    out[local] = dist
    return target, out


def held_pairs(
    thinking: Thinking,
    key: tuple[str, str],
    rows: slice,
    agents: Any,
    world: Any,
    fresh: tuple[np.ndarray, np.ndarray, Array, Array],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Array, Array]:
    """``(i, j, offsets, d, dist)`` of the neighbour pairs of group ``key[0]`` (``rows``),
    sorted by ``(i, j)``: ``fresh`` (the query's pairs of its thinking rows) for the agents
    that think, the pairs of their last think, measured now, for the others."""
    local = thinking.rows[key[0]]
    n = rows.stop - rows.start
    fi, fj, fd, fdist = fresh
    old = thinking.held.pairs.get(key)
    hi: np.ndarray = np.zeros(0, dtype=np.int64)
    hj: np.ndarray = hi
    if old is not None:
        hi, hj = _current(old, agents.ids, thinking.rows_of_ids)
        kept = np.ones(n, dtype=bool)
        kept[local] = False
        keep = kept[hi - rows.start]
        hi, hj = hi[keep], hj[keep]
    hx, hy = displacement_columns(agents.pos, hi, hj, world)
    i = np.concatenate([hi, fi])
    order = np.argsort(i, kind="stable")  # two runs, each sorted by (i, j): a merge
    i = i[order]
    j = np.concatenate([hj, fj])[order]
    held_d = np.stack([hx, hy], axis=1) if hi.size else np.zeros((0, 2))
    d = np.concatenate([held_d, np.asarray(fd).reshape(-1, 2)])[order]
    dist = np.concatenate([np.sqrt(hx * hx + hy * hy), fdist])[order]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(i - rows.start, minlength=n), out=offsets[1:])
    thinking.held.pairs[key] = HeldPairs(i, j, agents.ids, agents.ids.copy())
    return i, j, offsets, d, dist


def _current(
    old: HeldPairs, ids: np.ndarray, rows_of_ids: RowsOfIds
) -> tuple[np.ndarray, np.ndarray]:
    """``old``'s pairs in today's rows, sorted by ``(i, j)``; pairs with a despawned agent
    dropped."""
    if old.under is ids:
        return old.i, old.j
    i = rows_of_ids(old.ids[old.i])
    j = rows_of_ids(old.ids[old.j])
    keep = (i >= 0) & (j >= 0)
    i, j = i[keep], j[keep]
    order = np.lexsort((j, i))
    return i[order], j[order]
