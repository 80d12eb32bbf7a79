"""What breakpoints look at after each step (``sim/breakpoints.py`` sets them).

Every watch answers "did it just happen, and for which agent": a node watch asks its
group's :class:`GroupStatuses` which rows changed status this step, a board watch
compares the group's blackboard comparison with the last step's, an event watch scans
the step's events. All of them read whole arrays; none loops over agents.

Rows move when agents spawn, despawn or are re-sorted (``agents.ids`` is then a new
array); what a watch kept per row follows its agent by id (:class:`RowFollower`), and an
agent it has not seen yet starts from what it held before its first step: INVALID
statuses, its declared blackboard default.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol

import numpy as np

from behaviortk.leaves.conditions import compare
from behaviortk.tree.blackboard import Keys
from behaviortk.tree.flat import Decision, FlatTree
from behaviortk.tree.status import INVALID, STATUS_NAMES
from behaviortk.world.state import Agents

CODES = len(STATUS_NAMES)
"""Status codes 0..CODES-1 (``tree/status.py``)."""
NO_ID = np.iinfo(np.int64).max
"""Larger than any agent id (ids are int64 >= 0)."""


class Simulation(Protocol):
    """What watches read of ``sim/simulation.Simulation`` (which imports this module)."""

    tick: int
    scenario: Any
    trees: dict[str, FlatTree]
    agents: Agents
    decisions: dict[str, Decision]
    engine: Any
    _row_of: np.ndarray  # id -> row: the Simulation's own map, read to follow moved rows

    @property
    def events(self) -> list[Any]: ...


class Watch(ABC):
    """One thing a breakpoint looks at (a node of one group, an event, a key of one group)."""

    def arm(self, sim: Simulation) -> None:
        """Start from the state now: nothing that happened before counts."""
        return None  # by default a watch keeps no state

    def disarm(self) -> None:
        """The breakpoint was removed."""
        return None  # by default nothing to let go of

    @abstractmethod
    def check(self, sim: Simulation, agent: int | None) -> int | None:
        """The lowest agent id it happened for in the step just taken (only ``agent``, when
        given), or None."""

    @abstractmethod
    def fields(self, sim: Simulation) -> dict[str, Any]:
        """The ``Hit`` fields that say what happened (asked of the watch that won the step)."""


def row_now(sim: Simulation, agent: int) -> int:
    """The agent's row now, -1 once it is despawned."""
    row_of = sim._row_of
    row = int(row_of[agent]) if 0 <= agent < row_of.size else -1
    return row if 0 <= row < sim.agents.n else -1


class RowFollower:
    """Keeps per-row values of one group on their agents when rows move (see module doc)."""

    def __init__(self, group: str) -> None:
        self.group = group
        self.seen: object = None  # the agents.ids array the values are aligned with
        self.ids = np.zeros(0, dtype=np.int64)  # the group's ids then (a copy: rows move in place)

    def moved(self, sim: Simulation) -> bool:
        return sim.agents.ids is not self.seen

    def span(self, sim: Simulation) -> slice:
        return sim.agents.slices[self.group]

    def follow(self, sim: Simulation, values: np.ndarray, fresh: Any) -> np.ndarray:
        """``values`` (rows as last seen) on the rows now; agents new to the group get ``fresh``."""
        span = self.span(sim)
        out = np.full((span.stop - span.start, *values.shape[1:]), fresh, dtype=values.dtype)
        if self.ids.size:
            rows = sim._row_of[self.ids]  # where those agents are now (-1: despawned)
            kept = (rows >= span.start) & (rows < span.stop)
            out[rows[kept] - span.start] = values[kept]
        self.aligned(sim)
        return out

    def aligned(self, sim: Simulation) -> None:
        """The values now match the rows as they are."""
        ids = sim.agents.ids
        self.seen, self.ids = ids, ids[self.span(sim)].copy()


# ------------------------------------------------------------------ node statuses


