"""Minimum-image displacement and the spatial index's candidate pairs / nearest."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from behaviortk.world.grid import grid_shape
from behaviortk.world.spatial import SpatialIndex, displacement, padded, wrap_positions
from behaviortk.world.state import World


def test_displacement_minimum_image_on_torus() -> None:
    """From (1,50) to (99,50) on a 100x100 torus the short way is -2 in x (98 - 100)."""
    w = World(width=100, height=100, edges="wrap")
    np.testing.assert_allclose(displacement(np.array([1.0, 50]), np.array([99.0, 50]), w), [-2, 0])
    np.testing.assert_allclose(displacement(np.array([50.0, 98]), np.array([50.0, 3]), w), [0, 5])


def test_displacement_plain_on_bounded_worlds() -> None:
    w = World(width=100, height=100, edges="bounce")
    np.testing.assert_allclose(displacement(np.array([1.0, 50]), np.array([99.0, 50]), w), [98, 0])


def test_wrap_positions_never_equal_size() -> None:
    w = World(width=10, height=10, edges="wrap")
    p = wrap_positions(np.array([[-1e-20, 10.0], [25.0, -3.0]]), w)
    assert (p >= 0).all() and (p < 10).all()
    np.testing.assert_allclose(p[1], [5.0, 7.0])


def test_pairs_same_rows_are_directed_and_exclude_self() -> None:
    w = World(width=100, height=100, edges="contain")
    pos = np.array([[10.0, 10], [13, 14], [50, 50], [10, 10]])  # 0-1 at 5, 0-3 coincident
    idx = SpatialIndex(w, pos)
    i, j = idx.pairs(slice(0, 4), slice(0, 4), 5.0)
    got = sorted(zip(i.tolist(), j.tolist(), strict=True))
    assert got == [(0, 1), (0, 3), (1, 0), (1, 3), (3, 0), (3, 1)]


def test_pairs_between_groups_across_wrap() -> None:
    w = World(width=100, height=100, edges="wrap")
    pos = np.array([[1.0, 50], [99, 50], [60, 60]])
    idx = SpatialIndex(w, pos)
    i, j = idx.pairs(slice(0, 1), slice(1, 3), 3.0)
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == [(0, 1)]
    i, j = idx.pairs(slice(0, 1), slice(0, 3), 3.0)  # "any": self removed
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == [(0, 1)]


def test_nearest_radius_inclusive_and_self_excluded() -> None:
    """Hunter at origin; prey at distance 5 (3,4) and 10 (6,8)."""
    w = World(width=100, height=100, edges="bounce")
    pos = np.array([[0.0, 0], [3, 4], [6, 8]])
    idx = SpatialIndex(w, pos)
    k, d = idx.nearest(slice(0, 1), slice(1, 3), np.inf)
    assert k.tolist() == [1] and d.tolist() == [5.0]
    k, d = idx.nearest(slice(0, 1), slice(1, 3), 5.0)
    assert k.tolist() == [1]
    k, d = idx.nearest(slice(0, 1), slice(1, 3), 4.9)
    assert k.tolist() == [-1] and d.tolist() == [np.inf]
    k, d = idx.nearest(slice(0, 3), slice(0, 3), np.inf)
    assert k.tolist() == [1, 0, 1]
    np.testing.assert_allclose(d, [5, 5, 5])


def test_nearest_coincident_agents_find_each_other() -> None:
    w = World(width=100, height=100, edges="wrap")
    pos = np.array([[20.0, 20], [20, 20], [99, 99]])
    k, d = SpatialIndex(w, pos).nearest(slice(0, 3), slice(0, 3), np.inf)
    assert k.tolist() == [1, 0, 0] or k.tolist() == [1, 0, 1]
    np.testing.assert_allclose(d[:2], [0, 0])
    np.testing.assert_allclose(d[2], np.hypot(21, 21))


def test_empty_inputs() -> None:
    w = World(width=100, height=100, edges="wrap")
    idx = SpatialIndex(w, np.zeros((0, 2)))
    i, j = idx.pairs(slice(0, 0), slice(0, 0), 10.0)
    assert i.size == 0 and j.size == 0
    k, d = idx.nearest(slice(0, 0), slice(0, 0), 10.0)
    assert k.size == 0 and d.size == 0
    one = SpatialIndex(w, np.array([[5.0, 5]]))
    k, d = one.nearest(slice(0, 1), slice(0, 1), np.inf)
    assert k.tolist() == [-1] and d.tolist() == [np.inf]


def brute_pairs(pos: np.ndarray, world: World, r: float) -> set[tuple[int, int]]:
    n = len(pos)
    out = set()
    for i in range(n):
        for j in range(i + 1, n):
            d = displacement(pos[i], pos[j], world)
            if np.hypot(d[0], d[1]) <= r:
                out.add((i, j))
    return out


@settings(max_examples=60, deadline=None)
@given(
    edges=st.sampled_from(["wrap", "bounce"]),
    n=st.integers(0, 40),
    r=st.floats(0.0, 60.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_grid_and_tree_find_exactly_the_brute_force_pairs(
    edges: str, n: int, r: float, seed: int
) -> None:
    """Both indexes (grid with half stencil, cKDTree) return every pair within r once;
    positions include a cluster of coincident agents and points on the edges."""
    rng = np.random.default_rng(seed)
    w = World(width=100.0, height=70.0, edges=edges)
    pos = rng.random((n, 2)) * [100.0, 70.0]
    if n > 4:
        pos[:3] = pos[3]  # coincident
        pos[4] = [0.0, 69.999]
    expected = brute_pairs(pos, w, r)
    for use_grid in (True, False):
        lo, hi = SpatialIndex(w, pos, use_grid=use_grid).unordered_pairs(slice(0, n), padded(r))
        got = list(zip(lo.tolist(), hi.tolist(), strict=True))
        assert len(got) == len(set(got))
        # the padded radius may add pairs within 1e-9 of r; none is missing
        assert expected <= set(got)
        extra = set(got) - expected
        for i, j in extra:
            d = displacement(pos[i], pos[j], w)
            assert np.hypot(d[0], d[1]) <= padded(r)


def test_grid_on_a_small_wrapped_world_falls_back_to_the_tree() -> None:
    """A radius larger than a third of the world leaves < 3 cells: the tree answers."""
    w = World(width=30, height=30, edges="wrap")
    pos = np.array([[1.0, 1], [29, 29], [15, 15]])
    lo, hi = SpatialIndex(w, pos).unordered_pairs(slice(0, 3), 12.0)
    assert sorted(zip(lo.tolist(), hi.tolist(), strict=True)) == [(0, 1)]


def test_grid_shape_cells_at_least_radius_and_capped() -> None:
    """1000 wide, radius 16: floor(1000/16) = 62 cells per axis (62.5 -> 62, each 16.1 wide);
    a tiny radius is capped at 4 cells per agent and never more than 65535 cells."""
    assert grid_shape(1000.0, 1000.0, 16.0, 10_000) == (62, 62)
    nx, ny = grid_shape(1000.0, 1000.0, 1e-9, 100)
    assert nx * ny <= 400 and 1000.0 / nx >= 1e-9
    nx, ny = grid_shape(1e6, 1.0, 1e-9, 10**7)
    assert nx * ny <= 65535


def test_wrap_positions_next_to_multiples_of_the_size() -> None:
    w = World(width=1000, height=3, edges="wrap")
    near = np.array([[1000 - 1e-13, 3 - 1e-16], [-1e-13, -3e-16], [2000.0, 6.0], [-1000.0, -3.5]])
    p = wrap_positions(near, w)
    assert (p >= 0).all() and (p[:, 0] < 1000).all() and (p[:, 1] < 3).all()
    np.testing.assert_allclose(p[2:], [[0.0, 0.0], [0.0, 2.5]])
