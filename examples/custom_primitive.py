"""A user's own steering primitive as a plugin: registered once, usable in JSON like a built-in.

    .venv/bin/python examples/custom_primitive.py

`orbit` pushes an agent sideways around its target (the perpendicular of the
direction to it) at full speed. Registering the model makes `"type": "orbit"`
part of validation and of the JSON Schema; the implementation is one
vectorised function over all agents that requested it this tick.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import json
from typing import Literal

import numpy as np

import behaviortk
from behaviortk import registry
from behaviortk.format.fields import PNonNeg, doc
from behaviortk.steering.context import SteeringContext
from behaviortk.steering.primitives import Steering, TargetedModel
from behaviortk.vec import normalize, perp


class Orbit(TargetedModel):
    """Circle the target counter-clockwise at max speed."""

    type: Literal["orbit"] = "orbit"
    pull: PNonNeg = doc("How strongly to also close in on the target", 0.2)


@registry.default().primitives.implements(Orbit)
def orbit(p: Orbit, ctx: SteeringContext) -> Steering:
    to_target = normalize(ctx.target_facts().pos - ctx.pos)
    desired = (perp(to_target) + float(p.pull) * to_target) * ctx.per_agent("max_speed")[:, None]
    return Steering(desired - ctx.vel)


DEFINITION = {
    "name": "orbit_demo",
    "world": {"width": 400, "height": 400, "edges": "contain", "dt": 0.05, "seed": 1},
    "groups": [
        {
            "name": "moons",
            "count": 5,
            "spawn": {"kind": "ring", "center": [200, 200], "radius": 80},
            "max_speed": 60,
            "tree": "orbit",
        }
    ],
    "trees": {"orbit": {"root": {"type": "orbit", "target": {"kind": "point", "at": [200, 200]}}}},
}


def main() -> None:
    scenario = behaviortk.load_text(json.dumps(DEFINITION), "orbit_demo.json")
    sim = behaviortk.Simulation(scenario)
    sim.run(200)
    r = np.linalg.norm(sim.agents.pos - 200.0, axis=1)
    print(f"after {sim.tick} ticks the moons are {r.min():.1f}..{r.max():.1f} from the centre")
    print(sim.snapshot(0))


if __name__ == "__main__":
    main()
