"""BatchEngine on small hand-built scenarios: statuses worked out by hand from the rules in
engines/sim_time.py (SimTimeout, Cooldown) and leaves/actions.py (wait), the blackboard, and the
inspection API the viewer uses."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.status import FAILURE, INVALID, RUNNING, SUCCESS


def scenario(
    root: dict[str, Any], count: int = 3, dt: float = 0.02, blackboard: dict[str, str] | None = None
) -> Any:
    keys = {k: {"type": t} for k, t in (blackboard or {}).items()}
    return load_text(
        json.dumps(
            {
                "name": "hand",
                "world": {"width": 200, "height": 200, "edges": "wrap", "dt": dt, "seed": 1},
                "groups": [
                    {
                        "name": "a",
                        "count": count,
                        "spawn": {"kind": "area", "min": [0, 0], "max": [200, 200]},
                        "tree": "t",
                    }
                ],
                "trees": {"t": {"root": root, "blackboard": keys}},
            }
        )
    )


def statuses(sim: Simulation, ticks: int, node: int) -> list[int]:
    out = []
    for _ in range(ticks):
        sim.step()
        out.append(int(sim.decisions["a"].status[0, node]))
    return out


def test_timeout_fails_a_running_child_after_its_duration() -> None:
    """decorators.SimTimeout: n = ticks_for(0.1 s, dt 0.02) = 5; the child (a 1 s wait) is
    ticked on ticks 0..4, then on tick 5 the timeout fails and stops it (INVALID)."""
    root = {"type": "timeout", "duration": 0.1, "child": {"type": "wait", "duration": 1.0}}
    sim = Simulation(scenario(root), engine="batch")
    assert statuses(sim, 7, 0) == [RUNNING] * 5 + [FAILURE, RUNNING]
    sim2 = Simulation(scenario(root), engine="batch")
    assert statuses(sim2, 6, 1) == [RUNNING] * 5 + [INVALID]


def test_cooldown_refuses_for_its_duration_after_the_child_finishes() -> None:
    """decorators.Cooldown: the wait (0.04 s = 2 ticks) runs on ticks 0, 1 and succeeds on 2;
    n = ticks_for(0.06, 0.02) = 3, so ticks 3, 4 fail; on tick 5 the wait starts again."""
    root = {
        "type": "cooldown",
        "duration": 0.06,
        "child": {"type": "wait", "duration": 0.04},
    }
    sim = Simulation(scenario(root), engine="batch")
    want = [RUNNING, RUNNING, SUCCESS, FAILURE, FAILURE, RUNNING, RUNNING, SUCCESS]
    assert statuses(sim, 8, 0) == want


def test_blackboard_point_feeds_a_blackboard_target() -> None:
    """blackboard_set stores [50, 60] (actions.stored_value: a float pair) and
    blackboard_points returns it for every agent. Leaf statuses are computed before the
    trees tick, so the seek sees the point (and emits) from the next tick on."""
    root = {
        "type": "sequence",
        "memory": False,
        "children": [
            {"type": "blackboard_set", "key": "goal", "value": [50, 60]},
            {"type": "seek", "target": {"kind": "blackboard", "key": "goal"}},
        ],
    }
    sim = Simulation(scenario(root, blackboard={"goal": "point"}), engine="batch")
    before = sim.engine.blackboard_points("a", "goal", np.arange(3))
    assert np.isnan(before).all()
    assert sim.engine.blackboard(0) == {}
    sim.step()
    assert sim.engine.blackboard(1) == {"goal": (50.0, 60.0)}
    np.testing.assert_array_equal(
        sim.engine.blackboard_points("a", "goal", np.arange(3)), [[50.0, 60.0]] * 3
    )
    np.testing.assert_array_equal(sim.engine.blackboard_points("a", "other", np.arange(2)), np.nan)
    assert not sim.decisions["a"].emitted.any()
    sim.step()
    assert sim.decisions["a"].emitted[:, 0].all()


def test_blackboard_compare_uses_the_shared_comparison() -> None:
    """conditions.compare: unset is False for every operator; 2 >= 1 is True."""
    root = {
        "type": "selector",
        "memory": False,
        "children": [
            {"type": "blackboard_compare", "key": "k", "op": ">=", "value": 1},
            {"type": "blackboard_set", "key": "k", "value": 2},
        ],
    }
    sim = Simulation(scenario(root, blackboard={"k": "number"}), engine="batch")
    sim.step()
    assert sim.decisions["a"].status[0].tolist() == [SUCCESS, FAILURE, SUCCESS]
    sim.step()
    assert sim.decisions["a"].status[0].tolist() == [SUCCESS, SUCCESS, SUCCESS]


def test_inspection_matches_the_py_trees_engine() -> None:
    """node_status equals the py_trees engine's; the snapshot is py_trees' own rendering,
    identical line for line once py_trees' feedback messages are removed."""
    root = {
        "type": "selector",
        "name": "top",
        "memory": False,
        "children": [
            {"type": "chance", "name": "coin", "probability": 0.5},
            {"type": "inverter", "child": {"type": "wander"}},
        ],
    }
    sc = scenario(root, count=4)
    a, b = Simulation(sc, engine="py_trees"), Simulation(sc, engine="batch")
    for _ in range(5):
        a.step()
        b.step()
    strip = re.compile(r" -- .*$", re.M)
    for agent in range(4):
        np.testing.assert_array_equal(a.engine.node_status(agent), b.engine.node_status(agent))
        assert strip.sub("", a.snapshot(agent)) == b.snapshot(agent)
    assert b.snapshot(0).splitlines()[0].startswith("[o] top [")
    assert b.engine.name == "batch"
