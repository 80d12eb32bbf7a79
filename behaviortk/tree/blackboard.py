"""Typed blackboards at run time: a group's declared keys, checked writes, the game's view.

Every group's blackboard keys are those its trees declare
(``Scenario.blackboards``, ``format/blackboard.py``). :class:`Keys` holds them and
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
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Any, Protocol

import numpy as np

from behaviortk.errors import SimulationError
from behaviortk.format.blackboard import KeySpec, Mismatch, coerce, wrong_type
from behaviortk.registry import choices


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
            raise BlackboardError(wrong_type(key, spec.type, repr(value)), key) from None

    def defaults(self) -> dict[str, Any]:
        """The declared defaults (keys without one are left out), as stored."""
        return {
            key: coerce(spec.type, spec.default)
            for key, spec in self.specs.items()
            if spec.default is not None
        }


class Store(Protocol):
    """What a view needs of a board (``tree/ops.Board``, which imports this module)."""

    def get(self, key: str, row: int) -> Any: ...
    def set(self, key: str, rows: np.ndarray, value: Any) -> None: ...
    def unset(self, key: str, rows: np.ndarray) -> None: ...


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
