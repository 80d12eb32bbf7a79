"""Leaves and sim-time decorators of the batch engine, one object per flat node.

Each mirrors its py_trees-engine counterpart (``engines/pytrees.py``,
``engines/sim_time.py``, ``actions.py``) over many agents at once: the same
facts, the same tick counting, the same blackboard comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from behaviortk.conditions import compare
from behaviortk.engines import batch_core as bc
from behaviortk.tree.status import FAILURE, RUNNING, SUCCESS

Clock = Callable[[], int]  # the tick being decided


class GroupFacts:
    """What the leaves of one group read this tick, refilled before the tree is ticked."""

    def __init__(self, n_agents: int, n_nodes: int, n_steering: int) -> None:
        self.leaf: list[np.ndarray] = [np.zeros(0, dtype=np.int8)] * n_nodes
        self.cond: list[np.ndarray] = [np.zeros(0, dtype=bool)] * n_nodes
        self.emitted = np.zeros((n_agents, n_steering), dtype=bool)


class SteeringOps:
    """A steering leaf: this tick's status; a request wherever it is not FAILURE."""

    def __init__(self, facts: GroupFacts, index: int, emit: int) -> None:
        self.facts, self.k, self.emit = facts, index, emit

    def initialise(self, rows: bc.Rows) -> None:
        return None

    def update(self, rows: bc.Rows) -> bc.Codes:
        codes = self.facts.leaf[self.k][rows]
        self.facts.emitted[rows[codes != FAILURE], self.emit] = True
        return codes

    def terminate(self, rows: bc.Rows, new_status: int) -> None:
        return None


class ConditionOps:
    """A sensed condition: this tick's vectorised result."""

    def __init__(self, facts: GroupFacts, index: int) -> None:
        self.facts, self.k = facts, index

    def initialise(self, rows: bc.Rows) -> None:
        return None

    def update(self, rows: bc.Rows) -> bc.Codes:
        return np.where(self.facts.cond[self.k][rows], SUCCESS, FAILURE).astype(np.int8)

    def terminate(self, rows: bc.Rows, new_status: int) -> None:
        return None


class Blackboard:
    """Per-agent blackboards of one group, as one small-int array per key.

    Every value a tree can write is a constant of one of its ``blackboard_set``
    nodes, so each key holds a value id (``-1`` = unset) into ``values[key]``;
    comparisons become lookup tables built with the shared ``compare``.
    """

    def __init__(self, n_agents: int) -> None:
        self.n = n_agents
        self.ids: dict[str, np.ndarray] = {}
        self.values: dict[str, list[Any]] = {}

    def key(self, key: str) -> np.ndarray:
        if key not in self.ids:
            self.ids[key] = np.full(self.n, -1, dtype=np.int32)
            self.values[key] = []
        return self.ids[key]

    def value_id(self, key: str, value: Any) -> int:
        self.key(key)
        self.values[key].append(value)
        return len(self.values[key]) - 1

    def truth_table(self, key: str, op: str, rhs: Any) -> np.ndarray:
        """``compare(op, value, rhs)`` for unset (index 0) and every value id (index id + 1).

        Call after every ``value_id`` of the group is known.
        """
        self.key(key)
        return np.array(
            [compare(op, None, rhs)] + [compare(op, v, rhs) for v in self.values[key]], dtype=bool
        )

    def check(self, key: str, table: np.ndarray, rows: bc.Rows) -> np.ndarray:
        return table[self.ids[key][rows] + 1]

    def get(self, key: str, row: int) -> Any:
        ids = self.ids.get(key)
        if ids is None or ids[row] < 0:
            return None
        return self.values[key][int(ids[row])]


class BlackboardSetOps:
    """``blackboard_set``: store the constant; SUCCESS."""

    def __init__(self, board: Blackboard, key: str, value: Any) -> None:
        self.board, self.name = board, key
        self.id = board.value_id(key, value)

    def initialise(self, rows: bc.Rows) -> None:
        return None

    def update(self, rows: bc.Rows) -> bc.Codes:
        self.board.ids[self.name][rows] = self.id
        return np.full(rows.size, SUCCESS, dtype=np.int8)

    def terminate(self, rows: bc.Rows, new_status: int) -> None:
        return None


class BlackboardCompareOps:
    """``blackboard_compare``: read when ticked, compared through the shared truth table."""

    def __init__(self, board: Blackboard, key: str, op: str, rhs: Any) -> None:
        self.board, self.name, self.op, self.rhs = board, key, op, rhs
        self.table = np.zeros(1, dtype=bool)

    def finish(self) -> None:
        self.table = self.board.truth_table(self.name, self.op, self.rhs)

    def passes(self, rows: bc.Rows) -> np.ndarray:
        return self.board.check(self.name, self.table, rows)

    def initialise(self, rows: bc.Rows) -> None:
        return None

    def update(self, rows: bc.Rows) -> bc.Codes:
        return np.where(self.passes(rows), SUCCESS, FAILURE).astype(np.int8)

    def terminate(self, rows: bc.Rows, new_status: int) -> None:
        return None


class WaitOps:
    """``wait`` (actions.py): started when ticked while not RUNNING; SUCCESS once ``limit`` ticks passed."""

    def __init__(self, n_agents: int, limit: int, clock: Clock) -> None:
        self.start = np.zeros(n_agents, dtype=np.int64)
        self.limit, self.clock = limit, clock

    def initialise(self, rows: bc.Rows) -> None:
        self.start[rows] = self.clock()

    def update(self, rows: bc.Rows) -> bc.Codes:
        elapsed = self.clock() - self.start[rows]
        return np.where(elapsed >= self.limit, SUCCESS, RUNNING).astype(np.int8)

    def terminate(self, rows: bc.Rows, new_status: int) -> None:
        return None


class TimeoutNode(bc.Decorator):
    """``SimTimeout`` (engines/sim_time.py): starts when ticked while not RUNNING; once
    ``limit`` ticks have passed while RUNNING, stops with FAILURE without ticking the child."""

    def __init__(
        self, index: int, state: bc.TreeState, child: bc.Node, limit: int, clock: Clock
    ) -> None:
        super().__init__(index, state, child)
        self.limit, self.clock = limit, clock
        self.start = np.zeros(state.n, dtype=np.int64)

    def initialise(self, rows: bc.Rows) -> None:
        self.start[rows] = self.clock()

    def tick(self, rows: bc.Rows) -> None:
        if not rows.size:
            return
        expired = (self.st[rows] == RUNNING) & (self.clock() - self.start[rows] >= self.limit)
        if expired.any():
            self.stop(rows[expired], FAILURE)
            rows = rows[~expired]
        super().tick(rows)


class CooldownNode(bc.Decorator):
    """``Cooldown`` (engines/sim_time.py): after the child finishes on tick t, FAILURE without
    ticking it while ``now < t + limit``."""

    def __init__(
        self, index: int, state: bc.TreeState, child: bc.Node, limit: int, clock: Clock
    ) -> None:
        super().__init__(index, state, child)
        self.limit, self.clock = limit, clock
        self.ready_at = np.full(state.n, -(2**62), dtype=np.int64)

    def tick(self, rows: bc.Rows) -> None:
        if not rows.size:
            return
        cooling = self.clock() < self.ready_at[rows]
        if cooling.any():
            self.stop(rows[cooling], FAILURE)
            rows = rows[~cooling]
        super().tick(rows)

    def update(self, rows: bc.Rows) -> bc.Codes:
        codes = self.child.st[rows].copy()
        finished = rows[(codes == SUCCESS) | (codes == FAILURE)]
        self.ready_at[finished] = self.clock() + self.limit
        return codes
