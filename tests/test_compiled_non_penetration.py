"""Non-penetration on compiled kernels (``world/non_penetration_loops.py``) against the NumPy
constraint (``world/non_penetration.py``), the reference.

Every tick of a NumPy run, a copy of the constraint (its candidate lists as they
are) runs on the compiled kernel from the same state: positions within 1e-9 per
component (the kernel sums the moves in the reference's order, so they are in
fact the same bits) and the same passes (the compiled kernel may build its
lists sooner: a bound on how far pushes took the agents). Then random
packed scenes with obstacles, walls crossed this tick, fixed agents, unequal
masses, coincident agents and pushes that outrun the skin (lists rebuilt
between passes), wrapped and bounded.
"""

from __future__ import annotations

import copy
import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from behaviortk.format.loader import load_text
from behaviortk.sim import choice
from behaviortk.sim.simulation import Simulation
from behaviortk.world import non_penetration
from behaviortk.world import non_penetration_loops as knp
from behaviortk.world.build import wall_geometry
from behaviortk.world.factory import make_agents
from behaviortk.world.non_penetration import NonPenetration, pair_constants
from behaviortk.world.overlap import close_pairs
from behaviortk.world.rows import pick, rearrange
from behaviortk.world.spatial import wrap_positions
from behaviortk.world.state import World

DEFINITIONS = Path(__file__).resolve().parents[1] / "definitions"
TOLERANCE = 1e-9


@pytest.fixture(scope="module")
def kernels() -> Any:
    found, _ = choice.load()
    assert found is not None, "numba kernels failed to load"
    return found


def both(
    constraint: NonPenetration, kernels: Any, world: World, agents: Any, before: Any, fixed: Any
) -> Any:
    """Apply the constraint on NumPy (to ``agents``) and a copy on kernels (to a copy of
    ``agents``) from the same state; assert they agree. Returns the compiled copy."""
    twin = copy.copy(constraint)
    twin.kernels = kernels
    twin._scratch = {}
    other = copy.copy(agents)
    other.pos = agents.pos.copy()  # the compiled constraint pushes in place
    NonPenetration.apply(twin, world, other, before, fixed)
    NonPenetration.apply(constraint, world, agents, before, fixed)
    assert np.abs(other.pos - agents.pos).max(initial=0.0) <= TOLERANCE
    assert np.array_equal(other.pos, agents.pos)  # in fact the same bits: the same order of sums
    assert twin.last_passes == constraint.last_passes
    return twin


@pytest.mark.parametrize("name", ["crowd_no_overlap", "evade_or_flock", "wall_avoidance"])
def test_shipped_scenes_agree_with_numpy_tick_by_tick(name: str, kernels: Any) -> None:
    data = json.loads((DEFINITIONS / f"{name}.json").read_text())
    data["world"]["non_penetration"] = True
    sim = Simulation(load_text(json.dumps(data), name), engine="batch", kernels="numpy")
    constraint = sim.non_penetration
    assert constraint is not None and constraint.kernels is None
    seen = {"passes": 0}

    def apply(world: World, agents: Any, before: Any, fixed: Any) -> None:
        both(constraint, kernels, world, agents, before, fixed)
        seen["passes"] += constraint.last_passes

    constraint.apply = apply  # type: ignore[method-assign]
    sim.run(40)
    assert seen["passes"] > 40  # pairs were pushed: the comparison was not of nothing


def test_a_simulation_on_kernels_runs_the_compiled_passes(kernels: Any) -> None:
    data = json.loads((DEFINITIONS / "crowd_no_overlap.json").read_text())
    compiled = Simulation(load_text(json.dumps(data), "c"), engine="batch", kernels="numba")
    plain = Simulation(load_text(json.dumps(data), "c"), engine="batch", kernels="numpy")
    assert compiled.non_penetration is not None and plain.non_penetration is not None
    assert compiled.non_penetration.kernels is compiled.kernels is not None
    assert plain.non_penetration.kernels is None


