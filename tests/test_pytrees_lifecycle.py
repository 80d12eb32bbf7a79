"""The py_trees engine's own ``tick``/``stop`` of leaves and guards equal py_trees' methods.

``_AgentLeaf`` (steering, sensed condition and ops leaves) and ``Guard`` (the
eternal guard) take py_trees' steps without its debug lines and per-tick
``list(Status)`` check (issue 14, item 4: speed). Here the same random trees
(every composite, decorator, condition and action kind, as in
``test_equivalence.py``) run twice on the py_trees engine: once with those
methods, once with them removed so py_trees' ``Behaviour.tick``/``stop`` and
``EternalGuard.tick``/``Decorator.stop`` run. Every node's status, every request,
the blackboards, every ``initialise``/``terminate`` call and the rendered trees
must be the same on every tick.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from py_trees import behaviour, decorators
from test_equivalence import random_trees, scenario_text

from behaviortk.engines.pytrees import ConditionLeaf, Guard, OpsLeaf, SteeringLeaf, _AgentLeaf
from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation

TICKS = 40


def run(scenario: Any) -> list[Any]:
    """Per tick: each group's statuses and requests, agent 0's blackboard, and every
    ``initialise``/``terminate`` call of our leaves and guards in call order; then every
    snapshot."""
    seen: list[Any] = []
    with pytest.MonkeyPatch.context() as mp:
        for cls in (SteeringLeaf, ConditionLeaf, OpsLeaf, Guard):
            record_lifecycle(mp, cls, seen)
        sim = Simulation(scenario, engine="py_trees")
        for _ in range(TICKS):
            sim.step()
            for group, d in sim.decisions.items():
                seen.append((sim.tick, group, d.status.tolist(), d.emitted.tolist()))
            seen.append(sim.engine.blackboard(0))
    seen += [sim.snapshot(agent) for agent in range(sim.agents.n)]
    return seen


def record_lifecycle(mp: pytest.MonkeyPatch, cls: type, log: list[Any]) -> None:
    """Wrap ``cls.initialise`` and ``cls.terminate`` to append each call to ``log``."""
    initialise, terminate = cls.initialise, cls.terminate  # type: ignore[attr-defined]

    def logged_initialise(self: Any) -> None:
        log.append((cls.__name__, self.row, self.index, "initialise"))
        initialise(self)

    def logged_terminate(self: Any, new_status: Any) -> None:
        log.append((cls.__name__, self.row, self.index, "terminate", new_status.name))
        terminate(self, new_status)

    mp.setattr(cls, "initialise", logged_initialise)
    mp.setattr(cls, "terminate", logged_terminate)


def run_with_py_trees_methods(scenario: Any) -> list[Any]:
    with pytest.MonkeyPatch.context() as mp:
        for cls in (_AgentLeaf, Guard):
            mp.delattr(cls, "tick")
            mp.delattr(cls, "stop")
        assert _AgentLeaf.tick is behaviour.Behaviour.tick
        assert Guard.tick is decorators.EternalGuard.tick
        assert Guard.stop is decorators.Decorator.stop
        return run(scenario)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(tree=random_trees, seed=st.integers(0, 10_000))
def test_random_trees_tick_as_with_py_trees_own_methods(tree: dict[str, Any], seed: int) -> None:
    scenario = load_text(scenario_text(tree, seed))
    assert run(scenario) == run_with_py_trees_methods(scenario)


def test_shipped_guards_and_leaves_tick_as_with_py_trees_own_methods() -> None:
    """evade_or_flock's guards pre-empt each other (selector without memory) every few ticks."""
    from pathlib import Path

    from behaviortk.format.loader import load

    scenario = load(Path(__file__).resolve().parent.parent / "definitions" / "evade_or_flock.json")
    fast, stock = run(scenario), run_with_py_trees_methods(scenario)
    assert fast == stock
    statuses = np.array([s[2] for s in fast if isinstance(s, tuple) and s[1] == "prey"])
    # the guards ("threatened" node 1, "social" node 3) both fail (3) and pass on some tick,
    # so both branches of Guard.tick ran and were compared
    assert {3, 1} <= set(statuses[:, :, 1].ravel().tolist())
    assert {3, 1} <= set(statuses[:, :, 3].ravel().tolist())
