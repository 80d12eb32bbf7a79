"""``world.integrate.integrate`` compiled: one pass per agent, the same steps in the same order.

Truncate the force (non-finite parts count as zero), ``a = F / m``,
``v += a dt``, limit the turn rate, truncate to max speed, ``x += v dt``, the
world's edges, heading from the velocity (kept below ``HEADING_MIN_SPEED``),
the heading smoother's mean, then the angular part. New arrays are assigned to
``agents`` as the NumPy step does (nobody holding last tick's arrays sees them
change). The turn limit rotates with ``math.atan2``/``cos``/``sin``, which may
differ from NumPy's in the last bit; everything else is the reference's
arithmetic.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from behaviortk.compiled.vec import EPS, finite_or_zero, truncate
from behaviortk.jit.compile import inline, kernel
from behaviortk.vec import Array
from behaviortk.world.integrate import HEADING_MIN_SPEED
from behaviortk.world.integrate import integrate as numpy_integrate
from behaviortk.world.rows import empty_rows
from behaviortk.world.smoothing import HeadingSmoother
from behaviortk.world.state import Agents, World

WRAP, BOUNCE, CONTAIN = 0, 1, 2
EDGES = {"wrap": WRAP, "bounce": BOUNCE, "contain": CONTAIN}


@inline
def _wrap(p: float, size: float, top: float) -> float:
    """``world.spatial.wrap_positions`` for one coordinate (``top`` = the float below ``size``).

    Well inside the world ``floor(p / size)`` is 0 and the answer ``p`` (``+ 0.0`` turns
    -0.0 into 0.0 as the subtraction does): the same bits without a division.
    """
    if 0.0 <= p < 0.999999 * size:
        return p + 0.0
    q = p - size * math.floor(p / size)
    if q < 0.0:
        q = q + size
    if q >= size:
        q = q - size
    return min(max(q, 0.0), top)


@inline
def _edge(p: float, v: float, size: float, top: float, mode: int) -> tuple[float, float]:
    if mode == WRAP:
        return _wrap(p, size, top), v
    if mode == BOUNCE:
        q, w = p, v
        if p < 0.0:
            q = -p
            w = abs(v)
        if p > size:
            q = 2.0 * size - q
            w = -abs(w)
        return min(max(q, 0.0), size), w
    w = v
    if p <= 0.0:
        w = max(v, 0.0)
    if p >= size:
        w = min(w, 0.0)
    return min(max(p, 0.0), size), w


@inline
def _angle(a: float) -> float:
    """``vec.wrap_angle``: ``(a + pi) % (2 pi) - pi`` (the modulo of a value already in
    ``[0, 2 pi)`` is that value: skipped)."""
    x = a + np.pi
    if not 0.0 <= x < 2.0 * np.pi:
        x = x % (2.0 * np.pi)
    return x - np.pi


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
    n = pos.shape[0]
    top_x = np.nextafter(width, 0.0)
    top_y = np.nextafter(height, 0.0)
    for i in range(n):
        fx, fy = truncate(finite_or_zero(linear[i, 0]), finite_or_zero(linear[i, 1]), max_force[i])
        out_force[i, 0] = fx
        out_force[i, 1] = fy
        vx = vel[i, 0] + fx / mass[i] * dt
        vy = vel[i, 1] + fy / mass[i] * dt
        if turn_limit:
            hx, hy = heading[i, 0], heading[i, 1]
            limit = max_turn[i] * dt
            angle = math.atan2(-hy * vx + hx * vy, hx * vx + hy * vy)
            hl = math.sqrt(hx * hx + hy * hy)
            vl = math.sqrt(vx * vx + vy * vy)
            if abs(angle) > limit and hl > 0.0 and vl > 0.0:
                turn = np.sign(angle) * limit
                c, s = math.cos(turn), math.sin(turn)
                vx, vy = (c * hx - s * hy) * vl, (s * hx + c * hy) * vl
        vx, vy = truncate(vx, vy, max_speed[i])
        px, vx = _edge(pos[i, 0] + vx * dt, vx, width, top_x, edges)
        py, vy = _edge(pos[i, 1] + vy * dt, vy, height, top_y, edges)
        out_pos[i, 0] = px
        out_pos[i, 1] = py
        out_vel[i, 0] = vx
        out_vel[i, 1] = vy
        _unit_or_keep(out_heading, heading, i, vx, vy, HEADING_MIN_SPEED)
        ang = min(max(finite_or_zero(angular[i]), -max_angular[i]), max_angular[i])
        out_orientation[i] = _angle(orientation[i] + rotation[i] * dt)
        rot = rotation[i] + ang * dt
        out_rotation[i] = min(max(rot, -max_rotation[i]), max_rotation[i])


@inline
def _unit_or_keep(
    out: np.ndarray, keep: np.ndarray, i: int, vx: float, vy: float, least: float
) -> None:
    """Row ``i`` of ``out``: ``(vx, vy)`` normalised when longer than ``least``, else ``keep``'s."""
    length = math.sqrt(vx * vx + vy * vy)
    if length > least:
        inv = 1.0 / length
        out[i, 0] = vx * inv
        out[i, 1] = vy * inv
    else:
        out[i, 0] = keep[i, 0]
        out[i, 1] = keep[i, 1]


@kernel
def smooth(
    history: np.ndarray, slot: int, heading: np.ndarray, previous: np.ndarray, out: np.ndarray
) -> None:
    """``HeadingSmoother.update``: push ``heading`` at ``slot``; ``out`` = the normalised mean
    of the ring."""
    k, n = history.shape[0], history.shape[1]
    for i in range(n):
        history[slot, i, 0] = heading[i, 0]
        history[slot, i, 1] = heading[i, 1]
        sx = history[0, i, 0]
        sy = history[0, i, 1]
        for r in range(1, k):
            sx += history[r, i, 0]
            sy += history[r, i, 1]
        _unit_or_keep(out, previous, i, sx / k, sy / k, EPS)


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


def _world_options(world: World) -> bool:
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
    """``world.integrate.integrate`` on the compiled step (same arguments, same effect).

    A world option this step does not know (a ``World`` field away from its
    default, or an argument added to the NumPy step since) runs the NumPy step.
    """
    if more or options or _world_options(world):
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
