"""Batch-engine leaves, blackboards and sim-time decorators, one object per flat node.

Each mirrors its py_trees-engine counterpart (``engines/pytrees.py``,
``engines/sim_time.py``) over many agents at once: the same facts, the same
tick counting, the same blackboard comparison. Actions and ticked conditions
need nothing here: their shared ops (``tree/ops.py``) run on rows directly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from behaviortk.engines.batch import core as bc
from behaviortk.leaves.conditions import compare, compare_points
from behaviortk.tree.blackboard import UNSET_TICK, Keys, SavedKey, Stamps
from behaviortk.tree.clock import Clock
from behaviortk.tree.ops import Codes, LeafOps, Rows
from behaviortk.tree.status import FAILURE, RUNNING, SUCCESS
from behaviortk.world.rows import GroupMove, carry, move_local


class GroupFacts:
    """What the leaves of one group read this tick, as arrays (refilled before the tree is ticked)."""

    def __init__(self, n_agents: int, n_nodes: int, n_steering: int) -> None:
        self.leaf: list[np.ndarray] = [np.zeros(0, dtype=np.int8)] * n_nodes
        self.cond: list[np.ndarray] = [np.zeros(0, dtype=bool)] * n_nodes
        self.emitted = np.zeros((n_agents, n_steering), dtype=bool)


class SteeringOps(LeafOps):
    """A steering leaf: this tick's status; a request wherever it is not FAILURE."""

    def __init__(self, facts: GroupFacts, index: int, emit: int) -> None:
        self.facts, self.k, self.emit = facts, index, emit

    def update(self, rows: Rows) -> Codes:
        codes = self.facts.leaf[self.k][rows]
        self.facts.emitted[rows[codes != FAILURE], self.emit] = True
        return codes


class ConditionOps(LeafOps):
    """A sensed condition: this tick's vectorised result."""

    def __init__(self, facts: GroupFacts, index: int) -> None:
        self.facts, self.k = facts, index

    def update(self, rows: Rows) -> Codes:
        return np.where(self.facts.cond[self.k][rows], SUCCESS, FAILURE).astype(np.int8)


