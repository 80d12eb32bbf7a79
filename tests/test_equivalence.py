"""The batch engine decides exactly as the py_trees engine (issue 6, "Proof of equality").

1. Every shipped scenario (``definitions/``, the chase game, the ``new`` templates),
   run with the default flags (``kernels="auto"``, no ``BEHAVIORTK_KERNELS``):
   identical ``Decision.emitted`` and ``Decision.status`` on every tick for 600
   ticks, and byte-identical traces apart from the header's engine name.
2. Random trees (hypothesis; depth up to 5, every composite, policy, decorator,
   condition and action kind of the format, steering leaves (flow among them) and a combiner) loaded
   through the real loader and run in two real ``Simulation``s: the py_trees one
   ticks one real py_trees tree per agent (``PyTreesEngine``), the other the batch
   engine; statuses and requests must agree tick for tick. Conditions are driven
   by the seeded per-tick random table (``chance``), by geometry (``in_range``,
   ``neighbours``, ``facing``, ``arrived``, steering to the nearest agent within a
   radius, ``arrive`` with a tolerance) and by the blackboard (``blackboard_compare``,
   memories: ``remember`` the nearest within a radius, ``recall``, ``forget``,
   ``arrive`` at the remembered point) and by formations (``in_formation``,
   ``formation_slot``: the members and their slots follow what the trees decide).
3. The same random trees with think-rate LOD (``think_every``, an ``lod`` whose focus is
   the other group): the same agents think, the others hold the same decisions, and the
   agents move the same.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from behaviortk.format.loader import load, load_text
from behaviortk.record.jsonl import TraceWriter
from behaviortk.sim import choice
from behaviortk.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parent.parent
DEFINITIONS = ROOT / "definitions"
SHIPPED = [
    *sorted(DEFINITIONS.glob("*.json")),
    ROOT / "examples" / "chase_game.json",
    *sorted((ROOT / "behaviortk" / "templates").glob("*.json")),
]


def scenarios() -> list[Path]:
    """Shipped scenario files (reusable tree libraries and the schema have no groups)."""
    out = []
    for path in SHIPPED:
        try:
            data = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(data, dict) and "groups" in data and "world" in data:
            out.append(path)
    return out


def assert_same_decisions(a: Simulation, b: Simulation, tick: int) -> None:
    assert a.decisions.keys() == b.decisions.keys()
    for group, da in a.decisions.items():
        db = b.decisions[group]
        where = np.argwhere(da.status != db.status)
        assert np.array_equal(da.status, db.status), (
            f"tick {tick}, group {group}: statuses differ at (agent, node) {where[:5].tolist()}"
        )
        assert np.array_equal(da.emitted, db.emitted), f"tick {tick}, group {group}: requests"


@pytest.mark.slow
@pytest.mark.parametrize("path", scenarios(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_shipped_scenarios_identical_for_600_ticks(path: Path, monkeypatch: Any) -> None:
    """With the default flags, as the README promises (evacuation: numba on both, ~1 min)."""
    monkeypatch.delenv(choice.ENV, raising=False)
    scenario = load(path)
    ticks = 600
    sims = [Simulation(scenario, engine=e) for e in ("py_trees", "batch")]
    assert sims[0].kernel_name == sims[1].kernel_name
    outs = [io.StringIO() for _ in sims]
    writers = [TraceWriter(out, sim) for out, sim in zip(outs, sims, strict=True)]
    for t in range(ticks):
        for sim, writer in zip(sims, writers, strict=True):
            sim.step()
            writer.on_tick(sim)
        assert_same_decisions(sims[0], sims[1], t)
    a, b = (out.getvalue().splitlines() for out in outs)
    head_a, head_b = json.loads(a[0]), json.loads(b[0])
    assert (head_a.pop("engine"), head_b.pop("engine")) == ("py_trees", "batch")
    assert head_a == head_b
    assert len(a) == len(b) == ticks + 1
    assert a[1:] == b[1:]


# ------------------------------------------------------------------ random trees

CONVERTERS = [
    "inverter",
    "success_is_failure",
    "failure_is_success",
    "failure_is_running",
    "running_is_failure",
    "running_is_success",
    "success_is_running",
]


def conditions() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.builds(lambda p: {"type": "chance", "probability": p}, st.sampled_from([0.2, 0.5, 0.8])),
        st.builds(
            lambda r, h: {
                "type": "in_range",
                "target": {"kind": "nearest", "group": "b"},
                "radius": r,
                "hysteresis": h,
            },
            st.sampled_from([60.0, 120.0]),
            st.sampled_from([0.0, 30.0]),
        ),
        st.builds(lambda k: {"type": "neighbours", "min_count": k}, st.integers(1, 3)),
        st.builds(
            lambda a: {"type": "facing", "target": {"kind": "nearest", "group": "b"}, "angle": a},
            st.sampled_from([30.0, 90.0]),
        ),
        st.just(
            {
                "type": "arrived",
                "target": {"kind": "point", "at": [100.0, 100.0]},
                "tolerance": 80.0,
                "max_speed": 40.0,
            }
        ),
        st.builds(
            lambda op, v: {"type": "blackboard_compare", "key": "mood", "op": op, "value": v},
            st.sampled_from(["==", "!=", ">="]),
            st.sampled_from([1, 2]),
        ),
        st.builds(
            lambda age: {"type": "recall", "key": "seen", "max_age": age},
            st.sampled_from([None, 0.02, 0.1]),
        ),
        st.builds(lambda t: {"type": "in_formation", "tolerance": t}, st.sampled_from([5.0, 40.0])),
    )


def leaves() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        conditions(),
        st.just({"type": "seek", "target": {"kind": "point", "at": [100.0, 100.0]}}),
        st.builds(
            lambda r: {"type": "seek", "target": {"kind": "nearest", "group": "b", "radius": r}},
            st.sampled_from([50.0, 150.0]),
        ),
        st.just(
            {"type": "arrive", "target": {"kind": "point", "at": [100.0, 100.0]}, "tolerance": 60}
        ),
        st.just({"type": "wander"}),
        st.just({"type": "avoid_neighbours", "of": "any", "time_horizon": 2.0}),
        st.builds(
            lambda h, keep: {
                "type": "orca",
                "target": {"kind": "point", "at": [100.0, 100.0]},
                "time_horizon": h,
                "tolerance": 20,
                "keep_apart": keep,
            },
            st.sampled_from([1.0, 3.0]),
            st.booleans(),
        ),
        st.builds(
            lambda c: {
                "type": "flow",
                "target": {"kind": "point", "at": [100.0, 100.0]},
                "cell_size": c,
            },
            st.sampled_from([20.0, 45.0]),
        ),
        st.just(
            {
                "type": "blend",
                "children": [{"type": "separation"}, {"type": "alignment"}, {"type": "cohesion"}],
            }
        ),
        st.builds(lambda d: {"type": "wait", "duration": d}, st.sampled_from([0.05, 0.1])),
        st.builds(
            lambda v: {"type": "blackboard_set", "key": "mood", "value": v},
            st.sampled_from([1, 2]),
        ),
        st.builds(
            lambda r: {
                "type": "remember",
                "key": "seen",
                "target": {"kind": "nearest", "group": "b", "radius": r},
            },
            st.sampled_from([60.0, 150.0]),
        ),
        st.just({"type": "forget", "key": "seen"}),
        st.just({"type": "formation_slot", "slowing_radius": 30}),
        st.just(
            {"type": "arrive", "target": {"kind": "blackboard", "key": "seen"}, "tolerance": 20}
        ),
    )


def parallel(policy: str, sync: bool, children: list[Any], pick: list[int]) -> dict[str, Any]:
    """A parallel node of ``policy`` over ``children`` (``pick`` chooses the selected ones)."""
    node: dict[str, Any] = {"type": "parallel", "policy": policy, "children": children}
    if policy != "success_on_one":
        node["synchronise"] = sync
    if policy == "success_on_selected":
        node["selected"] = sorted({p % len(children) for p in pick})
    return node


def extend(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    kids = st.lists(inner, min_size=1, max_size=4)
    seq_sel = st.builds(
        lambda t, m, c: {"type": t, "memory": m, "children": c},
        st.sampled_from(["sequence", "selector"]),
        st.booleans(),
        kids,
    )

    par = st.builds(
        parallel,
        st.sampled_from(["success_on_all", "success_on_one", "success_on_selected"]),
        st.booleans(),
        kids,
        st.lists(st.integers(0, 3), min_size=1, max_size=3),
    )
    conv = st.builds(lambda t, c: {"type": t, "child": c}, st.sampled_from(CONVERTERS), inner)
    timed = st.builds(
        lambda t, d, c: {"type": t, "duration": d, "child": c},
        st.sampled_from(["timeout", "cooldown"]),
        st.sampled_from([0.04, 0.1]),
        inner,
    )
    repeat = st.builds(
        lambda n, c: {"type": "repeat", "num_success": n, "child": c},
        st.sampled_from([1, 2, 3, -1]),
        inner,
    )
    retry = st.builds(
        lambda n, c: {"type": "retry", "num_failures": n, "child": c}, st.integers(1, 3), inner
    )
    one_shot = st.builds(
        lambda p, c: {"type": "one_shot", "policy": p, "child": c},
        st.sampled_from(["on_completion", "on_successful_completion"]),
        inner,
    )
    guard = st.builds(
        lambda cond, c: {"type": "eternal_guard", "condition": cond, "child": c},
        conditions(),
        inner,
    )
    util = st.builds(
        lambda options, inertia, top: {
            "type": "utility",
            "inertia": inertia,
            "random_top": top,
            "children": options,
        },
        st.lists(utility_option(inner), min_size=1, max_size=4),
        st.sampled_from([0.0, 0.1, 0.5]),
        st.sampled_from([None, 1, 2, 3]),
    )
    return st.one_of(seq_sel, par, conv, timed, repeat, retry, one_shot, guard, util)


UTILITY_INPUTS = [
    {"kind": "distance", "target": {"kind": "nearest", "group": "b"}},
    {"kind": "blackboard", "key": "mood"},
    {"kind": "speed"},
    {"kind": "neighbours", "of": "any"},
    {"kind": "since_success", "node": "utility"},
]
CURVES = [
    {"kind": "linear", "m": -1, "b": 1},
    {"kind": "quadratic", "k": 2},
    {"kind": "logistic", "k": 8, "c": 0.4},
    {"kind": "logit"},
    {"kind": "exponential", "k": 3},
    {"kind": "step", "c": 0.3},
]
RANGES = {
    "distance": [[0, 100], [20, 200]],
    "blackboard": [[0, 2], [1, 3]],
    "speed": [[0, 60], [10, 40]],
    "neighbours": [[0, 4], [1, 6]],
    "since_success": [[0, 10], [2, 30]],
}


def consideration() -> st.SearchStrategy[dict[str, Any]]:
    def build(i: int, r: int, curve: dict[str, Any]) -> dict[str, Any]:
        source = UTILITY_INPUTS[i]
        return {"input": source, "range": RANGES[source["kind"]][r], "curve": curve}

    return st.builds(
        build,
        st.integers(0, len(UTILITY_INPUTS) - 1),
        st.integers(0, 1),
        st.sampled_from(CURVES),
    )


def utility_option(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """One option of a `utility` node: a child, a weight and up to three considerations."""
    return st.builds(
        lambda child, weight, considerations: {
            "child": child,
            "weight": weight,
            "considerations": considerations,
        },
        inner,
        st.sampled_from([0.0, 0.5, 1.0, 2.0]),
        st.lists(consideration(), max_size=3),
    )


def depth(node: dict[str, Any]) -> int:
    kids = node.get("children") or ([node["child"]] if "child" in node else [])
    kids = [k["child"] if "considerations" in k else k for k in kids]  # utility options
    return 1 + max((depth(k) for k in kids), default=0)


random_trees = st.recursive(leaves(), extend, max_leaves=14).filter(lambda t: depth(t) <= 5)


PATTERNS = ("line", "column", "wedge", "circle", "grid", "slots")


def formation(seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The formation group ``a`` keeps (its pattern and anchor chosen by the seed: a leader
    of group ``b`` or a centroid anchor going to a point; 5 fixed slots for 12 agents)."""
    pattern = PATTERNS[seed % len(PATTERNS)]
    spec: dict[str, Any] = {"name": "f", "pattern": pattern, "spacing": 15}
    if pattern == "slots":
        spec["slots"] = [[-10, 0], [-20, 10], [-20, -10], [-30, 20], [-30, -20]]
    leader = {"kind": "nearest", "group": "b"}
    anchor = leader if seed % 2 else {"kind": "point", "at": [200.0, 150.0]}
    return spec, {"name": "f", "anchor": anchor}


