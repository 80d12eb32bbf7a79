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
from behaviortk.sense.query_loops import separation_pair
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
    """Ticks A (all think), B and C (a share thinks; rows moved, re-sorted, a few agents
    despawned before each): every answer against a model kept by id, by brute force."""
    rng = np.random.default_rng(seed)
    n = N_A + N_B
    pos = rng.uniform(0.0, 150.0, (n, 2))
    vel = rng.normal(0.0, 10.0, (n, 2))
    held = HeldPerception()
    alive = np.arange(n, dtype=np.int64)  # ids, in tick A's rows
    ag = agents(pos, vel, alive, (N_A, N_B))
    seen: dict[int, list[int]] = {}  # observer id -> the ids it holds as neighbours
    target: dict[int, int] = {}  # observer id -> the id of its nearest b (-1: none)
    for tick in range(3):
        if tick:  # moved, re-sorted within each group, some agents of both groups gone
            ids_a, ids_b = (ag.ids[ag.slices[g]] for g in ("a", "b"))
            gone = set(rng.choice(ag.ids, size=3, replace=False).tolist())
            keep_a = [i for i in rng.permutation(ids_a).tolist() if i not in gone]
            keep_b = [i for i in rng.permutation(ids_b).tolist() if i not in gone]
            alive = np.array(keep_a + keep_b, dtype=np.int64)
            pos[alive] += rng.normal(0.0, 12.0, (alive.size, 2))
            ag = agents(pos[alive], vel[alive], alive, (len(keep_a), len(keep_b)))
        row_of = rows_of(ag, n)
        size = ag.slices["a"].stop
        count = size if tick == 0 else int(share * size)
        think = np.sort(rng.choice(size, size=count, replace=False))
        got = sense(ag, Thinking({"a": think}, held, row_of), kernels)
        nb, (near, dist) = got.neighbours("a", "same"), got.nearest("a", "b")
        sums = getattr(nb, "sums", None)  # compiled: the pass the next tick's identities use
        assert (sums is None) == (kernels is None)
        fresh = sense(ag, None, None)
        want_nb, (want_near, _) = fresh.neighbours("a", "same"), fresh.nearest("a", "b")
        for r in range(size):
            me = int(ag.ids[r])
            if r in think:
                ref = want_nb.j[want_nb.offsets[r] : want_nb.offsets[r + 1]]
                seen[me] = ag.ids[ref].tolist()
                target[me] = int(ag.ids[want_near[r]]) if want_near[r] >= 0 else -1
            rows = np.sort(np.array([row_of[i] for i in seen[me] if row_of[i] >= 0], np.int64))
            mine = slice(int(nb.offsets[r]), int(nb.offsets[r + 1]))
            assert nb.j[mine].tolist() == rows.tolist(), f"tick {tick} row {r}"
            d = displacement(ag.pos[r], ag.pos[rows], WORLD)
            np.testing.assert_allclose(nb.d[mine], d, rtol=0, atol=1e-9)
            np.testing.assert_allclose(nb.dist[mine], np.hypot(d[:, 0], d[:, 1]), atol=1e-9)
            if sums is not None:  # separation terms, neighbours' velocities, offsets
                sx = sy = 0.0
                for q, j in zip(range(mine.start, mine.stop), rows.tolist(), strict=True):
                    tx, ty = separation_pair.py_func(r, j, float(nb.d[q, 0]), float(nb.d[q, 1]))
                    sx, sy = sx + tx, sy + ty
                want = [sx, sy, *ag.vel[rows].sum(axis=0), *d.sum(axis=0)]
                np.testing.assert_allclose(sums[r], want, rtol=0, atol=1e-9)
            expect = row_of[target[me]] if target[me] >= 0 else -1
            assert near[r] == expect, f"tick {tick} row {r}"
            if expect >= 0:
                gap = displacement(ag.pos[r], ag.pos[expect], WORLD)
                assert dist[r] == pytest.approx(float(np.hypot(*gap)), abs=1e-9)
            else:
                assert dist[r] == np.inf
        assert np.array_equal(nb.i, np.repeat(np.arange(size), np.diff(nb.offsets)))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), share=st.sampled_from([0.0, 0.25, 0.5, 1.0]))
def test_held_perception_numpy(seed: int, share: float) -> None:
    check(seed, share, None)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), share=st.sampled_from([0.0, 0.25, 0.5, 1.0]))
def test_held_perception_compiled(seed: int, share: float, kernels: Any) -> None:
    check(seed, share, kernels)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), every=st.integers(2, 5), compiled=st.booleans())
def test_deciding_answers_are_the_thinkers_alone(
    kernels: Any, seed: int, every: int, compiled: bool
) -> None:
    """While a LOD group decides, its nearest target's facts (``RowFacts``), their compact
    rows (``facts_at``) and its neighbour counts are what every row's answers give at the
    thinkers' rows, and no target (zeros, -1, invalid) at the others', on both kernel
    paths; ``in_range`` at the thinkers is the mask of those facts."""
    from behaviortk.leaves.conditions import InRange, distances, in_range, in_range_mask
    from behaviortk.sense.sensing import RowFacts, facts_at
    from behaviortk.sense.target_kinds import NearestTarget

    rng = np.random.default_rng(seed)
    n = N_A + N_B
    ag = agents(rng.uniform(0, 150, (n, 2)), rng.normal(0, 5, (n, 2)), np.arange(n), (N_A, N_B))
    local = np.flatnonzero(np.arange(N_A) % every == seed % every)
    thinking = Thinking({"a": local}, HeldPerception(), np.arange(n))
    spec = NearestTarget(kind="nearest", group="b")
    k = kernels if compiled else None
    every_row = sense(ag, None, k)  # the same agents, every row asking afresh
    full = every_row.target(spec, "a")
    counts = every_row.neighbours("a").count
    deciding = sense(ag, thinking, k)
    deciding.deciding = True
    facts = deciding.target(spec, "a")
    assert isinstance(facts, RowFacts)
    some = facts_at(facts, thinking.rows["a"])
    for name in ("pos", "vel", "agent", "valid"):
        assert np.array_equal(getattr(some, name), getattr(full, name)[local]), name
        assert np.array_equal(getattr(facts, name)[local], getattr(full, name)[local]), name
    others = np.ones(N_A, dtype=bool)
    others[local] = False
    assert not facts.valid[others].any() and (facts.agent[others] == -1).all()
    assert not facts.pos[others].any() and not facts.vel[others].any()
    assert np.array_equal(deciding.thinkers_neighbour_count("a"), counts[local])
    held = deciding.neighbours("a")  # a reader of the group-sized neighbours while deciding
    expected = np.where(others, 0, counts)
    assert np.array_equal(held.count, expected)
    assert np.array_equal(held.offsets, np.concatenate([[0], np.cumsum(expected)]))
    model = InRange(type="in_range", target=spec, radius=40.0)
    prev = rng.random(N_A) < 0.5
    found = in_range(model, deciding, "a", prev, None)
    own = ag.pos[:N_A][local]
    dist = distances(own, some.pos)
    assert np.array_equal(found[local], in_range_mask(dist, some.valid, 40.0, 0.0, prev[local]))
    assert not found[others].any()
