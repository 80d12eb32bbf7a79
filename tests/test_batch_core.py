"""The masked tree core against real py_trees, agent by agent, tick by tick.

Random trees (every composite, policy and decorator py_trees 2.6 has that the
format uses; depth up to 5) are built twice: as real ``py_trees`` trees, one per
agent, whose leaves return scripted statuses, and as one batch tree over all
agents. After every tick each node's status, each composite's current child and
the number of initialise/terminate calls of every leaf must agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import py_trees
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from behaviortk.engines.batch import core as bc
from behaviortk.tree.status import FAILURE, INVALID, RUNNING, SUCCESS

PT = py_trees.common.Status
TO_CODE = {PT.INVALID: INVALID, PT.RUNNING: RUNNING, PT.SUCCESS: SUCCESS, PT.FAILURE: FAILURE}
FROM_CODE = {v: k for k, v in TO_CODE.items()}
CONVERTERS = {
    "inverter": py_trees.decorators.Inverter,
    "passthrough": py_trees.decorators.PassThrough,
    "running_is_failure": py_trees.decorators.RunningIsFailure,
    "running_is_success": py_trees.decorators.RunningIsSuccess,
    "failure_is_success": py_trees.decorators.FailureIsSuccess,
    "failure_is_running": py_trees.decorators.FailureIsRunning,
    "success_is_failure": py_trees.decorators.SuccessIsFailure,
    "success_is_running": py_trees.decorators.SuccessIsRunning,
}


@dataclass
class Spec:
    """A generated node: kind, parameters, children. Leaves and guards read script columns."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    children: list[Spec] = field(default_factory=list)


def leaf() -> st.SearchStrategy[Spec]:
    return st.builds(lambda: Spec("leaf"))


def extend(inner: st.SearchStrategy[Spec]) -> st.SearchStrategy[Spec]:
    kids = st.lists(inner, min_size=1, max_size=4)
    composite = st.builds(
        lambda kind, memory, children: Spec(kind, {"memory": memory}, children),
        st.sampled_from(["sequence", "selector"]),
        st.booleans(),
        kids,
    )
    parallel = st.builds(
        lambda policy, sync, children, pick: Spec(
            "parallel",
            {
                "policy": policy,
                "synchronise": sync,
                "selected": sorted({p % len(children) for p in pick}),
            },
            children,
        ),
        st.sampled_from(["success_on_all", "success_on_one", "success_on_selected"]),
        st.booleans(),
        kids,
        st.lists(st.integers(0, 3), min_size=1, max_size=3),
    )
    one = inner.map(lambda c: [c])
    converter = st.builds(
        lambda kind, children: Spec(kind, {}, children), st.sampled_from(list(CONVERTERS)), one
    )
    counted = st.builds(
        lambda kind, n, children: Spec(kind, {"n": n}, children),
        st.sampled_from(["repeat", "retry"]),
        st.integers(1, 3),
        one,
    )
    oneshot = st.builds(
        lambda on_success, children: Spec("one_shot", {"success_only": on_success}, children),
        st.booleans(),
        one,
    )
    guard = st.builds(lambda children: Spec("eternal_guard", {}, children), one)
    return st.one_of(composite, parallel, converter, counted, oneshot, guard)


trees = st.recursive(leaf(), extend, max_leaves=12).filter(lambda s: depth(s) <= 5)


def depth(spec: Spec) -> int:
    return 1 + max((depth(c) for c in spec.children), default=0)


def number(spec: Spec) -> list[Spec]:
    """DFS pre-order, the FlatTree numbering."""
    out = [spec]
    for c in spec.children:
        out.extend(number(c))
    return out


class Script:
    """Per tick, agent and node: the status a leaf returns / whether a guard passes."""

    def __init__(self, seed: int, ticks: int, agents: int, nodes: int, p: tuple[float, ...]):
        rng = np.random.default_rng(seed)
        self.leaf = rng.choice(
            np.array([RUNNING, SUCCESS, FAILURE], dtype=np.int8), size=(ticks, agents, nodes), p=p
        )
        self.guard = rng.random((ticks, agents, nodes)) < 0.75
        self.tick = 0


