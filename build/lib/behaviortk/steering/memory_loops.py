"""Primitives that remember per agent, on compiled kernels: the numba twin of
``primitives.wander`` (method ``jitter``) and ``primitives.path_following``.

Each row reads and writes the leaf's memory (``SteeringContext.state``: the
wander target, the waypoint cursor) as the NumPy path does, and its maths is the
formulas of ``steering/formulas.py`` (``wander_step``, ``wander_target``;
``on_path``, ``next_waypoint``, ``path_force``).
"""

from __future__ import annotations

from behaviortk.jit.compile import kernel
from behaviortk.steering.formulas import (
    next_waypoint,
    on_path,
    path_force,
    seek,
    wander_step,
    wander_target,
)
from behaviortk.steering.row_loops import put
from behaviortk.vec import normalize_xy


@kernel
def wander(
    rows, pos, vel, heading, max_speed, radius_of, memory, rand,
    in_radii, radius, distance, jitter, dt, displacement, weight, out,
):  # fmt: skip
    """Jitter the remembered circle target (``memory``: local, per global row), then seek it
    (or Buckland's displacement); ``rand``: the two random numbers of each row (``rows``
    order); ``in_radii``: radius, distance and jitter in agent radii."""
    for r in range(rows.shape[0]):
        i = rows[r]
        scale = radius_of[i] if in_radii else 1.0
        rad = radius * scale
        step = jitter * scale * dt
        lx, ly = wander_step(memory[i, 0], memory[i, 1], rand[r, 0], rand[r, 1], step, rad)
        memory[i, 0], memory[i, 1] = lx, ly
        hx, hy = normalize_xy(heading[i, 0], heading[i, 1])
        px, py = pos[i, 0], pos[i, 1]
        gx, gy = wander_target(lx, ly, distance * scale, px, py, hx, hy)
        if displacement:
            fx, fy = gx - px, gy - py
        else:
            fx, fy = seek(px, py, vel[i, 0], vel[i, 1], gx, gy, max_speed[i])
        put(out, r, fx, fy, weight)


@kernel
def path_following(
    rows, local, pos, vel, max_speed, tvalid, points, cursor,
    seek_distance, looped, deceleration, weight, out,
):  # fmt: skip
    """Buckland's FollowPath: advance the remembered waypoint (``cursor``, per global row),
    seek it (arrive at an open path's end); rows whose target is invalid get zero."""
    count = points.shape[0]
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        px, py = pos[i, 0], pos[i, 1]
        c = on_path(cursor[i], count)
        c = next_waypoint(c, px, py, points[c, 0], points[c, 1], seek_distance, count, looped)
        cursor[i] = c
        if not tvalid[g]:
            put(out, r, 0.0, 0.0, weight)
            continue
        fx, fy = path_force(
            px, py, vel[i, 0], vel[i, 1], points[c, 0], points[c, 1], max_speed[i],
            c, count, looped, deceleration,
        )  # fmt: skip
        put(out, r, fx, fy, weight)
