"""A utility input as a plugin: ``clock`` is the simulated time, in seconds.

A utility input gives, for the rows that tick a `utility` node, the raw number a
consideration normalises by its ``range`` (``behaviortk.plugin.InputOps``): ``prepare``
keeps what it needs of the tick's sensed facts, ``values`` answers for any rows. Here an
option grows more appealing as time passes: the sheep graze (wander) until, after about
a second, heading home scores higher.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from behaviortk.plugin import InputOps, Model, NodeContext, Plugin, Rows, Sense

plugin = Plugin(__name__)


class ClockInput(Model):
    """The simulated time since the run began, in seconds (the same for every agent)."""

    kind: Literal["clock"] = "clock"


@plugin.utility_input(ClockInput)
class ClockOps(InputOps):
    def __init__(self, model: ClockInput, ctx: NodeContext) -> None:
        self.time = 0.0

    def prepare(self, sense: Sense) -> None:
        self.time = float(sense.time)

    def values(self, rows: Rows) -> np.ndarray:
        return np.full(rows.size, self.time)


register = plugin.register

DEFINITION = {
    "name": "clock_demo",
    "world": {"width": 400, "height": 400, "edges": "contain", "dt": 0.05, "seed": 3},
    "groups": [
        {
            "name": "sheep",
            "count": 6,
            "spawn": {"kind": "area", "min": [150, 150], "max": [250, 250]},
            "tree": "graze",
        }
    ],
    "trees": {
        "graze": {
            "root": {
                "type": "utility",
                "children": [
                    {"child": {"type": "wander", "name": "graze"}, "weight": 0.5},
                    {
                        "child": {
                            "type": "arrive",
                            "name": "home",
                            "target": {"kind": "point", "at": [50, 50]},
                        },
                        "considerations": [{"input": {"kind": "clock"}, "range": [0, 2]}],
                    },
                ],
            }
        }
    },
}