class _Wall:
    def __init__(self, start: tuple[float, float], to: tuple[float, float]) -> None:
        self.start, self.to, self.inside = start, to, "left"


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 80),
    edges=st.sampled_from(["wrap", "contain"]),
    passes=st.integers(1, 30),
    pick_below=st.sampled_from([0.0, knp.PICK_BELOW, 3.0]),
)
def test_random_packed_scenes_agree_with_numpy(
    seed: int, n: int, edges: str, passes: int, pick_below: float
) -> None:
    """``pick_below`` 0: later passes scan the whole list; 3: they always pick the pairs of
    the agents just moved through the per-agent index (and sort them): the same bits."""
    found, _ = choice.load()
    rng = np.random.default_rng(seed)
    w = World(width=60.0, height=60.0, edges=edges)
    w.obstacle_pos = rng.random((2, 2)) * 60.0
    w.obstacle_radius = rng.uniform(2.0, 8.0, 2)
    a, b, normal = wall_geometry(
        [_Wall((5.0, 30.0), (55.0, 30.0)), _Wall((30.0, 5.0), (30.0, 50.0))]
    )
    w.wall_a, w.wall_b, w.wall_normal = a, b, normal
    pos = rng.random((n, 2)) * 60.0
    pos[1] = pos[0]  # a coincident pair
    ag = make_agents(pos, radius=rng.uniform(2.0, 6.0, n), mass=rng.uniform(0.5, 2.0, n))
    fixed = rng.random(n) < 0.1
    constraint = NonPenetration(passes, skin_radii=rng.choice([0.5, 3.0]))
    shipped = knp.PICK_BELOW
    knp.PICK_BELOW = pick_below
    try:
        for _ in range(3):  # successive ticks: lists kept, then stale
            before = ag.pos.copy()
            ag.pos = np.clip(before + rng.normal(0.0, 3.0, (n, 2)), 0.0, 59.999)  # some cross
            both(constraint, found, w, ag, before, fixed)  # a wall
    finally:
        knp.PICK_BELOW = shipped


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 300),
    edges=st.sampled_from(["wrap", "contain"]),
    reach=st.sampled_from([0.0, 1.5, 12.0]),
)
def test_compiled_candidates_are_the_numpy_pairs(
    seed: int, n: int, edges: str, reach: float
) -> None:
    """The compiled search (a half stencil over its own grid, then sorted) finds exactly the
    pairs of ``world.overlap.close_pairs`` that ``pair_constants`` keeps, in ``(i, j)`` order."""
    found, _ = choice.load()
    rng = np.random.default_rng(seed)
    w = World(width=90.0, height=70.0, edges=edges)
    x = rng.uniform(0.0, 90.0, n)
    y = rng.uniform(0.0, 70.0, n)
    x[: n // 3] = np.round(x[: n // 3])  # agents on cell borders and at equal distances
    radius = rng.uniform(1.0, 4.0, n)
    inv_mass = np.where(rng.random(n) < 0.2, 0.0, rng.uniform(0.5, 2.0, n))
    got = found.candidates(w, x, y, radius, reach, inv_mass)
    if got is None:  # fewer than 3 cells across a wrapped world
        return
    pos = np.stack([x, y], axis=1)
    i, j = close_pairs(w, wrap_positions(pos, w) if edges == "wrap" else pos, radius, reach)
    order = np.lexsort((j, i))
    want_i, want_j, _, _ = pair_constants(radius, inv_mass, i[order], j[order])
    assert np.array_equal(got[0], want_i) and np.array_equal(got[1], want_j)


@pytest.mark.parametrize("edges", ["wrap", "contain"])
def test_lists_follow_agents_to_new_rows_without_a_build(kernels: Any, edges: str) -> None:
    """The compiled path re-sorts large groups by grid cell every few ticks: the constraint
    renumbers its lists (pairs sorted by their new rows, as a build leaves them) instead
    of building them, and pushes exactly as the NumPy constraint that builds them."""
    rng = np.random.default_rng(5)
    n = 120
    w = World(width=80.0, height=80.0, edges=edges)
    w.obstacle_pos, w.obstacle_radius = np.array([[40.0, 40.0]]), np.array([6.0])
    ag = make_agents(rng.random((n, 2)) * 80.0, radius=rng.choice([2.0, 3.0], n))
    fixed = np.zeros(n, dtype=bool)
    reference, compiled = NonPenetration(10), NonPenetration(10, kernels=kernels)
    twin = copy.copy(ag)
    for tick in range(6):
        if tick == 3:  # new rows, the same agents
            order = rng.permutation(n)
            ag = rearrange(ag, order, pick(ag.names, order.tolist()))
            twin = rearrange(twin, order, pick(twin.names, order.tolist()))
        before = ag.pos.copy()
        step = rng.normal(0.0, 0.8, (n, 2))
        ag.pos = np.clip(before + step, 0.0, 79.999)
        twin.pos = ag.pos.copy()
        builds = compiled.builds
        reference.apply(w, ag, before, fixed)
        compiled.apply(w, twin, before, fixed)
        assert np.array_equal(twin.pos, ag.pos)
        if tick == 3:
            assert compiled.builds == builds  # renumbered, not built
            assert reference.builds >= 2  # the NumPy constraint built them again
    assert compiled._pairs[0].size and np.all(np.diff(compiled._pairs[0]) >= 0)


def drifting_crowd(kernels: Any, seed: int, ticks: int) -> NonPenetration:
    """150 agents drifting about 1 unit a tick, pushed by the NumPy constraint and by the
    compiled one from the same state every tick: the same bits. The compiled one."""
    rng = np.random.default_rng(seed)
    n = 150
    w = World(width=120.0, height=120.0, edges="wrap")
    ag = make_agents(rng.random((n, 2)) * 120.0, radius=3.0)
    fixed = np.zeros(n, dtype=bool)
    reference, compiled = NonPenetration(10), NonPenetration(10, kernels=kernels)
    twin = copy.copy(ag)
    for _ in range(ticks):
        before = ag.pos.copy()
        ag.pos = (before + np.array([1.0, 0.3]) + rng.normal(0.0, 0.3, (n, 2))) % 120.0
        twin.pos = ag.pos.copy()
        reference.apply(w, ag, before, fixed)
        compiled.apply(w, twin, before, fixed)
        assert np.array_equal(twin.pos, ag.pos)
    return compiled


@pytest.mark.parametrize("ahead", [True, False])
def test_lists_built_ahead_on_another_thread_push_the_same(
    kernels: Any, ahead: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled constraint builds its next lists on the other thread once an agent
    has moved a quarter of the skin and takes them up (crowds of ``AHEAD_MIN`` agents or
    more; smaller ones build in the tick); its positions stay the reference's."""
    if ahead:
        monkeypatch.setattr(non_penetration, "AHEAD_MIN", 0)
    compiled = drifting_crowd(kernels, 8, 40)
    if ahead:
        assert compiled.built_ahead >= 3
        assert compiled.built_ahead > 0.6 * compiled.builds  # most not built in the tick
    else:
        assert compiled.built_ahead == 0 and compiled.builds >= 3


def test_lists_that_fail_on_the_other_thread_are_built_in_the_tick(
    kernels: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = non_penetration.make_lists

    def broken(*args: Any) -> Any:
        if threading.current_thread().name.startswith("behaviortk-lists"):
            raise MemoryError("no room on the other thread")
        return made(*args)

    monkeypatch.setattr(non_penetration, "make_lists", broken)
    monkeypatch.setattr(non_penetration, "AHEAD_MIN", 0)
    compiled = drifting_crowd(kernels, 9, 25)
    assert compiled.built_ahead == 0 and compiled.builds >= 3


def test_a_forked_process_gets_its_own_list_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    first = non_penetration._builder()
    assert non_penetration._builder() is first
    monkeypatch.setattr(os, "getpid", lambda: -12345)  # as in a child after fork
    assert non_penetration._builder() is not first


def test_a_frame_s_spawn_and_despawn_push_as_numpy_does(kernels: Any) -> None:
    """Each frame one agent goes and a new one takes its row (its id written into the same
    memory as the old one's): the compiled constraint, taking over the NumPy one's lists
    every tick, pushes the same bits, so the lists never follow the wrong agent."""
    data = json.loads((DEFINITIONS / "crowd_no_overlap.json").read_text())
    sim = Simulation(load_text(json.dumps(data), "c"), engine="batch", kernels="numpy")
    constraint = sim.non_penetration
    assert constraint is not None
    renumbered = {"ids": 0}

    def apply(world: World, agents: Any, before: Any, fixed: Any) -> None:
        renumbered["ids"] += int(constraint._ids is not None and constraint._ids is not agents.ids)
        both(constraint, kernels, world, agents, before, fixed)

    constraint.apply = apply  # type: ignore[method-assign]
    sim.step()  # the lists are made
    rng = np.random.default_rng(2)
    group = next(iter(sim.agents.slices))
    for _ in range(12):
        ids = sim.ids[sim.agents.slices[group]]
        gone = int(ids[rng.integers(ids.size)])
        at = sim.agent(gone).pos + rng.normal(0.0, 1.0, 2)
        sim.despawn(gone)
        sim.spawn(group, pos=at)
        sim.step()
    assert renumbered["ids"] >= 12  # every frame gave the constraint a new ids array
