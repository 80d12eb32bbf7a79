"""The one integration step shared by every vehicle.

Linear part (Buckland, Programming Game AI by Example, ch. 3 "Vehicle::Update",
semi-implicit Euler): truncate the force to ``max_force``; ``a = F / m``;
``v += a dt``; limit the turn rate; truncate to ``max_speed``; ``x += v dt``;
world edges; heading from velocity (kept at zero speed), optionally smoothed.

Angular part (Millington, AI for Games, ch. 3 "Kinematic" update):
``orientation += rotation dt`` then ``rotation += angular dt``, clamped to
``max_rotation``; orientation is an angle of its own, independent of velocity.

Non-finite inputs (a broken plugin primitive) count as zero force, so the state
never becomes NaN or Inf.

Each step's per-agent maths is a formula (``accelerate``, ``limit_turn``,
``advance``, the edges', ``heading_of``, ``spin``): :func:`integrate` runs them on
columns, the compiled step (``integrate_loops.py``) on each agent's numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.vec import (
    Array,
    clip,
    finite_or_zero,
    formula,
    length_xy,
    select,
    truncate_xy,
    wrap_angle,
)
from behaviortk.world.edges import apply_edges
from behaviortk.world.rows import keep_room
from behaviortk.world.smoothing import HeadingSmoother, unit_or_keep
from behaviortk.world.state import Agents, World

#: Below this speed the heading is kept: a stopped vehicle does not snap to +x.
HEADING_MIN_SPEED = 1e-8


@formula
def accelerate(
    vx: Any, vy: Any, fx: Any, fy: Any, mass: Any, max_force: Any, dt: Any
) -> tuple[Any, Any, Any, Any]:
    """The force truncated to ``max_force`` (a non-finite part counts as zero) and the
    velocity after ``v += F / m dt``: ``(fx, fy, vx, vy)``."""
    fx, fy = truncate_xy(finite_or_zero(fx), finite_or_zero(fy), max_force)
    return fx, fy, vx + fx / mass * dt, vy + fy / mass * dt


@formula
def rotated(hx: Any, hy: Any, turn: Any, speed: Any) -> tuple[Any, Any]:
    """The heading ``(hx, hy)`` rotated by ``turn`` radians, at length ``speed``."""
    c, s = np.cos(turn), np.sin(turn)
    return (c * hx - s * hy) * speed, (s * hx + c * hy) * speed


@formula
def limit_turn(vx: Any, vy: Any, hx: Any, hy: Any, max_turn: Any, dt: Any) -> tuple[Any, Any]:
    """``(vx, vy)`` rotated back toward the heading ``(hx, hy)`` so it is at most
    ``max_turn * dt`` away, keeping the speed; a zero heading or velocity is left alone.
    (A compiled loop rotates only the velocities over the limit; ``most`` may be inf
    elsewhere, so the rotation computed there on columns is by 0.)"""
    most = max_turn * dt
    angle = np.arctan2(-hy * vx + hx * vy, hx * vx + hy * vy)
    speed = length_xy(vx, vy)
    over = (np.abs(angle) > most) & (length_xy(hx, hy) > 0.0) & (speed > 0.0)
    turn = np.sign(angle) * select(over, most, 0.0)
    return select(over, rotated(hx, hy, turn, speed), (vx, vy))


@formula
def advance(px: Any, py: Any, vx: Any, vy: Any, top: Any, dt: Any) -> tuple[Any, Any, Any, Any]:
    """The velocity truncated to ``top`` (max speed), then ``x += v dt``: ``(px, py, vx, vy)``."""
    vx, vy = truncate_xy(vx, vy, top)
    return px + vx * dt, py + vy * dt, vx, vy


@formula
def heading_of(vx: Any, vy: Any, hx: Any, hy: Any) -> tuple[Any, Any]:
    """The direction of the velocity; below ``HEADING_MIN_SPEED`` the heading ``(hx, hy)``."""
    return unit_or_keep(vx, vy, hx, hy, HEADING_MIN_SPEED)


@formula
def spin(
    orientation: Any, rotation: Any, angular: Any, max_angular: Any, max_rotation: Any, dt: Any
) -> tuple[Any, Any]:
    """Millington's kinematic update: ``orientation + rotation dt`` (to be wrapped with
    ``vec.wrap_angle``), then ``rotation += angular dt`` (``angular`` non-finite: zero;
    clamped to ``max_angular``), clamped to ``max_rotation``."""
    angular = clip(finite_or_zero(angular), -max_angular, max_angular)
    return orientation + rotation * dt, clip(rotation + angular * dt, -max_rotation, max_rotation)


def integrate(
    world: World,
    agents: Agents,
    linear: Array,
    angular: Array | None,
    dt: float,
    heading_smoothing: int = 1,
) -> None:
    """Advance ``agents`` by ``dt`` under the steering ``linear`` (N, 2) and ``angular`` (N,)."""
    n = agents.n
    lin = np.asarray(linear, dtype=np.float64).reshape(n, 2)
    vel, head = agents.vel, agents.heading
    fx, fy, vx, vy = accelerate(
        vel[:, 0], vel[:, 1], lin[:, 0], lin[:, 1], agents.mass, agents.max_force, dt
    )
    if not np.isinf(agents.max_turn_rate).all():
        vx, vy = limit_turn(vx, vy, head[:, 0], head[:, 1], agents.max_turn_rate, dt)
    px, py, vx, vy = advance(agents.pos[:, 0], agents.pos[:, 1], vx, vy, agents.max_speed, dt)
    pos, vel = apply_edges(np.stack([px, py], axis=1), np.stack([vx, vy], axis=1), world)
    heading = np.stack(heading_of(vel[:, 0], vel[:, 1], head[:, 0], head[:, 1]), axis=1)

    if heading_smoothing > 1:
        smoother = agents.smoother
        if smoother is None or not smoother.fits(heading_smoothing, n):
            smoother = HeadingSmoother(heading_smoothing, agents.heading)
            agents.smoother = smoother
        agents.smoothed_heading = keep_room(
            smoother.update(heading, agents.smoothed_heading), agents.ids
        )
    else:
        agents.smoothed_heading = keep_room(heading.copy(), agents.ids)

    ang = np.zeros(n) if angular is None else np.asarray(angular, dtype=np.float64)
    turned, rotation = spin(
        agents.orientation, agents.rotation, ang, agents.max_angular_accel, agents.max_rotation, dt
    )
    orientation = wrap_angle(turned)

    # new arrays keep the spare rows spawns grow into (world/rows.py)
    like = agents.ids
    agents.orientation, agents.rotation = keep_room(orientation, like), keep_room(rotation, like)
    agents.pos, agents.vel = keep_room(pos, like), keep_room(vel, like)
    force = np.stack([fx, fy], axis=1)
    agents.heading, agents.force = keep_room(heading, like), keep_room(force, like)