class ArrayBoard:
    """Per-agent blackboards of one group as arrays, one per key (``tree/ops.Board``).

    A point key is a dense ``(n, 2)`` float array, NaN where unset (stored points
    are finite), so ``remember`` writes a different point per row in one
    assignment and ``blackboard`` targets read them with one gather. Any other key
    holds a value id (``-1`` = unset) into ``values[key]``, the distinct values
    stored under it; comparisons become tables over those values, built with the
    shared ``compare`` and cached until the values change. Those values come from
    ``blackboard_set`` constants and from the game (any value of the key's type),
    so ``values`` is looked up by a dict and compacted to the ids still in use
    when it outgrows the group. Each write stamps the clock's tick
    (``tree/blackboard.Stamps``).
    """

    def __init__(
        self, n_agents: int, declared: Keys | None = None, clock: Clock | None = None
    ) -> None:
        self.n = n_agents
        self.declared = Keys() if declared is None else declared
        self.clock = clock
        self.ids: dict[str, np.ndarray] = {}
        self.xy: dict[str, np.ndarray] = {}
        self.values: dict[str, list[Any]] = {}
        self._index: dict[str, dict[tuple[type, Any], int]] = {}
        self._version: dict[str, int] = {}
        self._tables: dict[tuple[str, str, str], tuple[int, np.ndarray]] = {}
        for key, spec in self.declared.specs.items():
            if spec.type == "point":
                self.xy[key] = np.full((self.n, 2), np.nan)
                continue
            self.ids[key] = np.full(self.n, -1, dtype=np.int32)
            self.values[key], self._index[key], self._version[key] = [], {}, 0
        for key, value in self.declared.defaults().items():
            if key in self.xy:
                self.xy[key][:] = value
            else:
                self.ids[key][:] = self._value_id(key, value)
        self.stamps = Stamps(self.declared, self.n, self._tick())

    def _tick(self) -> int:
        return 0 if self.clock is None else int(self.clock.tick)

    def _limit(self) -> int:
        """How many distinct values a key may collect before unused ones are dropped."""
        return 2 * self.n + 16

    def _value_id(self, key: str, value: Any) -> int:
        """The id of ``value`` under ``key`` (equal and of the same type: 1 and 1.0 differ)."""
        index = self._index[key]
        found = index.get((type(value), value))
        if found is not None:
            return found
        if len(self.values[key]) >= self._limit():
            self._compact(key)
        values = self.values[key]
        index[(type(value), value)] = len(values)
        values.append(value)
        self._version[key] += 1
        return len(values) - 1

    def _compact(self, key: str) -> None:
        """Keep only the values some agent holds, renumbered in their old order."""
        ids = self.ids[key]
        used = np.unique(ids[ids >= 0])
        remap = np.full(len(self.values[key]) + 1, -1, dtype=np.int32)
        remap[used + 1] = np.arange(used.size, dtype=np.int32)
        ids[:] = remap[ids + 1]
        old = self.values[key]
        self.values[key] = [old[i] for i in used.tolist()]
        self._index[key] = {(type(v), v): i for i, v in enumerate(self.values[key])}
        self._version[key] += 1

    def _table(self, key: str, label: str, make: Callable[[Any], Any], dtype: Any) -> np.ndarray:
        """``make(value)`` for unset (index 0) and every value id (index id + 1), cached."""
        version = self._version[key]
        hit = self._tables.get((key, label, str(dtype)))
        if hit is not None and hit[0] == version:
            return hit[1]
        values = self.values[key]
        table = np.array([make(None)] + [make(v) for v in values], dtype=dtype)
        self._tables[(key, label, str(dtype))] = (version, table)
        return table

    def carry(self, old: ArrayBoard, source: Rows) -> None:
        """Take over ``old``'s values and its survivors' rows of every key (row ``r`` takes
        old row ``source[r]``); rows where ``source`` is -1 (new agents) keep this board's
        defaults, renumbered into old's values."""
        for key, old_ids in old.ids.items():
            mine, my_values = self.ids[key], self.values[key]
            self.values[key], self._index[key] = list(old.values[key]), dict(old._index[key])
            remap = np.array([-1, *(self._value_id(key, v) for v in my_values)], dtype=np.int32)
            ids = remap[mine + 1]
            carry(ids, old_ids, source)
            self.ids[key] = ids
            self._version[key] += 1
        for key, old_xy in old.xy.items():
            carry(self.xy[key], old_xy, source)
        self.stamps.carry(old.stamps, source)

    def move(self, m: GroupMove) -> None:
        """A spawn or despawn in place (``world/rows.move_local``): new agents take the
        declared defaults, stamped with the tick they join."""
        self.n = m.n_new
        if not self.ids and not self.xy:  # no keys declared
            return
        defaults, tick = self.declared.defaults(), self._tick()
        for key, ids in self.ids.items():
            fresh = self._value_id(key, defaults[key]) if key in defaults else -1
            self.ids[key] = move_local(ids, m, fresh)
        for key, xy in self.xy.items():
            self.xy[key] = move_local(xy, m, defaults.get(key, np.nan))
        for key, ticks in self.stamps.ticks.items():
            fresh = tick if key in defaults else UNSET_TICK
            self.stamps.ticks[key] = move_local(ticks, m, fresh)

    def saved(self) -> dict[str, SavedKey]:
        """Every declared key's rows, values and stamps, engine-neutral (a snapshot's)."""
        n, out = self.n, {}
        for key in self.declared:
            ticks = self.stamps.ticks[key][:n].copy()
            if key in self.xy:
                out[key] = SavedKey(ticks, xy=self.xy[key][:n].copy())
            else:
                out[key] = SavedKey(
                    ticks, ids=self.ids[key][:n].copy(), values=list(self.values[key])
                )
        return out

    def load_saved(self, saved: dict[str, SavedKey]) -> None:
        """Hold what :meth:`saved` gave (checked by the snapshot reader), for every row."""
        n = self.n
        for key, s in saved.items():
            self.stamps.ticks[key][:n] = s.ticks
            if s.xy is not None:
                self.xy[key][:n] = s.xy
                continue
            assert s.ids is not None
            self.ids[key][:n] = s.ids
            self.values[key] = list(s.values)
            self._index[key] = {(type(v), v): i for i, v in enumerate(s.values)}
            self._version[key] += 1

    def get(self, key: str, row: int) -> Any:
        xy = self.xy.get(key)
        if xy is not None:
            x, y = xy[row].tolist()
            return None if x != x else (x, y)  # NaN: unset
        ids = self.ids.get(key)
        if ids is None or ids[row] < 0:
            return None
        return self.values[key][int(ids[row])]

    def set(self, key: str, rows: Rows, value: Any) -> None:
        stored = self.declared.coerce(key, value)
        if key in self.xy:
            self.xy[key][rows] = stored
        else:
            self.ids[key][rows] = self._value_id(key, stored)
        self.stamps.mark(key, rows, self._tick())

    def set_points(self, key: str, rows: Rows, points: np.ndarray) -> None:
        self.xy[key][rows] = self.declared.coerce_points(key, points, len(rows))
        self.stamps.mark(key, rows, self._tick())

    def unset(self, key: str, rows: Rows) -> None:
        self.declared.spec(key)
        if key in self.xy:
            self.xy[key][rows] = np.nan
        else:
            self.ids[key][rows] = -1
        self.stamps.clear(key, rows)

    def passes(self, key: str, op: str, rhs: Any, rows: Rows) -> np.ndarray:
        xy = self.xy.get(key)
        if xy is not None:
            return compare_points(op, xy[rows], rhs)
        if key not in self.ids:
            return np.zeros(len(rows), dtype=bool)
        label = f"{op} {type(rhs).__name__} {rhs!r}"
        table = self._table(key, label, lambda v: compare(op, v, rhs), bool)
        return table[self.ids[key][rows] + 1]

    def stored_keys(self) -> list[str]:
        return sorted([*self.ids, *self.xy])

    def stored_ticks(self, key: str, rows: Rows) -> np.ndarray:
        return self.stamps.of(key, rows)

    def points(self, key: str, rows: Rows) -> np.ndarray:
        xy = self.xy.get(key)
        if xy is None:  # not a point key: nothing under it is a point
            return np.full((len(rows), 2), np.nan)
        return xy[rows]


