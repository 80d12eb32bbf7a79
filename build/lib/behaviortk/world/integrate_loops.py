"""``integrate.integrate`` compiled: one pass per agent through the same formulas, in the
same order (``integrate.py``'s, the edges', the smoother's), so the same numbers.

New arrays are assigned to ``agents`` as the NumPy step does (nobody holding last
tick's arrays sees them change). The turn limit's ``arctan2``/``cos``/``sin`` are
libm's here and may differ from NumPy's in the last bit; everything else is the
reference's arithmetic.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from behaviortk.jit.compile import kernel
from behaviortk.vec import EPS, Array, wrap_angle
from behaviortk.world.edges import bounce_axis, contain_axis
from behaviortk.world.integrate import accelerate, advance, heading_of, limit_turn, spin
from behaviortk.world.integrate import integrate as numpy_integrate
from behaviortk.world.rows import empty_rows
from behaviortk.world.smoothing import HeadingSmoother, unit_or_keep
from behaviortk.world.spatial import wrap_axis
from behaviortk.world.state import Agents, World

WRAP, BOUNCE, CONTAIN = 0, 1, 2
EDGES = {"wrap": WRAP, "bounce": BOUNCE, "contain": CONTAIN}


@kernel
def step(
    pos: np.ndarray,
    vel: np.ndarray,
    heading: np.ndarray,
    linear: np.ndarray,
    angular: np.ndarray,
    orientation: np.ndarray,
    rotation: np.ndarray,
    mass: np.ndarray,
    max_force: np.ndarray,
    max_speed: np.ndarray,
    max_turn: np.ndarray,
    turn_limit: bool,
    max_angular: np.ndarray,
    max_rotation: np.ndarray,
    dt: float,
    width: float,
    height: float,
    edges: int,
    out_pos: np.ndarray,
    out_vel: np.ndarray,
    out_heading: np.ndarray,
    out_force: np.ndarray,
    out_orientation: np.ndarray,
    out_rotation: np.ndarray,
) -> None:
    """One integration step into the ``out_`` arrays (new ``pos, vel, heading, force,
    orientation, rotation``: the caller allocates them with the agents' spare rows)."""
    top_x = np.nextafter(width, 0.0)
    top_y = np.nextafter(height, 0.0)
    for i in range(pos.shape[0]):
        hx, hy = heading[i, 0], heading[i, 1]
        fx, fy, vx, vy = accelerate(
            vel[i, 0], vel[i, 1], linear[i, 0], linear[i, 1], mass[i], max_force[i], dt
        )
        if turn_limit:
            vx, vy = limit_turn(vx, vy, hx, hy, max_turn[i], dt)
        px, py, vx, vy = advance(pos[i, 0], pos[i, 1], vx, vy, max_speed[i], dt)
        if edges == WRAP:
            px, py = wrap_axis(px, width, top_x), wrap_axis(py, height, top_y)
        elif edges == BOUNCE:
            px, vx = bounce_axis(px, vx, width)
            py, vy = bounce_axis(py, vy, height)
        else:
            px, vx = contain_axis(px, vx, width)
            py, vy = contain_axis(py, vy, height)
        out_force[i, 0], out_force[i, 1] = fx, fy
        out_pos[i, 0], out_pos[i, 1] = px, py
        out_vel[i, 0], out_vel[i, 1] = vx, vy
        out_heading[i, 0], out_heading[i, 1] = heading_of(vx, vy, hx, hy)
        turned, out_rotation[i] = spin(
            orientation[i], rotation[i], angular[i], max_angular[i], max_rotation[i], dt
        )
        out_orientation[i] = wrap_angle(turned)


@kernel
def smooth(
    history: np.ndarray, slot: int, heading: np.ndarray, previous: np.ndarray, out: np.ndarray
) -> None:
    """``HeadingSmoother.update``: push ``heading`` at ``slot``; ``out`` = the normalised mean
    of the ring (summed in ring order, as ``mean(axis=0)`` sums)."""
    k, n = history.shape[0], history.shape[1]
    for i in range(n):
        history[slot, i, 0] = heading[i, 0]
        history[slot, i, 1] = heading[i, 1]
        sx = history[0, i, 0]
        sy = history[0, i, 1]
        for r in range(1, k):
            sx += history[r, i, 0]
            sy += history[r, i, 1]
        out[i, 0], out[i, 1] = unit_or_keep(sx / k, sy / k, previous[i, 0], previous[i, 1], EPS)


KNOWN_WORLD = frozenset(
    [
        "width",
        "height",
        "edges",
        "obstacle_pos",
        "obstacle_radius",
        "wall_a",
        "wall_b",
        "wall_normal",
        "paths",
        "zones",
    ]
)
"""``World`` fields the compiled step knows (the rest only matter to other phases)."""


def unknown_world_options(world: World) -> bool:
    """Whether ``world`` has a field this step does not know, set away from its default
    (an integration option added since, such as pushing overlapping agents apart)."""
    for f in dataclasses.fields(world):
        if f.name in KNOWN_WORLD:
            continue
        value = getattr(world, f.name)
        if f.default is not dataclasses.MISSING and value != f.default:
            return True
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            return True
        if f.default_factory is not dataclasses.MISSING and value != f.default_factory():
            return True
    return False


def integrate(
    world: World,
    agents: Agents,
    linear: Array,
    angular: Array | None,
    dt: float,
    heading_smoothing: int = 1,
    *more: Any,
    **options: Any,
) -> None:
    """``integrate.integrate`` on the compiled step (same arguments, same effect).

    A world option this step does not know (a ``World`` field away from its
    default, or an argument added to the NumPy step since) runs the NumPy step.
    """
    if more or options or unknown_world_options(world):
        numpy_integrate(world, agents, linear, angular, dt, heading_smoothing, *more, **options)
        return
    n = agents.n
    lin = np.ascontiguousarray(np.asarray(linear, dtype=np.float64).reshape(n, 2))
    ang = np.zeros(n) if angular is None else np.ascontiguousarray(angular, dtype=np.float64)
    turn = agents.max_turn_rate
    like = agents.ids  # the new arrays keep the spare rows spawns grow into (world/rows.py)
    pos, vel, heading, force = (empty_rows(n, (2,), like) for _ in range(4))
    orientation, rotation = empty_rows(n, (), like), empty_rows(n, (), like)
    step(
        agents.pos,
        agents.vel,
        agents.heading,
        lin,
        ang,
        agents.orientation,
        agents.rotation,
        agents.mass,
        agents.max_force,
        agents.max_speed,
        turn,
        not bool(np.isinf(turn).all()),
        agents.max_angular_accel,
        agents.max_rotation,
        float(dt),
        float(world.width),
        float(world.height),
        EDGES[world.edges],
        pos,
        vel,
        heading,
        force,
        orientation,
        rotation,
    )
    if heading_smoothing > 1:
        smoother = agents.smoother
        if smoother is None or not smoother.fits(heading_smoothing, n):
            smoother = HeadingSmoother(heading_smoothing, agents.heading)
            agents.smoother = smoother
        slot = smoother.next
        smoother.next = (smoother.next + 1) % smoother.k
        smoothed = empty_rows(n, (2,), like)
        smooth(smoother.history, slot, heading, agents.smoothed_heading, smoothed)
        agents.smoothed_heading = smoothed
    else:
        agents.smoothed_heading = empty_rows(n, (2,), like)
        agents.smoothed_heading[...] = heading
    agents.orientation = orientation
    agents.rotation = rotation
    agents.pos = pos
    agents.vel = vel
    agents.heading = heading
    agents.force = force
