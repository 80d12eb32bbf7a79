"""``SpatialIndex.nearest`` when one side is small (the batch engine's speed fix): the
brute-force path gives the same rows and the same distances as the tree path, and both
agree with a hand-worked case on a wrapped world."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from behaviortk.world import spatial
from behaviortk.world.spatial import SpatialIndex
from behaviortk.world.state import World


def test_wrapped_nearest_by_hand() -> None:
    """World 100 x 100, wrap: from (1, 50) the target at (99, 50) is 2 away through the
    edge, the one at (10, 50) is 9 away. Radius 5 keeps the first only."""
    world = World(width=100.0, height=100.0, edges="wrap")
    pos = np.array([[1.0, 50.0], [99.0, 50.0], [10.0, 50.0]])
    index, dist = SpatialIndex(world, pos).nearest(slice(0, 1), slice(1, 3), 5.0)
    assert index.tolist() == [1]
    assert dist.tolist() == [pytest.approx(2.0)]
    index, dist = SpatialIndex(world, pos).nearest(slice(1, 3), slice(0, 1), 5.0)
    assert index.tolist() == [0, -1]
    assert dist[1] == np.inf


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n_a=st.integers(1, 40),
    n_b=st.integers(1, 40),
    overlap=st.booleans(),
    edges=st.sampled_from(["wrap", "bounce"]),
    radius=st.sampled_from([15.0, 40.0, np.inf]),
)
def test_small_side_matches_tree(
    seed: int, n_a: int, n_b: int, overlap: bool, edges: str, radius: float
) -> None:
    rng = np.random.default_rng(seed)
    world = World(width=120.0, height=80.0, edges=edges)
    n = max(n_a, n_b) if overlap else n_a + n_b
    pos = rng.random((n, 2)) * [120.0, 80.0]
    a = slice(0, n_a)
    b = slice(0, n_b) if overlap else slice(n_a, n_a + n_b)
    small = SpatialIndex(world, pos).nearest(a, b, radius)
    saved = spatial.SMALL_SIDE
    try:
        spatial.SMALL_SIDE = -1  # force the tree path
        tree = SpatialIndex(world, pos).nearest(a, b, radius)
    finally:
        spatial.SMALL_SIDE = saved
    np.testing.assert_array_equal(small[0], tree[0])
    np.testing.assert_array_equal(small[1], tree[1])
