"""Typed blackboard keys: what a tree declares under ``blackboard``, and what fits each type.

A tree declares every key its nodes read or write::

    "blackboard": {"alarm": {"type": "bool", "default": false}, "home": {"type": "point"}}

Types are ``bool``, ``number``, ``string`` and ``point`` ([x, y]); a ``default``
must be of the key's type and is what every agent holds at the start of a run
(without one the key is unset until something writes it). A group's tree may
use the keys declared by any tree it is built from: its own tree and every
tree inlined into it as a ``subtree`` (two of them declaring one key must
declare it alike).

:func:`coerce` is the one rule of "a value of this type", used by the loader's
checks (``semantic.py``) and by the boards at run time, so a file and a game
are held to the same rule: a bool is not a number, a number is finite, a point
is two finite numbers.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import Field

from behaviortk.format.fields import Finite, Model, Point, doc

BLACKBOARD_TYPES = ("bool", "number", "string", "point")
"""The types a blackboard key may be declared with."""

NOUNS = {"bool": "a bool", "number": "a number", "string": "a string", "point": "a point [x, y]"}
"""How messages name each type ("blackboard key 'alarm' is a bool, got 3")."""

_DEFAULT = "Value every agent holds at the start of a run (omitted: unset until written)"
_DESCRIPTION = "What the key means, for people reading the file"


class BoolKey(Model):
    """A blackboard key holding true or false."""

    type: Literal["bool"] = doc("The key's type")
    default: bool | None = doc(_DEFAULT, None)
    description: str = doc(_DESCRIPTION, "")


class NumberKey(Model):
    """A blackboard key holding a finite number (not a bool)."""

    type: Literal["number"] = doc("The key's type")
    default: Finite | None = doc(_DEFAULT, None)
    description: str = doc(_DESCRIPTION, "")


class StringKey(Model):
    """A blackboard key holding a string."""

    type: Literal["string"] = doc("The key's type")
    default: str | None = doc(_DEFAULT, None)
    description: str = doc(_DESCRIPTION, "")


class PointKey(Model):
    """A blackboard key holding a point [x, y] (a `blackboard` target may steer to it)."""

    type: Literal["point"] = doc("The key's type")
    default: Point | None = doc(_DEFAULT, None)
    description: str = doc(_DESCRIPTION, "")


KeySpec = Annotated[
    BoolKey | NumberKey | StringKey | PointKey,
    Field(
        discriminator="type",
        description="A declared blackboard key: its `type` (bool, number, string or point) "
        "and an optional `default` of that type.",
    ),
]


class Mismatch(Exception):
    """Raised by :func:`coerce` for a value that is not of the key's type."""


def _finite(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Mismatch
    try:
        x = float(value)
    except OverflowError:  # an int beyond the float range (10**400): comparisons read floats
        raise Mismatch from None
    if not math.isfinite(x):
        raise Mismatch
    return x + 0.0  # -0.0 -> 0.0: equal values are stored alike


def coerce(type_: str, value: Any) -> Any:
    """``value`` as stored under a key of ``type_``, or :class:`Mismatch`.

    Plain Python values (the run-time boards turn NumPy scalars and arrays into
    them first): bool: ``True``/``False``. number: a finite ``int`` or ``float``
    that is not a bool (an ``int`` must fit a float: 10**400 does not, as comparisons
    read numbers as floats); an ``int`` stays an ``int``, a float is stored with
    ``-0.0`` as ``0.0``. string: a ``str``. point: two finite numbers (list or
    tuple), stored as a ``(float, float)`` tuple.
    """
    if type_ == "bool":
        if isinstance(value, bool):
            return value
    elif type_ == "number":
        if isinstance(value, int) and not isinstance(value, bool):
            _finite(value)  # every comparison reads it as a float: it must have one
            return int(value)
        return _finite(value)
    elif type_ == "string":
        if isinstance(value, str):
            return str(value)
    elif type_ == "point" and isinstance(value, list | tuple) and len(value) == 2:
        return (_finite(value[0]), _finite(value[1]))
    raise Mismatch


def fits(type_: str, value: Any) -> bool:
    """Whether ``value`` may be stored under a key of ``type_``."""
    try:
        coerce(type_, value)
    except Mismatch:
        return False
    return True


def wrong_type(key: str, type_: str, shown: str) -> str:
    """The message for a value of the wrong type ("blackboard key 'alarm' is a bool, got 3")."""
    return f"blackboard key {key!r} is {NOUNS.get(type_, type_)}, got {shown}"


def same_declaration(a: Any, b: Any) -> bool:
    """Whether two declarations of one key agree (type and default; descriptions may differ)."""
    return bool(a.type == b.type and a.default == b.default)
