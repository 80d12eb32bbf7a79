"""Building blocks shared by every model of the format.

All models are frozen and forbid unknown keys. Numbers that a reusable tree may
leave to its caller accept a parameter reference ``"$name"`` as well; the
reference is substituted (and the node validated again with the real value)
when a subtree is expanded for a group.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationInfo,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from behaviortk.format.limits import MAX_COORD, MAX_MAGNITUDE, MIN_POSITIVE

PARAM_PATTERN = r"^\$[A-Za-z_][A-Za-z0-9_]*$"


class Model(BaseModel):
    """Base of every format model: immutable, strict about unknown keys and types, no NaN/Inf.

    ``strict`` keeps pydantic and the JSON Schema in agreement: ``"5"`` is not a
    number and ``1`` is not ``true``.
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        allow_inf_nan=False,
        validate_default=False,
        use_attribute_docstrings=True,
    )


def shown(value: float) -> str:
    """A bound as written by hand in descriptions and messages: ``1e9``, ``1e-6``, ``360``."""
    mantissa, _, exponent = f"{value:g}".partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa


POSITIVE_RANGE = f"{shown(MIN_POSITIVE)} to {shown(MAX_MAGNITUDE)}"
"""The range of ``Positive``, for descriptions."""
NONNEG_RANGE = f"0 to {shown(MAX_MAGNITUDE)}"
"""The range of ``NonNeg``, for descriptions."""

# Plain numeric kinds (constraints land in the JSON Schema). Every one is bounded
# (``format/limits.py`` says why), so no value of a definition makes the engines overflow.
Finite = Annotated[float, Field(ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE, allow_inf_nan=False)]
NonNeg = Annotated[float, Field(ge=0, le=MAX_MAGNITUDE, allow_inf_nan=False)]
Positive = Annotated[float, Field(ge=MIN_POSITIVE, le=MAX_MAGNITUDE, allow_inf_nan=False)]
"""At least ``MIN_POSITIVE``, not merely > 0: the engines divide by these."""
Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Degrees = Annotated[float, Field(ge=0, le=360, allow_inf_nan=False)]
Coordinate = Annotated[float, Field(ge=-MAX_COORD, le=MAX_COORD, allow_inf_nan=False)]
Point = Annotated[
    tuple[Coordinate, Coordinate],
    Field(strict=False, description="A point [x, y] in world units."),
]
"""Non-strict only at the tuple level, so a JSON array is accepted; the numbers stay strict."""


@dataclass(frozen=True)
class Parameterisable:
    """Annotation metadata: in a tree as written, the value may be a ``"$name"`` reference.

    Files are validated twice: as written (``context={"raw": True}``), where a
    reference stands for the number, and after expansion, where every
    reference has been replaced. So the models that run hold plain numbers and
    points (the type says so), and the schema offers "a number or `$name`".
    """

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.with_info_wrap_validator_function(_param_or, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"anyOf": [handler(schema), PARAM_JSON]}


PARAM_JSON = {
    "type": "string",
    "pattern": PARAM_PATTERN,
    "description": "Reference to a tree parameter, written `$name`; replaced by the value the caller passes.",
}
_PARAM = re.compile(PARAM_PATTERN)


def _param_or(value: Any, handler: Callable[[Any], Any], info: ValidationInfo) -> Any:
    if isinstance(value, str):
        if _PARAM.match(value) and isinstance(info.context, dict) and info.context.get("raw"):
            return value
        raise PydanticCustomError("type_error", "expected a number or a '$param' reference")
    return handler(value)


# The same kinds, or a parameter reference in a tree as written. Use these for fields of tree nodes.
PFinite = Annotated[Finite, Parameterisable()]
PNonNeg = Annotated[NonNeg, Parameterisable()]
PPositive = Annotated[Positive, Parameterisable()]
PProbability = Annotated[Probability, Parameterisable()]
PDegrees = Annotated[Degrees, Parameterisable()]
PPoint = Annotated[Point, Parameterisable()]


