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
def shortest(d: float, size: float, wrap: bool) -> float:
    """``d - size * round(d / size)`` on wrapped worlds (``world.spatial.displacement``).

    The quotient is first taken as ``d * (1 / size)`` (a product, not a
    division); only where that lands within 1e-7 of a half-integer, the one
    place the two could round apart, is the exact ``d / size`` rounded instead.
    """
    if not wrap:
        return d
    q = d * (1.0 / size)
    r = np.rint(q)
    if abs(q - r) > 0.4999999:
        r = np.rint(d / size)
    return d - size * r


@inline
def shortest_near(d: float, size: float, wrap: bool) -> float:
    """:func:`shortest` for offsets that are nearly always within half the world.

    There the rounding is 0 and the answer ``d`` (``+ 0.0`` turns -0.0 into 0.0,
    as the subtraction does): the same bits without a division.
    """
    if not wrap:
        return d
    if abs(d) < 0.5 * size:
        return d + 0.0
    return d - size * np.rint(d / size)


@inline
def finite_or_zero(x: float) -> float:
    return x if math.isfinite(x) else 0.0
