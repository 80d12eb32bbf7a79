"""py_trees engine: exact py_trees semantics, sim-time decorators, leaves, blackboards.

Expected statuses are worked out by hand from py_trees 2.6's composites and
decorators (composites.py, decorators.py) and from the rules written in
behaviortk/engines/sim_time.py and behaviortk/leaves/actions.py, with dt = 0.1 s.
Node indices are DFS pre-order (tree/flat.py). Codes: INVALID 0, RUNNING 1,
SUCCESS 2, FAILURE 3.
"""

from __future__ import annotations

import numpy as np
import py_trees
import pytest
from engine_support import bb_is, seek, simulation, statuses, wait

from behaviortk.engines.sim_time import ticks_for
from behaviortk.tree.status import FAILURE, INVALID, RUNNING, SUCCESS
from behaviortk.world.streams import uniforms


def run_statuses(sim, ticks: int, node: int) -> list[int]:
    out = []
    for _ in range(ticks):
        sim.step()
        out.append(statuses(sim)[node])
    return out


def test_ticks_for_rounds_float_noise() -> None:
    """0.3 / 0.1 is 2.9999999999999996 in floating point: still 3 ticks; 0.25 s needs 3."""
    assert ticks_for(0.3, 0.1) == 3
    assert ticks_for(1.0, 0.1) == 10
    assert ticks_for(0.7, 0.1) == 7
    assert ticks_for(0.25, 0.1) == 3
    assert ticks_for(0.0, 0.1) == 0


def test_one_real_behaviour_tree_per_agent_in_flat_order() -> None:
    sim = simulation(
        {"type": "selector", "memory": False, "children": [seek("s1"), seek("s2")]}, count=3
    )
    trees = [sim.engine.tree(i) for i in range(3)]
    assert all(isinstance(t, py_trees.trees.BehaviourTree) for t in trees)
    assert len({id(t.root) for t in trees}) == 3
    names = [b.name for b in sim.engine.groups["a"].nodes[0]]
    assert names == [n.name for n in sim.trees["a"].nodes] == ["selector", "s1", "s2"]


def test_preemption_stops_the_running_lower_priority_branch() -> None:
    """Selector without memory: when the guarded branch starts to run, the fallback gets stop(INVALID)."""
    root = {
        "type": "selector",
        "memory": False,
        "children": [
            {"type": "sequence", "memory": False, "children": [bb_is("alarm", True), seek("flee")]},
            seek("fallback"),
        ],
    }
    sim = simulation(root, blackboard={"alarm": "bool"})
    # nodes: 0 selector, 1 sequence, 2 compare, 3 flee, 4 fallback
    sim.step()
    assert statuses(sim) == [RUNNING, FAILURE, FAILURE, INVALID, RUNNING]
    assert sim.active_names(0) == ["fallback"]
    fallback = sim.engine.groups["a"].nodes[0][4]
    seen: list[py_trees.common.Status] = []
    fallback.terminate = seen.append  # instance hook: Behaviour.stop calls self.terminate
    sim.engine.groups["a"].clients[0].set("alarm", True)
    sim.step()
    assert seen == [py_trees.common.Status.INVALID]
    assert statuses(sim) == [RUNNING, RUNNING, SUCCESS, RUNNING, INVALID]
    assert sim.active_names(0) == ["flee"]
    assert sim.decisions["a"].emitted[0].tolist() == [True, False]


@pytest.mark.parametrize("memory", [True, False])
def test_sequence_memory_skips_or_rechecks_the_guard(memory: bool) -> None:
    """With memory the RUNNING wait resumes without re-checking `go`; without, `go` fails and the wait is stopped."""
    root = {"type": "sequence", "memory": memory, "children": [bb_is("go", 1), wait(1.0)]}
    sim = simulation(root, blackboard={"go": "number"})
    client = sim.engine.groups["a"].clients[0]
    client.set("go", 1)
    sim.step()
    assert statuses(sim) == [RUNNING, SUCCESS, RUNNING]
    client.set("go", 0)
    sim.step()
    if memory:
        assert statuses(sim) == [RUNNING, SUCCESS, RUNNING]
    else:
        assert statuses(sim) == [FAILURE, FAILURE, INVALID]


@pytest.mark.parametrize("memory", [True, False])
def test_selector_memory_keeps_the_running_child(memory: bool) -> None:
    """Selector with memory resumes its RUNNING lower child; without memory a higher child that succeeds pre-empts it."""
    root = {"type": "selector", "memory": memory, "children": [bb_is("alarm", True), wait(1.0)]}
    sim = simulation(root, blackboard={"alarm": "bool"})
    sim.step()
    assert statuses(sim) == [RUNNING, FAILURE, RUNNING]
    sim.engine.groups["a"].clients[0].set("alarm", True)
    sim.step()
    if memory:
        # py_trees clears the statuses of children before the remembered one
        assert statuses(sim) == [RUNNING, INVALID, RUNNING]
    else:
        assert statuses(sim) == [SUCCESS, SUCCESS, INVALID]


