"""A condition as a plugin: ``in_box`` is true while the agent is inside a rectangle.

A sensed condition is one vectorised function over all agents of a group,
computed once per tick whether or not an agent ticks it (both engines then
only index the result): ``min <= position <= max`` on both axes.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from behaviortk.plugin import NodeModel, Plugin, Point, Sense, doc

plugin = Plugin(__name__)


class InBox(NodeModel):
    """True while the agent's position is inside the axis-aligned box [min, max] (edges count)."""

    type: Literal["in_box"] = "in_box"
    min: Point = doc("Lower-left corner [x, y]", unit="world units")
    max: Point = doc("Upper-right corner [x, y]", unit="world units")


@plugin.condition(InBox)
def in_box(m: InBox, sense: Sense, group: str, prev: np.ndarray, rand: Any) -> np.ndarray:
    pos = sense.agents.pos[sense.rows(group)]
    low, high = np.asarray(m.min), np.asarray(m.max)
    return np.all((pos >= low) & (pos <= high), axis=1)


register = plugin.register

DEFINITION = {
    "name": "in_box_demo",
    "world": {"width": 400, "height": 400, "edges": "contain", "dt": 0.05, "seed": 1},
    "groups": [
        {
            "name": "walkers",
            "count": 20,
            "spawn": {"kind": "area", "min": [0, 0], "max": [400, 400]},
            "tree": "leave",
        }
    ],
    "trees": {
        "leave": {
            "root": {
                "type": "selector",
                "memory": False,
                "children": [
                    {
                        "type": "sequence",
                        "memory": False,
                        "children": [
                            {"type": "in_box", "min": [100, 100], "max": [300, 300]},
                            {
                                "type": "flee",
                                "target": {"kind": "point", "at": [200, 200]},
                                "fear_distance": None,
                            },
                        ],
                    },
                    {"type": "wait", "duration": 1},
                ],
            }
        }
    },
}


if __name__ == "__main__":
    from examples.plugins import demo

    def report(sim: Any) -> str:
        inside = np.all((sim.agents.pos >= 100) & (sim.agents.pos <= 300), axis=1)
        return f"{int(inside.sum())} of {sim.agents.n} walkers still in the box"

    demo(plugin, DEFINITION, 120, report)
