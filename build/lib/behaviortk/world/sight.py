"""What an agent can see: view distance, field of view and line of sight, one test for all.

``can_see`` (``leaves/conditions.py``) and the ``visible`` nearest target
(``world/visible_nearest.py``) both call :func:`sees`, so "the nearest agent it
can see" and "can it see that agent" never disagree. The field of view is a
full angle (half of it either side of the heading), as a group's ``fov``: the
convention of Buckland's Raven bots (*Programming Game AI by Example*, ch. 7,
``isSecondInFOVOfFirst`` tests ``facing . to_target >= cos(fov / 2)``, then
casts a ray against the walls).

The line-of-sight test per segment is the closest point of the segment to each
obstacle centre (strictly inside the radius blocks) and the proper crossing of
two segments for walls (touching an end does not block). It runs as a kernel
compiled once by numba and cached on disk, which stops at the first shape that
blocks: 10,000 rays among 50 obstacles and 50 walls cost a fraction of a sense
phase (``benchmarks/bench_can_see.py``); ``sight_loops.py`` holds it, imported on first
use only, so validating a file never loads numba.
"""

from __future__ import annotations

import numpy as np

from behaviortk.vec import EPS, Array
from behaviortk.world.state import World

#: Cosine slack of the field-of-view test, so a target exactly on the
#: boundary angle (fov / 2) counts as seen despite rounding in cos().
FOV_COS_TOLERANCE = 1e-9


def in_view(heading: Array, d: Array, dist: Array, half: Array) -> np.ndarray:
    """Whether ``d`` (from the agent to the target, length ``dist``) lies within ``half``
    (radians) of the unit ``heading``: ``h . d >= |d| cos(half)``. All round when ``half``
    is at least pi; a target on the agent's own position is in view."""
    return in_view_columns(heading[:, 0], heading[:, 1], d[:, 0], d[:, 1], dist, half)


def in_view_columns(
    hx: Array, hy: Array, dx: Array, dy: Array, dist: Array, half: Array
) -> np.ndarray:
    """:func:`in_view` on x and y columns (the same arithmetic)."""
    along = hx * dx + hy * dy
    cos_half = np.cos(np.minimum(half, np.pi)) - FOV_COS_TOLERANCE
    return np.asarray((half >= np.pi) | (along >= dist * cos_half) | (dist <= EPS), dtype=bool)


def sees(
    pos: Array,
    heading: Array,
    target: Array,
    valid: np.ndarray,
    reach: Array,
    half: Array,
    world: World,
    line_of_sight: bool = True,
) -> np.ndarray:
    """Per row: the target (its nearest image) is within ``reach``, within ``half`` of the
    heading and, with ``line_of_sight``, no obstacle or wall crosses the line to it."""
    d = target - pos
    dist = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])
    seen = np.asarray(valid & (dist <= reach) & in_view(heading, d, dist, half), dtype=bool)
    if line_of_sight and seen.any():
        which = np.flatnonzero(seen)
        seen[which] = ~line_blocked(pos[which], target[which], world)
    return seen


def line_blocked(p: Array, q: Array, world: World) -> np.ndarray:
    """Per row, whether the segment ``p -> q`` crosses an obstacle circle or a wall."""
    out = np.zeros(p.shape[0], dtype=bool)
    if not (world.obstacle_radius.size or world.wall_a.size) or not p.shape[0]:
        return out
    from behaviortk.world.sight_loops import lines_blocked  # numba on first use only

    f64 = np.float64
    lines_blocked(
        np.ascontiguousarray(p, f64),
        np.ascontiguousarray(q, f64),
        np.ascontiguousarray(world.obstacle_pos, f64).reshape(-1, 2),
        np.ascontiguousarray(world.obstacle_radius, f64),
        np.ascontiguousarray(world.wall_a, f64).reshape(-1, 2),
        np.ascontiguousarray(world.wall_b, f64).reshape(-1, 2),
        out,
    )
    return out


def first_blocker(p: Array, q: Array, world: World) -> tuple[str, int] | None:
    """What crosses the one segment ``p -> q`` first in :func:`line_blocked`'s order (obstacles,
    then walls): ``("obstacle", j)``, ``("wall", k)`` or None. The same tests, on NumPy over the
    shapes, for explaining one agent's view (``leaves/why.py``)."""
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    d = q - p
    dd = float(d @ d)
    c = np.asarray(world.obstacle_pos, np.float64).reshape(-1, 2) - p
    t = np.clip(c @ d / (dd if dd > 0 else 1.0), 0.0, 1.0)
    g = c - t[:, None] * d
    radii = np.asarray(world.obstacle_radius, np.float64)
    hit = np.flatnonzero((g * g).sum(axis=1) < radii * radii)
    if hit.size:
        return ("obstacle", int(hit[0]))
    a = np.asarray(world.wall_a, np.float64).reshape(-1, 2)
    b = np.asarray(world.wall_b, np.float64).reshape(-1, 2)
    ab = b - a
    d1 = ab[:, 0] * (p[1] - a[:, 1]) - ab[:, 1] * (p[0] - a[:, 0])
    d2 = ab[:, 0] * (q[1] - a[:, 1]) - ab[:, 1] * (q[0] - a[:, 0])
    d3 = d[0] * (a[:, 1] - p[1]) - d[1] * (a[:, 0] - p[0])
    d4 = d[0] * (b[:, 1] - p[1]) - d[1] * (b[:, 0] - p[0])
    crossed = np.flatnonzero((d1 * d2 < 0) & (d3 * d4 < 0))
    return ("wall", int(crossed[0])) if crossed.size else None
