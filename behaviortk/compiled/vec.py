"""Scalar 2-D helpers for kernels, each the exact operation order of its ``behaviortk.vec`` twin.

``normalize`` divides by the length (not a reciprocal product), ``truncate``
scales by ``max / length`` only when longer, a zero vector stays zero: the
same guards as the NumPy helpers, so a kernel built from these gives the
NumPy reference's numbers.
"""

from __future__ import annotations

import math

from behaviortk.jit.compile import inline

EPS = 1e-12  # behaviortk.vec.EPS


@inline
def length(x: float, y: float) -> float:
    return math.sqrt(x * x + y * y)


@inline
def normalize(x: float, y: float) -> tuple[float, float]:
    n = math.sqrt(x * x + y * y)
    if n > EPS:
        return x / n, y / n
    return 0.0, 0.0


@inline
def truncate(x: float, y: float, limit: float) -> tuple[float, float]:
    n = math.sqrt(x * x + y * y)
    if n > limit:
        scale = limit / (n if n > EPS else 1.0)
        return x * scale, y * scale
    return x, y


@inline
def finite_or_zero(x: float) -> float:
    return x if math.isfinite(x) else 0.0
