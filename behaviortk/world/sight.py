"""Line of sight: does the segment from each agent to its target cross an obstacle or a wall?

``line_blocked`` is the one entry point. The test per segment is the closest point
of the segment to each obstacle centre (strictly inside the radius blocks) and the
proper-crossing test of two segments for walls (touching an end does not block).
``blocked_reference`` states it in NumPy over whole (rows x shapes) arrays; it is
the specification the compiled kernel is tested against. The kernel, compiled
once by numba and cached on disk, walks the same arithmetic per segment and
stops at the first shape that blocks, so 10,000 rays among 100 shapes cost a
fraction of a sense phase instead of several (``benchmarks/bench_can_see.py``).
numba is imported on first use only: validating a file never loads it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.world.state import World

Array = np.ndarray

_kernel: Any = None


def blocked_reference(p: Array, q: Array, world: World) -> Array:
    """Per row, whether ``p -> q`` crosses an obstacle circle or a wall (NumPy, all pairs)."""
    n = p.shape[0]
    blocked = np.zeros(n, dtype=bool)
    d = q - p
    if world.obstacle_radius.size:
        c = world.obstacle_pos[None, :, :] - p[:, None, :]  # (n, M, 2)
        dd = (d * d).sum(axis=1)[:, None]
        t = np.clip((c * d[:, None, :]).sum(axis=2) / np.where(dd > 0, dd, 1.0), 0.0, 1.0)
        gap = c - t[:, :, None] * d[:, None, :]
        near = (gap * gap).sum(axis=2) < world.obstacle_radius[None, :] ** 2
        blocked |= near.any(axis=1)
    if world.wall_a.size:
        a, b = world.wall_a[None, :, :], world.wall_b[None, :, :]  # (1, K, 2)
        pp, qq = p[:, None, :], q[:, None, :]

        def cross(u: Array, v: Array) -> Array:
            return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]

        ab = b - a
        d1, d2 = cross(ab, pp - a), cross(ab, qq - a)
        d3, d4 = cross(qq - pp, a - pp), cross(qq - pp, b - pp)
        blocked |= ((d1 * d2 < 0) & (d3 * d4 < 0)).any(axis=1)
    return blocked


def _compile() -> Any:
    import numba

    @numba.njit(cache=True, nogil=True)
    def kernel(p, q, centres, radii, wall_a, wall_b, out):
        for i in range(p.shape[0]):
            px, py = p[i, 0], p[i, 1]
            dx, dy = q[i, 0] - px, q[i, 1] - py
            dd = dx * dx + dy * dy
            scale = dd if dd > 0 else 1.0
            hit = False
            for j in range(radii.shape[0]):
                cx, cy = centres[j, 0] - px, centres[j, 1] - py
                t = min(max((cx * dx + cy * dy) / scale, 0.0), 1.0)
                gx, gy = cx - t * dx, cy - t * dy
                if gx * gx + gy * gy < radii[j] * radii[j]:
                    hit = True
                    break
            if not hit:
                for k in range(wall_a.shape[0]):
                    ax, ay = wall_a[k, 0], wall_a[k, 1]
                    abx, aby = wall_b[k, 0] - ax, wall_b[k, 1] - ay
                    d1 = abx * (py - ay) - aby * (px - ax)
                    d2 = abx * (q[i, 1] - ay) - aby * (q[i, 0] - ax)
                    d3 = dx * (ay - py) - dy * (ax - px)
                    d4 = dx * (wall_b[k, 1] - py) - dy * (wall_b[k, 0] - px)
                    if d1 * d2 < 0 and d3 * d4 < 0:
                        hit = True
                        break
            out[i] = hit

    return kernel


def line_blocked(p: Array, q: Array, world: World) -> Array:
    """Per row, whether the segment ``p -> q`` crosses an obstacle circle or a wall."""
    global _kernel
    out = np.zeros(p.shape[0], dtype=bool)
    if not (world.obstacle_radius.size or world.wall_a.size) or not p.shape[0]:
        return out
    if _kernel is None:
        _kernel = _compile()
    f64 = np.float64
    _kernel(
        np.ascontiguousarray(p, f64),
        np.ascontiguousarray(q, f64),
        np.ascontiguousarray(world.obstacle_pos, f64).reshape(-1, 2),
        np.ascontiguousarray(world.obstacle_radius, f64),
        np.ascontiguousarray(world.wall_a, f64).reshape(-1, 2),
        np.ascontiguousarray(world.wall_b, f64).reshape(-1, 2),
        out,
    )
    return out
