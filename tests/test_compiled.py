"""Compiled kernels (issue 14, part 1) against the NumPy reference, tick by tick.

The reference run uses NumPy kernels. Every tick, from that very state, the
compiled path computes the same things and must agree: neighbour pairs and
offsets exactly, steering leaf statuses and sensed conditions exactly (so the
trees decide the same), forces and angular accelerations within 1e-9 per
component, the leaves' memory (wander targets, waypoints) and the integrated
state within 1e-9. Both engines on compiled kernels decide the same, tick for
tick. Anything without a kernel (a plugin primitive or predictor, a built-in
with an option its kernel does not read) runs through NumPy, leaf by leaf.

Kept small: the kernels are compiled once per process (or read from numba's
disk cache), the scenes are the shipped ones at their own sizes.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from behaviortk.engines.facts import compute_facts
from behaviortk.engines.names import AUTO_BATCH_AGENTS
from behaviortk.format.loader import load, load_text
from behaviortk.registry import Registries, load_plugin
from behaviortk.sense.held import Thinking
from behaviortk.sense.sensing import Sense
from behaviortk.sim import choice
from behaviortk.sim.simulation import Simulation
from behaviortk.steering import act as numpy_act
from behaviortk.steering import primitives as pm
from behaviortk.world.integrate import integrate as numpy_integrate
from behaviortk.world.streams import uniforms

ROOT = Path(__file__).resolve().parents[1]
DEFINITIONS = ROOT / "definitions"
TOLERANCE = 1e-9
sys.path.insert(0, str(ROOT))  # examples/ as a package


def scenarios() -> list[Path]:
    return [
        p
        for p in sorted(DEFINITIONS.glob("*.json"))
        if "groups" in json.loads(p.read_text()) and "world" in json.loads(p.read_text())
    ]


@pytest.fixture(scope="module")
def kernels() -> Any:
    found, _ = choice.load()
    assert found is not None, "numba kernels failed to load"
    return found


def compiled_sense(
    sim: Simulation, reference: Sense, kernels: Any, thinking: Thinking | None = None
) -> Sense:
    """The tick's Sense as the compiled path builds it (same random table, same thinkers)."""
    return Sense(
        sim.world,
        sim.agents,
        reference.rand,
        reference.tick,
        reference.time,
        blackboard_points=sim.engine.blackboard_points,
        pointer=sim.pointer,
        registries=sim.registries,
        kernels=kernels,
        thinking=thinking,
        formations=reference.formations,
    )


def close(a: Any, b: Any, what: str) -> None:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, what
    assert np.array_equal(np.isnan(a), np.isnan(b)), f"{what}: not the same unset entries"
    worst = float(np.max(np.abs(np.nan_to_num(a - b)), initial=0.0))
    assert worst <= TOLERANCE, f"{what}: differs by {worst:.3g}"


