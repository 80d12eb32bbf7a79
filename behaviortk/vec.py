"""Zero-safe 2-D vector helpers shared by the whole package.

Every array of vectors is shaped ``(N, 2)``. Division by a length never happens
without a guard: a zero vector normalises to zero, not NaN (the unchecked
division in rougier's numpy boids is the bug this module exists to avoid).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]

EPS = 1e-12


def length(v: Array) -> Array:
    """Row-wise Euclidean length of ``(N, 2)`` vectors."""
    return np.sqrt(v[..., 0] * v[..., 0] + v[..., 1] * v[..., 1])


def length_sq(v: Array) -> Array:
    return v[..., 0] * v[..., 0] + v[..., 1] * v[..., 1]


def normalize(v: Array) -> Array:
    """Unit vectors; rows shorter than ``EPS`` become exactly zero."""
    n = length(v)
    safe = np.where(n > EPS, n, 1.0)
    out = v / safe[..., None]
    out[n <= EPS] = 0.0
    return out


def truncate(v: Array, max_length: ArrayLike) -> Array:
    """Scale rows longer than ``max_length`` (scalar or per row) down to it."""
    n = length(v)
    m = np.broadcast_to(np.asarray(max_length, dtype=np.float64), n.shape)
    scale = np.where(n > m, m / np.where(n > EPS, n, 1.0), 1.0)
    return v * scale[..., None]


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
