"""Zero-safe 2-D vector helpers shared by the whole package.

Every array of vectors is shaped ``(N, 2)``. Division by a length never happens
without a guard: a zero vector normalises to zero, not NaN (the unchecked
division in rougier's numpy boids is the bug this module exists to avoid).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]
F = TypeVar("F", bound=Callable[..., Any])

EPS = 1e-12


def _root_threshold(limit: float) -> float:
    """The largest float whose square root is at most ``limit``: ``x > it`` exactly when
    ``sqrt(x) > limit`` (the square root is correctly rounded, so monotonic)."""
    s = limit * limit
    while np.sqrt(s) > limit:
        s = float(np.nextafter(s, 0.0))
    while np.sqrt(np.nextafter(s, np.inf)) <= limit:
        s = float(np.nextafter(s, np.inf))
    return float(s)


EPS_SQUARED = _root_threshold(EPS)
"""``x * x + y * y > EPS_SQUARED`` exactly when the length is above ``EPS``, one root fewer."""

# ---------------------------------------------------------------- formulas
_formulas: list[Callable[..., Any]] = []
_hooks: list[Callable[[Callable[..., Any]], None]] = []


def formula(fn: F) -> F:
    """Mark ``fn`` as a formula: maths over components (``px, py, ...``) with :func:`select`
    instead of ``if``, so that it runs on NumPy columns (the reference) and, unchanged, on
    scalars inside a compiled row loop (``behaviortk.jit`` registers it with numba).
    No numba is imported here: the NumPy path never loads it."""
    _formulas.append(fn)
    for hook in _hooks:
        hook(fn)
    return fn


INLINE = "formula_inline"
"""The attribute :func:`inlined` sets on a formula."""


def inlined(fn: F) -> F:
    """Put under ``@formula``: a formula holding a loop (over obstacles, ...), or calling one,
    is inlined where it is called in compiled code; numba would not inline it, and a row
    loop would pay a call per row."""
    setattr(fn, INLINE, True)
    return fn


def on_formula(hook: Callable[[Callable[..., Any]], None]) -> None:
    """Call ``hook`` on every formula, those marked so far and those marked later."""
    _hooks.append(hook)
    for fn in _formulas:
        hook(fn)


def select(cond: Any, a: Any, b: Any) -> Any:
    """``a`` where ``cond``, else ``b``: ``np.where`` on columns, a ternary on scalars in a
    compiled loop. Both values are computed either way, so guard divisions as ``safe_div``."""
    return np.where(cond, a, b)


@formula
def length_xy(x: Any, y: Any) -> Any:
    return np.sqrt(x * x + y * y)


@formula
def normalize_xy(x: Any, y: Any) -> tuple[Any, Any]:
    """The unit vector of ``(x, y)``; shorter than ``EPS``: exactly zero."""
    n = np.sqrt(x * x + y * y)
    ok = n > EPS
    safe = select(ok, n, 1.0)
    return select(ok, x / safe, 0.0), select(ok, y / safe, 0.0)


@formula
def unit_or(ax: Any, ay: Any, bx: Any, by: Any) -> tuple[Any, Any]:
    """:func:`normalize_xy` of ``(ax, ay)``, or of ``(bx, by)`` where that is shorter than
    ``EPS`` (the same bits), with one square root and one pair of divisions: the choice is
    made on the squared length (:data:`EPS_SQUARED`), before the root."""
    sa = ax * ax + ay * ay
    first = sa > EPS_SQUARED
    n = np.sqrt(select(first, sa, bx * bx + by * by))
    x, y = select(first, ax, bx), select(first, ay, by)
    ok = n > EPS
    safe = select(ok, n, 1.0)
    return select(ok, x / safe, 0.0), select(ok, y / safe, 0.0)


@formula
def truncate_xy(x: Any, y: Any, limit: Any) -> tuple[Any, Any]:
    """``(x, y)`` scaled down to ``limit`` when longer."""
    n = np.sqrt(x * x + y * y)
    scale = select(n > limit, limit / select(n > EPS, n, 1.0), 1.0)
    return x * scale, y * scale


@formula
def finite_or_zero(x: Any) -> Any:
    return select(np.isfinite(x), x, 0.0)


def length(v: Array) -> Array:
    """Row-wise Euclidean length of ``(N, 2)`` vectors."""
    return length_xy(v[..., 0], v[..., 1])


def length_sq(v: Array) -> Array:
    return v[..., 0] * v[..., 0] + v[..., 1] * v[..., 1]


def normalize(v: Array) -> Array:
    """Unit vectors; rows shorter than ``EPS`` become exactly zero."""
    return np.stack(normalize_xy(v[..., 0], v[..., 1]), axis=-1)


def truncate(v: Array, max_length: ArrayLike) -> Array:
    """Scale rows longer than ``max_length`` (scalar or per row) down to it."""
    m = np.broadcast_to(np.asarray(max_length, dtype=np.float64), v.shape[:-1])
    return np.stack(truncate_xy(v[..., 0], v[..., 1], m), axis=-1)


def perp(v: Array) -> Array:
    """Rotate each row by +90 degrees (the 'side' vector of a heading)."""
    return np.stack([-v[..., 1], v[..., 0]], axis=-1)


def rotate(v: Array, angle: ArrayLike) -> Array:
    """Rotate rows by ``angle`` radians (scalar or per row), counter-clockwise."""
    a = np.asarray(angle, dtype=np.float64)
    c, s = np.cos(a), np.sin(a)
    return np.stack([c * v[..., 0] - s * v[..., 1], s * v[..., 0] + c * v[..., 1]], axis=-1)


def dot(a: Array, b: Array) -> Array:
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1]


def heading_angle(v: Array) -> Array:
    """Angle of each row in radians, measured from +x counter-clockwise."""
    return np.arctan2(v[..., 1], v[..., 0])


def from_angle(angle: ArrayLike) -> Array:
    a = np.asarray(angle, dtype=np.float64)
    return np.stack([np.cos(a), np.sin(a)], axis=-1)


def wrap_angle(angle: ArrayLike) -> Array:
    """Map angles to [-pi, pi)."""
    a = np.asarray(angle, dtype=np.float64)
    return (a + np.pi) % (2.0 * np.pi) - np.pi


def coincident_direction(i: NDArray[np.int64], j: NDArray[np.int64]) -> Array:
    """A fixed unit direction for the pair of rows (i, j), opposite for (j, i).

    Separation and non-penetration push coincident agents apart along it, so
    they split the same way whichever of the two is looked at.
    """
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    angle = (lo * 2.399963229728653 + hi * 0.7071067811865476) % (2.0 * np.pi)
    return from_angle(angle) * np.where(i < j, 1.0, -1.0)[:, None]


def to_world(local: Array, heading: Array, pos: Array | None = None) -> Array:
    """Local (x forward along heading, y along its left perpendicular) to world coordinates."""
    out = heading * local[..., 0:1] + perp(heading) * local[..., 1:2]
    return out if pos is None else out + pos


def sum_by_owner(owner: NDArray[np.int64], values: Array, n: int) -> Array:
    """Per-owner sums of ``(P, 2)`` values (bincount: fixed order, so deterministic)."""
    return np.stack(
        [
            np.bincount(owner, weights=values[:, 0], minlength=n),
            np.bincount(owner, weights=values[:, 1], minlength=n),
        ],
        axis=1,
    )


def mean_by_owner(owner: NDArray[np.int64], values: Array, n: int) -> tuple[Array, Array]:
    """Per-owner means of ``(P, 2)`` values (zero where an owner has none) and the counts,
    summed as ``steering.kernels.cohesion_force`` sums its neighbours' offsets."""
    count = np.bincount(owner, minlength=n).astype(np.float64)
    return sum_by_owner(owner, values, n) / np.maximum(count, 1.0)[:, None], count
