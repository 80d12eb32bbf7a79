"""The neighbour query in bounded memory: chunked == unchunked, nearest-first cap, dense crowds.

``unchunked`` is the query as it was before chunking (all candidate pairs of
the spatial index at once, sorted, the exact tests), followed by the cap as a
plain sort by ``(observer, distance, neighbour row)``. The chunked query must
give the very same arrays for every working-set budget, down to one observer
per chunk.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import behaviortk.sense.sensing as sense_module
from behaviortk.format.budget import BYTES_PER_CANDIDATE, BYTES_PER_OBSERVER
from behaviortk.sense.sensing import FOV_COS_TOLERANCE, Neighbours, Sense, nearest_first
from behaviortk.world.factory import make_agents
from behaviortk.world.grid import CellGrid
from behaviortk.world.spatial import displacement_columns
from behaviortk.world.state import Agents, World

BUDGETS = [1, 4096, 65536, sense_module.NEIGHBOUR_BUDGET]


def sense_of(world: World, agents: Agents) -> Sense:
    return Sense(world, agents, np.zeros((agents.n, 0)), 0, 0.0)


def exact_tests(
    ag: Agents, world: World, a: slice, i: np.ndarray, j: np.ndarray
) -> tuple[np.ndarray, ...]:
    """The view-distance and field-of-view tests, as the query did before chunking."""
    view = ag.view_distance[a]
    half = 0.5 * ag.fov[a]
    n_a = a.stop - a.start
    radius = float(view.max()) if n_a else 0.0
    dx, dy = displacement_columns(ag.pos, i, j, world)
    d2 = dx * dx + dy * dy
    if n_a and float(view.min()) == radius:
        keep = d2 <= radius * radius
    else:
        vd = np.take(ag.view_distance, i)
        keep = d2 <= vd * vd
    dist = np.sqrt(d2)
    if n_a and float(half.min()) < np.pi:
        along = np.take(ag.heading[:, 0], i) * dx + np.take(ag.heading[:, 1], i) * dy
        if float(half.max()) == float(half.min()):
            keep &= along >= dist * (float(np.cos(half[0])) - FOV_COS_TOLERANCE)
        else:
            half_i = np.take(0.5 * ag.fov, i)
            cos_i = np.cos(np.minimum(half_i, np.pi)) - FOV_COS_TOLERANCE
            keep &= (half_i >= np.pi) | (along >= dist * cos_i)
    return i[keep], j[keep], dx[keep], dy[keep], dist[keep]


def capped(i: np.ndarray, j: np.ndarray, dist: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Indices (in (i, j) order) of each observer's ``cap[i]`` nearest, ties by lower ``j``."""
    order = np.lexsort((j, dist, i))
    first = np.searchsorted(i[order], i[order], side="left")
    rank = np.arange(order.size) - first
    return np.sort(order[rank < np.take(cap, i[order])])