class GroupStatuses:
    """One group's node statuses after the last step, shared by every node watch of the
    group. Each step it compares the statuses with the last ones and looks only at the
    entries that changed: an entry (row, node) that changed to status S is a row where
    that node became S, so a table from (node, status) to the pairs some watch waits for
    answers every watch at once. Statuses in hand (the batch engine's) are compared whole,
    one pass over contiguous bytes; those the engine reads when asked (py_trees walks its
    behaviours) are read for the watched nodes only (``Decision.status_columns``)."""

    def __init__(self, group: str, nodes: int) -> None:
        self.rows = RowFollower(group)
        self.last = np.zeros((0, nodes), dtype=np.int8)
        self.synced = -1  # the sim.tick ``last`` belongs to
        self.waiting: dict[tuple[int, int], int] = {}  # (node, status) -> watches on it
        self._pairs: list[tuple[int, int]] = []
        self._table = np.full(nodes * CODES, -1, dtype=np.int64)
        """node * CODES + status -> the pair's index in ``_pairs``, -1 where none waits."""
        self._watched = np.zeros(0, dtype=np.int64)  # the nodes some pair names, ascending
        self.first: dict[tuple[int, int], int] = {}
        """This step: the lowest id for which each (node, status) waited for became true."""
        self.rows_hit = self.slots_hit = np.zeros(0, dtype=np.int64)
        """This step: the local rows where some waited-for pair became true, and its index."""

    def wait(self, pair: tuple[int, int], count: int) -> None:
        """One more (``count`` 1) or one fewer (-1) watch waits for ``pair``."""
        left = self.waiting.get(pair, 0) + count
        if left > 0:
            self.waiting[pair] = left
        else:
            self.waiting.pop(pair, None)
        self._pairs = list(self.waiting)
        self._table[:] = -1
        for j, (node, code) in enumerate(self._pairs):
            self._table[node * CODES + code] = j
        self._watched = np.array(sorted({node for node, _ in self._pairs}), dtype=np.int64)

    def _decision(self, sim: Simulation) -> Decision | None:
        return sim.decisions.get(self.rows.group)

    def arm(self, sim: Simulation, node: int) -> None:
        """Up to date with the statuses now, node ``node`` included (the group's other
        watches keep the rest so)."""
        decision = self._decision(sim)
        if self.synced != sim.tick or self.rows.moved(sim):
            span = self.rows.span(sim)
            self.last = np.zeros((span.stop - span.start, self.last.shape[1]), dtype=np.int8)
            self.rows.aligned(sim)
            self.synced = sim.tick
            self.first = {}
            self.rows_hit = self.slots_hit = np.zeros(0, dtype=np.int64)
            if decision is not None and decision.collected:  # before the first step: INVALID
                self.last[:] = decision.status
            elif decision is not None:
                self.last[:, self._watched] = decision.status_columns(self._watched)
        if decision is not None and node not in self._watched:
            self.last[:, node] = decision.status_columns(np.array([node]))[:, 0]

    def step(self, sim: Simulation) -> None:
        """Find this step's changes (once per step, whichever watch asks first)."""
        if self.synced == sim.tick:
            return
        self.synced = sim.tick
        if self.rows.moved(sim):
            self.last = self.rows.follow(sim, self.last, INVALID)
        decision = sim.decisions[self.rows.group]
        whole = decision.collected  # in hand: compare every entry; else the watched nodes
        now = np.ravel(decision.status if whole else decision.status_columns(self._watched))
        last = self.last.reshape(-1) if whole else np.ravel(self.last[:, self._watched])
        flat = np.flatnonzero(now != last)
        self.first = {}
        self.rows_hit = self.slots_hit = flat[:0]
        if flat.size == 0:
            return
        became = now[flat]
        width = self.last.shape[1] if whole else self._watched.size
        rows, column = np.divmod(flat, width)
        if whole:
            node = column
            last[flat] = became  # a view of ``last``
        else:
            node = self._watched[column]
            self.last[rows, node] = became
        slot = self._table[node * CODES + became]
        waited = slot >= 0
        self.rows_hit, self.slots_hit = rows[waited], slot[waited]
        if self.slots_hit.size == 0:
            return
        ids = sim.agents.ids[self.rows.span(sim)][self.rows_hit]
        lowest = np.full(len(self._pairs), NO_ID, dtype=np.int64)
        np.minimum.at(lowest, self.slots_hit, ids)  # each pair's lowest id
        pairs = self._pairs
        self.first = {pairs[j]: a for j, a in enumerate(lowest.tolist()) if a != NO_ID}

    def became(self, pair: tuple[int, int], local: int) -> bool:
        """Whether ``pair`` became true this step for local row ``local``."""
        j = self._pairs.index(pair)
        return bool(((self.slots_hit == j) & (self.rows_hit == local)).any())


