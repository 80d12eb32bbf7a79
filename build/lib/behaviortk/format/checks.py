"""Checks: what "works" means for a scenario, stated in the file and held in CI.

A check is one flat object: a registered metric (``"metric"`` plus that metric's
own arguments, such as ``"group"`` or ``"groups"``) and how its per-tick values
are judged: aggregated ``over`` a tick window, then compared with ``op`` to
``value``. ``check_model`` joins a metric's model with :class:`CheckFields`, so
the metric registry alone decides what a check may name (plugins' metrics too).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field, create_model, model_validator

from behaviortk.format.fields import Finite, Model, doc
from behaviortk.format.limits import MAX_CHECK_TICK

Over = Literal["min", "max", "mean", "final"]
Op = Literal[">=", ">", "<=", "<", "=="]

OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
}


class MetricModel(Model):
    """Base of every metric: a ``metric`` tag (declared by each subclass) and its arguments."""

    @property
    def label(self) -> str:
        """A short column name: the metric and its group arguments (``min_distance:prey,predator``)."""
        tag = str(getattr(self, "metric", type(self).__name__))
        groups = getattr(self, "groups", None) or [getattr(self, "group", None)]
        names = [g for g in groups if isinstance(g, str)]
        return f"{tag}:{','.join(names)}" if names else tag


class CheckFields(Model):
    """The judging half of a check: window, aggregate, comparison."""

    name: str = doc("Name of the check, shown in reports and JUnit", min_length=1)
    over: Over = doc(
        "How the per-tick values in the window become one number: their minimum, "
        "maximum, mean, or the value at the window's last tick",
        "final",
    )
    from_tick: int = doc(
        f"First tick of the window (inclusive), 0 to {MAX_CHECK_TICK:,}",
        0,
        ge=0,
        le=MAX_CHECK_TICK,
    )
    to_tick: int | None = doc(
        f"Last tick of the window (inclusive), 0 to {MAX_CHECK_TICK:,}; null = the last tick run",
        None,
        ge=0,
        le=MAX_CHECK_TICK,
    )
    op: Op = doc("Comparison of the aggregated value with `value`")
    value: Finite = Field(description="The number the aggregate is compared with")

    @model_validator(mode="after")
    def _window(self) -> CheckFields:
        if self.to_tick is not None and self.to_tick < self.from_tick:
            raise ValueError(
                f"to_tick {self.to_tick} is before from_tick {self.from_tick}: "
                "the window would be empty"
            )
        return self

    def passes(self, aggregate: float) -> bool:
        return bool(OPS[self.op](aggregate, self.value))


@functools.cache
def check_model(metric: type[BaseModel]) -> type[BaseModel]:
    """The check model of a metric: its fields then the check's (one flat JSON object)."""
    name = f"{metric.__name__}Check"
    doc_line = (metric.__doc__ or "").strip().splitlines()[0] if metric.__doc__ else ""
    model: type[BaseModel] = create_model(
        name, __base__=(metric, CheckFields), __doc__=f"A check on {doc_line}"
    )
    model.__module__ = metric.__module__
    return model
