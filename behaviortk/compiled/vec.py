"""Scalar 2-D helpers for kernels, each the exact operation order of its ``behaviortk.vec`` twin.

``normalize`` divides by the length (not a reciprocal product), ``truncate``
scales by ``max / length`` only when longer, a zero vector stays zero: the
same guards as the NumPy helpers, so a kernel built from these gives the
NumPy reference's numbers.
"""

from __future__ import annotations

import math

import numpy as np

from behaviortk.jit.compile import inline
from behaviortk.steering.kernels import MIN_SEPARATION

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
def accumulate(rx: float, ry: float, fx: float, fy: float, max_force: float) -> tuple[float, float]:
    """Buckland's AccumulateForce (``steering.combiners.accumulate``) for one agent."""
    remaining = max(max_force - math.sqrt(rx * rx + ry * ry), 0.0)
    tx, ty = truncate(fx, fy, remaining)
    return rx + tx, ry + ty


@inline
def finite_or_zero(x: float) -> float:
    return x if math.isfinite(x) else 0.0


@inline
def separation_term(i: int, j: int, dx: float, dy: float) -> tuple[float, float]:
    """One pair's term of Buckland's separation (``kernels.separation_force``): ``-d / |d|^2``
    with ``|d|`` floored at ``MIN_SEPARATION``; a coincident pair pushes along
    ``kernels.coincident_direction(i, j) / MIN_SEPARATION``."""
    d2 = dx * dx + dy * dy
    if d2 <= EPS * EPS:
        a, b = min(i, j), max(i, j)
        angle = (a * 2.399963229728653 + b * 0.7071067811865476) % (2.0 * np.pi)
        sign = 1.0 if i < j else -1.0
        return math.cos(angle) * sign / MIN_SEPARATION, math.sin(angle) * sign / MIN_SEPARATION
    s = -1.0 / max(d2, MIN_SEPARATION * MIN_SEPARATION)
    return dx * s, dy * s
