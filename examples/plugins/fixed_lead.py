"""A predictor as a plugin: ``fixed`` always looks the same time ahead.

A predictor answers, for pursuit, evade, interpose and offset pursuit, how
many seconds ahead of a constant-velocity target to aim: here a constant, so
pursuit seeks ``target + velocity * seconds`` (Reynolds 1999, "Pursuit": the
prediction interval T is a parameter; Buckland ch. 3 derives it from
distance and speeds instead, our `linear` predictor).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from behaviortk.plugin import Model, Plugin, PNonNeg, displacement, doc

plugin = Plugin(__name__)


class Fixed(Model):
    """Look `seconds` ahead, whatever the distance."""

    type: Literal["fixed"] = "fixed"
    seconds: PNonNeg = doc("Look-ahead", 0.5, unit="s")


@plugin.predictor(Fixed)
def fixed(
    p: Fixed, to_target: np.ndarray, own_vel: Any, max_speed: Any, target_vel: Any
) -> np.ndarray:
    return np.full(to_target.shape[0], p.seconds)


register = plugin.register

DEFINITION = {
    "name": "fixed_lead_demo",
    "world": {"width": 600, "height": 400, "edges": "wrap", "dt": 0.05, "seed": 2},
    "groups": [
        {
            "name": "hare",
            "count": 1,
            "spawn": {"kind": "positions", "points": [[300, 200]]},
            "heading": 0,
            "speed": 80,
            "max_speed": 80,
            "tree": "run",
        },
        {
            "name": "hound",
            "count": 1,
            "spawn": {"kind": "positions", "points": [[100, 100]]},
            "max_speed": 120,
            "tree": "chase",
        },
    ],
    "trees": {
        "run": {"root": {"type": "wander"}},
        "chase": {
            "root": {
                "type": "pursuit",
                "target": {"kind": "nearest", "group": "hare"},
                "predictor": {"type": "fixed", "seconds": 0.8},
            }
        },
    },
}


if __name__ == "__main__":
    from examples.plugins import demo

    def report(sim: Any) -> str:
        gap = np.linalg.norm(displacement(sim.agents.pos[0], sim.agents.pos[1], sim.world))
        return f"hound {gap:.1f} units from the hare"

    demo(plugin, DEFINITION, 100, report)
