"""Dense crowds (issue 23, item 7): the compiled nearest-first query, and pair searches in chunks.

At 200,000 agents in 800 x 600 each observer sees ~3,500 others and keeps its
64 nearest. On the fine grid ``grid_shape`` picks for such crowds the compiled
query visits the cells within a guessed radius and keeps the pairs under the
cap-th distance (issue 25); it must keep exactly the pairs of the NumPy reference (ties:
the lower row) in scenes built to stress that: clumps across a wrapped edge,
coincident agents, agents on cell borders and outside a bounded world, caps
from 1 up. The overlap figure's pair search runs a chunk at a time; its
chunks' sizes are checked against the budget (computed, not measured) and
its answers against brute force.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_compiled import check_tick, compiled_sense

from behaviortk.format.loader import load_text
from behaviortk.sense import query_loops as kspatial
from behaviortk.sim import choice
from behaviortk.sim.simulation import Simulation
from behaviortk.world import grid
from behaviortk.world.overlap import close_pairs, overlapping
from behaviortk.world.spatial import displacement_columns, padded, wrap_positions
from behaviortk.world.state import World

WIDTH, HEIGHT = 200.0, 120.0


@pytest.fixture(scope="module")
def kernels() -> Any:
    found, _ = choice.load()
    assert found is not None, "numba kernels failed to load"
    return found


def dense(n: int, *, edges: str, cap: int, fov: float = 270.0, view: float = 30.0) -> Simulation:
    """``n`` flocking agents (group ``a``, ``cap`` kept each) plus 5 of group ``b``, reference
    kernels, the prey of evade_or_flock's density or more."""
    spawn = {"kind": "area", "min": [0, 0], "max": [WIDTH, HEIGHT]}
    flock = {
        "type": "blend",
        "children": [
            {"type": "separation", "weight": 1.5},
            {"type": "alignment"},
            {"type": "cohesion", "weight": 0.8, "normalize": False},
        ],
    }
    definition = {
        "name": "dense",
        "world": {"width": WIDTH, "height": HEIGHT, "edges": edges, "seed": 3},
        "groups": [
            {"name": "a", "count": n, "spawn": spawn, "speed": 10, "tree": "flock",
             "view_distance": view, "fov": fov, "max_neighbours": cap},
            {"name": "b", "count": 5, "spawn": spawn, "tree": "flock", "fov": 90},
        ],
        "trees": {"flock": {"root": flock}},
    }  # fmt: skip
    return Simulation(load_text(json.dumps(definition), "dense.json"), kernels="numpy")


def same_neighbours(sim: Simulation, kernels: Any) -> None:
    """Every neighbour query of the tick: the compiled pairs are the reference's, bit for bit."""
    ref = sim.sense()
    mine = compiled_sense(sim, ref, kernels)
    for group, of in (("a", "same"), ("a", "any"), ("b", "a"), ("a", "b")):
        a, b = ref.neighbours(group, of), mine.neighbours(group, of)
        assert np.array_equal(a.offsets, b.offsets), (group, of)
        assert np.array_equal(a.i, b.i) and np.array_equal(a.j, b.j), (group, of)
        assert np.array_equal(a.d, b.d) and np.array_equal(a.dist, b.dist), (group, of)


def fine_grid(sim: Simulation) -> bool:
    """Whether the compiled query of group ``a`` runs on the fine grid of dense crowds."""
    ag = sim.agents
    rows = ag.slices["a"]
    cap = int(ag.max_neighbours[rows].max())
    radius = padded(float(ag.view_distance[rows].max()))
    *_, rx, ry = kspatial.grid_shape(WIDTH, HEIGHT, radius, rows.stop - rows.start, cap)
    return rx > 1 and ry > 1


@pytest.mark.parametrize("edges", ["wrap", "contain"])
@pytest.mark.parametrize("cap", [1, 7, 64])
def test_dense_clumps_keep_the_reference_pairs(edges: str, cap: int, kernels: Any) -> None:
    sim = dense(3000, edges=edges, cap=cap)
    assert fine_grid(sim)
    pos = sim.agents.pos
    rng = np.random.default_rng(cap)
    pos[100:700] = rng.normal([3.0, 60.0], 4.0, (600, 2))  # a clump across the left edge
    pos[700:760] = pos[5]  # coincident: equal distances, the lower rows kept
    side = WIDTH / kspatial.grid_shape(WIDTH, HEIGHT, padded(30.0), 3000, cap)[0]
    pos[760:800, 0] = side * np.arange(40)  # on cell borders
    pos[760:800, 1] = 2.0 * side
    if edges == "wrap":
        sim.agents.pos[:] = wrap_positions(pos, sim.world)
    else:
        pos[800:803] = [[-4.0, 50.0], [WIDTH + 3.0, 50.0], [WIDTH + 3.0, HEIGHT + 2.0]]
    same_neighbours(sim, kernels)


