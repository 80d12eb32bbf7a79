"""Nearest over a large group (issue 25): every target query against brute force.

Past ``SMALL_SIDE`` rows on both sides, the compiled path searches a grid of the group in
rings (``sense/nearest_loops.py``) and the NumPy path asks a k-d tree and lets the exact
distances choose. Both must give brute force's answer over every pair, bit for bit: the
nearest agent (smallest ``d^2``, equal ones to the lower row, within the radius), the
nearest it can see (reach, field of view, line of sight past obstacles and walls), and the
`in_range` and `can_see` conditions fed by them, on wrapped and bounded worlds, with exact
ties, coincident agents, a group far off in a corner, one target and none.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from steering_support import node
from test_nearest_visible import brute_force, make_world

from behaviortk.leaves.conditions import can_see, in_range
from behaviortk.registry import default
from behaviortk.sense.sensing import Sense
from behaviortk.sim import choice
from behaviortk.world import spatial
from behaviortk.world.factory import make_agents
from behaviortk.world.sight import sees
from behaviortk.world.spatial import displacement

WIDTH, HEIGHT = 240.0, 160.0


@pytest.fixture(scope="module")
def kernels() -> Any:
    found, _ = choice.load()
    assert found is not None, "numba kernels failed to load"
    return found


def brute_nearest(
    pos: np.ndarray, world: Any, a: slice, b: slice, radius: float
) -> tuple[np.ndarray, np.ndarray]:
    """Every pair measured: the smallest ``d^2`` (not oneself), then the lowest row."""
    n_a = a.stop - a.start
    index, dist = np.full(n_a, -1, dtype=np.int64), np.full(n_a, np.inf)
    rows = np.arange(b.start, b.stop)
    for r in range(n_a):
        i = a.start + r
        d = displacement(pos[i], pos[b], world)
        d2 = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]
        d2[rows == i] = np.inf
        if rows.size == 0 or not np.isfinite(d2.min()):
            continue
        first = int(rows[d2 == d2.min()].min())
        dd = float(np.sqrt(d2.min()))
        if dd <= radius:
            index[r], dist[r] = first, dd
    return index, dist


def layout(kind: str, n: int, n_a: int, rng: np.random.Generator) -> np.ndarray:
    """Positions: spread out, on a coarse lattice (exact ties), clumped on a few points
    (coincident agents), the searched rows in one corner far from the others, or in three
    small clumps (most cells empty: observers search many rings)."""
    pos = rng.uniform([0.0, 0.0], [WIDTH, HEIGHT], (n, 2))
    if kind == "lattice":
        pos = np.round(pos / 20.0) * 20.0 % [WIDTH, HEIGHT]
    elif kind == "coincident":
        pos = rng.uniform([0.0, 0.0], [WIDTH, HEIGHT], (4, 2))[rng.integers(0, 4, n)]
    elif kind == "corner":
        pos[n_a:] = rng.uniform([0.0, 0.0], [12.0, 9.0], (n - n_a, 2))
    elif kind == "clumps":
        centres = rng.uniform([0.0, 0.0], [WIDTH, HEIGHT], (3, 2))
        pos[n_a:] = centres[rng.integers(0, 3, n - n_a)] + rng.normal(0.0, 3.0, (n - n_a, 2))
        pos %= [WIDTH, HEIGHT]
    return pos


sizes = st.one_of(st.sampled_from([0, 1, 3]), st.integers(17, 160))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n_a=st.integers(17, 120),
    n_b=sizes,
    overlap=st.booleans(),
    edges=st.sampled_from(["wrap", "contain"]),
    kind=st.sampled_from(["spread", "lattice", "coincident", "corner", "clumps"]),
    radius=st.sampled_from([None, 15.0, 60.0]),
    shapes=st.booleans(),
)
def test_large_group_targets_match_brute_force(
    seed: int,
    n_a: int,
    n_b: int,
    overlap: bool,
    edges: str,
    kind: str,
    radius: float | None,
    shapes: bool,
    kernels: Any,
) -> None:
    rng = np.random.default_rng(seed)
    n = max(n_a, n_b) if overlap else n_a + n_b
    angle = rng.uniform(0.0, 2 * np.pi, n)
    groups = [("a", n)] if overlap else [("a", n_a), ("b", n_b)]
    agents = make_agents(
        layout(kind, n, n_a, rng),
        heading=np.stack([np.cos(angle), np.sin(angle)], axis=1),
        view_distance=rng.uniform(0.0, 90.0, n),
        fov=np.radians(rng.choice([90.0, 200.0, 360.0], n)),
        groups=[g for g in groups if g[1] > 0],
    )
    obstacles = [(*rng.uniform([0, 0], [WIDTH, HEIGHT]), rng.uniform(2, 12)) for _ in range(4)]
    walls = [(rng.uniform([0, 0], [WIDTH, HEIGHT]).tolist(),
              rng.uniform([0, 0], [WIDTH, HEIGHT]).tolist()) for _ in range(3)]  # fmt: skip
    world = make_world(WIDTH, HEIGHT, edges, obstacles if shapes else (), walls if shapes else ())
    if overlap:  # the group looks among itself
        of, a, b = ("a", "same"), slice(0, n), slice(0, n)
    elif n_b:
        of, a, b = ("a", "b"), slice(0, n_a), slice(n_a, n)
    else:  # no group b: everyone
        of, a, b = ("a", "any"), slice(0, n_a), slice(0, n_a)
    r = np.inf if radius is None else radius
    nearest = brute_nearest(agents.pos, world, a, b, r)
    visible = brute_force(world, agents, a, b, np.minimum(agents.view_distance[a], r))
    target = {"kind": "nearest", "group": "a" if of[1] == "same" else of[1], "radius": radius}
    pos, heading = agents.pos[a], agents.heading[a]
    facts_of = displacement(pos, agents.pos[np.maximum(nearest[0], 0)], world) + pos
    found = nearest[0] >= 0
    d = facts_of - pos
    near_enough = found & (np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) <= 40.0)
    seen = sees(pos, heading, facts_of, found, agents.view_distance[a], 0.5 * agents.fov[a], world)
    for path, shared in ((None, False), (kernels, False), (kernels, True)):
        sense = Sense(world, agents, np.zeros((n, 1)), 0, 0.0, registries=default(), kernels=path)
        if shared:  # the searched rows binned first on the neighbour query's grid
            sense.neighbours("b" if of[1] == "b" else "a")
        for got, want in ((sense.nearest(*of, radius), nearest),
                          (sense.nearest_visible(*of, radius), visible)):  # fmt: skip
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])
        prev = np.zeros(a.stop, dtype=bool)
        ranged = node({"type": "in_range", "target": target, "radius": 40.0})
        np.testing.assert_array_equal(in_range(ranged, sense, "a", prev, None), near_enough)
        looked = node({"type": "can_see", "target": target})
        np.testing.assert_array_equal(can_see(looked, sense, "a", prev, None), seen)


def test_ties_the_tree_lists_in_any_order_go_to_the_lowest_row(kernels: Any) -> None:
    """Rows 0..19 at (50, 50); rows 20..59 exactly 10 away, at (60, 50), (50, 60), (40, 50)
    and (50, 40) ten times each, listed last first: every observer's nearest is row 20
    (the lowest at distance 10), whatever order the tree lists equal distances in (its
    first candidates tie, so it asks again until it has them all), and the grid's too."""
    ring = np.array([[10.0, 0.0], [0.0, 10.0], [-10.0, 0.0], [0.0, -10.0]] * 10)
    pos = np.vstack([np.full((20, 2), 50.0), 50.0 + ring])
    world = make_world(WIDTH, HEIGHT, "contain")
    a, b = slice(0, 20), slice(20, 60)
    assert min(a.stop - a.start, b.stop - b.start) > spatial.SMALL_SIDE  # not brute force
    for index, dist in (spatial.SpatialIndex(world, pos).nearest(a, b, np.inf),
                        kernels.nearest(world, pos, a, b, np.inf)):  # fmt: skip
        assert index.tolist() == [20] * 20 and dist.tolist() == [10.0] * 20
