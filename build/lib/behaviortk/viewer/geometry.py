"""Pure NumPy builders of triangle soups: every shape the viewer draws.

Each builder returns vertices ``(V, 2)`` in screen pixels, three per
triangle, vectorised over all shapes at once, so that a whole layer (all
agents, all feelers, ...) is one array and one draw call. No OpenGL here, so
the shapes are unit-testable and the frame-prep benchmark measures exactly
this CPU work.
"""

from __future__ import annotations

import numpy as np

from behaviortk.vec import Array, from_angle, normalize, perp

EMPTY = np.zeros((0, 2), dtype=np.float64)


def heading_marks(pos: Array, heading: Array, radius: Array) -> Array:
    """A wedge from the centre to the rim along the heading: nose at ``pos + r h``, base
    corners at ``pos +- 0.4 r side`` (inside the disc of radius ``r``)."""
    h = normalize(heading)
    s = perp(h)
    r = np.asarray(radius, dtype=np.float64)[:, None]
    return np.stack([pos + h * r, pos + 0.4 * r * s, pos - 0.4 * r * s], axis=1).reshape(-1, 2)


def segments(a: Array, b: Array, width: float) -> Array:
    """Thick line segments ``a -> b`` as two triangles each (GL core has no wide lines)."""
    if a.shape[0] == 0:
        return EMPTY
    d = normalize(b - a)
    n = perp(d) * (0.5 * width)
    p0, p1, p2, p3 = a + n, a - n, b - n, b + n
    return np.stack([p0, p1, p2, p0, p2, p3], axis=1).reshape(-1, 2)


def discs(center: Array, radius: Array, sides: int = 20) -> Array:
    """Filled circles as triangle fans (``sides`` triangles each)."""
    if center.shape[0] == 0:
        return EMPTY
    ring = from_angle(np.linspace(0.0, 2.0 * np.pi, sides + 1))  # (sides+1, 2)
    r = np.asarray(radius, dtype=np.float64)[:, None, None]
    pts = center[:, None, :] + ring[None, :, :] * r  # (M, sides+1, 2)
    c = np.broadcast_to(center[:, None, :], (center.shape[0], sides, 2))
    return np.stack([c, pts[:, :-1], pts[:, 1:]], axis=2).reshape(-1, 2)


def rings(center: Array, radius: Array, width: float, sides: int = 32) -> Array:
    """Circle outlines of the given stroke width."""
    if center.shape[0] == 0:
        return EMPTY
    ring = from_angle(np.linspace(0.0, 2.0 * np.pi, sides + 1))
    r = np.asarray(radius, dtype=np.float64)[:, None, None]
    pts = center[:, None, :] + ring[None, :, :] * r
    return segments(pts[:, :-1].reshape(-1, 2), pts[:, 1:].reshape(-1, 2), width)


def arcs(center: Array, radius: Array, facing: Array, fov: Array, width: float) -> Array:
    """Field-of-view cones: two edge rays plus the arc, ``fov`` the full angle."""
    if center.shape[0] == 0:
        return EMPTY
    sides = 16
    base = np.arctan2(facing[:, 1], facing[:, 0])[:, None]
    half = 0.5 * np.asarray(fov, dtype=np.float64)[:, None]
    ang = base + np.linspace(-1.0, 1.0, sides + 1)[None, :] * half  # (M, sides+1)
    r = np.asarray(radius, dtype=np.float64)[:, None, None]
    pts = center[:, None, :] + np.stack([np.cos(ang), np.sin(ang)], axis=-1) * r
    arc = segments(pts[:, :-1].reshape(-1, 2), pts[:, 1:].reshape(-1, 2), width)
    edges = segments(
        np.concatenate([center, center]), np.concatenate([pts[:, 0], pts[:, -1]]), width
    )
    return np.concatenate([arc, edges])


def crosshairs(point: Array, size: float, width: float) -> Array:
    """A '+' with a ring: the predicted-position crosshair of Buckland's pursuit demo (ch. 3)."""
    if point.shape[0] == 0:
        return EMPTY
    dx = np.array([size, 0.0])
    dy = np.array([0.0, size])
    bars = segments(
        np.concatenate([point - dx, point - dy]), np.concatenate([point + dx, point + dy]), width
    )
    ring = rings(point, np.full(point.shape[0], 0.6 * size), width, sides=16)
    return np.concatenate([bars, ring])


def polylines(points: Array, closed: bool, width: float) -> Array:
    """One polyline ``(P, 2)`` as thick segments."""
    if points.shape[0] < 2:
        return EMPTY
    a, b = points[:-1], points[1:]
    if closed:
        a = np.concatenate([a, points[-1:]])
        b = np.concatenate([b, points[:1]])
    return segments(a, b, width)


def quads(x0: float, y0: float, x1: float, y1: float) -> Array:
    """An axis-aligned rectangle as two triangles."""
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y0], [x1, y1], [x0, y1]], dtype=np.float64)