def check_tick(sim: Simulation, kernels: Any) -> None:
    """One tick of the NumPy run ``sim``, every compiled answer checked against it (with
    think-rate LOD, both from the same held perception)."""
    thinking = sim._thinking()
    twin_thinking = None
    if thinking is not None:
        twin_thinking = Thinking(thinking.rows, copy.deepcopy(thinking.held), thinking.row_of)
    ref = sim.sense(thinking)
    mine = compiled_sense(sim, ref, kernels, twin_thinking)
    for group, g in sim.engine.groups.items():
        for of in ("same", "any", *sim.agents.slices):
            a, b = ref.neighbours(group, of), mine.neighbours(group, of)
            for field in ("offsets", "i", "j"):
                assert np.array_equal(getattr(a, field), getattr(b, field)), (group, of, field)
            close(a.d, b.d, f"{group}/{of} offsets d")
            close(a.dist, b.dist, f"{group}/{of} distances")
        fa = compute_facts(g.flat, group, g.sensed, copy.deepcopy(g.prev), ref, sim.memory)
        fb = compute_facts(g.flat, group, g.sensed, copy.deepcopy(g.prev), mine, sim.memory)
        for index in fa.leaf:
            assert np.array_equal(fa.leaf[index], fb.leaf[index]), (group, index, "status")
        for index in fa.cond:
            assert np.array_equal(fa.cond[index], fb.cond[index]), (group, index, "condition")
    sim.engine.prepare(sim, ref)
    decisions = sim.engine.decide(sim, ref)
    sim.decisions = decisions
    sim._keep_formations(ref)  # as step does between decide and act
    memory = copy.deepcopy(sim.memory)
    linear, angular = numpy_act.act(sim, ref, decisions)
    after, sim.memory = sim.memory, memory
    lin_k, ang_k = kernels.act(sim, mine, decisions)
    close(linear, lin_k, "forces")
    close(angular, ang_k, "angular accelerations")
    for key, arrays in after.items():
        for name, arr in arrays.items():
            close(arr, sim.memory[key][name], f"memory {key} {name}")
    sim.memory = after
    twin = copy.deepcopy(sim.agents)
    numpy_integrate(sim.world, sim.agents, linear, angular, sim.dt, sim.heading_smoothing)
    kernels.integrate(sim.world, twin, linear, angular, sim.dt, sim.heading_smoothing)
    for field in ("pos", "vel", "heading", "smoothed_heading", "orientation", "rotation", "force"):
        close(getattr(sim.agents, field), getattr(twin, field), f"integrated {field}")
    sim.tick += 1
    sim.time = sim.tick * sim.dt


@pytest.mark.parametrize("path", scenarios(), ids=lambda p: p.stem)
def test_every_shipped_definition_agrees_with_numpy_tick_by_tick(path: Path, kernels: Any) -> None:
    sim = Simulation(load(path), engine="batch", kernels="numpy")
    assert sim.kernels is None
    for _ in range(60):
        check_tick(sim, kernels)


@pytest.mark.parametrize("name", ["evade_or_flock", "flocking_lj_obstacles", "hide"])
def test_think_rate_lod_agrees_with_numpy_tick_by_tick(name: str, kernels: Any) -> None:
    """Every tree-driven group thinks every 2 ticks near the world's centre, every 5 away
    from it: held targets and neighbour sets (``sense/held.py``) on both paths."""
    data = json.loads((DEFINITIONS / f"{name}.json").read_text())
    w, h = data["world"]["width"], data["world"]["height"]
    lod = {"focus": [[w / 2, h / 2]], "near": w / 4, "far_think_every": 5}
    for group in data["groups"]:
        if group.get("control") != "external":
            group.update(think_every=2, lod=lod)
    sim = Simulation(load_text(json.dumps(data)), engine="batch", kernels="numpy")
    for _ in range(40):
        check_tick(sim, kernels)


@pytest.mark.parametrize("path", scenarios(), ids=lambda p: p.stem)
def test_both_engines_decide_the_same_on_compiled_kernels(path: Path, kernels: Any) -> None:
    scenario = load(path)
    sims = [Simulation(scenario, engine=e, kernels="numba") for e in ("py_trees", "batch")]
    assert [s.kernel_name for s in sims] == ["numba", "numba"]
    for tick in range(60):
        for sim in sims:
            sim.step()
        for group, da in sims[0].decisions.items():
            db = sims[1].decisions[group]
            assert np.array_equal(da.emitted, db.emitted), (tick, group)
            assert np.array_equal(da.status, db.status), (tick, group)
        assert np.array_equal(sims[0].agents.pos, sims[1].agents.pos), tick


def test_random_table_is_the_same_bits(kernels: Any) -> None:
    ids = np.array([0, 1, 5, 2**40, 123456789], dtype=np.int64)
    for seed, tick in ((0, 0), (7, 3), (2**63 + 5, 10**12)):
        assert np.array_equal(kernels.uniforms(seed, ids, tick, 3), uniforms(seed, ids, tick, 3))


