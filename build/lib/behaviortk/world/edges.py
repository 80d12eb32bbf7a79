"""World edges: wrap (torus), bounce (mirror) or contain (stop at the wall).

Each function takes positions and velocities after the move and returns the
corrected pair; the world is ``[0, width] x [0, height]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.vec import Array, clip, formula, maximum, minimum, select
from behaviortk.world.spatial import wrap_positions
from behaviortk.world.state import World

EDGE_MODES = ("wrap", "bounce", "contain")


@formula
def bounce_axis(p: Any, v: Any, size: Any) -> tuple[Any, Any]:
    """One axis of :func:`bounce`: the position and velocity after the edge."""
    below = p < 0.0
    above = p > size
    q = select(below, -p, p)
    q = select(above, 2.0 * size - q, q)
    w = select(below, np.abs(v), v)
    w = select(above, -np.abs(w), w)
    # an overshoot of more than a whole world width cannot mirror back inside
    return clip(q, 0.0, size), w


@formula
def contain_axis(p: Any, v: Any, size: Any) -> tuple[Any, Any]:
    """One axis of :func:`contain`: the position and velocity after the edge."""
    w = select(p <= 0.0, maximum(v, 0.0), v)
    w = select(p >= size, minimum(w, 0.0), w)
    return clip(p, 0.0, size), w


def wrap(pos: Array, vel: Array, world: World) -> tuple[Array, Array]:
    """Toroidal modulo: leaving on one side re-enters on the opposite side."""
    return wrap_positions(pos, world), vel


def bounce(pos: Array, vel: Array, world: World) -> tuple[Array, Array]:
    """Mirror the position in the edge it crossed and flip that velocity component."""
    p, v = bounce_axis(pos, vel, world.size)
    return np.asarray(p), np.asarray(v)


def contain(pos: Array, vel: Array, world: World) -> tuple[Array, Array]:
    """Clamp to the world and drop the velocity component pointing out of it."""
    p, v = contain_axis(pos, vel, world.size)
    return np.asarray(p), np.asarray(v)


def apply_edges(pos: Array, vel: Array, world: World) -> tuple[Array, Array]:
    if world.edges == "wrap":
        return wrap(pos, vel, world)
    if world.edges == "bounce":
        return bounce(pos, vel, world)
    if world.edges == "contain":
        return contain(pos, vel, world)
    raise ValueError(f"unknown world edges {world.edges!r}; expected one of {EDGE_MODES}")
