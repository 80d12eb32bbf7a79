"""The shared shape of node behaviour over many agents: ops on sorted row arrays.

Actions, ticked conditions (read when ticked, like ``blackboard_compare``) and
plugin decorators are written once, as ops over the group-local ``rows`` that
tick them now. The batch engine calls them for all those rows at once; the
py_trees engine wraps them in one ``Behaviour`` per agent and calls them with
that agent's row. The lifecycle is py_trees' (``behaviour.py``): ``initialise``
when ticked while not RUNNING, ``update`` every tick, ``terminate`` when the
node finishes or is stopped. Hooks default to doing nothing (template method),
so a subclass writes only what it needs.

An ops class is registered as the implementation of its model and built as
``cls(model, NodeContext)``, once per group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from behaviortk.tree.blackboard import Keys
from behaviortk.tree.clock import Clock
from behaviortk.tree.status import RUNNING

Rows = np.ndarray
"""int64 group-local agent indices, sorted and unique."""
Codes = np.ndarray
"""int8 statuses aligned with rows."""


class Board(Protocol):
    """One group's blackboards (one per agent), whatever stores them.

    A board holds only the group's declared keys (``tree/blackboard.Keys``), each
    at its declared default from the start; every write is checked and
    normalised by ``declared.coerce``.
    """

    declared: Keys

    def get(self, key: str, row: int) -> Any:
        """The value under ``key`` for local ``row``, None when unset (or not declared)."""
        ...

    def set(self, key: str, rows: Rows, value: Any) -> None:
        """Store ``declared.coerce(key, value)`` under ``key`` for every local row in ``rows``;
        ``BlackboardError`` (nothing stored) for an undeclared key or a value of the wrong type."""
        ...

    def unset(self, key: str, rows: Rows) -> None:
        """Remove ``key`` for every local row in ``rows`` (reads give None until the next write)."""
        ...

    def passes(self, key: str, op: str, rhs: Any, rows: Rows) -> np.ndarray:
        """``compare(op, value, rhs)`` per row (``conditions.compare``), as a bool array."""
        ...

    def stored_keys(self) -> list[str]:
        """Every key some agent of the group may hold (the declared keys), sorted."""
        ...

    def points(self, key: str, rows: Rows) -> np.ndarray:
        """``(n, 2)`` points under ``key``; NaN where unset or not a point."""
        ...


@dataclass(frozen=True)
class NodeContext:
    """What an ops object may use: its group's size, blackboards and the simulation clock."""

    group: str
    n_agents: int
    clock: Clock
    board: Board


class LeafOps:
    """Base of leaf ops: override ``update`` (and the hooks you need)."""

    def initialise(self, rows: Rows) -> None:
        return None

    def update(self, rows: Rows) -> Codes:
        return np.full(rows.size, RUNNING, dtype=np.int8)

    def terminate(self, rows: Rows, new_status: int) -> None:
        return None


class DecoratorOps:
    """Base of plugin decorators: map the child's status (after it ticked) to the decorator's."""

    def initialise(self, rows: Rows) -> None:
        return None

    def update(self, rows: Rows, child: Codes) -> Codes:
        return child.copy()

    def terminate(self, rows: Rows, new_status: int) -> None:
        return None


OpsFactory = Callable[[Any, NodeContext], Any]


def is_leaf_ops(impl: Any) -> bool:
    """Whether a registered implementation is a leaf ops class (ticked, not sensed)."""
    return isinstance(impl, type) and issubclass(impl, LeafOps)


def is_decorator_ops(impl: Any) -> bool:
    return isinstance(impl, type) and issubclass(impl, DecoratorOps)
