"""An action as a plugin: ``tally`` counts, per agent, how often it was ticked.

An action is a leaf ops class: built once per group with the group's size,
blackboards and clock, then called for all the agents that tick it at once
(the batch engine) or one agent at a time (the py_trees engine). Its state
is arrays indexed by the agent's row in the group. Each tick it adds one to
the agent's count, stores the count under ``key`` on the agent's blackboard
and succeeds. ``key`` is a ``BlackboardKey``, so the loader checks that the
tree declares it, as for the built-in blackboard nodes.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from behaviortk.plugin import (
    SUCCESS,
    BlackboardKey,
    Codes,
    LeafOps,
    NodeContext,
    NodeModel,
    Plugin,
    Rows,
    doc,
)

plugin = Plugin(__name__)


class Tally(NodeModel):
    """Count the ticks this leaf ran for the agent; store the count under `key`; SUCCESS."""

    type: Literal["tally"] = "tally"
    key: BlackboardKey = doc("Blackboard key that receives the count (declared as a number)")


@plugin.action(Tally)
class TallyOps(LeafOps):
    per_agent = ("count",)  # kept for each agent through spawns, despawns and snapshots

    def __init__(self, model: Tally, ctx: NodeContext) -> None:
        self.key, self.board = model.key, ctx.board
        self.count = np.zeros(ctx.n_agents, dtype=np.int64)

    def update(self, rows: Rows) -> Codes:
        self.count[rows] += 1
        counts = self.count[rows]
        for value in np.unique(counts).tolist():
            self.board.set(self.key, rows[counts == value], float(value))
        return np.full(rows.size, SUCCESS, dtype=np.int8)


register = plugin.register

DEFINITION = {
    "name": "tally_demo",
    "world": {"width": 400, "height": 400, "edges": "contain", "dt": 0.1, "seed": 1},
    "groups": [
        {
            "name": "clerks",
            "count": 4,
            "spawn": {"kind": "area", "min": [0, 0], "max": [400, 400]},
            "tree": "count",
        }
    ],
    "trees": {
        "count": {
            "root": {
                "type": "sequence",
                "memory": True,
                "children": [{"type": "wait", "duration": 0.3}, {"type": "tally", "key": "done"}],
            },
            "blackboard": {"done": {"type": "number"}},
        }
    },
}


if __name__ == "__main__":
    from examples.plugins import demo

    def report(sim: Any) -> str:
        return f"agent 0's blackboard {sim.engine.blackboard(0)}"

    demo(plugin, DEFINITION, 20, report)
