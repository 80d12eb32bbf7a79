"""A tiny definition whose recorded values are worked out by hand, and recording helpers.

``walk``: two walkers (dt 0.1, mass 1, max speed 10) and one external post.

    pick   selector (memory false)                                   node 0
      near   sequence (memory false)                                 node 1
        close  in_range of the point (100, 100), radius 20           node 2
        stop   arrive at (100, 100) (Millington: slowing radius 100,
               tolerance 1, time to target 0.1)                      node 3
      go     seek (300, 100)                                         node 4

walker 0 starts at (100, 105), still: ``close`` holds, ``stop`` runs.
    tick 0: to = (0, -5), d = 5: target speed 10 * 5 / 100 = 0.5, desired
            (0, -0.5); F = (desired - v) / 0.1 = (0, -5); v = 0 + F * 0.1 =
            (0, -0.5); x = (100, 105 - 0.05) = (100, 104.95); heading (0, -1),
            angle -pi/2. Statuses: pick 1 near 1 close 2 stop 1 go 0 -> "11210".
    tick 1: d = 4.95: speed 0.495, desired (0, -0.495); F = ((-0.495) -
            (-0.5)) / 0.1 = 0.05 up; v = -0.5 + 0.005 = -0.495; y = 104.95 -
            0.0495 = 104.9005. Statuses "11210" again.
walker 1 starts at (200, 100), still: 100 from (100, 100), so ``close`` fails,
``near`` fails and the selector runs ``go``: statuses "13301".
    tick 0: desired (10, 0); F = (10, 0); v = (1, 0); x = 200 + 0.1 = 200.1.
    tick 1: F = (10 - 1, 0) = (9, 0); v = 1 + 0.9 = 1.9; x = 200.1 + 0.19 = 200.29.
The post (external, no tree) stays at (300, 200): statuses "", no active leaf.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation
from behaviortk.sim.tick_state import TickState

WALK: dict[str, Any] = {
    "name": "walk",
    "world": {"width": 400, "height": 300, "edges": "contain", "dt": 0.1, "seed": 1},
    "groups": [
        {
            "name": "walkers",
            "count": 2,
            "spawn": {"kind": "positions", "points": [[100, 105], [200, 100]]},
            "heading": 0,
            "speed": 0,
            "max_speed": 10,
            "max_force": 1000,
            "radius": 5,
            "colour": "#4aa3ff",
            "tree": "walk",
        },
        {
            "name": "posts",
            "count": 1,
            "spawn": {"kind": "positions", "points": [[300, 200]]},
            "control": "external",
            "heading": 0,
            "radius": 6,
            "colour": "#e8504a",
        },
    ],
    "trees": {
        "walk": {
            "root": {
                "type": "selector",
                "name": "pick",
                "memory": False,
                "children": [
                    {
                        "type": "sequence",
                        "name": "near",
                        "memory": False,
                        "children": [
                            {
                                "type": "in_range",
                                "name": "close",
                                "target": {"kind": "point", "at": [100, 100]},
                                "radius": 20,
                            },
                            {
                                "type": "arrive",
                                "name": "stop",
                                "target": {"kind": "point", "at": [100, 100]},
                            },
                        ],
                    },
                    {"type": "seek", "name": "go", "target": {"kind": "point", "at": [300, 100]}},
                ],
            }
        }
    },
}

WALK_PATHS = ["pick", "pick/near[0]", "pick/near[0]/close[0]", "pick/near[0]/stop[1]", "pick/go[1]"]
"""Flat-tree order (DFS pre-order) of ``walk``: the order of the status digits."""


def row(x, y, vx, vy, heading, fx, fy, active, status) -> dict[str, Any]:
    return dict(x=x, y=y, vx=vx, vy=vy, heading=heading, fx=fx, fy=fy, active=active, status=status)


DOWN = -math.pi / 2
# The hand-worked rows (see the module docstring): per tick, per agent id.
EXPECTED: dict[int, dict[int, dict[str, Any]]] = {
    0: {
        0: row(100.0, 105 - 0.05, 0.0, -0.5, DOWN, 0.0, -5.0, ["stop"], "11210"),
        1: row(200.1, 100.0, 1.0, 0.0, 0.0, 10.0, 0.0, ["go"], "13301"),
        2: row(300.0, 200.0, 0.0, 0.0, 0.0, 0.0, 0.0, [], ""),
    },
    1: {
        0: row(100.0, 104.9005, 0.0, -0.495, DOWN, 0.0, 0.05, ["stop"], "11210"),
        1: row(200.29, 100.0, 1.9, 0.0, 0.0, 9.0, 0.0, ["go"], "13301"),
        2: row(300.0, 200.0, 0.0, 0.0, 0.0, 0.0, 0.0, [], ""),
    },
}


def write_walk(directory: Path) -> Path:
    path = directory / "walk.json"
    path.write_text(json.dumps(WALK, indent=1), encoding="utf-8")
    return path


def walk_sim(engine: str) -> Simulation:
    return Simulation(load_text(json.dumps(WALK), "walk.json"), engine=engine)


def run_recorded(sim: Simulation, ticks: int, *writers: Any) -> dict[int, TickState]:
    """Step ``sim`` ``ticks`` times feeding ``writers``; the live state of every tick."""
    live: dict[int, TickState] = {}
    for _ in range(ticks):
        sim.step()
        for writer in writers:
            writer.on_tick(sim)
        live[sim.tick - 1] = TickState.of(sim)
    for writer in writers:
        writer.finish(sim)
    return live
