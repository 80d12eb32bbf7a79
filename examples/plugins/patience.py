"""A decorator as a plugin: ``patience`` gives up on a child that keeps running.

A decorator is a ``DecoratorOps`` class: after its child ticked, it maps the
child's status to its own, under py_trees' decorator rules (both engines
apply them; finishing stops a running child). ``patience`` counts the ticks
since it started; from the ``ticks``-th on, a RUNNING child becomes FAILURE.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from behaviortk.plugin import (
    FAILURE,
    RUNNING,
    Codes,
    DecoratorOps,
    Node,
    NodeContext,
    NodeModel,
    Plugin,
    Rows,
    doc,
)

plugin = Plugin(__name__)


class Patience(NodeModel):
    """FAILURE instead of RUNNING once the child has run `ticks` ticks since the decorator started."""

    type: Literal["patience"] = "patience"
    ticks: int = doc("How many ticks of RUNNING to accept, >= 1", ge=1)
    child: Node = doc("The decorated node")


@plugin.decorator(Patience)
class PatienceOps(DecoratorOps):
    per_agent = ("ran",)  # kept for each agent through spawns, despawns and snapshots

    def __init__(self, model: Patience, ctx: NodeContext) -> None:
        self.ticks = model.ticks
        self.ran = np.zeros(ctx.n_agents, dtype=np.int64)

    def initialise(self, rows: Rows) -> None:
        self.ran[rows] = 0

    def update(self, rows: Rows, child: Codes) -> Codes:
        self.ran[rows] += 1
        out = child.copy()
        out[(child == RUNNING) & (self.ran[rows] >= self.ticks)] = FAILURE
        return out


register = plugin.register

DEFINITION = {
    "name": "patience_demo",
    "world": {"width": 400, "height": 400, "edges": "contain", "dt": 0.1, "seed": 1},
    "groups": [
        {
            "name": "waiters",
            "count": 3,
            "spawn": {"kind": "area", "min": [0, 0], "max": [400, 400]},
            "tree": "queue",
        }
    ],
    "trees": {
        "queue": {
            "root": {
                "type": "selector",
                "memory": False,
                "children": [
                    {"type": "patience", "ticks": 5, "child": {"type": "wait", "duration": 10}},
                    {"type": "wander", "name": "give up and stroll"},
                ],
            }
        }
    },
}


if __name__ == "__main__":
    from examples.plugins import demo

    def report(sim: Any) -> str:
        return f"after {sim.tick} ticks agent 0 is doing {sim.active_names(0)}"

    demo(plugin, DEFINITION, 5, report)  # the 5th tick: the wait gave up, the stroll runs
