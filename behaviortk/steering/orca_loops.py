"""ORCA on compiled kernels: the numba twin of ``steering/orca.py``, one row at a time.

RVO2's ``Agent::computeNewVelocity`` as it is written: the row's obstacle
neighbours sorted nearest first (insertion, ties in candidate order: circles,
then walls), their lines, one line per neighbour pair in pair order, then
linear programs 2 and 3 with their early returns. The per-line maths is the
formulas of ``orca_formulas.py``; the NumPy reference runs the same lines in the
same order over all rows at once, so both give the same bits.
"""

from __future__ import annotations

import numpy as np

from behaviortk.jit.compile import inline, kernel
from behaviortk.steering.orca_formulas import (
    RVO_EPSILON,
    agent_line,
    circle_dist_sq,
    contact_line,
    covered,
    det,
    lp1_bounds,
    lp1_pick,
    lp_start,
    preferred,
    projected_line,
    segment_dist_sq,
    unit,
    violated_by,
    wall_line,
)
from behaviortk.steering.row_loops import put


@inline
def lp1(point, direction, exists, line, top, ox, oy, opt_direction):  # fmt: skip
    """linearProgram1 on ``line`` (lines before it that exist bound it): ok, x, y."""
    px, py = point[line, 0], point[line, 1]
    dx, dy = direction[line, 0], direction[line, 1]
    ok, t_left, t_right = lp1_bounds(px, py, dx, dy, top)
    if not ok:
        return False, 0.0, 0.0
    for i in range(line):
        if not exists[i]:
            continue
        ex, ey = direction[i, 0], direction[i, 1]
        den = det(dx, dy, ex, ey)
        num = det(ex, ey, px - point[i, 0], py - point[i, 1])
        if np.abs(den) <= RVO_EPSILON:
            if num < 0.0:
                return False, 0.0, 0.0
            continue
        t = num / den
        if den >= 0.0:
            if t < t_right:
                t_right = t
        elif t_left < t:
            t_left = t
        if t_left > t_right:
            return False, 0.0, 0.0
    rx, ry = lp1_pick(px, py, dx, dy, t_left, t_right, ox, oy, opt_direction)
    return True, rx, ry


@inline
def lp2(point, direction, exists, width, top, ox, oy, opt_direction):  # fmt: skip
    """linearProgram2 over the first ``width`` lines: x, y, the line it failed on (or width)."""
    rx, ry = lp_start(ox, oy, top, opt_direction)
    for i in range(width):
        if not exists[i]:
            continue
        if violated_by(direction[i, 0], direction[i, 1], point[i, 0], point[i, 1], rx, ry) > 0.0:
            ok, nx, ny = lp1(point, direction, exists, i, top, ox, oy, opt_direction)
            if not ok:
                return rx, ry, i
            rx, ry = nx, ny
    return rx, ry, width


@inline
def lp3(point, direction, count, obstacles, begin, top, rx, ry, pp, pd, pe):  # fmt: skip
    """linearProgram3 from line ``begin`` (``pp``, ``pd``, ``pe``: scratch for its lines)."""
    distance = 0.0
    for i in range(begin, count):
        pix, piy = point[i, 0], point[i, 1]
        dix, diy = direction[i, 0], direction[i, 1]
        if violated_by(dix, diy, pix, piy, rx, ry) > distance:
            for j in range(count):
                pe[j] = j < obstacles
                pp[j, 0], pp[j, 1] = point[j, 0], point[j, 1]
                pd[j, 0], pd[j, 1] = direction[j, 0], direction[j, 1]
            for j in range(obstacles, i):
                keep, x, y, ux, uy = projected_line(
                    pix, piy, dix, diy, point[j, 0], point[j, 1], direction[j, 0], direction[j, 1]
                )
                pp[j, 0], pp[j, 1], pd[j, 0], pd[j, 1] = x, y, ux, uy
                pe[j] = keep
            nx, ny, fail = lp2(pp, pd, pe, count, top, -diy, dix, True)
            if fail >= count:
                rx, ry = nx, ny
            distance = violated_by(dix, diy, pix, piy, rx, ry)
    return rx, ry


