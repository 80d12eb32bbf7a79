"""Tiny definitions for engine, simulation and trace tests (built in code, loaded for real)."""

from __future__ import annotations

import json
from typing import Any

from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation

DT = 0.1


def definition(
    root: dict[str, Any],
    *,
    count: int = 1,
    positions: list[list[float]] | None = None,
    others: list[dict[str, Any]] | None = None,
    dt: float = DT,
    seed: int = 3,
    blackboard: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One group ``a`` running ``root`` (plus optional extra groups running ``idle``).

    ``blackboard`` declares the keys of ``root``'s tree: key -> type name, or a whole
    declaration (``{"type": "bool", "default": false}``).
    """
    spawn: dict[str, Any] = (
        {"kind": "positions", "points": positions}
        if positions is not None
        else {"kind": "area", "min": [100, 100], "max": [300, 300]}
    )
    groups = [
        {
            "name": "a",
            "count": count,
            "spawn": spawn,
            "tree": "main",
            "view_distance": 50,
            "fov": 360,
            "heading": 0,
        }
    ]
    groups += others or []
    return {
        "name": "engine_test",
        "world": {"width": 400, "height": 400, "edges": "contain", "dt": dt, "seed": seed},
        "groups": groups,
        "trees": {
            "main": {"root": root, "blackboard": declare(blackboard or {})},
            "idle": {"root": {"type": "wait", "duration": 1000}},
        },
    }


def declare(keys: dict[str, Any]) -> dict[str, Any]:
    """A tree's ``blackboard`` from key -> type name (or key -> declaration)."""
    return {k: v if isinstance(v, dict) else {"type": v} for k, v in keys.items()}


def simulation(root: dict[str, Any], seed: int | None = None, **kw: Any) -> Simulation:
    text = json.dumps(definition(root, **kw))
    return Simulation(load_text(text, "engine_test.json"), seed=seed)


def other_group(name: str, points: list[list[float]]) -> dict[str, Any]:
    return {
        "name": name,
        "count": len(points),
        "spawn": {"kind": "positions", "points": points},
        "tree": "idle",
    }


def statuses(sim: Simulation, group: str = "a", row: int = 0) -> list[int]:
    return sim.decisions[group].status[row].tolist()


def seek(name: str, at: tuple[float, float] = (200.0, 200.0)) -> dict[str, Any]:
    return {"type": "seek", "name": name, "target": {"kind": "point", "at": list(at)}}


def wait(seconds: float, name: str | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "wait", "duration": seconds}
    if name:
        node["name"] = name
    return node


def bb_is(key: str, value: Any) -> dict[str, Any]:
    return {"type": "blackboard_compare", "key": key, "op": "==", "value": value}


FLIPS: dict[str, Any] = {
    "type": "selector",
    "memory": False,
    "children": [
        {
            "type": "sequence",
            "memory": False,
            "children": [{"type": "chance", "probability": 0.5}, {"type": "wander"}],
        },
        {"type": "seek", "target": {"kind": "point", "at": [200, 200]}},
    ],
}
"""A tree whose `chance` flips its branch most ticks: many status changes (history tests)."""
