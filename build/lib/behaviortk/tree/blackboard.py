"""Typed blackboards at run time: a group's declared keys, checked writes, the game's view.

Every group's blackboard keys are those its trees declare
(``Scenario.blackboards``, ``format/blackboard_keys.py``). :class:`Keys` holds them and
is the one check every write passes, whoever writes: ``blackboard_set``, a
plugin's ops, or the game through :class:`BlackboardView`. So both engines
store exactly the same value (``format.blackboard.coerce``: a point becomes a
``(float, float)`` tuple, NumPy scalars plain Python) and a bad write raises
:class:`BlackboardError` before anything is stored.

A game reads and writes one agent's keys with ``Simulation.blackboard(agent)``,
a :class:`BlackboardView`, between ticks. A write is stored at once, and the
next ``sim.step()`` sees it everywhere: steering leaf statuses and
``blackboard`` targets are computed at the start of that tick from the board,
and ``blackboard_compare`` reads the board when it is ticked (so a
``blackboard_set`` ticked earlier in the same tick wins over the game's write).

Every value carries the tick it was stored on (:class:`Stamps`, kept by both
boards beside the values): a node's write on the tick being decided; the game's
write between ticks on the next tick, the first that sees it; a declared default
on the agent's first tick (0 for the definition's agents, the next tick for one
the game spawns). ``recall`` reads
it to tell how old a memory is, and the game with
``BlackboardView.stored_tick(key)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from behaviortk.errors import SimulationError
from behaviortk.format.blackboard_keys import KeySpec, Mismatch, coerce, wrong_type
from behaviortk.registry import choices
from behaviortk.world.rows import carry


class BlackboardError(KeyError, SimulationError):
    """A blackboard key that is not declared, or a value of the wrong type for its key.

    The message names the bad key or value and the declared keys or the key's
    type ("undeclared blackboard key 'alrm' in group 'guards'; did you mean
    'alarm'? valid: alarm, home", "blackboard key 'alarm' is a bool, got 3").
    It is a ``KeyError`` (an undeclared key is missing from the mapping) and a
    ``ValueError`` (a value of the wrong type), so either ``except`` catches it.
    A call that raises it has changed nothing.
    """

    def __init__(self, message: str, key: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.key = key

    def __str__(self) -> str:  # KeyError would quote the message
        return self.message


def plain(value: Any) -> Any:
    """NumPy scalars and arrays as plain Python values (what ``coerce`` checks)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


class Keys:
    """One group's declared blackboard keys (key -> ``KeySpec``), in declaration order."""

    def __init__(self, specs: Mapping[str, KeySpec] | None = None, group: str = "") -> None:
        self.specs: dict[str, KeySpec] = dict(specs or {})
        self.group = group
        self.names: tuple[str, ...] = tuple(self.specs)

    def __contains__(self, key: object) -> bool:
        return key in self.specs

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def spec(self, key: Any) -> KeySpec:
        """The declaration of ``key``; :class:`BlackboardError` if the trees do not declare it."""
        spec = self.specs.get(key) if isinstance(key, str) else None
        if spec is not None:
            return spec
        where = f" in group {self.group!r}" if self.group else ""
        if not self.names:
            raise BlackboardError(
                f"undeclared blackboard key {key!r}{where}; its trees declare no blackboard keys",
                key,
            )
        raise BlackboardError(
            f"undeclared blackboard key {key!r}{where}{choices(str(key), list(self.names))}", key
        )

    def coerce(self, key: Any, value: Any) -> Any:
        """``value`` as stored under ``key``; :class:`BlackboardError` for an undeclared key or
        a value of another type than the key's (the message names the type expected)."""
        spec = self.spec(key)
        try:
            return coerce(spec.type, plain(value))
        except Mismatch:
            raise BlackboardError(wrong_type(key, spec.type, _shown(value)), key) from None

    def coerce_points(self, key: Any, points: Any, n: int) -> np.ndarray:
        """``n`` points stored at once under point key ``key``, as a float ``(n, 2)`` array
        (``-0.0`` as ``0.0``, as :meth:`coerce` stores a point); :class:`BlackboardError`
        for an undeclared key, a key of another type, or points that are not ``n`` finite."""
        spec = self.spec(key)
        if spec.type != "point":
            raise BlackboardError(wrong_type(key, spec.type, f"{n} points"), key)
        array = np.asarray(points, dtype=np.float64)
        if array.shape != (n, 2):
            raise BlackboardError(
                f"blackboard key {key!r} takes {n} points [x, y] here, got shape {array.shape}", key
            )
        if not np.isfinite(array).all():
            raise BlackboardError(f"blackboard key {key!r} takes finite points only", key)
        return array + 0.0

    def defaults(self) -> dict[str, Any]:
        """The declared defaults (keys without one are left out), as stored."""
        return {
            key: coerce(spec.type, spec.default)
            for key, spec in self.specs.items()
            if spec.default is not None
        }


def _shown(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (a 400-digit number stays readable)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(text)} characters)"


