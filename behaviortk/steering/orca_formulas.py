"""ORCA's per-line maths, once: the formulas both paths of ``orca`` run.

Transcribed from the RVO2 library's ``Agent::computeNewVelocity`` and its
``linearProgram1/2/3`` (van den Berg, Guy, Lin & Manocha, "Reciprocal n-Body
Collision Avoidance", ISRR 2011), in RVO2's order of operations (its ``v / s``
is ``v * (1 / s)``), on doubles. A line is a point and a unit direction; the
permitted half-plane is on the line's left. Each formula runs on NumPy columns
(``steering/orca.py``, rows at once) and per row in ``orca_loops.py``; branches
are ``select``, so a compiled loop computes only the arm it keeps.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.steering.formulas import millington_speed
from behaviortk.vec import formula, normalize_xy, select

TOUCHING = 1e-9
"""Bodies closer than their combined radius by at most this share of it touch (rounding of
a pair kept exactly apart): the keep-apart line holds them at that distance."""

RVO_EPSILON = 1e-5
"""RVO2's ``RVO_EPSILON``: lines closer to parallel than this are treated as parallel."""


@formula
def det(ax: Any, ay: Any, bx: Any, by: Any) -> Any:
    """RVO2's ``det``: the 2-D cross product ``a.x * b.y - a.y * b.x``."""
    return ax * by - ay * bx


@formula
def not_(c: Any) -> Any:
    """Logical not of a condition (``~`` on columns would be bitwise on a scalar bool)."""
    return select(c, False, True)


@formula
def unit(x: Any, y: Any) -> tuple[Any, Any]:
    """RVO2's ``normalize``: ``v * (1 / |v|)`` (a zero vector stays zero)."""
    n = np.sqrt(x * x + y * y)
    inv = 1.0 / select(n > 0.0, n, 1.0)
    return x * inv, y * inv


@formula
def preferred(
    px: Any, py: Any, tx: Any, ty: Any, top: Any, slowing_radius: Any, tolerance: Any
) -> tuple[Any, Any]:
    """The preferred velocity: toward the target at max speed, slowing as Millington's
    Arrive does inside ``slowing_radius`` (``formulas.millington_speed``)."""
    dx, dy = tx - px, ty - py
    speed = millington_speed(np.sqrt(dx * dx + dy * dy), top, slowing_radius, tolerance)
    ux, uy = normalize_xy(dx, dy)
    return ux * speed, uy * speed


@formula
def agent_line(
    rpx: Any, rpy: Any, rvx: Any, rvy: Any, vx: Any, vy: Any, combined: Any, inv_horizon: Any,
    inv_dt: Any, share: Any,
) -> tuple[Any, Any, Any, Any]:  # fmt: skip
    """The ORCA line of one neighbour (RVO2's agent loop): ``rp`` its position relative to
    ours, ``rv`` our velocity relative to its, ``share`` our part of the avoidance (1/2
    when it avoids too, 1 when it does not). Overlapping already: the cut-off circle of
    one tick. Returns point and direction."""
    dist_sq = rpx * rpx + rpy * rpy
    csq = combined * combined
    apart = dist_sq > csq
    inv = select(apart, inv_horizon, inv_dt)
    wx = rvx - inv * rpx
    wy = rvy - inv * rpy
    wl_sq = wx * wx + wy * wy
    dot = wx * rpx + wy * rpy
    on_circle = select(apart, (dot < 0.0) & (dot * dot > csq * wl_sq), True)
    wl = np.sqrt(wl_sq)
    inv_wl = 1.0 / select(wl > 0.0, wl, 1.0)
    ux, uy = wx * inv_wl, wy * inv_wl
    grow = combined * inv - wl
    leg = np.sqrt(select(apart, dist_sq - csq, 0.0))
    inv_d = 1.0 / select(dist_sq > 0.0, dist_sq, 1.0)
    left = det(rpx, rpy, wx, wy) > 0.0
    lx = select(left, (rpx * leg - rpy * combined) * inv_d, -((rpx * leg + rpy * combined) * inv_d))
    ly = select(
        left, (rpx * combined + rpy * leg) * inv_d, -((-rpx * combined + rpy * leg) * inv_d)
    )
    proj = rvx * lx + rvy * ly
    dx = select(on_circle, uy, lx)
    dy = select(on_circle, -ux, ly)
    ox = select(on_circle, grow * ux, proj * lx - rvx)
    oy = select(on_circle, grow * uy, proj * ly - rvy)
    return vx + share * ox, vy + share * oy, dx, dy


