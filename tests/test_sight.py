"""world/sight.py: the compiled line-of-sight kernel against every pair measured in Python.

The reference measures every (segment, obstacle) and (segment, wall) pair with the exact
tests (segment-to-centre distance below the radius; proper crossing of two segments);
line_blocked (which stops at the first shape that blocks) must agree on random segments, including zero-length ones, segments along
the axes (flat bounding boxes) and ones that just touch an obstacle or end on a wall.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from behaviortk.format.world import Wall
from behaviortk.world.build import wall_geometry
from behaviortk.world.sight import line_blocked
from behaviortk.world.state import World


def dense(p: np.ndarray, q: np.ndarray, world: World) -> np.ndarray:
    """Every pair measured: the formulas line_blocked applies to the pairs it keeps."""
    blocked = np.zeros(p.shape[0], dtype=bool)
    for k in range(p.shape[0]):
        d = q[k] - p[k]
        dd = float(d @ d)
        for centre, r in zip(world.obstacle_pos, world.obstacle_radius, strict=True):
            c = centre - p[k]
            t = min(max(float(c @ d) / (dd if dd > 0 else 1.0), 0.0), 1.0)
            gap = c - t * d
            blocked[k] |= float(gap @ gap) < r * r
        for a, b in zip(world.wall_a, world.wall_b, strict=True):

            def cross(u: np.ndarray, v: np.ndarray) -> float:
                return float(u[0] * v[1] - u[1] * v[0])

            d1, d2 = cross(b - a, p[k] - a), cross(b - a, q[k] - a)
            d3, d4 = cross(q[k] - p[k], a - p[k]), cross(q[k] - p[k], b - p[k])
            blocked[k] |= d1 * d2 < 0 and d3 * d4 < 0
    return blocked


def world_of(rng: np.random.Generator, grid: bool) -> World:
    def point() -> list[float]:
        return (rng.integers(0, 11, 2) * 10.0 if grid else rng.random(2) * 100.0).tolist()

    ends = [(point(), point()) for _ in range(6)]
    walls = [Wall.model_validate({"from": f, "to": t}) for f, t in ends if f != t]
    a, b, normal = wall_geometry(walls)
    centres = np.array([point() for _ in range(6)])
    radius = (rng.integers(1, 4, 6) * 5.0) if grid else rng.random(6) * 15.0 + 0.5
    return World(100.0, 100.0, "contain", centres, radius, a, b, normal)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), grid=st.booleans())
def test_line_blocked_matches_every_pair_measured(seed: int, grid: bool) -> None:
    """On a grid, segments lie along the axes, end on walls and graze circles exactly."""
    rng = np.random.default_rng(seed)
    world = world_of(rng, grid)
    n = 40
    if grid:
        p = rng.integers(0, 11, (n, 2)) * 10.0
        q = rng.integers(0, 11, (n, 2)) * 10.0
    else:
        p, q = rng.random((n, 2)) * 100.0, rng.random((n, 2)) * 100.0
    q[:3] = p[:3]  # zero-length segments
    np.testing.assert_array_equal(line_blocked(p, q, world), dense(p, q, world))


def test_grazing_and_touching_by_hand() -> None:
    """Segment (0, 0) -> (10, 0). A circle at (5, 3) of radius 3 is touched (distance 3,
    not below 3): not blocked; radius 3.0001 blocks. A wall (10, -1) -> (10, 1) is touched
    at the segment's end (no proper crossing); (9, -1) -> (9, 1) crosses."""
    p, q = np.array([[0.0, 0.0]]), np.array([[10.0, 0.0]])

    def world(radius: float = 0.0, wall_x: float | None = None) -> World:
        walls = (
            []
            if wall_x is None
            else [Wall.model_validate({"from": [wall_x, -1], "to": [wall_x, 1]})]
        )
        a, b, normal = wall_geometry(walls)
        obstacles = np.array([[5.0, 3.0]]) if radius else np.zeros((0, 2))
        radii = np.array([radius]) if radius else np.zeros(0)
        return World(100.0, 100.0, "contain", obstacles, radii, a, b, normal)

    assert line_blocked(p, q, world(3.0)).tolist() == [False]
    assert line_blocked(p, q, world(3.0001)).tolist() == [True]
    assert line_blocked(p, q, world(wall_x=10.0)).tolist() == [False]
    assert line_blocked(p, q, world(wall_x=9.0)).tolist() == [True]