UNSET_TICK = -1
"""The stored tick of a key that holds no value (ticks count from 0)."""


class Stamps:
    """When each agent's value of each declared key was stored: a tick, ``UNSET_TICK`` if unset.

    One int64 array per key, rows aligned with the board's; both boards keep one
    (the values live in their own stores, the stamps here), so both engines and
    the game read the same ticks. Keys with a declared default start stamped with
    ``tick``, the tick the agents join.
    """

    def __init__(self, keys: Keys, n_agents: int, tick: int) -> None:
        self.ticks: dict[str, np.ndarray] = {
            key: np.full(n_agents, UNSET_TICK if spec.default is None else tick, dtype=np.int64)
            for key, spec in keys.specs.items()
        }

    def mark(self, key: str, rows: np.ndarray, tick: int) -> None:
        self.ticks[key][rows] = tick

    def clear(self, key: str, rows: np.ndarray) -> None:
        self.ticks[key][rows] = UNSET_TICK

    def of(self, key: str, rows: np.ndarray) -> np.ndarray:
        """The stored tick of ``rows`` (a copy); ``UNSET_TICK`` everywhere for an undeclared key."""
        ticks = self.ticks.get(key)
        if ticks is None:
            return np.full(len(rows), UNSET_TICK, dtype=np.int64)
        return ticks[rows]

    def carry(self, old: Stamps, source: np.ndarray) -> None:
        """Survivors' stamps: row ``r`` takes old row ``source[r]``; rows where ``source`` is
        -1 (new agents) keep this object's."""
        for key, ticks in self.ticks.items():
            carry(ticks, old.ticks[key], source)


@dataclass
class SavedKey:
    """One declared key of a group's boards as a snapshot holds it, the same whichever board
    stored it (``sim/snapshot.py``; ``ArrayBoard`` and ``ClientBoard`` export and import it).

    A point key is ``xy``, ``(n, 2)`` floats, NaN where unset; any other key is ``ids``,
    ``(n,)`` int32 indices into ``values`` (the distinct values, as :meth:`Keys.coerce`
    stores them), -1 where unset. ``ticks`` are the stamps (:class:`Stamps`)."""

    ticks: np.ndarray
    xy: np.ndarray | None = None
    ids: np.ndarray | None = None
    values: list[Any] = field(default_factory=list)


def saved_keys(keys: Keys, stamps: Stamps, n: int, value: Any) -> dict[str, SavedKey]:
    """Every declared key of ``n`` rows as :class:`SavedKey` s, reading row ``r``'s value of a
    key with ``value(key, r)`` (None: unset); a board without arrays of its own uses it."""
    out: dict[str, SavedKey] = {}
    for key, spec in keys.specs.items():
        ticks = stamps.ticks[key][:n].copy()
        stored = [value(key, r) for r in range(n)]
        if spec.type == "point":
            xy = np.array([(np.nan, np.nan) if v is None else v for v in stored], dtype=np.float64)
            out[key] = SavedKey(ticks, xy=xy.reshape(n, 2))
            continue
        index: dict[tuple[type, Any], int] = {}
        ids = np.array(
            [-1 if v is None else index.setdefault((type(v), v), len(index)) for v in stored],
            dtype=np.int32,
        )
        out[key] = SavedKey(ticks, ids=ids, values=[v for _, v in index])
    return out