def test_random_rows_drawn_alone_are_the_table_s_bits(kernels: Any) -> None:
    """The compiled Sense draws the table when first read, or only the rows a leaf reads."""
    ids = np.array([0, 1, 5, 2**40, 123456789], dtype=np.int64)
    rows = np.array([4, 1, 3], dtype=np.int64)
    for seed, tick in ((0, 0), (7, 3), (2**63 + 5, 10**12)):
        table = uniforms(seed, ids, tick, 4)
        later = kernels.uniforms_later(seed, ids, tick, 4)
        assert np.array_equal(later.rows(rows, 1, 2), table[rows, 1:3])
        assert np.array_equal(later.table(), table)
    sim = Simulation(load(DEFINITIONS / "evade_or_flock.json"), engine="batch", kernels="numba")
    sense = sim.sense()
    table = uniforms(sim.seed, sim.agents.ids, sim.tick, sim.n_rand)
    assert np.array_equal(sense.rand_rows(rows, 0, 2), table[rows, :2])  # before the table
    assert np.array_equal(sense.rand, table)
    assert np.array_equal(sense.rand_rows(rows, 0, 2), table[rows, :2])  # from the table


# ---------------------------------------------------------------- neighbours
def crowd(
    n: int, *, edges: str, width: float = 200.0, height: float = 120.0, seed: int = 0, **group: Any
) -> Simulation:
    """``n`` agents of one flocking group (plus a second group of 5) on a small world."""
    spec = {
        "name": "a",
        "count": n,
        "spawn": {"kind": "area", "min": [0, 0], "max": [width, height]},
        "speed": 10,
        "tree": "flock",
        **group,
    }
    other = {"name": "b", "count": 5, "spawn": spec["spawn"], "tree": "flock", "fov": 90}
    definition = {
        "name": "crowd",
        "world": {"width": width, "height": height, "edges": edges, "seed": seed},
        "groups": [spec, other],
        "trees": {"flock": {"root": {"type": "separation", "of": "any"}}},
    }
    return Simulation(load_text(json.dumps(definition), "crowd.json"), kernels="numpy")


@pytest.mark.parametrize(
    ("edges", "group"),
    [
        ("wrap", {"view_distance": 30, "fov": 270}),
        ("wrap", {"view_distance": 70, "fov": 360, "max_neighbours": 3}),
        ("contain", {"view_distance": 25, "fov": 120, "max_neighbours": 2}),
        ("bounce", {"view_distance": 0, "fov": 360}),
        ("wrap", {"view_distance": 30, "fov": 300, "mixed": True}),
    ],
)
def test_neighbour_query_equals_the_reference(
    edges: str, group: dict[str, Any], kernels: Any
) -> None:
    """Wrapped worlds narrower than three cells, caps with ties (agents on one point), a
    group seeing another, view distance zero, view and field of view differing within a
    group: the same pairs and numbers."""
    mixed = group.pop("mixed", False)
    sim = crowd(300, edges=edges, **group)
    if mixed:
        sim.agents.fov[:100] = np.radians(360.0)
        sim.agents.fov[100:200] = np.radians(90.0)
        sim.agents.view_distance[:150] = 45.0
    sim.agents.pos[10:20] = sim.agents.pos[5]  # coincident agents: equal distances
    sim.agents.pos[20:24] = [[0.0, 0.0], [199.999, 119.999], [100.0, 0.0], [0.0, 60.0]]
    ref = sim.sense()
    mine = compiled_sense(sim, ref, kernels)
    for group_name in ("a", "b"):
        for of in ("same", "any", "a", "b"):
            a, b = ref.neighbours(group_name, of), mine.neighbours(group_name, of)
            assert np.array_equal(a.offsets, b.offsets)
            assert np.array_equal(a.i, b.i) and np.array_equal(a.j, b.j)
            assert np.array_equal(a.d, b.d) and np.array_equal(a.dist, b.dist)
    assert ref.neighbours("a").count.max() > 0


