"""Avoiding the world's shapes on compiled kernels: the numba twin of
``kernels.obstacle_avoidance_force``, ``lj_force`` and ``wall_avoidance_force``.

The NumPy path evaluates each obstacle's (or wall's) formula on rows x obstacles
at once; these loops take one row and its obstacles in order, with the same
formulas (``steering/formulas.py``: ``obstacle_hit``/``obstacle_push``,
``lj_term``, ``feelers``/``wall_crossing``/``overshoot``/``wall_push``), the same
sums in the same order and the same ties (the first obstacle, wall or feeler
wins, as ``np.argmin``/``np.argmax`` pick). A term known before its formula runs
is not computed: an obstacle not in the detection box (never the nearest hit),
one beyond the Lennard-Jones cutoff (a zero term; the sums start at +0.0, so it
adds nothing), a feeler that crosses no wall (no overshoot). The results are
the same, without a ``pow`` or ``sqrt`` for every obstacle of the world per row.
"""

from __future__ import annotations

import numpy as np

from behaviortk.jit.compile import inline, kernel
from behaviortk.steering.formulas import (
    detection_box,
    feelers,
    lj_term,
    obstacle_hit,
    obstacle_near,
    obstacle_push,
    overshoot,
    wall_crossing,
    wall_push,
)
from behaviortk.steering.row_loops import put
from behaviortk.vec import length_xy, normalize_xy


@kernel
def obstacle_avoidance(
    rows, pos, vel, heading, max_speed, radius, obstacle_pos, obstacle_radius,
    min_length, braking_weight, weight, out,
):  # fmt: skip
    """Buckland's detection box: the nearest obstacle hit pushes (``rows``: global)."""
    m = obstacle_pos.shape[0]
    for r in range(rows.shape[0]):
        if m == 0:
            put(out, r, 0.0, 0.0, weight)
            continue
        i = rows[r]
        px, py = pos[i, 0], pos[i, 1]
        hx, hy = normalize_xy(heading[i, 0], heading[i, 1])
        box = detection_box(vel[i, 0], vel[i, 1], max_speed[i], min_length)
        best = np.inf
        k = 0
        for o in range(m):
            ox, oy, orad = obstacle_pos[o, 0], obstacle_pos[o, 1], obstacle_radius[o]
            if not obstacle_near(px, py, hx, hy, radius[i], box, ox, oy, orad):
                continue  # its hit is infinite: never the nearest
            ip = obstacle_hit(px, py, hx, hy, radius[i], box, ox, oy, orad)
            if ip < best:
                best, k = ip, o
        fx, fy = obstacle_push(
            px, py, hx, hy, radius[i], box, obstacle_pos[k, 0], obstacle_pos[k, 1],
            obstacle_radius[k], braking_weight, best,
        )  # fmt: skip
        put(out, r, fx, fy, weight)


@kernel
def lj_avoidance(
    rows, pos, heading, obstacle_pos, obstacle_radius, a, n_exp, b, m_exp, cutoff, weight, out,
):  # fmt: skip
    """Lennard-Jones repulsion, ``lj_term`` summed over the obstacles in order."""
    for r in range(rows.shape[0]):
        i = rows[r]
        px, py = pos[i, 0], pos[i, 1]
        hx, hy = normalize_xy(heading[i, 0], heading[i, 1])
        fx = fy = 0.0
        for o in range(obstacle_pos.shape[0]):
            ox, oy = obstacle_pos[o, 0], obstacle_pos[o, 1]
            if length_xy(px - ox, py - oy) > cutoff:
                continue  # its term is a zero; the sums start at +0.0, so it adds nothing
            tx, ty = lj_term(
                px, py, -hx, -hy, ox, oy, obstacle_radius[o], a, n_exp, b, m_exp, cutoff
            )
            fx += tx
            fy += ty
        put(out, r, fx, fy, weight)


@inline
def _deepest(px, py, ex, ey, wall_a, wall_b):  # fmt: skip
    """One feeler's overshoot past the first wall it crosses, and that wall."""
    t_best = np.inf
    w_best = 0
    for w in range(wall_a.shape[0]):
        t = wall_crossing(px, py, ex, ey, wall_a[w, 0], wall_a[w, 1], wall_b[w, 0], wall_b[w, 1])
        if t < t_best:
            t_best, w_best = t, w
    if t_best == np.inf:
        return 0.0, w_best  # overshoot() of no crossing
    return overshoot(px, py, ex, ey, t_best), w_best


@kernel
def wall_avoidance(
    rows, pos, heading, wall_a, wall_b, wall_normal, front, lc, ls, rc, rs, weight, out,
):  # fmt: skip
    """Buckland's three feelers (``kernels.side_turns``: ``lc, ls, rc, rs``); the deepest
    overshoot pushes along its wall's normal."""
    for r in range(rows.shape[0]):
        if wall_a.shape[0] == 0:
            put(out, r, 0.0, 0.0, weight)
            continue
        i = rows[r]
        px, py = pos[i, 0], pos[i, 1]
        hx, hy = normalize_xy(heading[i, 0], heading[i, 1])
        fx, fy, lx, ly, rx, ry = feelers(px, py, hx, hy, front, lc, ls, rc, rs)
        depth, wall = _deepest(px, py, fx, fy, wall_a, wall_b)
        d, w = _deepest(px, py, lx, ly, wall_a, wall_b)
        if d > depth:
            depth, wall = d, w
        d, w = _deepest(px, py, rx, ry, wall_a, wall_b)
        if d > depth:
            depth, wall = d, w
        nx, ny = wall_normal[wall, 0], wall_normal[wall, 1]
        push_x, push_y = wall_push(px, py, wall_a[wall, 0], wall_a[wall, 1], nx, ny, depth)
        put(out, r, push_x, push_y, weight)
