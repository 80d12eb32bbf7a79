"""A target kind as a plugin: ``farthest`` is the farthest agent of a group.

A target kind resolves, for every agent of a group at once, where its target
is: positions (the nearest image on wrapped worlds), velocities, the target
agent's row and whether there is one. Every leaf and condition that takes a
``target`` accepts it. This one compares every pair of the two groups
(``n x m`` distances), fine for small groups.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from behaviortk.plugin import GroupRef, Model, Plugin, Sense, TargetFacts, displacement, doc

plugin = Plugin(__name__)


class FarthestTarget(Model):
    """The farthest agent of a group (not the agent itself)."""

    kind: Literal["farthest"] = "farthest"
    group: GroupRef = doc("Name of the group to take the farthest agent from")


@plugin.target_kind(FarthestTarget)
def farthest(spec: FarthestTarget, sense: Sense, group: str) -> TargetFacts:
    own_rows, other = sense.rows(group), sense.rows(spec.group)
    own = sense.agents.pos[own_rows]
    candidates = np.arange(other.start, other.stop)
    if candidates.size == 0:
        return sense.agent_facts(own, np.full(own.shape[0], -1, dtype=np.int64))
    d = displacement(own[:, None, :], sense.agents.pos[candidates][None, :, :], sense.world)
    dist = np.hypot(d[..., 0], d[..., 1])
    mine = np.arange(own_rows.start, own_rows.stop)
    dist[mine[:, None] == candidates[None, :]] = -1.0  # never oneself
    best = candidates[np.argmax(dist, axis=1)]
    best = np.where(dist.max(axis=1) >= 0.0, best, -1)
    return sense.agent_facts(own, best.astype(np.int64))


register = plugin.register

DEFINITION = {
    "name": "farthest_demo",
    "world": {"width": 400, "height": 400, "edges": "contain", "dt": 0.05, "seed": 3},
    "groups": [
        {
            "name": "loners",
            "count": 6,
            "spawn": {"kind": "area", "min": [150, 150], "max": [250, 250]},
            "tree": "visit",
        }
    ],
    "trees": {
        "visit": {"root": {"type": "seek", "target": {"kind": "farthest", "group": "loners"}}}
    },
}


if __name__ == "__main__":
    from examples.plugins import demo

    def report(sim: Any) -> str:
        pos = sim.agents.pos
        spread = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=2).max()
        return f"the loners span {spread:.1f} units"

    demo(plugin, DEFINITION, 50, report)