def test_nearest_of_a_small_group_equals_the_reference(kernels: Any) -> None:
    sim = crowd(200, edges="wrap", view_distance=20)
    sim.agents.pos[200:202] = sim.agents.pos[3]  # ties: the lower row wins
    ref = sim.sense()
    mine = compiled_sense(sim, ref, kernels)
    for a, b, r in (("a", "b", None), ("b", "a", None), ("a", "b", 15.0), ("b", "b", None)):
        expected, got = ref.nearest(a, b, r), mine.nearest(a, b, r)
        assert np.array_equal(expected[0], got[0]) and np.array_equal(expected[1], got[1])


# ------------------------------------------------------------------ fallback
def plugin_registries(*names: str) -> Registries:
    regs = Registries.with_builtins()
    for name in names:
        load_plugin(f"examples.plugins.{name}", regs)
    return regs


def test_leaves_without_a_kernel_run_on_numpy_in_request_order(kernels: Any) -> None:
    """A plugin primitive, a pursuit with a plugin predictor and a blend with a plugin child
    run through NumPy; the built-ins beside them on kernels; the forces agree."""
    regs = plugin_registries("orbit", "fixed_lead")
    target = {"kind": "nearest", "group": "a"}
    root = {
        "type": "parallel",
        "policy": "success_on_all",
        "children": [
            {"type": "orbit", "target": {"kind": "point", "at": [100, 60]}, "weight": 0.5},
            {"type": "pursuit", "target": target, "predictor": {"type": "fixed", "seconds": 1}},
            {
                "type": "blend",
                "children": [
                    {"type": "seek", "target": target},
                    {"type": "orbit", "target": target},
                ],
            },
            {"type": "wander", "weight": 2},
            {"type": "separation"},
        ],
    }
    definition = {
        "name": "mixed",
        "world": {"width": 200, "height": 120, "edges": "wrap", "seed": 4},
        "groups": [
            {"name": "a", "count": 40, "spawn": {"kind": "area", "min": [0, 0], "max": [200, 120]},
             "tree": "t", "speed": 20},
        ],
        "trees": {"t": {"root": root}},
    }  # fmt: skip
    sim = Simulation(
        load_text(json.dumps(definition), "mixed.json", registries=regs), kernels="numpy"
    )
    from behaviortk.steering.jobs import supports

    models = [sim.trees["a"].nodes[i].model for i in sim.trees["a"].steering]
    assert [supports(m) for m in models] == [False, False, False, True, True]
    for _ in range(20):
        check_tick(sim, kernels)


def test_an_option_the_kernel_does_not_read_sends_the_leaf_to_numpy(monkeypatch: Any) -> None:
    """Fields outside a kernel's list must be at their default (a new option of a built-in)."""
    from behaviortk.steering import jobs as leaves

    impl, known = leaves.IMPLS[pm.Wander]
    monkeypatch.setattr(leaves, "_verdicts", {})
    monkeypatch.setitem(leaves.IMPLS, pm.Wander, (impl, known - {"jitter"}))
    assert leaves.supports(pm.Wander())  # 80, the default
    assert not leaves.supports(pm.Wander(jitter=50))


def test_a_compile_failure_falls_back_to_numpy_with_one_warning_line(
    monkeypatch: Any, capsys: Any
) -> None:
    monkeypatch.setattr(choice, "_loaded", None)
    monkeypatch.setattr(choice, "_failed", False)
    monkeypatch.setitem(sys.modules, "behaviortk.sim.backend", None)  # import fails
    sim = Simulation(load(DEFINITIONS / "wander.json"), engine="batch", kernels="numba")
    assert sim.kernels is None and sim.kernel_name == "numpy"
    sim.step()
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("behaviortk: warning: compiled kernels unavailable, using NumPy (")
    Simulation(load(DEFINITIONS / "wander.json"), engine="batch", kernels="numba")
    assert capsys.readouterr().err == ""  # said once