def finish(
    a: slice, parts: tuple[np.ndarray, ...], cap: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    i, j, dx, dy, dist = parts
    keep = capped(i, j, dist, cap)
    i, j, dist = i[keep], j[keep], dist[keep]
    d = np.stack([dx[keep], dy[keep]], axis=1).reshape(-1, 2)
    n_a = a.stop - a.start
    offsets = np.zeros(n_a + 1, dtype=np.int64)
    np.cumsum(np.bincount(i - a.start, minlength=n_a), out=offsets[1:])
    return i, j, offsets, d, dist


def unchunked(world: World, ag: Agents, a: slice, b: slice) -> tuple[np.ndarray, ...]:
    """The query before chunking: every candidate pair of the spatial index at once."""
    sense = sense_of(world, ag)
    radius = float(ag.view_distance[a].max()) if a.stop > a.start else 0.0
    i, j = sense.index.sorted_pairs(a, b, radius)
    return finish(a, exact_tests(ag, world, a, i, j), ag.max_neighbours)


def brute_force(world: World, ag: Agents, a: slice, b: slice) -> tuple[np.ndarray, ...]:
    """Every pair measured (O(n^2)), no spatial index at all."""
    ii, jj = np.meshgrid(np.arange(a.start, a.stop), np.arange(b.start, b.stop), indexing="ij")
    i, j = ii.ravel().astype(np.int64), jj.ravel().astype(np.int64)
    other = i != j
    return finish(a, exact_tests(ag, world, a, i[other], j[other]), ag.max_neighbours)


def assert_same(got: Neighbours, want: tuple[np.ndarray, ...]) -> None:
    i, j, offsets, d, dist = want
    np.testing.assert_array_equal(got.i, i)
    np.testing.assert_array_equal(got.j, j)
    np.testing.assert_array_equal(got.offsets, offsets)
    np.testing.assert_array_equal(got.d, d)
    np.testing.assert_array_equal(got.dist, dist)
    assert got.i.dtype == np.int64 and got.j.dtype == np.int64


def random_scene(seed: int) -> tuple[World, Agents]:
    """Two groups on a world of random kind and size: uniform spread, tight clusters,
    exact duplicates, points on the edges (and beyond those of a bounded world);
    view distances and fields of view uniform or per agent; caps large or small."""
    rng = np.random.default_rng(seed)
    edges = ["wrap", "bounce", "contain"][seed % 3]
    width, height = [(100.0, 80.0), (30.0, 30.0), (500.0, 400.0), (25.0, 200.0)][seed // 3 % 4]
    n1, n2 = int(rng.integers(0, 120)), int(rng.integers(0, 60))
    n = n1 + n2
    pos = rng.random((n, 2)) * [width, height]
    if n and seed % 2:  # clusters and duplicates
        centres = rng.random((3, 2)) * [width, height]
        pick = rng.random(n) < 0.5
        pos[pick] = centres[rng.integers(0, 3, int(pick.sum()))] + rng.normal(
            0, 0.5, (int(pick.sum()), 2)
        )
        pos[rng.random(n) < 0.1] = pos[0]
        pos[rng.random(n) < 0.05, 0] = 0.0
        pos[rng.random(n) < 0.05, 1] = np.nextafter(height, 0.0)
        if edges == "wrap":
            pos = np.mod(pos, [width, height])
        else:  # a few outside a bounded world (binned into its edge cells)
            out = rng.random(n) < 0.05
            pos[out] = rng.uniform(-8.0, 8.0, (int(out.sum()), 2)) + np.array([width, 0.0])
    view = 12.0 if seed % 4 < 2 else rng.uniform(0.0, 20.0, n)
    fov = [np.radians(270), 2 * np.pi, rng.uniform(0.3, 2 * np.pi, max(n, 1))[:n]][seed % 3]
    cap = [10**6, 3, 1, rng.integers(1, 6, max(n, 1))[:n]][seed % 4]
    vel = rng.normal(size=(n, 2))
    agents = make_agents(
        pos,
        vel,
        groups=[("a", n1), ("b", n2)],
        view_distance=view,
        fov=fov,
        max_neighbours=cap,
    )
    return World(width=width, height=height, edges=edges), agents


@pytest.mark.parametrize("seed", range(24))
def test_chunked_equals_unchunked_for_every_budget(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    world, ag = random_scene(seed)
    queries = [("a", "same"), ("a", "b"), ("a", "any"), ("b", "a"), ("b", "same")]
    for budget in BUDGETS:
        monkeypatch.setattr(sense_module, "NEIGHBOUR_BUDGET", budget)
        sense = sense_of(world, ag)
        for group, of in queries:
            a, b = sense.rows(group), sense.other_rows(group, of)
            assert_same(sense.neighbours(group, of), unchunked(world, ag, a, b))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 50, width=32), st.floats(0, 50, width=32)),
        min_size=0,
        max_size=40,
    ),
    st.sampled_from(["wrap", "bounce"]),
    st.floats(0, 30),
    st.integers(1, 8),
    st.sampled_from([1, 200, 10**9]),
)
def test_chunked_equals_brute_force(
    points: list[tuple[float, float]], edges: str, view: float, cap: int, budget: int
) -> None:
    pos = np.array(points, dtype=np.float64).reshape(-1, 2)
    if edges == "wrap":
        pos = np.mod(pos, 50.0)
    n = pos.shape[0]
    vel = np.tile([1.0, 0.5], (n, 1))
    ag = make_agents(pos, vel, view_distance=view, fov=np.radians(200), max_neighbours=cap)
    world = World(width=50.0, height=50.0, edges=edges)
    old = sense_module.NEIGHBOUR_BUDGET
    sense_module.NEIGHBOUR_BUDGET = budget
    try:
        got = sense_of(world, ag).neighbours("agents")
    finally:
        sense_module.NEIGHBOUR_BUDGET = old
    assert_same(got, brute_force(world, ag, slice(0, n), slice(0, n)))


