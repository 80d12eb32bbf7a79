"""World edges: wrap (torus), bounce (mirror) or contain (stop at the wall).

Each function takes positions and velocities after the move and returns the
corrected pair; the world is ``[0, width] x [0, height]``.
"""

from __future__ import annotations

import numpy as np

from behaviortk.vec import Array
from behaviortk.world.spatial import wrap_positions
from behaviortk.world.state import World

EDGE_MODES = ("wrap", "bounce", "contain")


def wrap(pos: Array, vel: Array, world: World) -> tuple[Array, Array]:
    """Toroidal modulo: leaving on one side re-enters on the opposite side."""
    return wrap_positions(pos, world), vel


def bounce(pos: Array, vel: Array, world: World) -> tuple[Array, Array]:
    """Mirror the position in the edge it crossed and flip that velocity component."""
    size = world.size
    below = pos < 0.0
    above = pos > size
    p = np.where(below, -pos, pos)
    p = np.where(above, 2.0 * size - p, p)
    v = np.where(below, np.abs(vel), vel)
    v = np.where(above, -np.abs(v), v)
    # an overshoot of more than a whole world width cannot mirror back inside
    return np.clip(p, 0.0, size), v


def contain(pos: Array, vel: Array, world: World) -> tuple[Array, Array]:
    """Clamp to the world and drop the velocity component pointing out of it."""
    size = world.size
    below = pos <= 0.0
    above = pos >= size
    v = np.where(below, np.maximum(vel, 0.0), vel)
    v = np.where(above, np.minimum(v, 0.0), v)
    return np.clip(pos, 0.0, size), v


def apply_edges(pos: Array, vel: Array, world: World) -> tuple[Array, Array]:
    if world.edges == "wrap":
        return wrap(pos, vel, world)
    if world.edges == "bounce":
        return bounce(pos, vel, world)
    if world.edges == "contain":
        return contain(pos, vel, world)
    raise ValueError(f"unknown world edges {world.edges!r}; expected one of {EDGE_MODES}")