class ScriptedLeaf(py_trees.behaviour.Behaviour):
    def __init__(self, name: str, script: Script, agent: int, k: int, calls: np.ndarray):
        super().__init__(name)
        self.script, self.agent, self.k, self.calls = script, agent, k, calls

    def initialise(self) -> None:
        self.calls[0, self.agent, self.k] += 1

    def update(self) -> PT:
        return FROM_CODE[int(self.script.leaf[self.script.tick, self.agent, self.k])]

    def terminate(self, new_status: PT) -> None:
        self.calls[1 + TO_CODE[new_status], self.agent, self.k] += 1


def build_py_trees(
    spec: Spec, index: dict[int, int], script: Script, agent: int, calls: np.ndarray
) -> py_trees.behaviour.Behaviour:
    k = index[id(spec)]
    name = f"{spec.kind}#{k}"
    kids = [build_py_trees(c, index, script, agent, calls) for c in spec.children]
    p = spec.params
    if spec.kind == "leaf":
        return ScriptedLeaf(name, script, agent, k, calls)
    if spec.kind == "sequence":
        return py_trees.composites.Sequence(name, memory=p["memory"], children=kids)
    if spec.kind == "selector":
        return py_trees.composites.Selector(name, memory=p["memory"], children=kids)
    if spec.kind == "parallel":
        policy: py_trees.common.ParallelPolicy.Base
        if p["policy"] == "success_on_all":
            policy = py_trees.common.ParallelPolicy.SuccessOnAll(synchronise=p["synchronise"])
        elif p["policy"] == "success_on_one":
            policy = py_trees.common.ParallelPolicy.SuccessOnOne()
        else:
            policy = py_trees.common.ParallelPolicy.SuccessOnSelected(
                children=[kids[i] for i in p["selected"]], synchronise=p["synchronise"]
            )
        return py_trees.composites.Parallel(name, policy=policy, children=kids)
    if spec.kind in CONVERTERS:
        return CONVERTERS[spec.kind](name=name, child=kids[0])
    if spec.kind == "repeat":
        return py_trees.decorators.Repeat(name, child=kids[0], num_success=p["n"])
    if spec.kind == "retry":
        return py_trees.decorators.Retry(name, child=kids[0], num_failures=p["n"])
    if spec.kind == "one_shot":
        policy_ = (
            py_trees.common.OneShotPolicy.ON_SUCCESSFUL_COMPLETION
            if p["success_only"]
            else py_trees.common.OneShotPolicy.ON_COMPLETION
        )
        return py_trees.decorators.OneShot(name, child=kids[0], policy=policy_)
    if spec.kind == "eternal_guard":
        return py_trees.decorators.EternalGuard(
            name, child=kids[0], condition=lambda: bool(script.guard[script.tick, agent, k])
        )
    raise AssertionError(spec.kind)


class ScriptedOps:
    def __init__(self, script: Script, k: int, calls: np.ndarray):
        self.script, self.k, self.calls = script, k, calls

    def initialise(self, rows: bc.Rows) -> None:
        self.calls[0, rows, self.k] += 1

    def update(self, rows: bc.Rows) -> bc.Codes:
        return self.script.leaf[self.script.tick, rows, self.k].copy()

    def terminate(self, rows: bc.Rows, new_status: int) -> None:
        self.calls[1 + new_status, rows, self.k] += 1


def build_batch(
    spec: Spec, index: dict[int, int], state: bc.TreeState, script: Script, calls: np.ndarray
) -> bc.Node:
    k = index[id(spec)]
    kids = [build_batch(c, index, state, script, calls) for c in spec.children]
    p = spec.params
    if spec.kind == "leaf":
        return bc.Leaf(k, state, ScriptedOps(script, k, calls))
    if spec.kind == "sequence":
        return bc.SequenceNode(k, state, kids, p["memory"])
    if spec.kind == "selector":
        return bc.SelectorNode(k, state, kids, p["memory"])
    if spec.kind == "parallel":
        return bc.ParallelNode(k, state, kids, p["policy"], p["synchronise"], p["selected"])
    if spec.kind in CONVERTERS:
        return bc.MapDecorator(k, state, kids[0], bc.CONVERTERS[spec.kind])
    if spec.kind == "repeat":
        return bc.RepeatNode(k, state, kids[0], p["n"])
    if spec.kind == "retry":
        return bc.RetryNode(k, state, kids[0], p["n"])
    if spec.kind == "one_shot":
        final_on = [SUCCESS] if p["success_only"] else [SUCCESS, FAILURE]
        return bc.OneShotNode(k, state, kids[0], final_on)
    if spec.kind == "eternal_guard":
        return bc.EternalGuardNode(
            k, state, kids[0], lambda rows: script.guard[script.tick, rows, k]
        )
    raise AssertionError(spec.kind)