def parallel(policy: str, synchronise: bool = False, selected: list[int] | None = None) -> dict:
    node = {
        "type": "parallel",
        "policy": policy,
        "synchronise": synchronise,
        "children": [wait(0.2, "short"), wait(0.3, "long")],
    }
    if selected is not None:
        node["selected"] = selected
    return node


@pytest.mark.parametrize(
    ("policy", "sync", "selected", "expected"),
    [
        # short (2 ticks) succeeds on tick 2, long (3 ticks) on tick 3
        ("success_on_one", False, None, [RUNNING, RUNNING, SUCCESS, RUNNING]),
        ("success_on_all", True, None, [RUNNING, RUNNING, RUNNING, SUCCESS]),
        # without synchronise the succeeded short wait restarts on tick 3 (RUNNING until tick 5)
        ("success_on_all", False, None, [RUNNING, RUNNING, RUNNING, RUNNING]),
        ("success_on_selected", True, [0], [RUNNING, RUNNING, SUCCESS, RUNNING]),
        ("success_on_selected", True, [1], [RUNNING, RUNNING, RUNNING, SUCCESS]),
    ],
)
def test_parallel_policies(policy: str, sync: bool, selected, expected: list[int]) -> None:
    sim = simulation(parallel(policy, sync, selected))
    assert run_statuses(sim, 4, 0) == expected


def test_parallel_fails_when_a_child_fails_and_stops_the_others() -> None:
    root = {
        "type": "parallel",
        "policy": "success_on_all",
        "children": [wait(1.0), bb_is("missing", 1)],
    }
    sim = simulation(root, blackboard={"missing": "number"})
    sim.step()
    assert statuses(sim) == [FAILURE, INVALID, FAILURE]


def test_timeout_fails_a_child_still_running_after_duration() -> None:
    """timeout 0.3 s = 3 ticks: child ticked on ticks 0-2; on tick 3 it is stopped, FAILURE; tick 4 restarts."""
    sim = simulation({"type": "timeout", "duration": 0.3, "child": seek("go")})
    got = [run_statuses(sim, 1, 0)[0] for _ in range(5)]
    assert got == [RUNNING, RUNNING, RUNNING, FAILURE, RUNNING]
    emitted = []
    sim2 = simulation({"type": "timeout", "duration": 0.3, "child": seek("go")})
    for _ in range(5):
        sim2.step()
        emitted.append(bool(sim2.decisions["a"].emitted[0, 0]))
        if sim2.tick == 4:
            assert statuses(sim2) == [FAILURE, INVALID]
    assert emitted == [True, True, True, False, True]


def test_timeout_passes_through_an_earlier_success() -> None:
    sim = simulation({"type": "timeout", "duration": 0.5, "child": wait(0.2)})
    assert run_statuses(sim, 3, 0) == [RUNNING, RUNNING, SUCCESS]


def test_cooldown_blocks_for_duration_after_completion() -> None:
    """wait 0.1 s succeeds on tick 1; cooldown 0.3 s blocks ticks 2, 3; tick 4 restarts the wait."""
    sim = simulation({"type": "cooldown", "duration": 0.3, "child": wait(0.1)})
    assert run_statuses(sim, 7, 0) == [
        RUNNING,
        SUCCESS,
        FAILURE,
        FAILURE,
        RUNNING,
        SUCCESS,
        FAILURE,
    ]


def test_wait_runs_for_its_duration_in_sim_time() -> None:
    """wait 0.3 s at dt 0.1: RUNNING on ticks 0, 1, 2, SUCCESS on tick 3."""
    sim = simulation(wait(0.3))
    assert run_statuses(sim, 4, 0) == [RUNNING, RUNNING, RUNNING, SUCCESS]


def test_repeat_retry_one_shot_and_converters_are_py_trees_own() -> None:
    repeat = simulation({"type": "repeat", "num_success": 2, "child": wait(0.1)})
    assert run_statuses(repeat, 4, 0) == [RUNNING, RUNNING, RUNNING, SUCCESS]
    assert isinstance(repeat.engine.tree(0).root, py_trees.decorators.Repeat)
    k = {"k": "number"}
    retry = simulation({"type": "retry", "num_failures": 2, "child": bb_is("k", 1)}, blackboard=k)
    assert run_statuses(retry, 2, 0) == [RUNNING, FAILURE]
    once = simulation({"type": "one_shot", "policy": "on_completion", "child": wait(0.1)})
    assert run_statuses(once, 4, 0) == [RUNNING, SUCCESS, SUCCESS, SUCCESS]
    assert run_statuses(once, 1, 1) == [SUCCESS]  # the child is not ticked again
    inv = simulation({"type": "inverter", "child": bb_is("k", 1)}, blackboard=k)
    assert run_statuses(inv, 1, 0) == [SUCCESS]
    ris = simulation({"type": "running_is_success", "child": wait(1.0)})
    assert run_statuses(ris, 1, 0) == [SUCCESS]


