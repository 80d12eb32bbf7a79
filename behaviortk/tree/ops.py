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

Ops that read this tick's sensed facts (``remember`` stores where its target
is) override ``prepare(sense)``: both engines call it on every ops object of a
group once per tick, after the sense phase and before any tree ticks, so a
leaf reads the same arrays whichever engine ticks it and in whatever order
(``Sense`` caches each target per tick).

Events (the ``emit`` action) go to ``NodeContext.events``: ``record(tick,
group, rows, name)`` for the group-local rows that raised ``name`` on ``tick``.
The Simulation's sink (``behaviortk.sim.embed.EventLog``) orders them at the end of
the tick, so the py_trees engine's per-agent calls and the batch engine's
per-node calls give the same list. The default sink drops everything, so a
``NodeContext`` made without one (tests, tools) still works.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from behaviortk.tree.blackboard import Keys, SavedKey
from behaviortk.tree.clock import Clock
from behaviortk.tree.status import RUNNING
from behaviortk.world.rows import carry

if TYPE_CHECKING:
    from behaviortk.sense.sensing import Sense

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

    def set_points(self, key: str, rows: Rows, points: np.ndarray) -> None:
        """Store point ``points[k]`` (``(len(rows), 2)``, finite) under point key ``key`` for
        local row ``rows[k]``; ``BlackboardError`` (nothing stored) for an undeclared key,
        a key not declared as a point, or a point that is not finite."""
        ...

    def unset(self, key: str, rows: Rows) -> None:
        """Remove ``key`` for every local row in ``rows`` (reads give None until the next write)."""
        ...

    def stored_ticks(self, key: str, rows: Rows) -> np.ndarray:
        """int64 tick each row's value under ``key`` was stored on (``tree/blackboard.Stamps``);
        ``UNSET_TICK`` (-1) where unset. Every write stamps the clock's tick."""
        ...

    def passes(self, key: str, op: str, rhs: Any, rows: Rows) -> np.ndarray:
        """``compare(op, value, rhs)`` per row (``conditions.compare``), as a bool array."""
        ...

    def numbers(self, key: str, rows: Rows) -> np.ndarray:
        """float64 value of number key ``key`` per row; NaN where unset (a `blackboard`
        utility input, `blackboard_add`)."""
        ...

    def stored_keys(self) -> list[str]:
        """Every key some agent of the group may hold (the declared keys), sorted."""
        ...

    def points(self, key: str, rows: Rows) -> np.ndarray:
        """``(n, 2)`` points under ``key``; NaN where unset or not a point."""
        ...

    def saved(self) -> dict[str, SavedKey]:
        """Every declared key of every row, the same on every board (a snapshot's)."""
        ...

    def load_saved(self, saved: dict[str, SavedKey]) -> None:
        """Hold ``saved``, keys and rows as :meth:`saved` gives them."""
        ...


class EventSink(Protocol):
    """Where ops report events raised by agents (``behaviortk.sim.embed.EventLog`` in a Simulation)."""

    def record(self, tick: int, group: str, rows: Rows, name: str) -> None:
        """Event ``name`` raised on ``tick`` by every group-local row in ``rows`` (sorted)."""
        ...

    def leave(self, group: str, rows: Rows) -> None:
        """The group-local ``rows`` leave the simulation at the end of this tick (``despawn``)."""
        ...


class NullSink:
    """An ``EventSink`` that drops every event (the default of ``NodeContext.events``)."""

    def record(self, tick: int, group: str, rows: Rows, name: str) -> None:
        return None

    def leave(self, group: str, rows: Rows) -> None:
        return None


NULL_SINK = NullSink()


@dataclass(frozen=True)
class NodeContext:
    """What an ops object may use: its group's size, blackboards, the clock and the event sink."""

    group: str
    n_agents: int
    clock: Clock
    board: Board
    events: EventSink = NULL_SINK
    tree: Any = None
    """The group's ``FlatTree`` (None in tools and tests that build ops alone): ops that name
    other nodes of the tree (a `since_success` utility input) find them here."""
    registries: Any = None
    """The ``Registries`` the tree was built with: ops made of open slots (a `utility`'s inputs)
    look their implementations up here."""


class LeafOps:
    """Base of leaf ops: override ``update`` (and the hooks you need).

    Per-agent state lives in NumPy arrays of length ``n_agents`` (one row per
    agent of the group) named in ``per_agent``: when agents spawn or despawn,
    the batch engine moves rows of those arrays in place (survivors keep
    theirs, new agents take a one-agent build's values) for behaviortk's own
    ops, and builds a plugin's ops afresh for the new group size, copying the
    survivors' rows; either way new agents start as a fresh build would.
    """

    per_agent: ClassVar[tuple[str, ...]] = ()

    def prepare(self, sense: Sense) -> None:
        """This tick's sensed facts, before any tree ticks (module docstring)."""
        return None

    def initialise(self, rows: Rows) -> None:
        return None

    def update(self, rows: Rows) -> Codes:
        return np.full(rows.size, RUNNING, dtype=np.int8)

    def terminate(self, rows: Rows, new_status: int) -> None:
        return None


class DecoratorOps:
    """Base of plugin decorators: map the child's status (after it ticked) to the decorator's.

    Per-agent arrays are named in ``per_agent``, as for :class:`LeafOps`.
    """

    per_agent: ClassVar[tuple[str, ...]] = ()

    def prepare(self, sense: Sense) -> None:
        """This tick's sensed facts, before any tree ticks (module docstring)."""
        return None

    def initialise(self, rows: Rows) -> None:
        return None

    def update(self, rows: Rows, child: Codes) -> Codes:
        return child.copy()

    def terminate(self, rows: Rows, new_status: int) -> None:
        return None


class InputOps(ABC):
    """Base of utility inputs (``leaves/utility_inputs.py``): the raw number per agent that a
    `utility` consideration normalises by its ``range``, built as ``cls(model, NodeContext)``.

    ``prepare(sense)`` keeps what it needs of the tick's sensed facts (once per tick, before
    any tree ticks); ``values(rows)`` is read when the utility ticks, as float64 (NaN: no
    value, the consideration scores 0).
    """

    def prepare(self, sense: Sense) -> None:
        return None

    @abstractmethod
    def values(self, rows: Rows) -> np.ndarray:
        """The input's raw value for each row, float64."""


OpsFactory = Callable[[Any, NodeContext], Any]


def carry_rows(old: Any, new: Any, source: Rows) -> None:
    """Copy the survivors' rows of every array ``old`` names in ``per_agent`` into ``new``'s:
    new row ``r`` takes old row ``source[r]``; rows where ``source`` is -1 (new agents) keep
    ``new``'s."""
    for name in getattr(type(old), "per_agent", ()):
        carry(getattr(new, name), getattr(old, name), source)


def is_leaf_ops(impl: Any) -> bool:
    """Whether a registered implementation is a leaf ops class (ticked, not sensed)."""
    return isinstance(impl, type) and issubclass(impl, LeafOps)


def is_decorator_ops(impl: Any) -> bool:
    return isinstance(impl, type) and issubclass(impl, DecoratorOps)