def test_max_neighbours_keeps_the_nearest_ties_by_row() -> None:
    """Observer 0 at (50, 50), all round, view 10, cap 3. Others: row 1 at distance 2,
    row 2 at 3, row 3 at 2, row 4 at 2, row 5 at 1, row 6 at 11 (out of view).
    Nearest: 5 (1), then three at 2 (rows 1, 3, 4) for two places: rows 1 and 3.
    Kept, in row order: 1, 3, 5; their distances 2, 2, 1."""
    pos = [[50, 50], [52, 50], [50, 53], [50, 48], [48, 50], [51, 50], [61, 50]]
    ag = make_agents(pos, view_distance=10.0, fov=2 * np.pi, max_neighbours=3)
    nb = sense_of(World(100, 100, "contain"), ag).neighbours("agents")
    own = slice(nb.offsets[0], nb.offsets[1])
    assert nb.j[own].tolist() == [1, 3, 5]
    assert nb.dist[own].tolist() == [2.0, 2.0, 1.0]
    np.testing.assert_array_equal(nb.d[own], [[2, 0], [0, -2], [1, 0]])
    # every other agent keeps at most 3, its nearest ones
    assert nb.count.max() == 3
    assert (np.diff(nb.i * ag.n + nb.j) > 0).all()  # sorted by (i, j)


def test_nearest_first_by_hand() -> None:
    """Two observers: [3, 1, 1, 2] with cap 2 keeps both 1s (positions 1, 2);
    [5, 5, 5] with cap 2 keeps the first two (positions 4, 5); the third
    observer [0.5] is under its cap of 2 and keeps it."""
    dist = np.array([3.0, 1.0, 1.0, 2.0, 5.0, 5.0, 5.0, 0.5])
    offsets = np.array([0, 4, 7, 8])
    keep = nearest_first(dist, offsets, np.array([2, 2, 2]))
    assert keep is not None
    assert keep.tolist() == [1, 2, 4, 5, 7]
    assert nearest_first(dist, offsets, np.array([4, 3, 1])) is None


def test_nearest_first_equals_a_full_sort() -> None:
    rng = np.random.default_rng(5)
    for _ in range(30):
        count = rng.integers(0, 40, 50)
        offsets = np.concatenate([[0], np.cumsum(count)])
        dist = rng.integers(0, 6, int(offsets[-1])).astype(np.float64)  # many ties
        cap = rng.integers(0, 12, 50)
        i = np.repeat(np.arange(50), count)
        j = np.arange(i.size)  # increasing within each observer, as in (i, j) order
        want = capped(i, j, dist, cap)
        got = nearest_first(dist, offsets, cap)
        assert (got if got is not None else np.arange(i.size)).tolist() == want.tolist()


@pytest.fixture
def observed_chunks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[int, int]]]:
    """(observers, candidates) of every chunk the grid measures."""
    seen: list[tuple[int, int]] = []
    original = CellGrid.close_pairs

    def spy(self: CellGrid, points: np.ndarray, cell: np.ndarray) -> np.ndarray:
        seen.append((points.shape[0], int(self.candidate_counts(cell).sum())))
        return original(self, points, cell)

    monkeypatch.setattr(CellGrid, "close_pairs", spy)
    yield seen