def test_eternal_guard_stops_its_child_when_the_condition_fails() -> None:
    root = {"type": "eternal_guard", "condition": bb_is("ok", True), "child": wait(1.0)}
    sim = simulation(root, blackboard={"ok": "bool"})
    client = sim.engine.groups["a"].clients[0]
    client.set("ok", True)
    sim.step()
    assert statuses(sim) == [RUNNING, RUNNING]
    client.set("ok", False)
    sim.step()
    assert statuses(sim) == [FAILURE, INVALID]


def test_steering_leaf_fails_without_target_and_emits_nothing() -> None:
    """nearest `b` within 5 units: b is 100 away, so the target is invalid -> FAILURE, no request."""
    from engine_support import other_group

    root = {
        "type": "selector",
        "memory": False,
        "children": [
            {
                "type": "seek",
                "name": "chase",
                "target": {"kind": "nearest", "group": "b", "radius": 5},
            },
            seek("idle"),
        ],
    }
    sim = simulation(root, positions=[[100, 100]], others=[other_group("b", [[200, 100]])])
    sim.step()
    assert statuses(sim) == [RUNNING, FAILURE, RUNNING]
    assert sim.decisions["a"].emitted[0].tolist() == [False, True]


def test_arrive_succeeds_within_tolerance_and_still_emits() -> None:
    root = {"type": "arrive", "target": {"kind": "point", "at": [101, 100]}, "tolerance": 2.0}
    sim = simulation(root, positions=[[100, 100]])
    sim.step()
    assert statuses(sim) == [SUCCESS]
    assert sim.decisions["a"].emitted[0].tolist() == [True]


def test_chance_reads_its_column_of_the_seeded_table() -> None:
    """chance p = 0.5 succeeds exactly where the agent's number of the tick (its own stream) is < 0.5."""
    sim = simulation({"type": "chance", "probability": 0.5}, count=40, seed=11)
    for tick in range(3):
        table = uniforms(11, sim.ids, tick, sim.n_rand)
        sim.step()
        got = sim.decisions["a"].status[:, 0]
        expected = np.where(table[:, 0] < 0.5, SUCCESS, FAILURE)
        assert got.tolist() == expected.tolist()
    assert 0 < int((got == SUCCESS).sum()) < 40


def test_blackboard_set_then_compare_in_one_tick_and_blackboard_target() -> None:
    root = {
        "type": "sequence",
        "memory": False,
        "children": [
            {"type": "blackboard_set", "key": "goal", "value": [300, 100]},
            {"type": "blackboard_compare", "key": "goal", "op": "==", "value": [300, 100]},
            {"type": "seek", "name": "to goal", "target": {"kind": "blackboard", "key": "goal"}},
        ],
    }
    sim = simulation(root, positions=[[100, 100]], blackboard={"goal": "point"})
    sim.step()
    # leaf statuses are read at the start of the tick: the point did not exist yet
    assert statuses(sim) == [FAILURE, SUCCESS, SUCCESS, FAILURE]
    assert sim.engine.blackboard(0) == {"goal": (300.0, 100.0)}
    sim.step()
    assert statuses(sim) == [RUNNING, SUCCESS, SUCCESS, RUNNING]
    pts = sim.engine.blackboard_points("a", "goal", np.array([0]))
    assert pts.tolist() == [[300.0, 100.0]]


def test_blackboards_are_separate_per_agent_and_per_simulation() -> None:
    root = {"type": "blackboard_set", "key": "x", "value": 1}
    one = simulation(root, count=2, blackboard={"x": "number"})
    two = simulation(root, count=2, blackboard={"x": "number"})
    one.step()
    assert one.engine.blackboard(0) == {"x": 1}
    assert two.engine.blackboard(0) == {}
    ns = {c.namespace for c in one.engine.groups["a"].clients}
    assert len(ns) == 2 and all("/agents/" in n for n in ns)


def test_snapshot_is_py_trees_unicode_with_statuses() -> None:
    root = {"type": "selector", "memory": False, "children": [bb_is("k", 1), seek("go")]}
    sim = simulation(root, blackboard={"k": "number"})
    sim.step()
    text = sim.snapshot(0)
    assert "[o] selector [*]" in text
    assert "--> go [*] -- steering" in text
    assert "\x1b" not in text
    assert sim.engine.node_status(0).tolist() == [RUNNING, FAILURE, RUNNING]