@formula
def contact_line(
    rpx: Any, rpy: Any, combined: Any, share: Any, inv_dt: Any, top: Any
) -> tuple[Any, Any, Any, Any, Any]:
    """The keep-apart line of one neighbour (behaviortk's, not RVO2's): close at most
    ``share`` of the gap between the bodies this tick, ``u . v <= share * gap / dt`` with
    ``u`` the unit offset to the neighbour. When both of a pair keep their half, the
    bodies cannot meet by the tick's end (``|d'| >= |d| - u . dv >= r_i + r_j``), and
    standing still always keeps it, so it is safe to hold hard. Bodies touching (within
    :data:`TOUCHING`, rounding) may not come nearer. ``binds`` is False where they overlap
    more (RVO2's collision case parts them) or the line is beyond the max speed ``top``
    (it could never bind). Returns binds, point and direction."""
    dist_sq = rpx * rpx + rpy * rpy
    dist = np.sqrt(dist_sq)
    gap = dist - combined
    reach = share * np.maximum(gap, 0.0) * inv_dt
    binds = (gap >= -TOUCHING * combined) & (reach < top) & (dist > 0.0)
    inv = 1.0 / select(dist > 0.0, dist, 1.0)
    ux, uy = rpx * inv, rpy * inv
    return binds, reach * ux, reach * uy, -uy, ux


@formula
def segment_dist_sq(px: Any, py: Any, ax: Any, ay: Any, bx: Any, by: Any) -> Any:
    """RVO2's ``insertObstacleNeighbor``: squared distance from ``p`` to segment ``ab``."""
    ex, ey = bx - ax, by - ay
    r = ((px - ax) * ex + (py - ay) * ey) / (ex * ex + ey * ey)
    cx = select(r < 0.0, ax, select(r > 1.0, bx, ax + r * ex))
    cy = select(r < 0.0, ay, select(r > 1.0, by, ay + r * ey))
    return (px - cx) * (px - cx) + (py - cy) * (py - cy)


@formula
def circle_dist_sq(px: Any, py: Any, cx: Any, cy: Any, radius: Any) -> Any:
    """Squared distance from ``p`` to a circle obstacle's edge (0 inside)."""
    dx, dy = cx - px, cy - py
    gap = np.sqrt(dx * dx + dy * dy) - radius
    gap = select(gap > 0.0, gap, 0.0)
    return gap * gap


@formula
def covered(
    inv: Any, r1x: Any, r1y: Any, r2x: Any, r2y: Any, radius: Any, lpx: Any, lpy: Any,
    ldx: Any, ldy: Any,
) -> Any:  # fmt: skip
    """RVO2's ``alreadyCovered``: both ends of a wall (relative positions ``r1``, ``r2``)
    lie beyond an obstacle line already made, so the wall adds no line."""
    a = det(inv * r1x - lpx, inv * r1y - lpy, ldx, ldy) - inv * radius >= -RVO_EPSILON
    b = det(inv * r2x - lpx, inv * r2y - lpy, ldx, ldy) - inv * radius >= -RVO_EPSILON
    return a & b


