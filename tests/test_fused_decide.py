"""A reactive tree ticked as one generated function decides exactly as ``batch/core.py``.

``engines/batch/fused.py`` writes a group's tree (selector and sequence with or
without memory, parallel, eternal guards on sensed conditions, status converters,
steering leaves, sensed conditions) as the source of one loop over the agents.
Random trees of those nodes (hypothesis) run in a real Simulation; every tick,
from the same state and the same facts, the node-by-node ``batch/core.py`` tick
and the generated function (run as plain Python here: numba compiles that very
source) must leave the same statuses, current children and requests, and the
function's ``(agents, nodes)`` statuses must be the transposed state; with
``think_every`` only the thinking rows tick (the others' state untouched). The
numba-compiled functions of the shipped trees are checked against the py_trees
engine in ``tests/test_compiled.py`` (both engines on compiled kernels).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_equivalence import CONVERTERS, depth, parallel, scenario_text

from behaviortk.engines.batch import fused as batch_fused
from behaviortk.format.loader import load_text
from behaviortk.jit import generated
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.status import FAILURE, INVALID, RUNNING, SUCCESS


def sensed_conditions() -> st.SearchStrategy[dict[str, Any]]:
    nearest = {"kind": "nearest", "group": "b"}
    return st.one_of(
        st.builds(lambda p: {"type": "chance", "probability": p}, st.sampled_from([0.2, 0.5, 0.8])),
        st.builds(
            lambda r, h: {"type": "in_range", "target": nearest, "radius": r, "hysteresis": h},
            st.sampled_from([60.0, 120.0]),
            st.sampled_from([0.0, 30.0]),
        ),
        st.builds(lambda k: {"type": "neighbours", "min_count": k}, st.integers(1, 3)),
        st.builds(
            lambda a: {"type": "facing", "target": nearest, "angle": a},
            st.sampled_from([30.0, 90.0]),
        ),
    )


def leaves() -> st.SearchStrategy[dict[str, Any]]:
    point = {"kind": "point", "at": [100.0, 100.0]}
    return st.one_of(
        sensed_conditions(),
        st.just({"type": "seek", "target": point}),
        st.builds(
            lambda r: {"type": "seek", "target": {"kind": "nearest", "group": "b", "radius": r}},
            st.sampled_from([50.0, 150.0]),
        ),  # FAILURE where nobody is that near
        st.just({"type": "arrive", "target": point, "tolerance": 60}),  # SUCCESS when there
        st.just({"type": "wander"}),
        st.just({"type": "blend", "children": [{"type": "separation"}, {"type": "cohesion"}]}),
    )


def extend(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    composite = st.builds(
        lambda t, m, c: {"type": t, "memory": m, "children": c},
        st.sampled_from(["sequence", "selector"]),
        st.booleans(),
        st.lists(inner, min_size=1, max_size=4),
    )
    par = st.builds(
        parallel,
        st.sampled_from(["success_on_all", "success_on_one", "success_on_selected"]),
        st.booleans(),
        st.lists(inner, min_size=1, max_size=4),
        st.lists(st.integers(0, 3), min_size=1, max_size=3),
    )
    conv = st.builds(lambda t, c: {"type": t, "child": c}, st.sampled_from(CONVERTERS), inner)
    guard = st.builds(
        lambda cond, c: {"type": "eternal_guard", "condition": cond, "child": c},
        sensed_conditions(),
        inner,
    )
    return st.one_of(composite, par, conv, guard)


reactive_trees = st.recursive(leaves(), extend, max_leaves=12).filter(lambda t: depth(t) <= 5)


def python_decide(tree: batch_fused.FusedTree) -> Any:
    """The generated ``decide`` as plain Python (the source numba compiles)."""
    scope: dict[str, Any] = {}
    exec(compile(tree.source, "<fused>", "exec"), scope)
    return scope["decide"]


def checked(engine: Any, fused: dict[str, Any]) -> Any:
    """``engine.tick_group`` that first ticks ``batch/core.py`` from the same state, then the
    generated function, and asserts both leave the same arrays."""
    plain = engine.tick_group

    def tick_group(g: Any) -> Any:
        status, current = g.state.status.copy(), g.state.current.copy()
        emitted = g.facts.emitted.copy()  # with think_every, the held requests of the others
        g.root.tick(g.every if g.thinking is None else g.thinking)
        want = g.state.status.copy(), g.state.current.copy(), g.facts.emitted.copy()
        g.state.status[:], g.state.current[:] = status, current
        g.facts.emitted[:] = emitted
        g.fused, g.fused_tree = fused[g.name]
        decision = plain(g)
        np.testing.assert_array_equal(g.state.status, want[0], err_msg="statuses")
        np.testing.assert_array_equal(g.state.current, want[1], err_msg="current children")
        np.testing.assert_array_equal(decision.emitted, want[2], err_msg="requests")
        np.testing.assert_array_equal(decision.status, want[0].T, err_msg="decision statuses")
        return decision

    return tick_group


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(tree=reactive_trees, seed=st.integers(0, 10_000), every=st.sampled_from([1, 1, 3]))
def test_generated_tick_equals_batch_core(tree: dict[str, Any], seed: int, every: int) -> None:
    text = scenario_text(tree, seed, think_every=every)
    sim = Simulation(load_text(text), engine="batch", kernels="numpy")
    fused = {}
    for name, g in sim.engine.groups.items():
        found = batch_fused.source(g.root)
        assert found is not None, f"group {name} not transcribed"
        fused[name] = (python_decide(found), found)
    sim.engine.tick_group = checked(sim.engine, fused)
    seen: set[int] = set()
    for _ in range(40):
        sim.step()
        seen.update(np.unique(sim.decisions["a"].status).tolist())
    assert seen & {RUNNING, SUCCESS, FAILURE}, "the tree did something"


def test_a_false_guard_stops_its_child_and_the_selector_moves_on() -> None:
    """Selector 0 over guard 1 (seek 2), then wander 3: nodes, facts and one hand-set tick."""
    text = scenario_text(
        {
            "type": "selector",
            "memory": False,
            "children": [
                {
                    "type": "eternal_guard",
                    "condition": {"type": "chance", "probability": 0.5},
                    "child": {"type": "seek", "target": {"kind": "point", "at": [1.0, 1.0]}},
                },
                {"type": "wander"},
            ],
        },
        1,
    )
    sim = Simulation(load_text(text), engine="batch", kernels="numpy")
    found = batch_fused.source(sim.engine.groups["a"].root)
    assert found is not None
    assert (found.leaf_nodes, found.cond_nodes) == ([2, 3], [1])
    # a guard whose condition is false stops its child (RUNNING -> INVALID) and fails
    decide = python_decide(found)
    st_ = np.array([[RUNNING], [RUNNING], [RUNNING], [INVALID]], dtype=np.int8)
    cur = np.array([[0], [-1], [-1], [-1]], dtype=np.int16)
    emitted = np.zeros((1, 2), dtype=bool)
    status = np.empty((1, 4), dtype=np.int8)
    leaf2, leaf3 = np.array([RUNNING], np.int8), np.array([RUNNING], np.int8)
    decide(np.arange(1), st_, cur, emitted, status, leaf2, leaf3, np.array([False]))
    # guard 1 fails, seek 2 stopped to INVALID, wander 3 runs and wins: the selector's
    # current child moves from 0 to 1, it is RUNNING, only wander asked for a force
    assert st_[:, 0].tolist() == [RUNNING, FAILURE, INVALID, RUNNING]
    assert cur[0, 0] == 1
    assert emitted.tolist() == [[False, True]]
    assert status[0].tolist() == st_[:, 0].tolist()


@pytest.mark.parametrize(
    "root",
    [
        {"type": "retry", "num_failures": 2, "child": {"type": "wander"}},
        {"type": "repeat", "num_success": 2, "child": {"type": "wander"}},
        {
            "type": "sequence",
            "memory": True,
            "children": [{"type": "wait", "duration": 0.1}, {"type": "wander"}],
        },
        {
            "type": "eternal_guard",
            "condition": {"type": "blackboard_compare", "key": "mood", "op": "==", "value": 1},
            "child": {"type": "wander"},
        },
    ],
    ids=["retry", "repeat", "action", "ticked-guard"],
)
def test_other_nodes_keep_batch_core(root: dict[str, Any]) -> None:
    sim = Simulation(load_text(scenario_text(root, 1)), engine="batch", kernels="numpy")
    assert batch_fused.source(sim.engine.groups["a"].root) is None
    assert batch_fused.source(sim.engine.groups["b"].root) is not None  # a lone wander


def test_a_compile_failure_keeps_batch_core_with_one_warning_line(
    monkeypatch: Any, capsys: Any
) -> None:
    from behaviortk.engines.batch import engine as batch

    def broken(source: str, name: str) -> Any:
        raise RuntimeError("no\nllvm here")

    monkeypatch.setattr(generated, "compile_function", broken)
    monkeypatch.setattr(batch, "_fuse_failed", False)
    text = scenario_text({"type": "wander"}, 1)
    sim = Simulation(load_text(text), engine="batch", kernels="numpy")
    sim.engine.compile_trees()
    sim.engine.compile_trees()
    assert all(g.fused is None for g in sim.engine.groups.values())
    err = capsys.readouterr().err.splitlines()
    assert err == ["behaviortk: warning: compiled decide unavailable, using NumPy "
                   "(RuntimeError: no llvm here)"]  # fmt: skip
    sim.run(3)
    assert sim.decisions["a"].emitted.all()