def test_a_dense_flock_ticks_like_the_reference(kernels: Any) -> None:
    """Pairs, conditions, flocking forces and the integrated state, two ticks on the fine grid."""
    sim = dense(3000, edges="wrap", cap=20)
    assert fine_grid(sim)
    for _ in range(2):
        check_tick(sim, kernels)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    cap=st.integers(1, 90),
    view=st.sampled_from([6.0, 15.0, 30.0]),
    fov=st.sampled_from([90.0, 270.0, 360.0]),
    clumps=st.integers(1, 4),
)
def test_random_clumps_keep_the_reference_pairs(
    seed: int, cap: int, view: float, fov: float, clumps: int, kernels: Any
) -> None:
    n = 800
    sim = dense(n, edges="wrap", cap=cap, fov=fov, view=view)
    rng = np.random.default_rng(seed)
    centres = rng.uniform([0, 0], [WIDTH, HEIGHT], (clumps, 2))
    which = rng.integers(0, clumps, n)
    spread = rng.uniform(0.5, 6.0, clumps)[which, None]
    pos = centres[which] + rng.normal(0.0, 1.0, (n, 2)) * spread
    pos[:50] = np.round(pos[:50])  # exact ties of distance
    sim.agents.pos[:n] = pos
    sim.agents.max_neighbours[: n // 2] = rng.integers(0, cap + 1, n // 2)  # caps differ, 0 too
    sim.agents.pos[:] = wrap_positions(sim.agents.pos, sim.world)
    same_neighbours(sim, kernels)


def test_the_grid_is_fine_only_where_the_cap_binds() -> None:
    """Dense: cells hold about ``cap / CAP_PER_CELL`` points; otherwise cells are at least the
    radius wide and an observer looks at its 3 x 3 cells, as without a cap."""
    w, h, n = 800.0, 600.0, 200_000
    nx, ny, rx, ry = kspatial.grid_shape(w, h, 60.0, n, 64)
    per_cell = n / (nx * ny)
    assert 0.5 * 64 / kspatial.CAP_PER_CELL <= per_cell <= 2 * 64 / kspatial.CAP_PER_CELL
    assert rx >= 60.0 / (w / nx) and ry >= 60.0 / (h / ny)  # the stencil still covers the view
    for points, cap in ((3_000, 64), (200_000, None), (200_000, 100_000), (60, 64)):
        nx, ny, rx, ry = kspatial.grid_shape(w, h, 60.0, points, cap)
        assert (rx, ry) == (1, 1) and w / nx >= 60.0 and h / ny >= 60.0, (points, cap)
    *_, rx, ry = kspatial.grid_shape(w, h, 60.0, n, 1)  # cells of 1/8 point: too many to visit
    assert rx <= kspatial.MAX_REACH and ry <= kspatial.MAX_REACH
    plain = kspatial.grid_shape(w, h, 60.0, 200_000)
    assert kspatial.grid_shape(w, h, 60.0, 200_000, None) == plain


# ------------------------------------------------------------- pair search
def brute_pairs(points: np.ndarray, world: World, radius: float) -> set[tuple[int, int]]:
    n = points.shape[0]
    i, j = np.triu_indices(n, 1)
    dx, dy = displacement_columns(points, i, j, world)
    close = dx * dx + dy * dy <= radius * radius
    return set(zip(i[close].tolist(), j[close].tolist(), strict=True))


@pytest.mark.parametrize("edges", ["wrap", "bounce"])
def test_pair_chunks_stay_within_the_budget(edges: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every chunk's candidates fit the budget (a chunk of one agent may not), and the chunks
    together are every close pair once, in the order of one big chunk."""
    world = World(WIDTH, HEIGHT, edges)
    rng = np.random.default_rng(1)
    points = rng.uniform([0, 0], [WIDTH, HEIGHT], (2000, 2))
    points[:300] = rng.normal([100.0, 60.0], 2.0, (300, 2))  # a clump: long candidate lists
    radius = 6.0
    whole = list(grid.grid_pair_chunks(points, WIDTH, HEIGHT, radius, edges == "wrap") or [])
    assert len(whole) == 1
    budget = 4096
    monkeypatch.setattr(grid, "PAIR_BUDGET", budget)
    chunks = list(grid.grid_pair_chunks(points, WIDTH, HEIGHT, radius, edges == "wrap") or [])
    assert len(chunks) > 20
    # a chunk over the budget holds a single agent's candidates (its pairs share its row)
    for c in chunks:
        if c.candidates * grid.BYTES_PER_PAIR_CANDIDATE > budget:
            owners = np.unique(np.concatenate([c.i, c.j])).tolist()
            assert not owners or any(np.all((c.i == o) | (c.j == o)) for o in owners)
    assert sum(c.candidates for c in chunks) == whole[0].candidates
    for column in ("i", "j", "dx", "dy"):
        joined = np.concatenate([getattr(c, column) for c in chunks])
        assert np.array_equal(joined, getattr(whole[0], column)), column
    found = {(min(a, b), max(a, b)) for c in chunks for a, b in zip(c.i, c.j, strict=True)}
    assert found == brute_pairs(points, world, radius)


def test_overlap_in_chunks_equals_brute_force(monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(WIDTH, HEIGHT, "wrap")
    rng = np.random.default_rng(2)
    pos = rng.uniform([0, 0], [WIDTH, HEIGHT], (1500, 2))
    pos[:200] = wrap_positions(rng.normal([1.0, 1.0], 3.0, (200, 2)), world)  # around a corner
    radius = np.where(np.arange(1500) < 3, 8.0, 1.5)  # a few large agents widen the search
    expected_i, expected_j = close_pairs(world, pos, radius)
    monkeypatch.setattr(grid, "PAIR_BUDGET", 2048)
    i, j = close_pairs(world, pos, radius)
    assert np.array_equal(i, expected_i) and np.array_equal(j, expected_j)
    n = pos.shape[0]
    a, b = np.triu_indices(n, 1)
    dx, dy = displacement_columns(pos, a, b, world)
    limit = radius[a] + radius[b]
    close = dx * dx + dy * dy < limit * limit
    assert set(zip(i.tolist(), j.tolist(), strict=True)) == set(
        zip(a[close].tolist(), b[close].tolist(), strict=True)
    )
    mask = np.zeros(n, dtype=bool)
    mask[a[close]] = mask[b[close]] = True
    assert np.array_equal(overlapping(world, pos, radius), mask)
