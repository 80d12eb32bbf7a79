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
"""

from __future__ import annotations

import numpy as np

from behaviortk.vec import Array, dot, length, perp, rotate, truncate, wrap_angle
from behaviortk.world.edges import apply_edges
from behaviortk.world.rows import keep_room
from behaviortk.world.smoothing import HeadingSmoother
from behaviortk.world.state import Agents, World

#: Below this speed the heading is kept: a stopped vehicle does not snap to +x.
HEADING_MIN_SPEED = 1e-8


def limit_turn(vel: Array, heading: Array, max_angle: Array) -> Array:
    """Rotate ``vel`` back toward ``heading`` so it is at most ``max_angle`` away.

    The speed is kept; ``max_angle = inf`` leaves velocities unchanged. Rows with
    a zero heading or zero velocity are left alone.
    """
    angle = np.arctan2(dot(perp(heading), vel), dot(heading, vel))
    over = np.abs(angle) > max_angle
    over &= (length(heading) > 0.0) & (length(vel) > 0.0)
    if not over.any():
        return vel
    out = vel.copy()
    turned = rotate(heading[over], np.sign(angle[over]) * max_angle[over])
    out[over] = turned * length(vel[over])[:, None]
    return out


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
    force = np.nan_to_num(np.asarray(linear, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    force = truncate(force.reshape(n, 2), agents.max_force)
    accel = force / agents.mass[:, None]

    vel = agents.vel + accel * dt
    if not np.isinf(agents.max_turn_rate).all():
        vel = limit_turn(vel, agents.heading, agents.max_turn_rate * dt)
    vel = truncate(vel, agents.max_speed)
    pos = agents.pos + vel * dt
    pos, vel = apply_edges(pos, vel, world)

    speed = length(vel)
    moving = speed > HEADING_MIN_SPEED
    inv_speed = 1.0 / np.where(moving, speed, 1.0)
    heading = np.where(moving[:, None], vel * inv_speed[:, None], agents.heading)

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
    ang = np.nan_to_num(ang, nan=0.0, posinf=0.0, neginf=0.0)
    ang = np.clip(ang, -agents.max_angular_accel, agents.max_angular_accel)
    orientation = wrap_angle(agents.orientation + agents.rotation * dt)
    rotation = agents.rotation + ang * dt
    rotation = np.clip(rotation, -agents.max_rotation, agents.max_rotation)

    # new arrays keep the spare rows spawns grow into (world/rows.py)
    like = agents.ids
    agents.orientation, agents.rotation = keep_room(orientation, like), keep_room(rotation, like)
    agents.pos, agents.vel = keep_room(pos, like), keep_room(vel, like)
    agents.heading, agents.force = keep_room(heading, like), keep_room(force, like)
