"""The line-of-sight test of ``world/sight.py``, compiled: one segment at a time.

:func:`blocked` is the test of one segment against every obstacle circle and wall, the
arithmetic of ``sight.line_blocked`` (which runs :func:`lines_blocked` over its rows):
the closest point of the segment to each obstacle centre (strictly inside the radius
blocks) and the proper crossing of two segments for walls (touching an end does not
block); it stops at the first shape that blocks. Kernels that pick a target by sight
(``sense/nearest_loops.py``) call :func:`blocked` for the candidates they test.
"""

from __future__ import annotations

import numpy as np

from behaviortk.jit.compile import inline, kernel


@inline
def blocked(
    px: float,
    py: float,
    qx: float,
    qy: float,
    centres: np.ndarray,
    radii: np.ndarray,
    wall_a: np.ndarray,
    wall_b: np.ndarray,
) -> bool:
    """Whether the segment ``(px, py) -> (qx, qy)`` crosses an obstacle circle or a wall."""
    dx, dy = qx - px, qy - py
    dd = dx * dx + dy * dy
    scale = dd if dd > 0 else 1.0
    for j in range(radii.shape[0]):
        cx, cy = centres[j, 0] - px, centres[j, 1] - py
        t = min(max((cx * dx + cy * dy) / scale, 0.0), 1.0)
        gx, gy = cx - t * dx, cy - t * dy
        if gx * gx + gy * gy < radii[j] * radii[j]:
            return True
    for k in range(wall_a.shape[0]):
        ax, ay = wall_a[k, 0], wall_a[k, 1]
        abx, aby = wall_b[k, 0] - ax, wall_b[k, 1] - ay
        d1 = abx * (py - ay) - aby * (px - ax)
        d2 = abx * (qy - ay) - aby * (qx - ax)
        d3 = dx * (ay - py) - dy * (ax - px)
        d4 = dx * (wall_b[k, 1] - py) - dy * (wall_b[k, 0] - px)
        if d1 * d2 < 0 and d3 * d4 < 0:
            return True
    return False


@kernel
def lines_blocked(
    p: np.ndarray,
    q: np.ndarray,
    centres: np.ndarray,
    radii: np.ndarray,
    wall_a: np.ndarray,
    wall_b: np.ndarray,
    out: np.ndarray,
) -> None:
    """:func:`blocked` for each row's segment ``p[i] -> q[i]``, into ``out``."""
    for i in range(p.shape[0]):
        out[i] = blocked(p[i, 0], p[i, 1], q[i, 0], q[i, 1], centres, radii, wall_a, wall_b)