# ------------------------------------------------------------------ choosing
def test_which_kernels_a_simulation_runs_on(monkeypatch: Any) -> None:
    """``auto`` goes by the agent count alone (the engine's own threshold), never the engine."""
    monkeypatch.delenv(choice.ENV, raising=False)
    assert choice.resolve("auto", AUTO_BATCH_AGENTS) == "numba"
    assert choice.resolve("auto", AUTO_BATCH_AGENTS - 1) == "numpy"
    assert choice.resolve("auto", 0) == "numpy"
    assert choice.resolve("numba", 1) == "numba"
    monkeypatch.setenv(choice.ENV, "numpy")
    assert choice.resolve("auto", 10**6) == "numpy"
    assert choice.resolve("numba", 1) == "numba"  # an explicit choice wins
    monkeypatch.setenv(choice.ENV, "fast")
    with pytest.raises(choice.KernelsError, match="choose one of auto, numba, numpy"):
        choice.resolve("auto", 1)
    with pytest.raises(choice.KernelsError, match="unknown kernels 'cuda'"):
        choice.resolve("cuda", 1)


def test_auto_kernels_are_the_same_on_both_engines(monkeypatch: Any) -> None:
    """A small scenario runs NumPy on either engine, whatever ``engine`` says."""
    monkeypatch.delenv(choice.ENV, raising=False)
    scenario = load(DEFINITIONS / "flocking_lj_obstacles.json")
    names = {Simulation(scenario, engine=e).kernel_name for e in ("py_trees", "batch")}
    assert names == {"numpy"}


# ----------------------------------------------------------------- cell order
def test_large_groups_are_kept_in_cell_order_as_a_row_permutation(
    monkeypatch: Any, kernels: Any
) -> None:
    """Rows move, ids and state follow them; the run matches one without re-sorting."""
    order = importlib.import_module("behaviortk.sim.cell_order")
    monkeypatch.setattr(order, "SORT_EVERY", 4)
    monkeypatch.setattr(order, "SORT_MIN", 50)
    scenario = crowd(300, edges="wrap", view_distance=30).scenario
    sorted_run = Simulation(scenario, engine="batch", kernels="numba")
    plain = Simulation(scenario, engine="batch", kernels="numpy")
    for _ in range(13):
        sorted_run.step()
        plain.step()
    rows = sorted_run.agents.slices["a"]
    ids = sorted_run.ids[rows]
    assert not np.array_equal(ids, np.arange(rows.start, rows.stop))  # rows did move
    assert sorted(ids.tolist()) == list(range(300))
    by_id = plain.agents.pos[plain.rows_of(ids)]
    assert np.abs(by_id - sorted_run.agents.pos[rows]).max() < 1e-6
    names = [sorted_run.agents.names[r] for r in range(rows.start, rows.stop)]
    assert names == [f"a-{i}" for i in ids.tolist()]


# ---------------------------------------------------------------- integrate
@pytest.mark.parametrize("edges", ["wrap", "bounce", "contain"])
def test_integration_equals_the_reference_with_turn_limits_and_smoothing(
    edges: str, kernels: Any
) -> None:
    """Agents leaving the world on every side, some stopped, some turning faster than
    their turn rate allows, rotating ones, non-finite forces; heading smoothing 4."""
    from behaviortk.world.factory import make_agents
    from behaviortk.world.state import World

    rng = np.random.default_rng(11)
    n = 200
    pos = rng.uniform(-20.0, 120.0, (n, 2))
    vel = rng.normal(0.0, 60.0, (n, 2))
    vel[:20] = 0.0
    turn = np.where(np.arange(n) % 3 == 0, np.inf, rng.uniform(0.5, 4.0, n))
    a = make_agents(pos, vel, max_speed=80.0, max_force=150.0, max_turn_rate=turn)
    a.rotation[:] = rng.uniform(-3.0, 3.0, n)
    b = copy.deepcopy(a)
    world = World(width=100.0, height=100.0, edges=edges)
    for step in range(8):
        force = rng.normal(0.0, 200.0, (n, 2))
        force[step] = [np.nan, np.inf]
        angular = rng.normal(0.0, 10.0, n)
        numpy_integrate(world, a, force, angular, 0.05, 4)
        kernels.integrate(world, b, force, angular, 0.05, 4)
        for field in ("pos", "vel", "heading", "smoothed_heading", "orientation", "rotation"):
            close(getattr(a, field), getattr(b, field), f"step {step} {field}")