@formula
def wall_line(
    px: Any, py: Any, vx: Any, vy: Any, radius: Any, inv: Any, ax: Any, ay: Any, bx: Any,
    by: Any, ex: Any, ey: Any,
) -> tuple[Any, Any, Any, Any, Any]:  # fmt: skip
    """The ORCA line of a wall seen from its right: RVO2's obstacle loop for the two-vertex
    obstacle ``a -> b`` (both vertices convex; ``e`` = unit ``b - a``, the other edge's
    direction ``-e``), ``inv`` = 1 / obstacle time horizon. Returns whether it adds a line
    (a foreign leg adds none), then point and direction."""
    r1x, r1y = ax - px, ay - py
    r2x, r2y = bx - px, by - py
    d1 = r1x * r1x + r1y * r1y
    d2 = r2x * r2x + r2y * r2y
    rsq = radius * radius
    ovx, ovy = bx - ax, by - ay
    s = (-r1x * ovx + -r1y * ovy) / (ovx * ovx + ovy * ovy)
    qx, qy = -r1x - s * ovx, -r1y - s * ovy
    dline = qx * qx + qy * qy
    # collisions now: with the left vertex, the right vertex, the segment
    hit_a = (s < 0.0) & (d1 <= rsq)
    hit_b = (s > 1.0) & (d2 <= rsq)
    hit_s = (s >= 0.0) & (s <= 1.0) & (dline <= rsq)
    hax, hay = unit(-r1y, r1x)
    hbx, hby = unit(-r2y, r2x)
    b_adds = det(r2x, r2y, -ex, -ey) >= 0.0
    # legs: seen obliquely, both from one vertex
    left_only = (s < 0.0) & (dline <= rsq)
    right_only = (s > 1.0) & (dline <= rsq)
    same = left_only | right_only
    q1x, q1y = select(right_only, r2x, r1x), select(right_only, r2y, r1y)
    q2x, q2y = select(left_only, r1x, r2x), select(left_only, r1y, r2y)
    e1x, e1y = select(right_only, -ex, ex), select(right_only, -ey, ey)
    e2x, e2y = select(left_only, ex, -ex), select(left_only, ey, -ey)
    dq1 = select(right_only, d2, d1)
    dq2 = select(left_only, d1, d2)
    leg1 = np.sqrt(select(dq1 > rsq, dq1 - rsq, 0.0))
    leg2 = np.sqrt(select(dq2 > rsq, dq2 - rsq, 0.0))
    inv1 = 1.0 / select(dq1 > 0.0, dq1, 1.0)
    inv2 = 1.0 / select(dq2 > 0.0, dq2, 1.0)
    llx, lly = (q1x * leg1 - q1y * radius) * inv1, (q1x * radius + q1y * leg1) * inv1
    rlx, rly = (q2x * leg2 + q2y * radius) * inv2, (-q2x * radius + q2y * leg2) * inv2
    foreign_l = det(llx, lly, e1x, e1y) >= 0.0
    llx, lly = select(foreign_l, e1x, llx), select(foreign_l, e1y, lly)
    foreign_r = det(rlx, rly, e2x, e2y) <= 0.0
    rlx, rly = select(foreign_r, e2x, rlx), select(foreign_r, e2y, rly)
    # cut-off centres; project the velocity on the closest part of the obstacle
    lcx, lcy = inv * q1x, inv * q1y
    rcx, rcy = inv * q2x, inv * q2y
    cvx, cvy = rcx - lcx, rcy - lcy
    cv_sq = cvx * cvx + cvy * cvy
    t = select(same, 0.5, ((vx - lcx) * cvx + (vy - lcy) * cvy) / select(cv_sq > 0.0, cv_sq, 1.0))
    t_l = (vx - lcx) * llx + (vy - lcy) * lly
    t_r = (vx - rcx) * rlx + (vy - rcy) * rly
    k = radius * inv
    on_left = ((t < 0.0) & (t_l < 0.0)) | (same & (t_l < 0.0) & (t_r < 0.0))
    on_right = (t > 1.0) & (t_r < 0.0)
    cx = select(on_left, lcx, rcx)
    cy = select(on_left, lcy, rcy)
    wux, wuy = unit(vx - cx, vy - cy)
    far = (t < 0.0) | (t > 1.0) | same
    ds_cut = select(far, np.inf, _dist_sq(vx - (lcx + t * cvx), vy - (lcy + t * cvy)))
    ds_l = select(t_l < 0.0, np.inf, _dist_sq(vx - (lcx + t_l * llx), vy - (lcy + t_l * lly)))
    ds_r = select(t_r < 0.0, np.inf, _dist_sq(vx - (rcx + t_r * rlx), vy - (rcy + t_r * rly)))
    on_cut = (ds_cut <= ds_l) & (ds_cut <= ds_r)
    on_leg_l = ds_l <= ds_r
    # the leg or cut-off line chosen: direction, and the centre it is offset from
    gx = select(on_cut, -e1x, select(on_leg_l, llx, -rlx))
    gy = select(on_cut, -e1y, select(on_leg_l, lly, -rly))
    ox = select(on_cut | on_leg_l, lcx, rcx)
    oy = select(on_cut | on_leg_l, lcy, rcy)
    leg_adds = select(on_cut, True, select(on_leg_l, not_(foreign_l), not_(foreign_r)))
    circle = on_left | on_right
    dx = select(circle, wuy, gx)
    dy = select(circle, -wux, gy)
    pointx = select(circle, cx + k * wux, ox + k * -gy)
    pointy = select(circle, cy + k * wuy, oy + k * gx)
    # the cases in RVO2's order
    adds = select(hit_a, True, select(hit_b, b_adds, select(hit_s, True, circle | leg_adds)))
    now = hit_a | hit_b | hit_s
    dx = select(hit_a, hax, select(hit_b, hbx, select(hit_s, -ex, dx)))
    dy = select(hit_a, hay, select(hit_b, hby, select(hit_s, -ey, dy)))
    return adds, select(now, 0.0, pointx), select(now, 0.0, pointy), dx, dy


