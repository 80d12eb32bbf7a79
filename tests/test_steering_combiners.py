"""Combiners (Buckland ch. 3 "Combining Steering Behaviors"; Millington 3.4) and the act phase."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from numpy.testing import assert_allclose
from pydantic import ValidationError
from steering_support import node, point, run, world

from behaviortk.registry import default
from behaviortk.sense.sensing import Sense
from behaviortk.steering.act import act
from behaviortk.steering.combiners import accumulate
from behaviortk.steering.debug import DebugBuffer
from behaviortk.tree.flat import Decision, flatten
from behaviortk.world.factory import make_agents

EAST = {"type": "seek", "target": point(10, 0)}  # from the origin at rest, max speed 10: (10, 0)
NORTH = {"type": "seek", "target": point(0, 10)}  # (0, 10)


def agents(n=1):
    return make_agents([[0, 0]] * n, max_speed=10, max_force=12, max_angular_accel=5.0)


def test_accumulate_force_is_bucklands_running_sum():
    """AccumulateForce: remaining = 12 - 10 = 2, so (0,10) adds only (0,2).

    The budget is measured on the running sum: |(10,2)| = sqrt(104), so (5,5) adds
    (12 - sqrt(104)) / sqrt(2) per axis; a running sum already at 12 takes nothing."""
    top = np.array([12.0])
    running = accumulate(np.zeros((1, 2)), np.array([[10.0, 0.0]]), top)
    running = accumulate(running, np.array([[0.0, 10.0]]), top)
    assert_allclose(running, [[10.0, 2.0]])
    extra = (12 - math.sqrt(104)) / math.sqrt(2)
    assert_allclose(accumulate(running, np.array([[5.0, 5.0]]), top), [[10 + extra, 2 + extra]])
    full = np.array([[12.0, 0.0]])
    assert_allclose(accumulate(full, np.array([[0.0, 5.0]]), top), full)


def test_blend_weighted_sum_truncated():
    """(10,0)*1 + (0,10)*0.5 = (10,5), |.| = 11.18 <= 12 kept; weights 1,1: (10,10) -> 12/sqrt(2) each."""
    half = {**NORTH, "weight": 0.5}
    assert_allclose(
        run(node({"type": "blend", "children": [EAST, half]}), agents()).linear, [[10, 5]]
    )
    both = run(node({"type": "blend", "children": [EAST, NORTH]}), agents()).linear
    assert_allclose(both, [[12 / math.sqrt(2), 12 / math.sqrt(2)]])


def test_prioritized_sum_in_order():
    out = run(node({"type": "prioritized_sum", "children": [EAST, NORTH]}), agents())
    assert_allclose(out.linear, [[10.0, 2.0]])
    out = run(node({"type": "prioritized_sum", "children": [NORTH, EAST]}), agents())
    assert_allclose(out.linear, [[2.0, 10.0]])


def test_prioritized_dither_uses_probabilities_and_rand():
    """Buckland's dithering: u=0.3 < 0.5 -> east * 1/0.5 = (20,0) truncated to 12;
    u=0.7 fails, then north with p=1 -> (0,10)."""
    spec = {"type": "prioritized_dither", "probabilities": [0.5, 1.0], "children": [EAST, NORTH]}
    out = run(node(spec), agents(2), rand=[[0.3, 0.2], [0.7, 0.2]])
    assert_allclose(out.linear, [[12.0, 0.0], [0.0, 10.0]])


def test_prioritized_dither_random_columns_and_validation():
    spec = {
        "type": "prioritized_dither",
        "probabilities": [0.5, 0.5],
        "children": [EAST, {"type": "wander"}],
    }
    assert node(spec).random_numbers == 4  # one per child + wander's two
    with pytest.raises(Exception, match="probabilities"):
        node({**spec, "probabilities": [0.5]})


def test_first_nonzero_skips_zero_children():
    """Flee beyond its fear distance is zero, so north wins; with east first, east wins."""
    calm = {"type": "flee", "target": point(100, 0), "fear_distance": 1}
    out = run(node({"type": "first_nonzero", "children": [calm, NORTH]}), agents())
    assert_allclose(out.linear, [[0.0, 10.0]])
    out = run(node({"type": "first_nonzero", "children": [EAST, NORTH]}), agents())
    assert_allclose(out.linear, [[10.0, 0.0]])


def test_combiner_child_rotation_and_memory_namespaces():
    """A face child adds angular acceleration (clamped at 5); each child keeps its own memory."""
    face = {"type": "face", "target": point(0, 10)}
    out = run(node({"type": "blend", "children": [EAST, face]}), agents())
    assert_allclose(out.angular, [5.0])
    memory: dict[str, np.ndarray] = {}
    spec = {"type": "blend", "children": [{"type": "wander"}, {"type": "wander"}]}
    run(node(spec), agents(), rand=[[0.5, 0.5, 0.5, 0.5]], memory=memory)
    assert sorted(memory) == ["c0.wander_target", "c1.wander_target"]


def test_combiner_rejects_non_primitive_children():
    with pytest.raises(ValidationError):
        node({"type": "blend", "children": [{"type": "sequence", "children": []}]})


def sim_for(tree_spec, ag):
    root = node(tree_spec)
    return SimpleNamespace(
        trees={"agents": flatten(root, default())},
        agents=ag,
        world=world(),
        memory={},
        debug=DebugBuffer(enabled=True),
        dt=0.01,
        engine=SimpleNamespace(),
        contributions={},
    )


def test_act_accumulates_requests_in_leaf_order():
    """Agent 0 emitted both leaves: (10,0) then (0,10) limited to 2 -> (10,2); agent 1 only north.
    The face leaf adds angular 5 (clamped) to agent 1; contributions keep the weighted forces."""
    ag = agents(2)
    face = {"type": "face", "target": point(0, 10), "weight": 2.0}
    sim = sim_for(
        {"type": "parallel", "policy": "success_on_all", "children": [EAST, NORTH, face]}, ag
    )
    sense = Sense(sim.world, ag, rand=np.zeros((2, 1)), tick=0, time=0.0)
    emitted = np.array([[True, True, False], [False, True, True]])
    decisions = {"agents": Decision(emitted=emitted, status=np.zeros((2, 4), np.int8))}
    linear, angular = act(sim, sense, decisions)
    assert_allclose(linear, [[10.0, 2.0], [0.0, 10.0]])
    assert_allclose(angular, [0.0, 5.0])
    rows, forces = sim.contributions["agents"][0]
    assert rows.tolist() == [0]
    assert_allclose(forces, [[10.0, 0.0]])
    assert sorted(sim.contributions["agents"]) == [0, 1, 2]


def test_act_keeps_leaf_memory_between_ticks():
    ag = agents(1)
    sim = sim_for({"type": "wander"}, ag)
    decisions = {
        "agents": Decision(emitted=np.ones((1, 1), bool), status=np.zeros((1, 1), np.int8))
    }
    for _ in range(2):
        sense = Sense(sim.world, ag, rand=np.full((1, 2), 0.9), tick=0, time=0.0)
        act(sim, sense, decisions)
    assert ("agents", 0) in sim.memory
    assert np.isfinite(sim.memory[("agents", 0)]["wander_target"]).all()
    assert len(sim.debug.of_kind("wander")) == 1  # cleared every tick
