"""Plugins of every kind (examples/plugins/), each one file, run on both engines like built-ins.

Each test loads its plugin into a fresh ``Registries.with_builtins()``, so the
default registries (and the committed schema) never see it.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import numpy as np
import pytest
from steering_support import node, run, world

from behaviortk.engines.base import EngineError
from behaviortk.engines.batch.engine import _sequence as batch_sequence
from behaviortk.engines.pytrees import _sequence as py_trees_sequence
from behaviortk.format.loader import load_text
from behaviortk.format.schema import json_schema
from behaviortk.plugin import Node, NodeModel, Plugin, doc
from behaviortk.registry import Registries, RegistryError, default, load_plugin
from behaviortk.sense.sensing import Sense
from behaviortk.sim.simulation import Simulation
from behaviortk.steering.debug import DebugBuffer
from behaviortk.steering.predictors import look_ahead
from behaviortk.tree.status import FAILURE, RUNNING
from behaviortk.world.factory import make_agents

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # examples/ as a package

PLUGINS = {
    "orbit": ("primitives", "orbit"),
    "in_box": ("conditions", "in_box"),
    "tally": ("actions", "tally"),
    "patience": ("decorators", "patience"),
    "fixed_lead": ("predictors", "fixed"),
    "farthest": ("targets", "farthest"),
    "clock_input": ("inputs", "clock"),
}


def fresh(name: str) -> tuple[Registries, ModuleType]:
    regs = Registries.with_builtins()
    load_plugin(f"examples.plugins.{name}", regs)
    return regs, importlib.import_module(f"examples.plugins.{name}")


def both_engines(definition: dict[str, Any], regs: Registries) -> list[Simulation]:
    scenario = load_text(json.dumps(definition), "plugin.json", registries=regs)
    return [Simulation(scenario, engine=e) for e in ("py_trees", "batch")]


@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_plugin_runs_tick_for_tick_the_same_on_both_engines(name: str) -> None:
    regs, module = fresh(name)
    kind, tag = PLUGINS[name]
    assert tag in getattr(regs, kind) and tag not in getattr(default(), kind)
    ref, batch = both_engines(module.DEFINITION, regs)
    for _ in range(40):
        ref.step()
        batch.step()
        for group, decision in ref.decisions.items():
            assert np.array_equal(decision.status, batch.decisions[group].status)
            assert np.array_equal(decision.emitted, batch.decisions[group].emitted)
        assert np.array_equal(ref.agents.pos, batch.agents.pos)
        assert np.array_equal(ref.agents.vel, batch.agents.vel)


@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_plugin_is_in_the_schema_of_its_registries_only(name: str) -> None:
    regs, _ = fresh(name)
    kind, tag = PLUGINS[name]
    union = {"targets": "Target", "predictors": "Predictor", "inputs": "Input"}.get(kind, "Node")
    key = "kind" if kind in ("targets", "inputs") else "type"
    assert tag in json_schema(regs)["$defs"][union]["properties"][key]["enum"]
    assert tag not in json_schema()["$defs"][union]["properties"][key]["enum"]


def test_orbit_force_by_hand() -> None:
    """Agent at (300, 200) at rest, target (200, 200), max speed 60, pull 0.2:
    u = (-1, 0), perp(u) = (0, -1), desired = ((0, -1) + 0.2 (-1, 0)) * 60 = (-12, -60)."""
    regs, _ = fresh("orbit")
    model = node({"type": "orbit", "target": {"kind": "point", "at": [200, 200]}}, regs)
    agents = make_agents([[300.0, 200.0]], max_speed=60.0)
    force = run(model, agents, registries=regs).linear
    assert force.tolist() == [[-12.0, -60.0]]


def test_in_box_by_hand() -> None:
    regs, _ = fresh("in_box")
    model = node({"type": "in_box", "min": [0, 0], "max": [10, 10]}, regs)
    agents = make_agents([[5.0, 5.0], [10.0, 0.0], [10.5, 5.0], [5.0, -1.0]])
    sense = Sense(world(100.0, 100.0), agents, np.zeros((4, 1)), 0, 0.0, registries=regs)
    impl = regs.conditions.impl("in_box")
    got = impl(model, sense, "agents", np.zeros(4, bool), None)
    assert got.tolist() == [True, True, False, False]


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_tally_counts_every_fourth_tick(engine: str) -> None:
    """wait 0.3 s at dt 0.1 runs 3 ticks, then tally succeeds: one count per 4 ticks."""
    regs, module = fresh("tally")
    sim = both_engines(module.DEFINITION, regs)[engine == "batch"]
    counts = []
    for _ in range(12):
        sim.step()
        counts.append(sim.engine.blackboard(0).get("done"))
    assert counts == [None, None, None, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0]


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_patience_fails_a_running_child_on_its_fifth_tick(engine: str) -> None:
    """nodes: 0 selector, 1 patience, 2 wait, 3 wander; patience 5 over a 10 s wait."""
    regs, module = fresh("patience")
    sim = both_engines(module.DEFINITION, regs)[engine == "batch"]
    seen = []
    for _ in range(6):
        sim.step()
        seen.append(sim.decisions["waiters"].status[0].tolist())
    running = [RUNNING, RUNNING, RUNNING, 0]
    assert seen[:4] == [running] * 4
    assert seen[4] == [RUNNING, FAILURE, 0, RUNNING]  # gave up: the stroll runs, the wait stopped
    assert seen[5] == [RUNNING, RUNNING, RUNNING, 0]  # started again, wander pre-empted
    assert sim.active_names(0) == []


def test_fixed_predictor_by_hand() -> None:
    """Look-ahead is 0.8 s whatever the distance; pursuit aims at target + 0.8 * velocity."""
    regs, _ = fresh("fixed_lead")
    fixed = regs.predictors["fixed"].model(seconds=0.8)
    t = look_ahead(
        fixed,
        np.array([[100.0, 0.0], [5.0, 5.0]]),
        np.zeros((2, 2)),
        np.full(2, 50.0),
        np.zeros((2, 2)),
        regs,
    )
    assert t.tolist() == [0.8, 0.8]
    model = node(
        {
            "type": "pursuit",
            "target": {"kind": "agent", "id": "agents-1"},
            "predictor": {"type": "fixed", "seconds": 0.8},
        },
        regs,
    )
    # the target is ahead but moving away (not facing us): no early-out
    agents = make_agents(
        [[0.0, 0.0], [100.0, 0.0]], vel=[[0.0, 0.0], [0.0, 50.0]], heading=[[1.0, 0.0], [0.0, 1.0]]
    )
    debug = DebugBuffer(enabled=True)
    run(model, agents, rows=[0], debug=debug, registries=regs)
    rows, points = debug.gather("crosshair", "point")
    assert rows.tolist() == [0]
    assert points.tolist() == [[100.0, 40.0]]


def test_farthest_target_by_hand() -> None:
    """Rows at x = 0, 10, 30: farthest of 0 is 2, of 1 is 2 (20 > 10), of 2 is 0."""
    regs, _ = fresh("farthest")
    agents = make_agents([[0.0, 0.0], [10.0, 0.0], [30.0, 0.0]])
    sense = Sense(world(100.0, 100.0), agents, np.zeros((3, 1)), 0, 0.0, registries=regs)
    spec = regs.targets["farthest"].model(group="agents")
    facts = sense.target(spec, "agents")
    assert facts.agent.tolist() == [2, 2, 0]
    assert facts.pos.tolist() == [[30.0, 0.0], [30.0, 0.0], [0.0, 0.0]]


class AllOf(NodeModel):
    """A plugin composite: every child must succeed, re-checked from the first each tick."""

    type: Literal["all_of"] = "all_of"
    children: list[Node] = doc("Children", min_length=1)


def all_of_definition() -> dict[str, Any]:
    seek = {"type": "seek", "target": {"kind": "point", "at": [0, 0]}}
    root = {"type": "all_of", "children": [{"type": "chance", "probability": 0.5}, seek]}
    return {
        "name": "composite",
        "world": {"width": 200, "height": 200, "dt": 0.1, "seed": 4},
        "groups": [
            {
                "name": "a",
                "count": 30,
                "spawn": {"kind": "area", "min": [0, 0], "max": [200, 200]},
                "tree": "t",
            }
        ],
        "trees": {"t": {"root": root}},
    }


def test_a_composite_without_builders_is_refused_when_the_simulation_is_made() -> None:
    regs = Registries.with_builtins()
    regs.composites.register(AllOf)
    scenario = load_text(json.dumps(all_of_definition()), "c.json", registries=regs)
    for engine in ("py_trees", "batch"):
        with pytest.raises(
            EngineError,
            match=rf"group 'a', node 'all_of': the {engine} engine "
            "cannot build composite 'all_of'",
        ):
            Simulation(scenario, engine=engine)


def test_a_plugin_composite_with_builders_runs_on_both_engines() -> None:
    plugin = Plugin("all_of_plugin")
    plugin.composite(AllOf, py_trees=py_trees_sequence_of, batch=batch_sequence_of)
    regs = plugin.install(Registries.with_builtins())
    ref, batch = both_engines(all_of_definition(), regs)
    for _ in range(10):
        ref.step()
        batch.step()
        assert np.array_equal(ref.decisions["a"].status, batch.decisions["a"].status)
    status = ref.decisions["a"].status
    assert {int(s) for s in status[:, 0]} == {FAILURE, RUNNING}  # chance splits the group


def py_trees_sequence_of(n: Any, kids: Any, env: Any) -> Any:
    return py_trees_sequence(_as_sequence(n), kids, env)


def batch_sequence_of(n: Any, kids: Any, c: Any) -> Any:
    return batch_sequence(_as_sequence(n), kids, c)


def _as_sequence(flat_node: Any) -> Any:
    """The flat node with a model that has ``memory`` False, as the built-in builders read it."""
    from dataclasses import replace

    from behaviortk.format.structure import Sequence

    seq = Sequence(memory=False, children=list(flat_node.model.children), name="all_of")
    return replace(flat_node, model=seq)


def test_a_tag_is_unique_across_node_kinds_and_names_the_first() -> None:
    regs = Registries.with_builtins()

    class Seek(NodeModel):
        type: Literal["seek"] = "seek"

    with pytest.raises(RegistryError, match="already registered as a steering primitive"):
        regs.conditions.register(Seek)


def test_clock_input_by_hand() -> None:
    """dt 0.05: home scores time / 2 against graze's 0.5; the tie at 1.0 s (tick 20) goes to
    graze, the first option; from tick 21 (1.05 s) the sheep head home."""
    regs, module = fresh("clock_input")
    for sim in both_engines(module.DEFINITION, regs):
        chosen = []
        for _ in range(23):
            sim.step()
            chosen.append(int(sim.decisions["sheep"].status[0, 2] == RUNNING))
        assert chosen == [0] * 21 + [1, 1]
