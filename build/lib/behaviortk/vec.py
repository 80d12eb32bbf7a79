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
    """``a`` where ``cond``, else ``b``: ``np.where`` on columns, where both values are
    computed (so guard divisions as :func:`normalize_xy` does); in a compiled loop
    ``(a if cond else b)``, computing only the value kept (``jit/compile.py``), so a select
    can spare a loop a division or a libm call."""
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
    """``(x, y)`` scaled down to ``limit`` when longer (``x * 1.0`` is ``x``: the same numbers
    as scaling every row, but a compiled loop divides only where it truncates)."""
    n = np.sqrt(x * x + y * y)
    over = n > limit
    scale = select(over, limit / select(n > EPS, n, 1.0), 1.0)
    return select(over, x * scale, x), select(over, y * scale, y)


@formula
def finite_or_zero(x: Any) -> Any:
    return select(np.isfinite(x), x, 0.0)


@formula
def maximum(a: Any, b: Any) -> Any:
    """``np.maximum``'s answer on both paths: ``a`` if greater or NaN, else ``b`` (so of two
    zeros, ``b``; numba's own ``np.maximum`` on scalars keeps ``a``)."""
    return select(np.isnan(a) | (a > b), a, b)


@formula
def minimum(a: Any, b: Any) -> Any:
    """``np.minimum``'s answer on both paths (see :func:`maximum`)."""
    return select(np.isnan(a) | (a < b), a, b)


@formula
def clip(x: Any, low: Any, high: Any) -> Any:
    """``np.clip``'s answer on both paths where a bound is an array (numba has no ``np.clip``
    on scalars; with two scalar bounds NumPy's loop keeps a zero's sign, this does not)."""
    return minimum(maximum(x, low), high)


@formula
def safe_div(num: Any, den: Any) -> Any:
    """``num / den`` where ``den > EPS``, else 0."""
    ok = den > EPS
    return select(ok, num / select(ok, den, 1.0), 0.0)


@formula
def coincident_xy(i: Any, j: Any) -> tuple[Any, Any]:
    """A fixed unit direction for the pair of rows (i, j), opposite for (j, i).

    Separation and non-penetration push coincident agents apart along it, so
    they split the same way whichever of the two is looked at.
    """
    lo, hi = minimum(i, j), maximum(i, j)
    angle = (lo * 2.399963229728653 + hi * 0.7071067811865476) % (2.0 * np.pi)
    sign = select(i < j, 1.0, -1.0)
    return np.cos(angle) * sign, np.sin(angle) * sign


#: Distances shorter than this count as coincident in separation (push along a fixed direction).
MIN_SEPARATION = 1e-3


@formula
def separation_term(dx: Any, dy: Any) -> tuple[Any, Any]:
    """One neighbour's term of Buckland's separation, ``normalize(-d) / |d| = -d / |d|^2``
    (``d``: its offset), ``|d|`` floored at ``MIN_SEPARATION``; not for a
    :func:`coincident` pair (:func:`coincident_push`)."""
    s = -1.0 / maximum(dx * dx + dy * dy, MIN_SEPARATION * MIN_SEPARATION)
    return dx * s, dy * s


@formula
def coincident(dx: Any, dy: Any) -> Any:
    """A pair too close to have a direction: separation pushes it along :func:`coincident_push`."""
    return dx * dx + dy * dy <= EPS * EPS


@formula
def coincident_push(i: Any, j: Any) -> tuple[Any, Any]:
    """Separation's term of a coincident pair of rows ``(i, j)``: ``vec.coincident_xy`` at the
    strength of a neighbour ``MIN_SEPARATION`` away."""
    cx, cy = coincident_xy(i, j)
    return cx / MIN_SEPARATION, cy / MIN_SEPARATION


def xy(v: Array) -> tuple[Array, Array]:
    """The x and y columns of ``(N, 2)`` vectors, as formulas take them."""
    return v[..., 0], v[..., 1]


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
    out = np.empty((*a.shape, 2))  # written in place: a spawn's one heading costs little
    np.cos(a, out=out[..., 0])
    np.sin(a, out=out[..., 1])
    return out


@formula
def wrap_angle(angle: Any) -> Any:
    """Map angles to [-pi, pi): ``(angle + pi) % (2 pi) - pi``. Where ``angle + pi`` already
    lies in ``[0, 2 pi)`` the modulo gives it back unchanged, so a compiled loop skips it."""
    x = angle + np.pi
    return select((x >= 0.0) & (x < 2.0 * np.pi), x, x % (2.0 * np.pi)) - np.pi


def coincident_direction(i: NDArray[np.int64], j: NDArray[np.int64]) -> Array:
    """:func:`coincident_xy` of pairs of rows, ``(P, 2)``."""
    return np.stack(coincident_xy(i, j), axis=-1)


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
