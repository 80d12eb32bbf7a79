"""Agents from plain arrays: what ``build`` uses, and handy in tests and examples."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from behaviortk.format.budget import DEFAULT_MAX_NEIGHBOURS
from behaviortk.vec import EPS, Array, from_angle, length
from behaviortk.world.state import Agents


def _per_agent(value: ArrayLike, n: int) -> Array:
    return np.array(np.broadcast_to(np.asarray(value, dtype=np.float64), (n,)), dtype=np.float64)


def make_agents(
    pos: ArrayLike,
    vel: ArrayLike | None = None,
    *,
    heading: ArrayLike | None = None,
    groups: Sequence[tuple[str, int]] | None = None,
    names: Sequence[str] | None = None,
    ids: ArrayLike | None = None,
    orientation: ArrayLike | None = None,
    mass: ArrayLike = 1.0,
    max_speed: ArrayLike = 100.0,
    max_force: ArrayLike = 200.0,
    max_turn_rate: ArrayLike = np.inf,
    max_angular_accel: ArrayLike = 2.0 * np.pi,
    max_rotation: ArrayLike = np.pi,
    radius: ArrayLike = 5.0,
    view_distance: ArrayLike = 50.0,
    fov: ArrayLike = 2.0 * np.pi,
    max_neighbours: ArrayLike = DEFAULT_MAX_NEIGHBOURS,
) -> Agents:
    """Agents whose constants are scalars or per-agent arrays (angles in radians).

    ``groups`` lists ``(name, count)`` in row order (default: one group "agents");
    ``names`` default to ``<group>-<k>`` and ``ids`` to the row numbers.
    The heading defaults to the velocity direction, or +x where the speed is at most
    ``vec.EPS``; the orientation defaults to the heading's angle.
    """
    p = np.array(pos, dtype=np.float64).reshape(-1, 2)
    n = p.shape[0]
    v = np.zeros((n, 2)) if vel is None else np.array(vel, dtype=np.float64).reshape(n, 2)
    if heading is None:
        s = length(v)
        h = np.tile([1.0, 0.0], (n, 1))
        moving = s > EPS  # a denormal |v|^2 would give a heading shorter than 1
        h[moving] = v[moving] / s[moving, None]
    else:
        h = np.array(heading, dtype=np.float64).reshape(n, 2)
    spec = list(groups) if groups is not None else [("agents", n)]
    if sum(c for _, c in spec) != n:
        raise ValueError(f"group counts {spec} do not add up to {n} positions")
    slices: dict[str, slice] = {}
    start = 0
    for name, count in spec:
        slices[name] = slice(start, start + count)
        start += count
    group = np.repeat(np.arange(len(spec)), [c for _, c in spec]).astype(np.int64)
    if names is None:
        names = [f"{name}-{k}" for name, count in spec for k in range(count)]
    orient = np.arctan2(h[:, 1], h[:, 0]) if orientation is None else _per_agent(orientation, n)
    return Agents(
        names=list(names),
        ids=np.arange(n, dtype=np.int64) if ids is None else np.asarray(ids, dtype=np.int64),
        group_names=[name for name, _ in spec],
        group=group,
        slices=slices,
        pos=p,
        vel=v,
        heading=h,
        smoothed_heading=h.copy(),
        orientation=orient,
        rotation=np.zeros(n),
        force=np.zeros((n, 2)),
        mass=_per_agent(mass, n),
        max_speed=_per_agent(max_speed, n),
        max_force=_per_agent(max_force, n),
        max_turn_rate=_per_agent(max_turn_rate, n),
        max_angular_accel=_per_agent(max_angular_accel, n),
        max_rotation=_per_agent(max_rotation, n),
        radius=_per_agent(radius, n),
        view_distance=_per_agent(view_distance, n),
        fov=_per_agent(fov, n),
        max_neighbours=np.array(
            np.broadcast_to(np.asarray(max_neighbours, dtype=np.int64), (n,)), dtype=np.int64
        ),
    )


def headings_from_degrees(degrees: ArrayLike) -> Array:
    """Unit headings for angles in degrees (counter-clockwise from +x)."""
    return from_angle(np.radians(np.asarray(degrees, dtype=np.float64)))