def test_dense_crowd_on_one_point_stays_within_the_budget(
    monkeypatch: pytest.MonkeyPatch, observed_chunks: list[tuple[int, int]]
) -> None:
    """5,000 agents on one point: 25 million candidate pairs, everyone sees everyone.

    With a 1 MiB budget each chunk measures at most 1 MiB worth of candidates,
    the kept pairs are 64 per agent (the default cap: the 64 lowest other rows,
    all at distance 0), and the traced peak beyond the result stays within
    the budget plus a copy of the result (joining the chunks) and O(agents) tables.
    """
    budget = 1 << 20
    monkeypatch.setattr(sense_module, "NEIGHBOUR_BUDGET", budget)
    n = 5000
    ag = make_agents(np.full((n, 2), 300.0), view_distance=60.0, fov=np.radians(270))
    sense = sense_of(World(800, 600, "wrap"), ag)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        nb = sense.neighbours("agents")
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()

    assert len(observed_chunks) > 100
    for observers, candidates in observed_chunks:
        assert observers == 1 or (
            observers * BYTES_PER_OBSERVER + candidates * BYTES_PER_CANDIDATE <= budget
        )
    assert nb.count.tolist() == [64] * n
    first = nb.j[nb.offsets[0] : nb.offsets[1]]
    assert first.tolist() == list(range(1, 65))
    assert nb.j[nb.offsets[100] : nb.offsets[101]].tolist() == list(range(64))
    assert (nb.dist == 0.0).all()
    result = nb.i.nbytes + nb.j.nbytes + nb.d.nbytes + nb.dist.nbytes + nb.offsets.nbytes
    assert peak <= 2 * result + budget + 200 * n


def test_level_shortcut_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clusters in a sparse crowd, small caps: measured with the nearest-first shortcut
    (observers of the clusters first within a fraction of their view) and without it,
    the very same arrays. The shortcut was taken, and some observers (at the edges of
    the clusters) were measured again with their full view."""
    rng = np.random.default_rng(11)
    n = 3000
    pos = rng.random((n, 2)) * [400.0, 300.0]
    centres = rng.random((5, 2)) * [400.0, 300.0]
    pos[: n // 2] = centres[rng.integers(0, 5, n // 2)] + rng.normal(0.0, 3.0, (n // 2, 2))
    pos = np.mod(pos, [400.0, 300.0])
    ag = make_agents(
        pos, rng.normal(size=(n, 2)), view_distance=20.0, fov=np.radians(270), max_neighbours=4
    )
    world = World(400.0, 300.0, "wrap")
    calls: list[tuple[int, int]] = []
    original = Sense._seen

    def spy(self: Sense, query, rows, cells, test, limit):  # type: ignore[no-untyped-def]
        found, failed = original(self, query, rows, cells, test, limit)
        if limit is not None:
            calls.append((rows.size, failed.size))
        return found, failed

    monkeypatch.setattr(Sense, "_seen", spy)
    with_levels = sense_of(world, ag).neighbours("agents")
    assert sum(r for r, _ in calls) > 1000
    assert sum(f for _, f in calls) > 0
    monkeypatch.setattr(sense_module, "NEIGHBOUR_LEVELS", 0)
    calls.clear()
    without = sense_of(world, ag).neighbours("agents")
    assert calls == []
    assert_same(with_levels, (without.i, without.j, without.offsets, without.d, without.dist))
    assert_same(with_levels, unchunked(world, ag, slice(0, n), slice(0, n)))


def test_nearest_first_rectangle_equals_a_full_sort() -> None:
    """All observers over an equal cap with equal counts (a dense crowd's chunk)."""
    rng = np.random.default_rng(8)
    for m, c, k in [(1, 5, 1), (7, 30, 4), (20, 50, 49), (3, 10, 3)]:
        dist = rng.integers(0, 4, m * c).astype(np.float64)
        offsets = np.arange(m + 1) * c
        i = np.repeat(np.arange(m), c)
        want = capped(i, np.arange(m * c), dist, np.full(m, k))
        got = nearest_first(dist, offsets, np.full(m, k))
        assert got is not None and got.tolist() == want.tolist()