def run_both(spec: Spec, seed: int, p: tuple[float, ...], agents: int = 12, ticks: int = 14):
    nodes = number(spec)
    index = {id(s): i for i, s in enumerate(nodes)}
    script = Script(seed, ticks, agents, len(nodes), p)
    calls_pt = np.zeros((5, agents, len(nodes)), dtype=np.int64)
    calls_b = np.zeros_like(calls_pt)
    roots = [build_py_trees(spec, index, script, a, calls_pt) for a in range(agents)]
    order = [list(r.iterate()) for r in roots]  # iterate() is post-order: map by name
    by_index = [
        {int(b.name.split("#")[1]): b for b in bs} for bs in order
    ]  # node index -> behaviour
    state = bc.TreeState(len(nodes), agents)
    root = build_batch(spec, index, state, script, calls_b)
    every = np.arange(agents)
    for t in range(ticks):
        script.tick = t
        for r in roots:
            r.tick_once()
        root.tick(every)
        want = np.array(
            [[TO_CODE[by_index[a][k].status] for k in range(len(nodes))] for a in range(agents)]
        )
        assert np.array_equal(state.status.T, want), f"statuses differ at tick {t}"
        for k, s in enumerate(nodes):
            if s.kind in ("sequence", "selector", "parallel"):
                cur = [by_index[a][k].current_child for a in range(agents)]
                pos = [
                    -1 if c is None else by_index[a][k].children.index(c) for a, c in enumerate(cur)
                ]
                assert list(state.current[k]) == pos, f"current child of node {k} at tick {t}"
        assert np.array_equal(calls_b, calls_pt), f"initialise/terminate calls differ at tick {t}"


@settings(max_examples=300, deadline=None)
@given(
    spec=trees,
    seed=st.integers(0, 2**31),
    p=st.sampled_from([(0.4, 0.3, 0.3), (0.1, 0.45, 0.45), (0.7, 0.15, 0.15)]),
)
def test_random_trees_match_py_trees(spec: Spec, seed: int, p: tuple[float, ...]) -> None:
    run_both(spec, seed, p)


def test_selector_preempts_running_lower_priority() -> None:
    """Hand-worked (py_trees Selector docstring): a higher priority that starts succeeding
    stops the running lower branch with stop(INVALID)."""
    spec = Spec("selector", {"memory": False}, [Spec("leaf"), Spec("leaf")])
    state = bc.TreeState(3, 1)
    script = Script(0, 2, 1, 3, (1.0, 0.0, 0.0))
    script.leaf[0, 0, 1], script.leaf[0, 0, 2] = FAILURE, RUNNING
    script.leaf[1, 0, 1] = SUCCESS
    calls = np.zeros((5, 1, 3), dtype=np.int64)
    root = build_batch(spec, {id(s): i for i, s in enumerate(number(spec))}, state, script, calls)
    root.tick(np.arange(1))
    assert list(state.status[:, 0]) == [RUNNING, FAILURE, RUNNING]
    script.tick = 1
    root.tick(np.arange(1))
    assert list(state.status[:, 0]) == [SUCCESS, SUCCESS, INVALID]
    assert calls[1 + INVALID, 0, 2] == 1  # the pre-empted leaf was terminated with INVALID


@pytest.mark.parametrize("success_only,expected", [(False, FAILURE), (True, RUNNING)])
def test_one_shot_keeps_its_final_status(success_only: bool, expected: int) -> None:
    """py_trees OneShot: ON_COMPLETION freezes the first FAILURE; ON_SUCCESSFUL_COMPLETION
    reruns failures, so a later RUNNING child shows through."""
    spec = Spec("one_shot", {"success_only": success_only}, [Spec("leaf")])
    state = bc.TreeState(2, 1)
    script = Script(0, 2, 1, 2, (1.0, 0.0, 0.0))
    script.leaf[0, 0, 1] = FAILURE
    calls = np.zeros((5, 1, 2), dtype=np.int64)
    root = build_batch(spec, {id(s): i for i, s in enumerate(number(spec))}, state, script, calls)
    root.tick(np.arange(1))
    script.tick = 1
    root.tick(np.arange(1))
    assert state.status[0, 0] == expected
