"""Zones: named circles and rectangles, the `in_zone` condition and the `zone` target."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from engine_support import definition

import behaviortk
from behaviortk.sim.simulation import Simulation

ZONES = [
    {"name": "exit", "kind": "circle", "at": [390, 200], "radius": 20},
    {"name": "yard", "kind": "rect", "min": [100, 100], "max": [200, 150]},
]


def zoned(root: dict[str, Any], positions: list[list[float]], edges: str = "contain") -> Any:
    data = definition(root, count=len(positions), positions=positions)
    data["zones"] = ZONES
    data["world"]["edges"] = edges
    return data


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_in_zone_by_hand(engine: str) -> None:
    """yard [100,200]x[100,150]: (150,125) inside, (200,150) on the corner (inside),
    (201,125) outside; exit circle (390,200) r 20: (390,219) inside."""
    positions = [[150, 125], [200, 150], [201, 125], [390, 219], [390, 221]]
    root = {
        "type": "selector",
        "memory": False,
        "children": [{"type": "in_zone", "zone": "yard"}, {"type": "in_zone", "zone": "exit"}],
    }
    sim = Simulation(behaviortk.load_text(json.dumps(zoned(root, positions)), "z.json"), engine)
    sim.step()
    status = sim.decisions["a"].status
    assert status[:, 1].tolist() == [2, 2, 3, 3, 3]  # yard: SUCCESS, SUCCESS, FAILURE...
    assert status[2:, 2].tolist() == [3, 2, 3]  # exit, for those outside the yard


def test_a_circle_zone_is_wrap_aware() -> None:
    """On a 400-wide torus the exit circle at x=390 reaches x=10 across the edge."""
    root = {"type": "in_zone", "zone": "exit"}
    data = zoned(root, [[5, 200], [30, 200]], edges="wrap")
    sim = Simulation(behaviortk.load_text(json.dumps(data), "z.json"))
    sim.step()
    assert sim.decisions["a"].status[:, 0].tolist() == [2, 3]


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_seek_a_zone_target_heads_for_its_centre(engine: str) -> None:
    root = {"type": "seek", "target": {"kind": "zone", "zone": "yard"}}
    sim = Simulation(behaviortk.load_text(json.dumps(zoned(root, [[300, 300]])), "z.json"), engine)
    sim.run(200)
    np.testing.assert_allclose(sim.agents.pos[0], [150, 125], atol=15)


def test_unknown_and_duplicate_zones_are_located_errors() -> None:
    data = zoned({"type": "in_zone", "zone": "yrd"}, [[0, 0]])
    data["zones"].append({"name": "exit", "kind": "circle", "at": [0, 0], "radius": 1})
    with pytest.raises(behaviortk.DefinitionError) as err:
        behaviortk.load_text(json.dumps(data), "z.json")
    messages = [f"{i.pointer}: {i.message}" for i in err.value.issues]
    assert "/zones/2/name: zone name 'exit' is used twice" in messages
    data["zones"].pop()
    with pytest.raises(behaviortk.DefinitionError) as err:
        behaviortk.load_text(json.dumps(data), "z.json")
    (issue,) = err.value.issues
    assert issue.pointer == "/trees/main/root/zone"
    assert issue.message == "group 'a': unknown zone 'yrd'; did you mean 'yard'? valid: exit, yard"