def doc(description: str, default: Any = ..., *, unit: str | None = None, **kw: Any) -> Any:
    """A ``Field`` whose description states unit and default, so editors show both."""
    parts = [description.rstrip(".") + "."]
    if unit:
        parts.append(f"Unit: {unit}.")
    if default is not ... and default is not None and not callable(default):
        parts.append(f"Default: {default!r}.")
    if default is ... and "default_factory" in kw:
        return Field(description=" ".join(parts), **kw)
    return Field(default, description=" ".join(parts), **kw)


@dataclass(frozen=True)
class NameRef:
    """Annotation marker: this string names a group, path or agent of the definition.

    The loader checks every such field of an expanded tree against the names the
    definition declares ("unknown group 'wolfs'; did you mean 'wolves'?").
    """

    kind: str  # "group" | "path" | "agent" | "zone" | "node"
    also: tuple[str, ...] = ()  # words accepted besides the names (a centroid's "neighbours")


GroupRef = Annotated[str, NameRef("group"), Field(min_length=1)]
PathRef = Annotated[str, NameRef("path"), Field(min_length=1)]
AgentRef = Annotated[str, NameRef("agent"), Field(min_length=1)]
ZoneRef = Annotated[str, NameRef("zone"), Field(min_length=1)]
NodeRef = Annotated[str, NameRef("node"), Field(min_length=1)]
"""A node's name (its `name`, else its type) in the tree of the sibling ``group`` field."""


@dataclass(frozen=True)
class BlackboardRef:
    """Annotation marker: this string is a blackboard key the tree must declare.

    The loader checks every such field of an expanded group tree against the
    keys its trees declare (``format/blackboard_keys.py``); with ``type`` the key
    must also be declared with that type (``needs`` says why, in messages).
    """

    type: str | None = None
    needs: str = ""


@dataclass(frozen=True)
class BlackboardValue:
    """Annotation marker: this value is stored under, or compared with, the blackboard key
    in the sibling field ``key``, so it must be of that key's declared type. With ``op``,
    the sibling field holding a comparison operator: ``<``, ``<=``, ``>``, ``>=`` need a
    number key."""

    key: str = "key"
    op: str | None = None


BLACKBOARD_KEY_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
_KeyName = Annotated[
    str,
    Field(
        pattern=BLACKBOARD_KEY_PATTERN,
        description="Blackboard key of the agent's own blackboard, declared in the tree's "
        "`blackboard`: 1 to 64 letters, digits or _, not starting with a digit (no '/', '.' "
        "or spaces: every agent's keys are its own).",
    ),
]
BlackboardKeyName = _KeyName
"""The syntax of a key alone, for a field that adds its own ``BlackboardRef`` (type, needs)."""
BlackboardKey = Annotated[_KeyName, BlackboardRef()]
"""A blackboard key of any declared type."""
BlackboardPointKey = Annotated[_KeyName, BlackboardRef("point", "a `blackboard` target")]
"""A blackboard key declared with type point."""

EVENT_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"
RESERVED_EVENTS = ("spawn", "despawn", "status")
"""Event names the simulation raises itself; an ``emit`` node may not use them."""


def _not_reserved(name: str) -> str:
    if name in RESERVED_EVENTS:
        raise PydanticCustomError(
            "reserved_event_name",
            f"the simulation raises {', '.join(RESERVED_EVENTS)} itself; choose another event name",
        )
    return name


EventName = Annotated[
    str,
    Field(
        pattern=EVENT_NAME_PATTERN,
        description="Event name: 1 to 64 letters, digits, _, . or -, starting with a letter or _; "
        f"not {', '.join(repr(n) for n in RESERVED_EVENTS)} (the simulation's own events).",
        json_schema_extra={"not": {"enum": list(RESERVED_EVENTS)}},
    ),
    AfterValidator(_not_reserved),
]

ParamValue = (
    bool
    | Annotated[int, Field(ge=-int(MAX_MAGNITUDE), le=int(MAX_MAGNITUDE))]
    | Annotated[float, Field(ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE)]
    | str
    | Point
)
"""What a tree parameter or a blackboard value may be: a JSON scalar or a point (numbers
within ``MAX_MAGNITUDE``; a parameter's field checks its value again once substituted)."""