class NodeWatch(Watch):
    """Node ``index`` of a group became status ``code``."""

    def __init__(self, statuses: GroupStatuses, index: int, code: int) -> None:
        self.statuses, self.pair = statuses, (index, code)

    def arm(self, sim: Simulation) -> None:
        self.statuses.arm(sim, self.pair[0])
        self.statuses.wait(self.pair, 1)

    def disarm(self) -> None:
        self.statuses.wait(self.pair, -1)

    def check(self, sim: Simulation, agent: int | None) -> int | None:
        s = self.statuses
        s.step(sim)
        if agent is None:
            return s.first.get(self.pair)
        if not s.first:
            return None
        row = row_now(sim, agent)
        span = s.rows.span(sim)
        inside = span.start <= row < span.stop
        return agent if inside and s.became(self.pair, row - span.start) else None

    def fields(self, sim: Simulation) -> dict[str, Any]:
        group, (k, code) = self.statuses.rows.group, self.pair
        return {
            "group": group,
            "node": sim.trees[group].nodes[k].path,
            "status": STATUS_NAMES[code],
        }


# ------------------------------------------------------------------ blackboards


class BoardWatch(Watch):
    """``compare(op, value under key, rhs)`` became true for an agent of ``group``: true
    after this step, false after the previous one (or when set)."""

    def __init__(self, group: str, key: str, op: str, rhs: Any) -> None:
        self.rows = RowFollower(group)
        self.key, self.op, self.rhs = key, op, rhs
        self.was = np.zeros(0, dtype=bool)
        self.fresh = False  # an agent not seen yet held the declared default
        self._row = -1  # the row of the agent it last happened for

    def arm(self, sim: Simulation) -> None:
        group = self.rows.group
        keys = Keys(getattr(sim.scenario, "blackboards", {}).get(group, {}), group)
        self.fresh = compare(self.op, keys.defaults().get(self.key), self.rhs)
        self.was = self.passes(sim, None)
        self.rows.aligned(sim)

    def passes(self, sim: Simulation, local: np.ndarray | None) -> np.ndarray:
        span = self.rows.span(sim)
        rows = np.arange(span.stop - span.start) if local is None else local
        return np.asarray(
            sim.engine.blackboard_passes(self.rows.group, self.key, self.op, self.rhs, rows)
        )

    def check(self, sim: Simulation, agent: int | None) -> int | None:
        if self.rows.moved(sim):
            self.was = self.rows.follow(sim, self.was, self.fresh)
        start = self.rows.span(sim).start
        if agent is None:
            now = self.passes(sim, None)
            local = np.flatnonzero(now & ~self.was)
            self.was = now
        else:  # one agent: one row read
            row = row_now(sim, agent)
            if row < 0:
                return None
            at = np.array([row - start])
            now = self.passes(sim, at)
            local = at[now & ~self.was[at]]
            self.was[at] = now
        if local.size == 0:
            return None
        ids = sim.agents.ids[start + local]
        k = int(np.argmin(ids))
        self._row = start + int(local[k])
        return int(ids[k])

    def fields(self, sim: Simulation) -> dict[str, Any]:
        value = sim.engine.blackboard(self._row).get(self.key)
        return {"group": self.rows.group, "key": self.key, "value": value}


# ------------------------------------------------------------------ events


class EventWatch(Watch):
    """The step raised event ``name``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def check(self, sim: Simulation, agent: int | None) -> int | None:
        events = sim.events
        if not events:
            return None
        name = self.name
        agents = [e.agent for e in events if e.name == name and (agent is None or e.agent == agent)]
        return min(agents) if agents else None

    def fields(self, sim: Simulation) -> dict[str, Any]:
        return {"event": self.name}
