"""A steering primitive as a plugin: ``orbit`` circles its target.

``orbit`` pushes an agent sideways around its target (the perpendicular of the
direction to it, counter-clockwise) plus a small pull inward, at full speed:
``desired = (perp(u) + pull * u) * max_speed`` with ``u`` the unit vector to
the target, and the force is ``desired - velocity`` (Reynolds' steering =
desired velocity - current velocity).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from behaviortk.plugin import (
    Plugin,
    PNonNeg,
    Steering,
    SteeringContext,
    TargetedModel,
    doc,
    normalize,
    perp,
)

plugin = Plugin(__name__)


class Orbit(TargetedModel):
    """Circle the target counter-clockwise at max speed."""

    type: Literal["orbit"] = "orbit"
    pull: PNonNeg = doc("How strongly to also close in on the target", 0.2)


@plugin.primitive(Orbit)
def orbit(p: Orbit, ctx: SteeringContext) -> Steering:
    to_target = normalize(ctx.target_facts().pos - ctx.pos)
    desired = (perp(to_target) + p.pull * to_target) * ctx.per_agent("max_speed")[:, None]
    return Steering(desired - ctx.vel)


register = plugin.register

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
    "trees": {
        "orbit": {
            "root": {"type": "orbit", "target": {"kind": "point", "at": [200, 200]}, "pull": 1.0}
        }
    },
}


if __name__ == "__main__":
    from examples.plugins import demo

    def report(sim: Any) -> str:
        r = np.linalg.norm(sim.agents.pos - 200.0, axis=1)
        return f"moons {r.min():.1f}..{r.max():.1f} from the centre"

    demo(plugin, DEFINITION, 200, report)