class TimeoutNode(bc.Decorator):
    """``SimTimeout`` (engines/sim_time.py): starts when ticked while not RUNNING; once
    ``limit`` ticks have passed while RUNNING, stops with FAILURE without ticking the child."""

    per_agent = ("start",)

    def __init__(
        self, index: int, state: bc.TreeState, child: bc.Node, limit: int, clock: Clock
    ) -> None:
        super().__init__(index, state, child)
        self.limit, self.clock = limit, clock
        self.start = np.zeros(state.n, dtype=np.int64)

    def initialise(self, rows: bc.Rows) -> None:
        self.start[rows] = self.clock.tick

    def tick(self, rows: bc.Rows) -> None:
        if not rows.size:
            return
        expired = (self.st[rows] == RUNNING) & (self.clock.tick - self.start[rows] >= self.limit)
        if expired.any():
            self.stop(rows[expired], FAILURE)
            rows = rows[~expired]
        super().tick(rows)


class CooldownNode(bc.Decorator):
    """``Cooldown`` (engines/sim_time.py): after the child finishes on tick t, FAILURE without
    ticking it while ``now < t + limit``."""

    per_agent = ("ready_at",)

    def __init__(
        self, index: int, state: bc.TreeState, child: bc.Node, limit: int, clock: Clock
    ) -> None:
        super().__init__(index, state, child)
        self.limit, self.clock = limit, clock
        self.ready_at = np.full(state.n, -(2**62), dtype=np.int64)

    def tick(self, rows: bc.Rows) -> None:
        if not rows.size:
            return
        cooling = self.clock.tick < self.ready_at[rows]
        if cooling.any():
            self.stop(rows[cooling], FAILURE)
            rows = rows[~cooling]
        super().tick(rows)

    def update(self, rows: bc.Rows) -> bc.Codes:
        codes = self.child.st[rows].copy()
        finished = rows[(codes == SUCCESS) | (codes == FAILURE)]
        self.ready_at[finished] = self.clock.tick + self.limit
        return codes


class OpsDecoratorNode(bc.Decorator):
    """A plugin decorator's shared ops (``tree/ops.DecoratorOps``) under py_trees' decorator rules."""

    def __init__(self, index: int, state: bc.TreeState, child: bc.Node, ops: Any) -> None:
        super().__init__(index, state, child)
        self.ops = ops

    def initialise(self, rows: Rows) -> None:
        self.ops.initialise(rows)

    def update(self, rows: Rows) -> Codes:
        return np.asarray(self.ops.update(rows, self.child.st[rows].copy()), dtype=np.int8)

    def terminate(self, rows: Rows, new_status: int) -> None:
        self.ops.terminate(rows, new_status)
