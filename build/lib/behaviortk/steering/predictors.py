"""Pluggable look-ahead for pursuit, evade, interpose and offset pursuit.

Making the prediction a parameter keeps Buckland's estimate as the default
and lets a better one (Millington's capped look-ahead, ...) be plugged in.

A predictor answers "how many seconds ahead should I aim?" for a pursuer at
``pos`` chasing a target that moves at constant velocity. Each is a model in
``registry.predictors`` (tag in ``type``) whose implementation is
``fn(model, to_target (n, 2), own_vel (n, 2), max_speed (n,), target_vel (n, 2)) -> (n,)``.

A built-in predictor's maths is one formula (``steering/formulas.py``), its
model's ``LOOK_AHEAD``: the NumPy implementation runs it on columns
(:func:`by_formula`) and a compiled row loop calls it per row
(``steering/row_loops.py``). Its parameters: ``tox toy`` the offset from the
agent to the target, ``vx vy`` the agent's velocity, ``top`` its max speed,
``tvx tvy`` the target's velocity; any other name is a field of the model. A
predictor without ``LOOK_AHEAD`` (a plugin's) runs on the NumPy path only.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import cache
from typing import Any, ClassVar, Literal, Protocol

import numpy as np

from behaviortk.format.fields import Model, PPositive, doc
from behaviortk.registry import Registries, default
from behaviortk.steering import formulas as f
from behaviortk.vec import Array

ARGUMENTS = ("tox", "toy", "vx", "vy", "top", "tvx", "tvy")
"""The parameter names of a ``LOOK_AHEAD`` formula that are not the model's fields."""


class Linear(Model):
    """Buckland ch. 3 "Pursuit": look-ahead = distance / (own max speed + target speed)."""

    type: Literal["linear"] = "linear"
    LOOK_AHEAD: ClassVar[Callable[..., Any]] = f.linear_time


class Capped(Model):
    """Millington ch. 3 "Pursue": distance / own speed, at most ``max_prediction``."""

    type: Literal["capped"] = "capped"
    max_prediction: PPositive = doc("Longest look-ahead", 1.0, unit="s")
    LOOK_AHEAD: ClassVar[Callable[..., Any]] = f.capped_time


class Intercept(Model):
    """Exact earliest meeting time of a max-speed pursuer and a constant-velocity target.

    Solves ``|d + v t| = s t`` for the smallest ``t > 0``; falls back to ``linear``
    when the target cannot be caught.
    """

    type: Literal["intercept"] = "intercept"
    LOOK_AHEAD: ClassVar[Callable[..., Any]] = f.intercept_or_linear_time


class PredictorFn(Protocol):
    def __call__(
        self, p: Model, to_target: Array, own_vel: Array, max_speed: Array, target_vel: Array
    ) -> Array: ...


def formula_of(p: Any) -> Callable[..., Any] | None:
    """The ``LOOK_AHEAD`` formula of ``p``'s own class (a plugin's subclass has none)."""
    found = type(p).__dict__.get("LOOK_AHEAD")
    return found if callable(found) else None


@cache
def parameters(fn: Callable[..., Any]) -> tuple[str, ...]:
    return tuple(inspect.signature(fn).parameters)


def fields_of(p: Any) -> dict[str, float]:
    """The model fields ``p``'s ``LOOK_AHEAD`` formula reads (numbers)."""
    fn = formula_of(p)
    assert fn is not None
    return {n: float(getattr(p, n)) for n in parameters(fn) if n not in ARGUMENTS}


def by_formula(
    p: Model, to_target: Array, own_vel: Array, max_speed: Array, target_vel: Array
) -> Array:
    """A built-in predictor: its ``LOOK_AHEAD`` formula on the columns."""
    fn = formula_of(p)
    assert fn is not None
    given: dict[str, Any] = {
        "tox": to_target[:, 0], "toy": to_target[:, 1], "vx": own_vel[:, 0],
        "vy": own_vel[:, 1], "top": max_speed, "tvx": target_vel[:, 0], "tvy": target_vel[:, 1],
    }  # fmt: skip
    given.update(fields_of(p))
    return np.asarray(fn(*[given[n] for n in parameters(fn)]))


def look_ahead(
    p: Model,
    to_target: Array,
    own_vel: Array,
    max_speed: Array,
    target_vel: Array,
    registries: Registries | None = None,
) -> Array:
    """Run the registered predictor ``p`` (seconds ahead, finite and >= 0)."""
    regs = default() if registries is None else registries
    fn: PredictorFn = regs.predictors.impl(str(getattr(p, "type", "")))
    t = np.asarray(fn(p, to_target, own_vel, max_speed, target_vel), dtype=np.float64)
    return np.asarray(f.usable_time(t))


BUILTIN = (
    (Linear, by_formula),
    (Capped, by_formula),
    (Intercept, by_formula),
)
"""(model, implementation) of every built-in predictor, in registration order."""


def register(registries: Registries) -> None:
    for model, impl in BUILTIN:
        registries.predictors.register(model, impl)