@kernel
def orca(
    rows, local, offsets, nb_j, nb_d, reciprocal, pos, vel, radius, max_speed, mass, target,
    valid, circles, radii, wall_a, wall_b, horizon, obstacle_horizon, cruise, slowing_radius,
    tolerance, keep_apart, dt, weight, out,
):  # fmt: skip
    """``orca.orca`` for global ``rows`` (``local``: their rows in the group, which index
    ``offsets`` and the target's facts); ``cruise`` the preferred speed (-1: max speed);
    ``keep_apart`` the hard contact lines (``orca.contact_lines``); ``dt`` the tick
    (``orca.time_step``)."""
    m, walls = circles.shape[0], wall_a.shape[0]
    widest = 0
    for r in range(rows.shape[0]):
        widest = max(widest, offsets[local[r] + 1] - offsets[local[r]])
    width = m + walls + (2 if keep_apart else 1) * widest
    point, direction = np.zeros((width, 2)), np.zeros((width, 2))
    pp, pd = np.zeros((width, 2)), np.zeros((width, 2))
    exists, pe = np.ones(width, dtype=np.bool_), np.zeros(width, dtype=np.bool_)
    keys, order = np.zeros(m + walls), np.zeros(m + walls, dtype=np.int64)
    ends = np.zeros((walls, 4))
    inv_h, inv_obst, inv_dt = 1.0 / horizon, 1.0 / obstacle_horizon, 1.0 / dt
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        if not valid[g]:
            put(out, r, 0.0, 0.0, weight)
            continue
        px, py, vx, vy = pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1]
        top, rad = max_speed[i], radius[i]
        speed = top if cruise < 0.0 else cruise
        ox, oy = preferred(px, py, target[g, 0], target[g, 1], speed, slowing_radius, tolerance)
        # obstacle neighbours, nearest first (RVO2's insertObstacleNeighbor)
        reach = obstacle_horizon * top + rad
        reach_sq = reach * reach
        found = 0
        for c in range(m + walls):
            if c < m:
                key = circle_dist_sq(px, py, circles[c, 0], circles[c, 1], radii[c])
            else:
                w = c - m
                ax, ay, bx, by = wall_a[w, 0], wall_a[w, 1], wall_b[w, 0], wall_b[w, 1]
                if det(ax - px, ay - py, bx - ax, by - ay) < 0.0:
                    ends[w, 0], ends[w, 1], ends[w, 2], ends[w, 3] = ax, ay, bx, by
                elif det(bx - px, by - py, ax - bx, ay - by) < 0.0:
                    ends[w, 0], ends[w, 1], ends[w, 2], ends[w, 3] = bx, by, ax, ay
                else:
                    continue
                key = segment_dist_sq(px, py, ends[w, 0], ends[w, 1], ends[w, 2], ends[w, 3])
            if not key < reach_sq:
                continue
            at = found
            while at > 0 and key < keys[at - 1]:
                keys[at], order[at] = keys[at - 1], order[at - 1]
                at -= 1
            keys[at], order[at] = key, c
            found += 1
        count = 0
        for s in range(found):
            c = order[s]
            if c < m:
                x, y, dx, dy = agent_line(
                    circles[c, 0] - px, circles[c, 1] - py, vx - 0.0, vy - 0.0, vx, vy,
                    rad + radii[c], inv_obst, inv_dt, 1.0,
                )  # fmt: skip
            else:
                w = c - m
                sx, sy, ex, ey = ends[w, 0], ends[w, 1], ends[w, 2], ends[w, 3]
                r1x, r1y, r2x, r2y = sx - px, sy - py, ex - px, ey - py
                done = False
                for q in range(count):
                    if covered(
                        inv_obst, r1x, r1y, r2x, r2y, rad, point[q, 0], point[q, 1],
                        direction[q, 0], direction[q, 1],
                    ):  # fmt: skip
                        done = True
                        break
                if done:
                    continue
                ux, uy = unit(ex - sx, ey - sy)
                adds, x, y, dx, dy = wall_line(
                    px, py, vx, vy, rad, inv_obst, sx, sy, ex, ey, ux, uy
                )
                if not adds:
                    continue
            point[count, 0], point[count, 1] = x, y
            direction[count, 0], direction[count, 1] = dx, dy
            count += 1
        if keep_apart:
            for p in range(offsets[g], offsets[g + 1]):
                j = nb_j[p]
                share = 0.5 if reciprocal[j] else 1.0
                binds, x, y, dx, dy = contact_line(
                    nb_d[p, 0], nb_d[p, 1], rad + radius[j], share, inv_dt, top
                )
                if binds:
                    point[count, 0], point[count, 1] = x, y
                    direction[count, 0], direction[count, 1] = dx, dy
                    count += 1
        obstacles = count
        for p in range(offsets[g], offsets[g + 1]):
            j = nb_j[p]
            share = 0.5 if reciprocal[j] else 1.0
            x, y, dx, dy = agent_line(
                nb_d[p, 0], nb_d[p, 1], vx - vel[j, 0], vy - vel[j, 1], vx, vy,
                rad + radius[j], inv_h, inv_dt, share,
            )  # fmt: skip
            point[count, 0], point[count, 1] = x, y
            direction[count, 0], direction[count, 1] = dx, dy
            count += 1
        nx, ny, fail = lp2(point, direction, exists, count, top, ox, oy, False)
        if fail < count:
            nx, ny = lp3(point, direction, count, obstacles, fail, top, nx, ny, pp, pd, pe)
        scale = mass[i] / dt
        put(out, r, (nx - vx) * scale, (ny - vy) * scale, weight)