class Store(Protocol):
    """What a view needs of a board (``tree/ops.Board``, which imports this module)."""

    def get(self, key: str, row: int) -> Any: ...
    def set(self, key: str, rows: np.ndarray, value: Any) -> None: ...
    def unset(self, key: str, rows: np.ndarray) -> None: ...
    def stored_ticks(self, key: str, rows: np.ndarray) -> np.ndarray: ...


class BlackboardView(MutableMapping[str, Any]):
    """One agent's blackboard as a mutable mapping of its declared keys (live, not a copy).

    * ``view[key]``: the current value. :class:`BlackboardError` (a ``KeyError``)
      for an undeclared key; a plain ``KeyError`` for a declared key that is unset
      (no default, never written, or deleted). ``view.get(key)`` returns None for
      an unset key but still refuses an undeclared one, so a typo never reads as
      "unset".
    * ``view[key] = value``: stored at once, seen by the tree from the next tick
      on (module docstring). :class:`BlackboardError` for an undeclared key or a
      value of the wrong type; nothing is stored then. ``update`` checks every
      pair before storing any.
    * ``del view[key]``: unsets the key (its default does not come back).
    * ``view.stored_tick(key)``: the tick the current value was stored on (module
      docstring), None while unset; seconds ago: ``(sim.tick - t) * sim.dt``.
    * Iteration, ``len`` and ``in``: the declared keys that are set, in
      declaration order.
    """

    def __init__(self, board: Store, row: int, keys: Keys) -> None:
        self._board, self._row, self._keys = board, int(row), keys
        self._rows = np.array([self._row], dtype=np.int64)

    @property
    def declared(self) -> Keys:
        """The keys this agent's trees declare (set or not)."""
        return self._keys

    def _value(self, key: str) -> Any:
        return self._board.get(key, self._row)

    def __getitem__(self, key: str) -> Any:
        self._keys.spec(key)
        value = self._value(key)
        if value is None:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        self._keys.spec(key)
        value = self._value(key)
        return default if value is None else value

    def stored_tick(self, key: str) -> int | None:
        """The tick the value under ``key`` was stored on; None while unset.
        :class:`BlackboardError` for an undeclared key."""
        self._keys.spec(key)
        tick = int(self._board.stored_ticks(key, self._rows)[0])
        return None if tick == UNSET_TICK else tick

    def __setitem__(self, key: str, value: Any) -> None:
        self._board.set(key, self._rows, self._keys.coerce(key, value))

    def __delitem__(self, key: str) -> None:
        self[key]  # undeclared: BlackboardError; unset: KeyError
        self._board.unset(key, self._rows)

    def pop(self, key: str, *default: Any) -> Any:
        self._keys.spec(key)
        return super().pop(key, *default)

    def update(self, other: Any = (), /, **kw: Any) -> None:
        pairs: Iterable[tuple[Any, Any]]
        if isinstance(other, Mapping):
            pairs = list(other.items())
        elif hasattr(other, "keys"):
            pairs = [(k, other[k]) for k in other.keys()]  # noqa: SIM118 (dict.update's protocol)
        else:
            pairs = list(other)
        stored = [(k, self._keys.coerce(k, v)) for k, v in [*pairs, *kw.items()]]
        for key, value in stored:
            self._board.set(key, self._rows, value)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._keys and self._value(key) is not None

    def __iter__(self) -> Iterator[str]:
        return (key for key in self._keys if self._value(key) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.items())!r})"