@formula
def _dist_sq(x: Any, y: Any) -> Any:
    return x * x + y * y


@formula
def violated_by(dx: Any, dy: Any, px: Any, py: Any, rx: Any, ry: Any) -> Any:
    """How far ``r`` lies right of the line (positive: outside its half-plane)."""
    return det(dx, dy, px - rx, py - ry)


@formula
def lp_start(ox: Any, oy: Any, top: Any, direction: Any) -> tuple[Any, Any]:
    """linearProgram2's first result: the optimisation direction at max speed, or the
    optimal velocity clamped to the max-speed circle."""
    if direction:  # a constant of the call
        return ox * top, oy * top
    outside = ox * ox + oy * oy > top * top
    ux, uy = unit(ox, oy)
    return select(outside, ux * top, ox), select(outside, uy * top, oy)


@formula
def lp1_bounds(px: Any, py: Any, dx: Any, dy: Any, top: Any) -> tuple[Any, Any, Any]:
    """linearProgram1's start: whether the max-speed circle meets the line, and the
    parameters ``t_left``, ``t_right`` where it does."""
    dot = px * dx + py * dy
    disc = dot * dot + top * top - (px * px + py * py)
    ok = disc >= 0.0
    root = np.sqrt(select(ok, disc, 0.0))
    return ok, -dot - root, -dot + root


@formula
def lp1_pick(
    px: Any, py: Any, dx: Any, dy: Any, t_left: Any, t_right: Any, ox: Any, oy: Any,
    direction: Any,
) -> tuple[Any, Any]:  # fmt: skip
    """linearProgram1's result on its line: the extreme along the optimisation direction
    (``direction``), or the point closest to the optimal velocity within the bounds."""
    if direction:  # a constant of the call
        t = select(ox * dx + oy * dy > 0.0, t_right, t_left)
        return px + t * dx, py + t * dy
    t = dx * (ox - px) + dy * (oy - py)
    t = select(t < t_left, t_left, select(t > t_right, t_right, t))
    return px + t * dx, py + t * dy


@formula
def projected_line(
    pix: Any, piy: Any, dix: Any, diy: Any, pjx: Any, pjy: Any, djx: Any, djy: Any
) -> tuple[Any, Any, Any, Any, Any]:
    """linearProgram3's line between lines ``i`` and ``j``: whether it is made (parallel
    lines of one direction make none), its point and direction."""
    determinant = det(dix, diy, djx, djy)
    parallel = np.abs(determinant) <= RVO_EPSILON
    keep = select(parallel, dix * djx + diy * djy <= 0.0, True)
    step = det(djx, djy, pix - pjx, piy - pjy) / select(parallel, 1.0, determinant)
    x = select(parallel, 0.5 * (pix + pjx), pix + step * dix)
    y = select(parallel, 0.5 * (piy + pjy), piy + step * diy)
    ux, uy = unit(djx - dix, djy - diy)
    return keep, x, y, ux, uy
