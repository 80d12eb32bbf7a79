"""Simulation: seeding, fixed time, phases, inspection, and evade_or_flock's evade rule.

The evade rule (issue 4, "Done when"): a prey's `evade` request is active
exactly on the ticks where, in the state the tick *sensed* (the state before
that tick's integration), its nearest predator was within the `$threat`
radius of 100 (wrap-aware minimum-image distance, as Sense measures it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from engine_support import seek, simulation

import behaviortk
from behaviortk.sim.simulation import PHASES, Simulation, make_engine
from behaviortk.tree.flat import Decision
from behaviortk.world.streams import uniforms

REFERENCE = Path(__file__).resolve().parent.parent / "definitions" / "evade_or_flock.json"


@pytest.fixture(scope="module")
def reference() -> behaviortk.Scenario:
    return behaviortk.load(REFERENCE)


def test_simulation_is_exported_lazily() -> None:
    assert behaviortk.Simulation is Simulation


def test_same_seed_same_state_other_seed_other_state(reference) -> None:
    a, b, c = (
        Simulation(reference, seed=5),
        Simulation(reference, seed=5),
        Simulation(reference, seed=6),
    )
    for sim in (a, b, c):
        sim.run(30)
    assert np.array_equal(a.agents.pos, b.agents.pos)
    assert np.array_equal(a.agents.vel, b.agents.vel)
    assert not np.array_equal(a.agents.pos, c.agents.pos)


def test_seed_defaults_to_the_file(reference) -> None:
    assert Simulation(reference).seed == reference.definition.world.seed == 7


def test_fixed_time_and_phase_timings(reference) -> None:
    sim = Simulation(reference)
    sim.run(7)
    assert sim.tick == 7
    assert sim.time == 7 * sim.dt  # computed, not accumulated
    assert set(sim.timings) == set(PHASES)
    assert all(v > 0 for v in sim.timings.values())


def test_decisions_shapes_and_active_names(reference) -> None:
    sim = Simulation(reference)
    sim.step()
    prey = sim.decisions["prey"]
    assert isinstance(prey, Decision)
    n_prey = sim.agents.slices["prey"].stop
    assert prey.status.dtype == np.int8 and prey.status.shape == (n_prey, len(sim.trees["prey"]))
    assert prey.emitted.shape == (n_prey, 3)
    # exactly one of evade / flock / wander per prey (a selector picks one branch)
    assert (prey.emitted.sum(axis=1) == 1).all()
    names = {tuple(sim.active_names(i)) for i in range(n_prey)}
    assert names <= {("evade",), ("flock",), ("wander",)}
    predator = sim.agents.slices["predator"].start
    assert sim.active_names(predator) == ["pursue prey"]
    assert sim.active_table()[predator] == ["pursue prey"]
    assert "pursue prey" in sim.snapshot(predator)


def nearest_predator_distance(pos: np.ndarray, prey: slice, pred: slice, size: np.ndarray):
    d = pos[pred][None, :, :] - pos[prey][:, None, :]
    d = d - size * np.round(d / size)
    return np.sqrt((d * d).sum(axis=2)).min(axis=1)


def test_prey_evade_exactly_while_the_nearest_predator_is_within_range(reference) -> None:
    sim = Simulation(reference)
    prey, pred = sim.agents.slices["prey"], sim.agents.slices["predator"]
    evade_col = [sim.trees["prey"].nodes[i].name for i in sim.trees["prey"].steering].index("evade")
    size = sim.world.size
    evading_ticks = calm_ticks = 0
    for _ in range(240):
        sensed = sim.agents.pos.copy()  # the state this tick's sense sees
        sim.step()
        within = nearest_predator_distance(sensed, prey, pred, size) <= 100.0
        evading = sim.decisions["prey"].emitted[:, evade_col]
        assert evading.tolist() == within.tolist()
        evading_ticks += int(evading.sum())
        calm_ticks += int((~evading).sum())
    assert evading_ticks > 100 and calm_ticks > 100  # both branches were exercised


def test_unknown_engine_fails_clearly_and_auto_picks_by_size(reference) -> None:
    with pytest.raises(ValueError, match="unknown engine 'fast'"):
        Simulation(reference, engine="fast")
    assert Simulation(reference, engine="batch").engine.name == "batch"
    sim = Simulation(reference, engine="auto")  # py_trees for small runs
    assert sim.engine.name == "py_trees"
    assert make_engine(sim, lambda s: sim.engine) is sim.engine


def test_each_agents_random_numbers_come_from_its_own_stream() -> None:
    """The tick's table row of agent ``id`` is ``uniforms(seed, id, tick, n_rand)``."""
    sim = simulation(seek("s"), count=4, seed=9)
    assert sim.n_rand == 1
    sim.run(3)
    table = sim.sense().rand
    assert np.array_equal(table, uniforms(9, np.arange(4), 3, 1))