def test_a_world_option_the_step_does_not_know_runs_the_numpy_step(
    monkeypatch: Any, kernels: Any
) -> None:
    """A World field added later (an integration option) set away from its default."""
    import dataclasses

    from behaviortk.world import integrate_loops
    from behaviortk.world.state import World

    @dataclasses.dataclass
    class Later(World):
        push_apart: bool = False

    calls: list[bool] = []
    monkeypatch.setattr(integrate_loops, "numpy_integrate", lambda *a: calls.append(True))
    agents = crowd(10, edges="wrap").agents
    force = np.zeros((agents.n, 2))
    integrate_loops.integrate(Later(200.0, 120.0, "wrap"), agents, force, None, 0.1)
    assert calls == []
    integrate_loops.integrate(
        Later(200.0, 120.0, "wrap", push_apart=True), agents, force, None, 0.1
    )
    assert calls == [True]


OPTION_CASES = {
    "cohesion normalised (the default)": {"type": "cohesion"},
    "pursuit without the facing early-out": {
        "type": "pursuit",
        "target": {"kind": "nearest", "group": "b"},
        "facing_test": "none",
    },
    "jitter wander steered by facing": {"type": "wander", "steer": "face"},
    "orientation wander": {"type": "wander", "method": "orientation"},
    "seek the neighbours' centroid": {
        "type": "seek",
        "target": {"kind": "centroid", "group": "neighbours"},
    },
    "arrive at an offset of the nearest": {
        "type": "arrive",
        "target": {
            "kind": "offset",
            "target": {"kind": "nearest", "group": "b"},
            "offset": [20, 5],
        },
    },
    "seek the nearest visible": {
        "type": "seek",
        "target": {"kind": "nearest", "group": "b", "visible": True},
    },
    "follow": {"type": "follow"},
}


@pytest.mark.parametrize("leaf", list(OPTION_CASES.values()), ids=list(OPTION_CASES))
def test_options_and_target_kinds_added_later_agree_with_numpy(leaf: Any, kernels: Any) -> None:
    """A leaf whose kernel does not know an option value (or a target kind) must not run a
    kernel computing something else: the compiled act equals NumPy's every tick."""
    from engine_support import definition

    other = {
        "name": "b",
        "count": 4,
        "spawn": {"kind": "area", "min": [150, 150], "max": [250, 250]},
        "tree": "idle",
    }
    data = definition(leaf, count=12, others=[other])
    data["groups"][0]["fov"] = 240
    data["obstacles"] = [{"at": [200, 120], "radius": 15}]
    sim = Simulation(load_text(json.dumps(data), "options"), engine="batch", kernels="numpy")
    for _ in range(30):
        check_tick(sim, kernels)


