"""The neighbour cap against brute force (issue 25): each observer keeps its nearest.

An observer sees the agents within its view distance and field of view (``Sense._seen``'s
tests) and keeps its ``max_neighbours`` nearest, equal distances the lower row, its pairs
in row order. The compiled query measures the cells within a guessed radius, widens it
when the cap-th pair is not surely inside, and finds the cap-th distance by narrowing
histograms; the NumPy path partitions. Both are held here to every pair measured by
brute force, bit for bit, with the flocking sums the compiled query adds as it goes: in
clumps, sparse and dense, across a wrapped edge or outside a bounded world, with exact
ties, coincident agents and caps from 0 up, equal or different per observer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from behaviortk.sense import query_loops
from behaviortk.sense.sensing import FOV_COS_TOLERANCE, Sense
from behaviortk.sim import choice
from behaviortk.world.factory import make_agents
from behaviortk.world.spatial import displacement_columns, wrap_positions
from behaviortk.world.state import Agents, World

WIDTH, HEIGHT = 200.0, 120.0


@pytest.fixture(scope="module")
def kernels() -> Any:
    found, _ = choice.load()
    assert found is not None, "numba kernels failed to load"
    return found


def brute_pairs(agents: Agents, world: World, a: slice, b: slice) -> list[np.ndarray]:
    """Each observer's kept neighbour rows: every pair tested, sorted by (distance, row),
    the first ``max_neighbours``, then in row order."""
    kept = []
    rows = np.arange(b.start, b.stop)
    for i in range(a.start, a.stop):
        dx, dy = displacement_columns(agents.pos, np.full(rows.size, i), rows, world)
        d2 = dx * dx + dy * dy
        dist = np.sqrt(d2)
        view = agents.view_distance[i]
        half = 0.5 * agents.fov[i]
        along = agents.heading[i, 0] * dx + agents.heading[i, 1] * dy
        cos_half = np.cos(min(half, np.pi)) - FOV_COS_TOLERANCE
        seen = (d2 <= view * view) & (rows != i) & ((half >= np.pi) | (along >= dist * cos_half))
        order = np.lexsort((rows[seen], dist[seen]))
        kept.append(np.sort(rows[seen][order[: max(int(agents.max_neighbours[i]), 0)]]))
    return kept


def expected_sums(agents: Agents, world: World, i: int, js: np.ndarray) -> list[float]:
    """The query's sums over the kept pairs in row order: separation terms (coincident
    pairs pushed apart), neighbour velocities, offsets; added one by one as the loop does."""
    sums = [0.0] * query_loops.SUMS
    dx, dy = displacement_columns(agents.pos, np.full(js.size, i), js, world)
    for j, x, y in zip(js.tolist(), dx.tolist(), dy.tolist(), strict=True):
        sep = query_loops.separation_pair.py_func(i, j, x, y)
        for k, term in enumerate((*sep, agents.vel[j, 0], agents.vel[j, 1], x, y)):
            sums[k] += float(term)
    return sums


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(60, 450),
    cap=st.integers(0, 70),
    mixed_caps=st.booleans(),
    view=st.sampled_from([6.0, 15.0, 40.0]),
    fov=st.sampled_from([90.0, 270.0, 360.0]),
    mixed_fov=st.booleans(),
    clumps=st.integers(0, 4),
    edges=st.sampled_from(["wrap", "contain"]),
)
def test_the_cap_keeps_the_nearest_of_every_pair(
    seed: int,
    n: int,
    cap: int,
    mixed_caps: bool,
    view: float,
    fov: float,
    mixed_fov: bool,
    clumps: int,
    edges: str,
    kernels: Any,
) -> None:
    rng = np.random.default_rng(seed)
    pos = rng.uniform([0.0, 0.0], [WIDTH, HEIGHT], (n, 2))
    if clumps:  # most agents in tight clumps, the rest sparse: guesses miss and widen
        centres = rng.uniform([0.0, 0.0], [WIDTH, HEIGHT], (clumps, 2))
        crowd = rng.random(n) < 0.8
        which = rng.integers(0, clumps, n)
        spread = rng.uniform(0.5, 5.0, clumps)[which, None]
        pos[crowd] = (centres[which] + rng.normal(0.0, 1.0, (n, 2)) * spread)[crowd]
    pos[: n // 8] = np.round(pos[: n // 8])  # exact ties of distance
    pos[n // 8 : n // 8 + 12] = pos[n // 2]  # coincident agents
    world = World(WIDTH, HEIGHT, edges)
    if edges == "wrap":
        pos = wrap_positions(pos, world)
    else:
        pos[-3:] = [[-4.0, 50.0], [WIDTH + 3.0, 50.0], [WIDTH + 3.0, HEIGHT + 2.0]]
    caps = rng.integers(0, cap + 1, n) if mixed_caps else np.full(n, cap)
    fovs = rng.choice([90.0, 270.0, 360.0], n) if mixed_fov else np.full(n, fov)
    angle = rng.uniform(0.0, 2 * np.pi, n)
    agents = make_agents(
        pos,
        rng.normal(0.0, 10.0, (n, 2)),
        heading=np.stack([np.cos(angle), np.sin(angle)], axis=1),
        view_distance=view,
        fov=np.radians(fovs),
        max_neighbours=caps,
        groups=[("a", n - 5), ("b", 5)],
    )
    for group, of, a, b in (("a", "same", slice(0, n - 5), slice(0, n - 5)),
                            ("a", "any", slice(0, n - 5), slice(0, n)),
                            ("b", "a", slice(n - 5, n), slice(0, n - 5))):  # fmt: skip
        want = brute_pairs(agents, world, a, b)
        offsets = np.cumsum([0] + [w.size for w in want])
        for path in (None, kernels):
            sense = Sense(world, agents, np.zeros((n, 1)), 0, 0.0, kernels=path)
            got = sense.neighbours(group, of)
            assert np.array_equal(got.offsets, offsets), (group, of, path)
            assert np.array_equal(got.j, np.concatenate(want)), (group, of, path)
            assert np.array_equal(got.i, np.repeat(np.arange(a.start, a.stop), np.diff(offsets)))
            dx, dy = displacement_columns(agents.pos, got.i, got.j, world)
            assert np.array_equal(got.d[:, 0], dx) and np.array_equal(got.d[:, 1], dy)
            assert np.array_equal(got.dist, np.sqrt(dx * dx + dy * dy))
            if path is not None:
                for k in range(0, a.stop - a.start, 17):
                    js = want[k]
                    assert got.sums[k].tolist() == expected_sums(agents, world, a.start + k, js)


@settings(max_examples=60, deadline=None)
@given(
    view=st.lists(st.sampled_from([0.0, 1.5, 100.0, 1e9, float("nan")]), min_size=1, max_size=9),
    fov=st.lists(
        st.sampled_from([0.0, 1.0, np.pi, 2 * np.pi, float("nan")]), min_size=9, max_size=9
    ),
    cap=st.lists(st.integers(0, 2**40), min_size=9, max_size=9),
    lo=st.integers(0, 8),
)
def test_observer_span_is_numpy_max_and_min(
    view: list[float], fov: list[float], cap: list[int], lo: int
) -> None:
    """``query_loops.observer_span`` gives what NumPy's ``max``/``min`` give over the rows
    (NaN included): the neighbour query's grid and field of view are set from it."""
    v = np.resize(np.array(view), 9)
    f, c = np.array(fov), np.array(cap, dtype=np.int64)
    hi = min(9, lo + len(view))
    got = query_loops.observer_span(v, f, c, lo, hi)
    want = (v[lo:hi].max(), f[lo:hi].min(), f[lo:hi].max(), c[lo:hi].max())
    assert got[3] == want[3]
    for mine, theirs in zip(got[:3], want[:3], strict=True):
        assert (np.isnan(mine) and np.isnan(theirs)) or mine == theirs
