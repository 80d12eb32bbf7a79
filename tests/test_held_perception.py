"""Held perception (``sense/held.py``) against brute force, on both kernel paths.

Tick A: every agent of group ``a`` thinks. Tick B: the agents moved, the rows were
re-sorted, a few agents despawned, and only some rows think. Then, for every row of
``a``: a thinker's neighbours and nearest ``b`` are exactly a fresh query's; any other
row's are the agents its tick-A query found (the same ids, the despawned ones
dropped), measured where they are on tick B.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from behaviortk.sense.held import HeldPerception, Thinking
from behaviortk.sense.sensing import Sense
from behaviortk.sim import choice
from behaviortk.world.factory import make_agents
from behaviortk.world.spatial import displacement
from behaviortk.world.state import World

N_A, N_B = 40, 6
WORLD = World(width=200.0, height=150.0, edges="wrap")


@pytest.fixture(scope="module")
def kernels() -> Any:
    found, _ = choice.load()
    assert found is not None, "numba kernels failed to load"
    return found


def agents(pos: np.ndarray, vel: np.ndarray, ids: np.ndarray, sizes: tuple[int, int]) -> Any:
    return make_agents(
        pos,
        vel,
        groups=[("a", sizes[0]), ("b", sizes[1])],
        ids=ids,
        view_distance=45.0,
        fov=np.radians(270.0),
        max_neighbours=4,
    )


def sense(ag: Any, thinking: Thinking | None, kernels: Any) -> Sense:
    return Sense(WORLD, ag, np.zeros((ag.n, 1)), 0, 0.0, thinking=thinking, kernels=kernels)


def rows_of(ag: Any, top: int) -> np.ndarray:
    """Agent id -> row in ``ag``, -1 for ids not there (despawned)."""
    table = np.full(top, -1, dtype=np.int64)
    table[ag.ids] = np.arange(ag.n)
    return table


def check(seed: int, share: float, kernels: Any) -> None:
    rng = np.random.default_rng(seed)
    n = N_A + N_B
    ids = np.arange(n, dtype=np.int64)
    pos = rng.uniform(0.0, 150.0, (n, 2))
    vel = rng.normal(0.0, 10.0, (n, 2))
    held = HeldPerception()
    before = agents(pos, vel, ids, (N_A, N_B))
    every = Thinking({"a": np.arange(N_A)}, held, rows_of(before, n))
    first = sense(before, every, kernels)
    nb_a, (near_a, _) = first.neighbours("a", "same"), first.nearest("a", "b")
    plain = sense(before, None, kernels)
    assert np.array_equal(nb_a.j, plain.neighbours("a", "same").j)  # all think: a fresh query
    # tick B: moved, re-sorted within each group, some agents of both groups despawned
    gone = set(rng.choice(n, size=5, replace=False).tolist())
    keep_a = [i for i in rng.permutation(N_A).tolist() if i not in gone]
    keep_b = [i for i in (N_A + rng.permutation(N_B)).tolist() if i not in gone]
    order = np.array(keep_a + keep_b, dtype=np.int64)
    moved = pos + rng.normal(0.0, 12.0, pos.shape)
    after = agents(moved[order], vel[order], ids[order], (len(keep_a), len(keep_b)))
    think = np.sort(rng.choice(len(keep_a), size=int(share * len(keep_a)), replace=False))
    lod = Thinking({"a": think}, held, rows_of(after, n))
    got = sense(after, lod, kernels)
    nb, (near, dist) = got.neighbours("a", "same"), got.nearest("a", "b")
    fresh = sense(after, None, None)
    want_nb, (want_near, want_dist) = fresh.neighbours("a", "same"), fresh.nearest("a", "b")
    row_after = rows_of(after, n)
    for r in range(len(keep_a)):
        mine = slice(int(nb.offsets[r]), int(nb.offsets[r + 1]))
        if r in think:
            ref = slice(int(want_nb.offsets[r]), int(want_nb.offsets[r + 1]))
            assert nb.j[mine].tolist() == want_nb.j[ref].tolist()
            assert near[r] == want_near[r] and dist[r] == want_dist[r]
            continue
        old = int(ids[order[r]])  # the agent's id; its tick-A row is its id
        seen = before.ids[nb_a.j[nb_a.offsets[old] : nb_a.offsets[old + 1]]]
        expected = np.sort(row_after[seen][row_after[seen] >= 0])
        assert nb.j[mine].tolist() == expected.tolist(), f"row {r}"
        d = displacement(after.pos[r], after.pos[expected], WORLD)
        np.testing.assert_allclose(nb.d[mine], d, rtol=0, atol=1e-9)
        np.testing.assert_allclose(nb.dist[mine], np.hypot(d[:, 0], d[:, 1]), rtol=0, atol=1e-9)
        target = int(near_a[old])
        expect = -1 if target < 0 else int(row_after[before.ids[target]])
        assert near[r] == expect, f"row {r}"
        if expect >= 0:
            gap = displacement(after.pos[r], after.pos[expect], WORLD)
            assert dist[r] == pytest.approx(float(np.hypot(*gap)), abs=1e-9)
        else:
            assert dist[r] == np.inf
    assert np.array_equal(nb.i, np.repeat(np.arange(len(keep_a)), np.diff(nb.offsets)))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), share=st.sampled_from([0.0, 0.25, 0.5, 1.0]))
def test_held_perception_numpy(seed: int, share: float) -> None:
    check(seed, share, None)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), share=st.sampled_from([0.0, 0.25, 0.5, 1.0]))
def test_held_perception_compiled(seed: int, share: float, kernels: Any) -> None:
    check(seed, share, kernels)
