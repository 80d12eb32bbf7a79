"""Pluggable look-ahead for pursuit, evade, interpose and offset pursuit.

Making the prediction a parameter keeps Buckland's estimate as the default
and lets a better one (Millington's capped look-ahead, ...) be plugged in.

A predictor answers "how many seconds ahead should I aim?" for a pursuer at
``pos`` chasing a target that moves at constant velocity. Each is a model in
``registry.predictors`` (tag in ``type``) whose implementation is
``fn(model, to_target (n, 2), own_vel (n, 2), max_speed (n,), target_vel (n, 2)) -> (n,)``.
"""

from __future__ import annotations

from typing import Literal, Protocol

import numpy as np

from behaviortk.format.fields import Model, PPositive, doc
from behaviortk.registry import Registries, default
from behaviortk.vec import EPS, Array, dot, length


class Linear(Model):
    """Buckland ch. 3 "Pursuit": look-ahead = distance / (own max speed + target speed)."""

    type: Literal["linear"] = "linear"


class Capped(Model):
    """Millington ch. 3 "Pursue": distance / own speed, at most ``max_prediction``."""

    type: Literal["capped"] = "capped"
    max_prediction: PPositive = doc("Longest look-ahead", 1.0, unit="s")


class Intercept(Model):
    """Exact earliest meeting time of a max-speed pursuer and a constant-velocity target.

    Solves ``|d + v t| = s t`` for the smallest ``t > 0``; falls back to ``linear``
    when the target cannot be caught.
    """

    type: Literal["intercept"] = "intercept"


class PredictorFn(Protocol):
    def __call__(
        self, p: Model, to_target: Array, own_vel: Array, max_speed: Array, target_vel: Array
    ) -> Array: ...


def linear_time(to_target: Array, max_speed: Array, target_vel: Array) -> Array:
    """``|to_target| / (max_speed + |target_vel|)``; zero when both speeds are zero."""
    den = max_speed + length(target_vel)
    ok = den > EPS
    return np.where(ok, length(to_target) / np.where(ok, den, 1.0), 0.0)


def capped_time(to_target: Array, own_vel: Array, max_prediction: float) -> Array:
    """Millington: ``max_prediction`` if ``speed <= distance / max_prediction``, else distance / speed."""
    dist = length(to_target)
    speed = length(own_vel)
    slow = speed <= dist / max_prediction
    return np.where(slow, max_prediction, dist / np.where(slow, 1.0, speed))


def intercept_time(to_target: Array, max_speed: Array, target_vel: Array) -> Array:
    """Smallest ``t > 0`` with ``|d + v t| = s t``: ``(v.v - s^2) t^2 + 2 (d.v) t + d.d = 0``.

    Rows without a positive root get ``nan`` (callers fall back); ``d = 0`` gives 0.
    Roots use the cancellation-free form ``q = -(b + sign(b) sqrt(disc)) / 2``.
    """
    a = dot(target_vel, target_vel) - max_speed * max_speed
    b = 2.0 * dot(to_target, target_vel)
    c = dot(to_target, to_target)
    disc = b * b - 4.0 * a * c
    sq = np.sqrt(np.maximum(disc, 0.0))
    q = -0.5 * (b + np.where(b >= 0.0, sq, -sq))
    r1 = np.where(np.abs(a) > EPS, q / np.where(np.abs(a) > EPS, a, 1.0), np.nan)
    r2 = np.where(np.abs(q) > EPS, c / np.where(np.abs(q) > EPS, q, 1.0), np.nan)
    # a == 0 (equal speeds): b t + c = 0
    lin = np.where(b < -EPS, -c / np.where(b < -EPS, b, 1.0), np.nan)
    r1 = np.where(np.abs(a) > EPS, r1, lin)
    r2 = np.where(np.abs(a) > EPS, r2, np.nan)
    r1 = np.where((disc >= 0.0) & (r1 > 0.0), r1, np.inf)
    r2 = np.where((disc >= 0.0) & (r2 > 0.0), r2, np.inf)
    t = np.minimum(r1, r2)
    t = np.where(c <= EPS * EPS, 0.0, t)
    return np.where(np.isfinite(t), t, np.nan)


def linear(
    p: Linear, to_target: Array, own_vel: Array, max_speed: Array, target_vel: Array
) -> Array:
    return linear_time(to_target, max_speed, target_vel)


def capped(
    p: Capped, to_target: Array, own_vel: Array, max_speed: Array, target_vel: Array
) -> Array:
    return capped_time(to_target, own_vel, p.max_prediction)


def intercept(
    p: Intercept, to_target: Array, own_vel: Array, max_speed: Array, target_vel: Array
) -> Array:
    t = intercept_time(to_target, max_speed, target_vel)
    return np.where(np.isnan(t), linear_time(to_target, max_speed, target_vel), t)


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
    return np.where(np.isfinite(t) & (t > 0.0), t, 0.0)


BUILTIN = (
    (Linear, linear),
    (Capped, capped),
    (Intercept, intercept),
)
"""(model, implementation) of every built-in predictor, in registration order."""


def register(registries: Registries) -> None:
    for model, impl in BUILTIN:
        registries.predictors.register(model, impl)