def scenario_text(
    tree: dict[str, Any], seed: int, non_penetration: bool = False, **lod: Any
) -> str:
    spec, keep = formation(seed)
    group = {
        "spawn": {"kind": "area", "min": [0, 0], "max": [300, 300]},
        "max_speed": 60,
        "max_force": 200,
        "view_distance": 70,
        "fov": 300,
    }
    return json.dumps(
        {
            "name": "random_tree",
            "world": {
                "width": 300,
                "height": 300,
                "edges": "wrap",
                "dt": 0.02,
                "seed": seed,
                "non_penetration": non_penetration,
            },
            "formations": [spec],
            "groups": [
                {**group, "name": "a", "count": 12, "tree": "t", "formation": keep, **lod},
                {**group, "name": "b", "count": 3, "tree": "w"},
            ],
            "trees": {
                "t": {
                    "root": tree,
                    "blackboard": {"mood": {"type": "number"}, "seen": {"type": "point"}},
                },
                "w": {"root": {"type": "wander"}},
            },
        }
    )


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(tree=random_trees, seed=st.integers(0, 10_000), non_penetration=st.booleans())
def test_random_trees_batch_matches_py_trees(
    tree: dict[str, Any], seed: int, non_penetration: bool
) -> None:
    scenario = load_text(scenario_text(tree, seed, non_penetration))
    a = Simulation(scenario, engine="py_trees")
    b = Simulation(scenario, engine="batch")
    for t in range(40):
        a.step()
        b.step()
        assert_same_decisions(a, b, t)
        np.testing.assert_array_equal(a.agents.pos, b.agents.pos)
    for agent in (0, 5, 11):
        assert a.engine.blackboard(agent) == b.engine.blackboard(agent)
        views = a.blackboard(agent), b.blackboard(agent)
        assert views[0].stored_tick("seen") == views[1].stored_tick("seen")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    tree=random_trees,
    seed=st.integers(0, 10_000),
    every=st.integers(1, 4),
    far=st.sampled_from([None, 0, 3]),
    near=st.sampled_from([0.0, 60.0, 150.0]),
)
def test_random_trees_with_lod_batch_matches_py_trees(
    tree: dict[str, Any], seed: int, every: int, far: int | None, near: float
) -> None:
    lod: dict[str, Any] = {"think_every": every}
    if far is not None:
        lod["lod"] = {"focus": {"group": "b"}, "near": near, "far_think_every": every + far}
    scenario = load_text(scenario_text(tree, seed, **lod))
    a = Simulation(scenario, engine="py_trees")
    b = Simulation(scenario, engine="batch")
    for t in range(40):
        a.step()
        b.step()
        assert_same_decisions(a, b, t)
        np.testing.assert_array_equal(a.decisions["a"].thought, b.decisions["a"].thought)
        np.testing.assert_array_equal(a.agents.pos, b.agents.pos)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    options=st.lists(utility_option(st.recursive(leaves(), extend, max_leaves=5)), max_size=4),
    inertia=st.sampled_from([0.0, 0.1, 0.5]),
    top=st.sampled_from([None, 2, 3]),
    seed=st.integers(0, 10_000),
    every=st.sampled_from([None, 2]),
)
def test_random_utility_trees_batch_matches_py_trees(
    options: list[dict[str, Any]], inertia: float, top: int | None, seed: int, every: int | None
) -> None:
    """A `utility` at the root, so every example has one (random_trees holds it sometimes);
    with and without think_every."""
    options = [{"child": {"type": "wander"}, "weight": 0.25}, *options]
    tree = {"type": "utility", "inertia": inertia, "random_top": top, "children": options}
    lod = {} if every is None else {"think_every": every}
    scenario = load_text(scenario_text(tree, seed, **lod))
    a = Simulation(scenario, engine="py_trees")
    b = Simulation(scenario, engine="batch")
    for t in range(40):
        a.step()
        b.step()
        assert_same_decisions(a, b, t)
        np.testing.assert_array_equal(a.agents.pos, b.agents.pos)
    utility_a, utility_b = (s.engine.node_ops(s.engine.groups["a"])[0] for s in (a, b))
    np.testing.assert_array_equal(utility_a.scores, utility_b.scores)
    np.testing.assert_array_equal(utility_a.last_success, utility_b.last_success)
