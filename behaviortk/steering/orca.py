"""The ``orca`` steering primitive: optimal reciprocal collision avoidance.

Model, the NumPy reference (rows at once: lines built per neighbour or obstacle
slot, the linear programs run over every row together, line by line, masked where
RVO2 returns early) and who avoids reciprocally. The per-line maths is
``orca_formulas.py``; its numba twin, one row at a time, ``orca_loops.py``.
Both build the same lines in the same order and take the same branches, so they
give the same bits (``tests/test_orca.py``).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from behaviortk.format.fields import PNonNeg, PPositive, doc
from behaviortk.format.nodes import Target
from behaviortk.registry import Registries
from behaviortk.steering import kernels as k
from behaviortk.steering.context import Steering, SteeringContext
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
from behaviortk.steering.primitives import TargetedModel, _pairs, arrive_done
from behaviortk.vec import EPS as VEC_EPS
from behaviortk.vec import Array

NEIGHBOURS_OF = "any"
"""ORCA avoids agents of every group (the neighbour query's ``of``)."""


class Orca(TargetedModel):
    """Head for the target while avoiding agents, obstacles and walls by ORCA.

    Van den Berg, Guy, Lin & Manocha, "Reciprocal n-Body Collision Avoidance"
    (ISRR 2011), as the RVO2 library's ``Agent::computeNewVelocity`` computes it
    (linear programs 1, 2 and 3, transcribed). The preferred velocity points at the
    target at max speed (or ``preferred_speed``), slowing inside ``slowing_radius`` as Millington's Arrive
    does. Each neighbour in view (the group's view distance, field of view and
    max_neighbours, of any group) adds a half-plane of permitted velocities: an
    agent that runs ``orca`` this tick takes half the avoidance, any other agent
    (an external player, another behaviour) is avoided without reciprocity, this
    agent taking all of it. The world's walls are RVO2's two-vertex obstacles
    (both sides, within ``obstacle_time_horizon * max_speed + radius``); a circle
    obstacle is a still agent of its radius avoided without reciprocity within
    the obstacle time horizon (RVO2 has polygons only). The new velocity is the
    permitted one closest to the preferred one within max speed (or, where none
    is permitted, linear program 3's least violation, obstacles kept hard). Where a
    crowd leaves no permitted velocity RVO2 lets bodies overlap a little (its own
    Circle example: 0.21 at 60 agents, 0.73 at 400, radius 1.5); with ``keep_apart``
    (an addition to RVO2, off by default) each neighbour near enough to be met this
    tick also adds a hard line, close at most this agent's share of the gap, so bodies
    that are apart never overlap, at the price of jams where a crowd presses in from
    every side. The force is the one that reaches the new velocity
    this tick, ``m (v_new - v) / dt``, truncated by max force like every force: bodies
    keep apart while max force allows it.
    Within ``tolerance`` of the target the leaf reports SUCCESS, as ``arrive`` does.
    """

    type: Literal["orca"] = "orca"
    target: Target = doc("Where to go")
    time_horizon: PPositive = doc(
        "Velocities are safe from other agents for at least this long (RVO2's timeHorizon)",
        2.0,
        unit="s",
    )
    obstacle_time_horizon: PPositive = doc(
        "Velocities are safe from obstacles and walls for at least this long "
        "(RVO2's timeHorizonObst)",
        2.0,
        unit="s",
    )
    preferred_speed: PPositive | None = doc(
        "Speed of the preferred velocity (null = max speed). Below max speed it leaves room "
        "to speed up when dodging, as RVO2's examples do (preferred 1, max 2)",
        None,
        unit="world units / s",
    )
    slowing_radius: PNonNeg = doc(
        "The preferred speed slows within this distance of the target (Millington's Arrive)",
        100.0,
        unit="world units",
    )
    tolerance: PNonNeg = doc(
        "Arrived (SUCCESS, preferred velocity zero) within this distance",
        1.0,
        unit="world units",
    )
    keep_apart: bool = doc(
        "Bodies that are apart never come to overlap (behaviortk's addition to RVO2, which "
        "lets them where a crowd leaves no permitted velocity): each neighbour near enough "
        "to be met this tick adds a hard line, close at most your share of the gap (half "
        "when it runs orca too), kept like an obstacle's through linear program 3. In a "
        "crowd packed from every side (RVO2's Circle) nobody may then slip past: it jams. "
        "false: RVO2's velocities exactly",
        False,
    )


# ------------------------------------------------------------ who avoids
def reciprocal(requests: Any, rows: np.ndarray, n_all: int) -> np.ndarray:
    """Which agents run ``orca`` this tick (bool over all agents): they take half of each
    avoidance. Without the tick's requests (a leaf run alone), the leaf's own ``rows``."""
    if requests is None:
        out = np.zeros(n_all, dtype=bool)
        out[rows] = True
        return out

    def compute() -> np.ndarray:
        found = np.zeros(n_all, dtype=bool)
        for _, _, asked in requests.leaves("orca"):
            found[asked] = True
        return found

    answer: np.ndarray = requests.once("orca", compute)
    return answer


# ------------------------------------------------------------------ lines
class Lines:
    """Each row's ORCA lines: obstacles' first (``obstacles`` of them), then neighbours'."""

    def __init__(self, n: int, width: int) -> None:
        self.point = np.zeros((n, width, 2))
        self.direction = np.zeros((n, width, 2))
        self.count = np.zeros(n, dtype=np.int64)
        self.obstacles = np.zeros(n, dtype=np.int64)

    def add(self, rows: np.ndarray, x: Array, y: Array, dx: Array, dy: Array) -> None:
        at = self.count[rows]
        self.point[rows, at, 0], self.point[rows, at, 1] = x, y
        self.direction[rows, at, 0], self.direction[rows, at, 1] = dx, dy
        self.count[rows] += 1


def obstacle_order(
    pos: Array, top: Array, radius: Array, horizon: float, circles: Array, radii: Array,
    wall_a: Array, wall_b: Array,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """RVO2's obstacle neighbours of each row, nearest first: the circles, then each wall's
    edge that has the agent on its right, within ``horizon * max_speed + radius``.
    Returns the order of candidates (circles ``0..M-1``, walls after), how many are in
    range, and each wall's start and end as seen from each row."""
    px, py = pos[:, 0:1], pos[:, 1:2]
    reach = horizon * top + radius
    reach_sq = (reach * reach)[:, None]
    d_c = circle_dist_sq(px, py, circles[None, :, 0], circles[None, :, 1], radii[None, :])
    ax, ay, bx, by = wall_a[None, :, 0], wall_a[None, :, 1], wall_b[None, :, 0], wall_b[None, :, 1]
    forward = det(ax - px, ay - py, bx - ax, by - ay) < 0.0
    backward = np.logical_not(forward) & (det(bx - px, by - py, ax - bx, ay - by) < 0.0)
    sx, sy = np.where(backward, bx, ax), np.where(backward, by, ay)
    ex, ey = np.where(backward, ax, bx), np.where(backward, ay, by)
    d_w = segment_dist_sq(px, py, sx, sy, ex, ey)
    key = np.concatenate(
        [
            np.where(d_c < reach_sq, d_c, np.inf),
            np.where((forward | backward) & (d_w < reach_sq), d_w, np.inf),
        ],
        axis=1,
    )
    order = np.argsort(key, axis=1, kind="stable")
    return order, (key < np.inf).sum(axis=1), np.stack([sx, sy], -1), np.stack([ex, ey], -1)


def obstacle_lines(
    lines: Lines, pos: Array, vel: Array, radius: Array, top: Array, horizon: float,
    inv_dt: float, circles: Array, radii: Array, wall_a: Array, wall_b: Array,
) -> None:  # fmt: skip
    """Each row's obstacle lines, nearest obstacle first (RVO2's obstacle loop)."""
    n, m = pos.shape[0], circles.shape[0]
    inv_horizon = 1.0 / horizon
    order, found, start, end = obstacle_order(
        pos, top, radius, horizon, circles, radii, wall_a, wall_b
    )
    for slot in range(int(found.max()) if n else 0):
        rows = np.flatnonzero(slot < found)
        pick = order[rows, slot]
        circle = pick < m
        c_rows, c = rows[circle], pick[circle]
        if c_rows.size:
            vx, vy = vel[c_rows, 0], vel[c_rows, 1]
            x, y, dx, dy = agent_line(
                circles[c, 0] - pos[c_rows, 0], circles[c, 1] - pos[c_rows, 1], vx - 0.0,
                vy - 0.0, vx, vy, radius[c_rows] + radii[c], inv_horizon, inv_dt, 1.0,
            )  # fmt: skip
            lines.add(c_rows, x, y, dx, dy)
        w_rows, w = rows[~circle], pick[~circle] - m
        if w_rows.size:
            _wall_lines(
                lines, w_rows, start[w_rows, w], end[w_rows, w], pos, vel, radius, inv_horizon
            )
    lines.obstacles[:] = lines.count


def _wall_lines(
    lines: Lines, rows: np.ndarray, start: Array, end: Array, pos: Array, vel: Array,
    radius: Array, inv: float,
) -> None:  # fmt: skip
    px, py = pos[rows, 0], pos[rows, 1]
    r1x, r1y, r2x, r2y = start[:, 0] - px, start[:, 1] - py, end[:, 0] - px, end[:, 1] - py
    rad = radius[rows]
    done = np.zeros(rows.size, dtype=bool)
    for j in range(int(lines.count[rows].max())):
        has = j < lines.count[rows]
        p, d = lines.point[rows, j], lines.direction[rows, j]
        done |= has & covered(inv, r1x, r1y, r2x, r2y, rad, p[:, 0], p[:, 1], d[:, 0], d[:, 1])
    ex, ey = unit(end[:, 0] - start[:, 0], end[:, 1] - start[:, 1])
    adds, x, y, dx, dy = wall_line(
        px, py, vel[rows, 0], vel[rows, 1], rad, inv, start[:, 0], start[:, 1], end[:, 0],
        end[:, 1], ex, ey,
    )  # fmt: skip
    keep = adds & ~done
    lines.add(rows[keep], x[keep], y[keep], dx[keep], dy[keep])


def _add_per_owner(
    lines: Lines, owner: np.ndarray, x: Array, y: Array, dx: Array, dy: Array
) -> None:
    """One line per entry, after each owner's lines so far, in entry order (``owner``
    sorted)."""
    rank = np.arange(owner.size) - np.searchsorted(owner, owner, side="left")
    at = lines.count[owner] + rank
    lines.point[owner, at, 0], lines.point[owner, at, 1] = x, y
    lines.direction[owner, at, 0], lines.direction[owner, at, 1] = dx, dy
    lines.count += np.bincount(owner, minlength=lines.count.size)


def contact_lines(
    lines: Lines, owner: np.ndarray, d: Array, j: np.ndarray, radius: Array,
    all_radius: Array, share: Array, inv_dt: float, top: Array,
) -> None:  # fmt: skip
    """The keep-apart lines (``contact_line``) of the neighbours that can be met this tick,
    after the obstacle lines and held as hard as them (``lines.obstacles`` counts them)."""
    if owner.size:
        binds, x, y, dx, dy = contact_line(
            d[:, 0], d[:, 1], radius[owner] + all_radius[j], share, inv_dt, top[owner]
        )
        _add_per_owner(lines, owner[binds], x[binds], y[binds], dx[binds], dy[binds])
    lines.obstacles[:] = lines.count


def agent_lines(
    lines: Lines, owner: np.ndarray, d: Array, j: np.ndarray, vel: Array, radius: Array,
    all_vel: Array, all_radius: Array, share: Array, inv_horizon: float, inv_dt: float,
) -> None:  # fmt: skip
    """One line per neighbour pair, after the owner's obstacle lines, in pair order."""
    if owner.size == 0:
        return
    vj = np.take(all_vel, j, axis=0)
    vx, vy = vel[owner, 0], vel[owner, 1]
    x, y, dx, dy = agent_line(
        d[:, 0], d[:, 1], vx - vj[:, 0], vy - vj[:, 1], vx, vy, radius[owner] + all_radius[j],
        inv_horizon, inv_dt, share,
    )  # fmt: skip
    _add_per_owner(lines, owner, x, y, dx, dy)


# ------------------------------------------------------- linear programs
def _lp1(
    point: Array, direction: Array, exists: np.ndarray, sel: np.ndarray, line: int, top: Array,
    ox: Array, oy: Array, opt_direction: bool,
) -> tuple[np.ndarray, Array, Array]:  # fmt: skip
    """linearProgram1 on line ``line`` for rows ``sel``: feasible, and the result. The lines
    before it are taken at once: the bounds only tighten (``t_left`` the largest, ``t_right``
    the smallest of the cuts), so program 1's early returns mean the same as ``t_left >
    t_right`` at the end, or a parallel line excluding this one."""
    px, py = point[sel, line, 0], point[sel, line, 1]
    dx, dy = direction[sel, line, 0], direction[sel, line, 1]
    ok, t_left, t_right = lp1_bounds(px, py, dx, dy, top[sel])
    if line:
        live = exists[sel, :line]
        ex, ey = direction[sel, :line, 0], direction[sel, :line, 1]
        den = det(dx[:, None], dy[:, None], ex, ey)
        num = det(ex, ey, px[:, None] - point[sel, :line, 0], py[:, None] - point[sel, :line, 1])
        parallel = np.abs(den) <= RVO_EPSILON
        ok = ok & ~(live & parallel & (num < 0.0)).any(axis=1)
        cut = live & ~parallel
        t = num / np.where(parallel, 1.0, den)
        t_right = np.minimum(t_right, np.where(cut & (den >= 0.0), t, np.inf).min(axis=1))
        t_left = np.maximum(t_left, np.where(cut & (den < 0.0), t, -np.inf).max(axis=1))
        ok = ok & ~(t_left > t_right)
    rx, ry = lp1_pick(px, py, dx, dy, t_left, t_right, ox[sel], oy[sel], opt_direction)
    return ok, rx, ry


def lp2(
    point: Array, direction: Array, exists: np.ndarray, top: Array, ox: Array, oy: Array,
    opt_direction: bool,
) -> tuple[Array, Array, np.ndarray]:  # fmt: skip
    """linearProgram2 for every row: the result and the first line it failed on (the
    number of lines where it did not fail)."""
    m, width = exists.shape
    rx, ry = lp_start(ox, oy, top, opt_direction)
    rx, ry = np.array(rx, dtype=np.float64), np.array(ry, dtype=np.float64)
    fail = np.full(m, width, dtype=np.int64)
    alive = np.ones(m, dtype=bool)
    for i in range(width):
        d, p = direction[:, i], point[:, i]
        bad = alive & exists[:, i] & (violated_by(d[:, 0], d[:, 1], p[:, 0], p[:, 1], rx, ry) > 0.0)
        if not bad.any():
            continue
        sel = np.flatnonzero(bad)
        ok, nx, ny = _lp1(point, direction, exists, sel, i, top, ox, oy, opt_direction)
        rx[sel[ok]], ry[sel[ok]] = nx[ok], ny[ok]
        fail[sel[~ok]] = i
        alive[sel[~ok]] = False
    return rx, ry, fail


def lp3(lines: Lines, begin: np.ndarray, top: Array, rx: Array, ry: Array) -> None:
    """linearProgram3 in place on ``rx, ry`` for rows whose program 2 failed at ``begin``."""
    n, width = lines.count.size, lines.point.shape[1]
    distance = np.zeros(n)
    slots = np.arange(width)
    P, D = lines.point, lines.direction
    for i in range(width):
        act = (i >= begin) & (i < lines.count)
        act &= violated_by(D[:, i, 0], D[:, i, 1], P[:, i, 0], P[:, i, 1], rx, ry) > distance
        if not act.any():
            continue
        sel = np.flatnonzero(act)
        first = lines.obstacles[sel][:, None]
        pp, dd = P[sel].copy(), D[sel].copy()
        exists = slots[None, :] < first
        pi, di = P[sel, i], D[sel, i]
        if i:  # the lines between line i and each agent line before it, all at once
            keep, x, y, ux, uy = projected_line(
                pi[:, 0:1], pi[:, 1:2], di[:, 0:1], di[:, 1:2], P[sel, :i, 0], P[sel, :i, 1],
                D[sel, :i, 0], D[sel, :i, 1],
            )  # fmt: skip
            made = slots[None, :i] >= first
            pp[:, :i, 0] = np.where(made, x, pp[:, :i, 0])
            pp[:, :i, 1] = np.where(made, y, pp[:, :i, 1])
            dd[:, :i, 0] = np.where(made, ux, dd[:, :i, 0])
            dd[:, :i, 1] = np.where(made, uy, dd[:, :i, 1])
            exists[:, :i] |= made & keep
        nx, ny, fail = lp2(pp, dd, exists, top[sel], -di[:, 1], di[:, 0], True)
        ok = fail >= width
        rx[sel[ok]], ry[sel[ok]] = nx[ok], ny[ok]
        distance[sel] = violated_by(di[:, 0], di[:, 1], pi[:, 0], pi[:, 1], rx[sel], ry[sel])


def new_velocity(lines: Lines, top: Array, pref: Array) -> Array:
    """RVO2's last step: program 2 toward the preferred velocity, program 3 where it fails."""
    exists = np.arange(lines.point.shape[1])[None, :] < lines.count[:, None]
    rx, ry, fail = lp2(lines.point, lines.direction, exists, top, pref[:, 0], pref[:, 1], False)
    failed = fail < lines.count
    if failed.any():
        sel = np.flatnonzero(failed)
        sub = Lines(sel.size, lines.point.shape[1])
        sub.point, sub.direction = lines.point[sel], lines.direction[sel]
        sub.count, sub.obstacles = lines.count[sel], lines.obstacles[sel]
        sx, sy = rx[sel], ry[sel]
        lp3(sub, fail[sel], top[sel], sx, sy)
        rx[sel], ry[sel] = sx, sy
    return np.stack([rx, ry], axis=1)


# -------------------------------------------------------------- the leaf
def cruise_speed(p: Orca) -> float:
    """``preferred_speed`` as the kernel takes it: -1 for null (the max speed)."""
    return -1.0 if p.preferred_speed is None else float(p.preferred_speed)


def time_step(dt: float) -> float:
    """The tick used for the collision case's cut-off (as ``velocity_change_force``)."""
    return max(float(dt), VEC_EPS)


def orca(p: Orca, ctx: SteeringContext) -> Steering:
    w, ag = ctx.world, ctx.agents
    pos, vel = ctx.pos, ctx.vel
    top, radius = ctx.per_agent("max_speed"), ctx.per_agent("radius")
    target = ctx.target_facts().pos
    inv_dt = 1.0 / time_step(ctx.dt)
    with np.errstate(all="ignore"):  # both arms of a select are computed on columns
        cruise = top if p.preferred_speed is None else np.full(ctx.n, float(p.preferred_speed))
        px, py = preferred(
            pos[:, 0], pos[:, 1], target[:, 0], target[:, 1], cruise, float(p.slowing_radius),
            float(p.tolerance),
        )  # fmt: skip
        owner, d, _, j = _pairs(ctx, NEIGHBOURS_OF)
        circles = np.asarray(w.obstacle_pos, dtype=np.float64).reshape(-1, 2)
        walls = (
            np.asarray(w.wall_a, dtype=np.float64).reshape(-1, 2),
            np.asarray(w.wall_b, dtype=np.float64).reshape(-1, 2),
        )
        per_owner = int(np.bincount(owner).max(initial=0))
        width = circles.shape[0] + walls[0].shape[0] + (2 if p.keep_apart else 1) * per_owner
        lines = Lines(ctx.n, width)
        radii = np.asarray(w.obstacle_radius, dtype=np.float64).reshape(-1)
        horizon = float(p.obstacle_time_horizon)
        obstacle_lines(lines, pos, vel, radius, top, horizon, inv_dt, circles, radii, *walls)
        share = np.where(reciprocal(ctx.requests, ctx.rows, ag.n)[j], 0.5, 1.0)
        if p.keep_apart:
            contact_lines(lines, owner, d, j, radius, ag.radius, share, inv_dt, top)
        agent_lines(
            lines, owner, d, j, vel, radius, ag.vel, ag.radius, share,
            1.0 / float(p.time_horizon), inv_dt,
        )  # fmt: skip
        new = new_velocity(lines, top, np.stack([px, py], axis=1))
    return Steering(k.velocity_change_force(new, vel, ctx.per_agent("mass"), ctx.dt))


def register(registries: Registries) -> None:
    registries.primitives.register(Orca, orca, done=arrive_done)
