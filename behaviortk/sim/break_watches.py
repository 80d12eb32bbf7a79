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

from typing import Any, Protocol

import numpy as np

from behaviortk.leaves.conditions import compare
from behaviortk.tree.blackboard import Keys
from behaviortk.tree.flat import Decision, FlatTree
from behaviortk.tree.status import INVALID, STATUS_NAMES
from behaviortk.world.state import Agents

Found = tuple[int, dict[str, Any]]
"""A watch's answer: the agent (an id) and the ``Hit`` fields that say what happened."""


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


class Watch:
    """One thing a breakpoint looks at (a node of one group, an event, a key of one group)."""

    def arm(self, sim: Simulation) -> None:
        """Start from the state now: nothing that happened before counts."""

    def disarm(self) -> None:
        """The breakpoint was removed."""

    def check(self, sim: Simulation, agent: int | None) -> Found | None:
        """What happened in the step just taken, for the lowest agent id (only for ``agent``
        when given), or None."""
        raise NotImplementedError


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
    group. Each step it compares the whole status array with the last one (one pass over
    contiguous bytes), and only for the few rows that changed asks, for every (node,
    status) some watch waits for at once, whether the node became that status."""

    def __init__(self, group: str) -> None:
        self.rows = RowFollower(group)
        self.last = np.zeros((0, 0), dtype=np.int8)
        self.synced = -1  # the sim.tick ``last`` belongs to
        self.waiting: dict[tuple[int, int], int] = {}  # (node, status) -> watches on it
        self.up: dict[tuple[int, int], np.ndarray] = {}  # this step: local rows that became

    def wait(self, pair: tuple[int, int], count: int) -> None:
        """One more (``count`` 1) or one fewer (-1) watch waits for ``pair``."""
        left = self.waiting.get(pair, 0) + count
        if left > 0:
            self.waiting[pair] = left
        else:
            self.waiting.pop(pair, None)

    def current(self, sim: Simulation) -> np.ndarray:
        """(n, nodes) statuses now; all INVALID before the first step."""
        decision = sim.decisions.get(self.rows.group)
        if decision is None:
            span = self.rows.span(sim)
            width = len(sim.trees[self.rows.group])
            return np.zeros((span.stop - span.start, width), dtype=np.int8)
        return decision.status

    def arm(self, sim: Simulation) -> None:
        """Up to date with the statuses now (unless the group's other watches keep it so)."""
        if self.synced != sim.tick or self.rows.moved(sim):
            self.last = self.current(sim).copy()
            self.rows.aligned(sim)
            self.synced = sim.tick
            self.up = {}

    def step(self, sim: Simulation) -> None:
        """Find this step's changes (once per step, whichever watch asks first)."""
        if self.synced == sim.tick:
            return
        self.synced = sim.tick
        if self.rows.moved(sim):
            self.last = self.rows.follow(sim, self.last, INVALID)
        now = sim.decisions[self.rows.group].status
        flat = np.flatnonzero(now != self.last)
        self.up = {}
        if flat.size == 0:
            return
        rows = flat // now.shape[1]  # ascending: each changed row once
        changed = rows[np.flatnonzero(np.diff(rows, prepend=-1))]
        before, after = self.last[changed], now[changed]
        self.last[changed] = after
        pairs = list(self.waiting)
        cols = np.array([k for k, _ in pairs], dtype=np.int64)
        codes = np.array([code for _, code in pairs], dtype=np.int8)
        became = (after[:, cols] == codes) & (before[:, cols] != codes)  # (changed, pairs)
        for j in np.flatnonzero(became.any(axis=0)).tolist():
            self.up[pairs[j]] = changed[became[:, j]]


class NodeWatch(Watch):
    """Node ``index`` of a group became status ``code``."""

    def __init__(self, statuses: GroupStatuses, index: int, code: int) -> None:
        self.statuses, self.pair = statuses, (index, code)

    def arm(self, sim: Simulation) -> None:
        self.statuses.arm(sim)
        self.statuses.wait(self.pair, 1)

    def disarm(self) -> None:
        self.statuses.wait(self.pair, -1)

    def check(self, sim: Simulation, agent: int | None) -> Found | None:
        s = self.statuses
        s.step(sim)
        local = s.up.get(self.pair)
        if local is None:
            return None
        ids = sim.agents.ids[s.rows.span(sim).start + local]
        if agent is not None:
            ids = ids[ids == agent]
            if ids.size == 0:
                return None
        group, (k, code) = s.rows.group, self.pair
        path = sim.trees[group].nodes[k].path
        return int(ids.min()), {"group": group, "node": path, "status": STATUS_NAMES[code]}


# ------------------------------------------------------------------ blackboards


class BoardWatch(Watch):
    """``compare(op, value under key, rhs)`` became true for an agent of ``group``: true
    after this step, false after the previous one (or when set)."""

    def __init__(self, group: str, key: str, op: str, rhs: Any) -> None:
        self.rows = RowFollower(group)
        self.key, self.op, self.rhs = key, op, rhs
        self.was = np.zeros(0, dtype=bool)
        self.fresh = False  # an agent not seen yet held the declared default

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

    def check(self, sim: Simulation, agent: int | None) -> Found | None:
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
        value = sim.engine.blackboard(start + int(local[k])).get(self.key)
        return int(ids[k]), {"group": self.rows.group, "key": self.key, "value": value}


# ------------------------------------------------------------------ events


class EventWatch(Watch):
    """The step raised event ``name``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def check(self, sim: Simulation, agent: int | None) -> Found | None:
        events = sim.events
        if not events:
            return None
        name = self.name
        agents = [e.agent for e in events if e.name == name and (agent is None or e.agent == agent)]
        return (min(agents), {"event": name}) if agents else None