NEAREST_B = {"kind": "nearest", "group": "b"}
TARGETED_CASES = {
    f"{leaf} predicting {predictor['type']}": {
        "type": leaf, "target": NEAREST_B, "predictor": predictor, **extra
    }
    for leaf, extra in (
        ("pursuit", {}),
        ("evade", {"threat_range": 120}),
        ("interpose", {"other": {"kind": "nearest", "group": "b", "visible": True}}),
        ("offset_pursuit", {"offset": [12, -6]}),
    )
    for predictor in ({"type": "linear"}, {"type": "capped", "max_prediction": 0.4},
                      {"type": "intercept"})
}  # fmt: skip
TARGETED_CASES |= {
    "pursuit facing by velocity": {"type": "pursuit", "target": NEAREST_B, "facing_test": "velocity"},
    "pursuit facing threshold": {"type": "pursuit", "target": NEAREST_B, "facing_threshold": 0.3},
    "flee always": {"type": "flee", "target": NEAREST_B, "fear_distance": None},
    "flee within 60": {"type": "flee", "target": NEAREST_B, "fear_distance": 60},
    "arrive slow": {"type": "arrive", "target": NEAREST_B, "deceleration": "slow", "tolerance": 5},
    "arrive millington": {"type": "arrive", "target": NEAREST_B, "slowing_radius": 80},
    "velocity_match": {"type": "velocity_match", "target": NEAREST_B, "time_to_target": 0.3},
    "hide": {"type": "hide", "target": NEAREST_B, "distance_from_boundary": 10},
    "hide with nowhere to hide": {"type": "hide", "target": NEAREST_B, "threat_range": None},
}  # fmt: skip


@pytest.mark.parametrize("name", list(TARGETED_CASES))
def test_targeted_primitives_agree_with_numpy_with_every_predictor(name: str, kernels: Any) -> None:
    """The declared targeted primitives run compiled (their formulas in a generated row loop)
    with every built-in predictor and option, and equal NumPy's every tick."""
    from engine_support import definition

    from behaviortk.steering.jobs import supports

    other = {
        "name": "b",
        "count": 4,
        "spawn": {"kind": "area", "min": [150, 150], "max": [250, 250]},
        "tree": "wander",
    }
    data = definition(TARGETED_CASES[name], count=12, others=[other])
    data["trees"]["wander"] = {"root": {"type": "wander"}}
    if "nowhere" not in name:
        data["obstacles"] = [{"at": [200, 120], "radius": 15}, {"at": [120, 220], "radius": 9}]
    sim = Simulation(load_text(json.dumps(data), "targeted"), engine="batch", kernels="numpy")
    models = [sim.trees["a"].nodes[i].model for i in sim.trees["a"].steering]
    assert models and all(supports(m) for m in models)
    for _ in range(30):
        check_tick(sim, kernels)


# ------------------------------------------------------------- what compiles
COMPILED_DURING_TICKS = """
import gc, sys
from numba.core.registry import CPUDispatcher
from behaviortk.sim.simulation import Simulation

def signatures():
    return {id(d): (d, set(d.signatures)) for d in gc.get_objects() if isinstance(d, CPUDispatcher)}

sim = Simulation(sys.argv[1], engine=sys.argv[2], kernels="numba", debug=sys.argv[3] == "debug")
before = signatures()
for _ in range(40):
    sim.step()
for key, (d, found) in signatures().items():
    if found - before.get(key, (d, set()))[1]:
        print(d.py_func.__module__, d.py_func.__qualname__)
"""


@pytest.mark.parametrize(
    "name, engine, debug",
    [
        ("evacuation.json", "batch", ""),
        ("evacuation.json", "batch", "debug"),
        ("guard_patrol.json", "py_trees", ""),
        ("utility_villager.json", "batch", ""),
    ],
)
def test_ticking_compiles_nothing_the_plan_left_out(name: str, engine: str, debug: str) -> None:
    """A fresh process builds one Simulation on compiled kernels (its plan readied:
    ``sim/kernel_plan.py``) and ticks it 40 times (cell order's first re-sort, lists
    rebuilt): no kernel, row loop or fused tree gets a new compiled signature, so the
    plan named everything the ticks call, with the types they call it with."""
    proc = subprocess.run(
        [sys.executable, "-c", COMPILED_DURING_TICKS, str(DEFINITIONS / name), engine, debug],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == ""
