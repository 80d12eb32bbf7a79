"""Combiners: steering leaves whose children are primitives, combined by a rule that is data.

- ``blend``: weighted sum truncated at max_force (Reynolds; Buckland's
  "weighted truncated sum").
- ``prioritized_sum``: Buckland's AccumulateForce over the children in order
  (also how an agent's separate requests are combined by ``act``).
- ``prioritized_dither``: Buckland's "prioritized dithering": in order, each
  child applies with its probability (scaled by ``weight / probability``);
  the first one that applies and is non-zero wins.
- ``first_nonzero``: Millington's priority arbitration / OpenSteer: the first
  child whose force is longer than ``epsilon``.

Children are validated against the union of the *registered* primitives, so
plugin primitives can be combined too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import numpy as np
from pydantic import model_validator

from behaviortk.format.fields import PNonNeg, PProbability, doc
from behaviortk.format.nodes import NodeModel, PrimitiveNode
from behaviortk.registry import Registries
from behaviortk.steering import formulas
from behaviortk.steering.context import (
    Steering,
    SteeringContext,
    random_numbers,
    steer,
)
from behaviortk.vec import Array, truncate


def accumulate(running: Array, force: Array, max_force: Array) -> Array:
    """Buckland's AccumulateForce (``formulas.accumulate``) on ``(n, 2)`` rows."""
    x, y = formulas.accumulate(running[:, 0], running[:, 1], force[:, 0], force[:, 1], max_force)
    return np.stack([x, y], axis=1)


def clamp_angular(angular: Array, max_angular: Array) -> Array:
    return np.clip(angular, -max_angular, max_angular)


class CombinerModel(NodeModel):
    weight: PNonNeg = doc(
        "Multiplies the combined force before it joins the agent's other requests", 1.0
    )
    children: list[PrimitiveNode] = doc(
        "Primitives to combine, in priority order; each has its own weight", min_length=1
    )

    @property
    def random_numbers(self) -> int:
        """The children's random columns, in order."""
        return sum(random_numbers(c) for c in self.children)


def weighted_children(
    p: CombinerModel, ctx: SteeringContext, first_rand: int = 0
) -> Iterator[tuple[Array, Array | None]]:
    """Each child's weighted (linear, angular) for the context's rows, in order."""
    slot = first_rand
    for index, child in enumerate(p.children):
        out = steer(child, ctx.child(child, index, slot))
        slot += random_numbers(child)
        w = getattr(child, "weight", 1.0)
        yield out.linear * w, None if out.angular is None else out.angular * w


def _zero(ctx: SteeringContext) -> tuple[Array, Array]:
    return np.zeros((ctx.n, 2)), np.zeros(ctx.n)


def _result(linear: Array, angular: Array, saw_angular: bool) -> Steering:
    return Steering(linear, angular if saw_angular else None)


class Blend(CombinerModel):
    """Weighted sum of the children, truncated at max_force."""

    type: Literal["blend"] = "blend"


def blend(p: Blend, ctx: SteeringContext) -> Steering:
    linear, angular = _zero(ctx)
    saw = False
    for f, a in weighted_children(p, ctx):
        linear += f
        if a is not None:
            angular += a
            saw = True
    linear = truncate(linear, ctx.per_agent("max_force"))
    return _result(linear, clamp_angular(angular, ctx.per_agent("max_angular_accel")), saw)


class PrioritizedSum(CombinerModel):
    """Buckland's AccumulateForce: add children in order until max_force is used up."""

    type: Literal["prioritized_sum"] = "prioritized_sum"


def prioritized_sum(p: PrioritizedSum, ctx: SteeringContext) -> Steering:
    linear, angular = _zero(ctx)
    saw = False
    top = ctx.per_agent("max_force")
    for f, a in weighted_children(p, ctx):
        linear = accumulate(linear, f, top)
        if a is not None:
            angular += a
            saw = True
    return _result(linear, clamp_angular(angular, ctx.per_agent("max_angular_accel")), saw)


class PrioritizedDither(CombinerModel):
    """Buckland's prioritized dithering: each child, in order, applies with its probability.

    A child that applies is scaled by ``weight / probability`` (so its expected
    force is ``weight * force``) and, if non-zero, is the result (truncated at
    max_force). Reads one random number per child, then the children's own.
    """

    type: Literal["prioritized_dither"] = "prioritized_dither"
    probabilities: list[PProbability] = doc(
        "Chance that each child is considered this tick, one per child, in order"
    )

    @model_validator(mode="after")
    def _one_per_child(self) -> PrioritizedDither:
        if len(self.probabilities) != len(self.children):
            raise ValueError(
                f"probabilities has {len(self.probabilities)} entries for {len(self.children)} children"
            )
        return self

    @property
    def random_numbers(self) -> int:
        return len(self.children) + sum(random_numbers(c) for c in self.children)


def prioritized_dither(p: PrioritizedDither, ctx: SteeringContext) -> Steering:
    linear, angular = _zero(ctx)
    decided = np.zeros(ctx.n, dtype=bool)
    saw = False
    pairs = zip(p.probabilities, weighted_children(p, ctx, len(p.children)), strict=True)
    for index, (prob, (f, a)) in enumerate(pairs):
        chance = prob
        if chance <= 0.0:
            continue
        fx, fy, chosen = formulas.dither(f[:, 0], f[:, 1], ctx.rand[:, index], chance)
        applies = ~decided & chosen
        f = np.stack([fx, fy], axis=1)
        a = None if a is None else a / chance
        nonzero = formulas.longer_than(fx, fy, 0.0)
        if a is not None:
            nonzero |= a != 0.0
            saw = True
        win = applies & nonzero
        linear[win] = f[win]
        if a is not None:
            angular[win] = a[win]
        decided |= win
    linear = truncate(linear, ctx.per_agent("max_force"))
    return _result(linear, clamp_angular(angular, ctx.per_agent("max_angular_accel")), saw)


class FirstNonzero(CombinerModel):
    """Priority arbitration (Millington; OpenSteer): the first child whose force exceeds ``epsilon``."""

    type: Literal["first_nonzero"] = "first_nonzero"
    epsilon: PNonNeg = doc(
        "A child's weighted force (or angular acceleration) must be longer than this to win",
        1e-3,
        unit="force units",
    )


def first_nonzero(p: FirstNonzero, ctx: SteeringContext) -> Steering:
    linear, angular = _zero(ctx)
    decided = np.zeros(ctx.n, dtype=bool)
    saw = False
    eps = p.epsilon
    for f, a in weighted_children(p, ctx):
        big = formulas.longer_than(f[:, 0], f[:, 1], eps)
        if a is not None:
            big |= np.abs(a) > eps
            saw = True
        win = ~decided & big
        linear[win] = f[win]
        if a is not None:
            angular[win] = a[win]
        decided |= win
    linear = truncate(linear, ctx.per_agent("max_force"))
    return _result(linear, clamp_angular(angular, ctx.per_agent("max_angular_accel")), saw)


BUILTIN = (
    (Blend, blend),
    (PrioritizedSum, prioritized_sum),
    (PrioritizedDither, prioritized_dither),
    (FirstNonzero, first_nonzero),
)
"""(model, implementation) of every built-in combiner, in registration order."""


def register(registries: Registries) -> None:
    for model, impl in BUILTIN:
        registries.combiners.register(model, impl)
