"""Building blocks shared by every model of the format.

All models are frozen and forbid unknown keys. Numbers that a reusable tree may
leave to its caller accept a parameter reference ``"$name"`` as well; the
reference is substituted (and the node validated again with the real value)
when a subtree is expanded for a group.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

PARAM_PATTERN = r"^\$[A-Za-z_][A-Za-z0-9_]*$"

ParamRef = Annotated[
    str,
    StringConstraints(pattern=PARAM_PATTERN),
    Field(description="Reference to a tree parameter, written `$name`; replaced by the value the caller passes."),
]


class Model(BaseModel):
    """Base of every format model: immutable, strict about unknown keys, no NaN/Inf."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        allow_inf_nan=False,
        validate_default=False,
        use_attribute_docstrings=True,
    )


# Plain numeric kinds (constraints land in the JSON Schema).
Finite = Annotated[float, Field(allow_inf_nan=False)]
NonNeg = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Degrees = Annotated[float, Field(ge=0, le=360, allow_inf_nan=False)]
Point = Annotated[tuple[Finite, Finite], Field(description="A point [x, y] in world units.")]

# The same kinds, or a parameter reference. Use these for fields of tree nodes.
PFinite = Finite | ParamRef
PNonNeg = NonNeg | ParamRef
PPositive = Positive | ParamRef
PProbability = Probability | ParamRef
PDegrees = Degrees | ParamRef


def doc(description: str, default: Any = ..., *, unit: str | None = None, **kw: Any) -> Any:
    """A ``Field`` whose description states unit and default, so editors show both."""
    parts = [description.rstrip(".") + "."]
    if unit:
        parts.append(f"Unit: {unit}.")
    if default is not ... and default is not None and not callable(default):
        parts.append(f"Default: {default!r}.")
    return Field(default, description=" ".join(parts), **kw)
