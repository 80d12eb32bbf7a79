"""What each ``can_see`` agent sees: its view cone and the line of sight to its target.

For every ``can_see`` node of a group's tree (a tree node, or the condition of an
``eternal_guard``) the overlay draws, for the agents being annotated, the cone of
that node (its own ``distance`` / ``fov``, else the group's ``view_distance`` /
``fov``) and a ray from the agent to the node's target coloured by the reason the view
test gives, in its order (``leaves/why.SIGHT_REASONS``, the words of the tree panel's
why): blue beyond the view distance, orange outside the cone, red where an obstacle or
wall crosses it (``conditions.line_blocked``, the test ``can_see`` uses), green seen. Targets are resolved by a fresh ``Sense`` of the state being
drawn (no random numbers are drawn, the simulation is not touched), so the ray ends
where the drawn target is. Everything is vectorised over the agents of a group:
the Python loop runs over groups and ``can_see`` nodes, never over agents.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.vec import Array, normalize
from behaviortk.viewer import geometry as geo
from behaviortk.viewer import palette
from behaviortk.viewer.gpu import TriangleSoup
from behaviortk.world.sight import in_view

RAY_WIDTH = 2.0
CONE_WIDTH = 1.5
FULL_TURN = 2.0 * np.pi - 1e-9


@dataclass(frozen=True)
class Sight:
    """One group's ``can_see`` node, resolved over the group's rows."""

    rows: np.ndarray  # (n,) global agent rows
    origin: Array  # (n, 2) world positions
    target: Array  # (n, 2) the target's (nearest image) position; rows without one dropped
    blocked: np.ndarray  # (n,) bool: an obstacle or wall crosses origin -> target
    reach: Array  # (n,) view distance of this node
    fov: Array  # (n,) full angle, radians
    reason: np.ndarray  # (n,) index into leaves/why.SIGHT_REASONS: seen, range, cone, blocked


def can_see_models(tree: Any) -> Iterator[Any]:
    """The ``can_see`` models of a flat tree: nodes, and guard conditions of decorators."""
    for node in getattr(tree, "nodes", ()):
        for model in (node.model, getattr(node.model, "condition", None)):
            if model is not None and getattr(model, "type", None) == "can_see":
                yield model


def _sense(sim: Any) -> Any:
    """A Sense of the drawn state: same world, agents, pointer and blackboards; no randomness."""
    from behaviortk.sense.sensing import Sense

    engine = getattr(sim, "engine", None)
    return Sense(
        sim.world,
        sim.agents,
        np.zeros((sim.agents.n, 1)),
        int(getattr(sim, "tick", 0)),
        float(getattr(sim, "time", 0.0)),
        blackboard_points=getattr(engine, "blackboard_points", None),
        pointer=getattr(sim, "pointer", None),
        registries=getattr(sim, "registries", None),
    )


def sights(sim: Any, marked: np.ndarray) -> list[Sight]:
    """Every ``can_see`` node's cone and ray for the ``marked`` rows (a bool mask)."""
    from behaviortk.leaves.conditions import line_blocked

    ag = sim.agents
    out: list[Sight] = []
    sense = None
    for group, tree in getattr(sim, "trees", {}).items():
        rows = ag.slices.get(group)
        if rows is None or rows.stop <= rows.start or not marked[rows].any():
            continue
        for model in can_see_models(tree):
            sense = sense or _sense(sim)
            facts = sense.target(model.target, group)
            local = np.flatnonzero(marked[rows] & np.asarray(facts.valid, dtype=bool))
            glob = rows.start + local
            origin = ag.pos[glob]
            target = np.asarray(facts.pos, dtype=np.float64)[local]
            n = glob.size
            reach = ag.view_distance[glob] if model.distance is None else np.full(n, model.distance)
            fov = ag.fov[glob] if model.fov is None else np.full(n, np.radians(model.fov))
            blocked = line_blocked(origin, target, sim.world)
            reason = sight_reason(origin, ag.heading[glob], target, reach, fov, blocked)
            if not model.line_of_sight:
                reason[reason == REASON_BLOCKED] = 0
            out.append(Sight(glob, origin, target, blocked, reach, fov, reason))
    return out


REASON_BLOCKED = 3
REASON_INKS = (
    palette.SIGHT_CLEAR,
    palette.SIGHT_OUT_OF_RANGE,
    palette.SIGHT_OUTSIDE_CONE,
    palette.SIGHT_BLOCKED,
)
"""The ray's ink per reason, in ``leaves/why.SIGHT_REASONS``' order (the legend's too)."""


def sight_reason(
    origin: Array, heading: Array, target: Array, reach: Array, fov: Array, blocked: np.ndarray
) -> np.ndarray:
    """Per row, the first test the view fails (``world/sight.sees``' order), 0 when seen."""
    d = target - origin
    dist = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])
    inside = in_view(heading, d, dist, 0.5 * fov)
    return np.select([dist > reach, ~inside, blocked], [1, 2, REASON_BLOCKED], 0).astype(np.int64)


def sight_shapes(sim: Any, vp: Any, marked: np.ndarray, soup: TriangleSoup) -> None:
    """Cones first, then rays on top, one ink per reason (``REASON_INKS``)."""
    found = sights(sim, marked)
    if not found:
        return
    rows = np.concatenate([s.rows for s in found])
    origin = vp.to_screen(np.concatenate([s.origin for s in found]))
    target = vp.to_screen(np.concatenate([s.target for s in found]))
    reason = np.concatenate([s.reason for s in found])
    reach = np.concatenate([s.reach for s in found]) * vp.scale
    fov = np.concatenate([s.fov for s in found])
    full = fov >= FULL_TURN
    soup.add(geo.rings(origin[full], reach[full], CONE_WIDTH), palette.SIGHT_CONE)
    facing = normalize(sim.agents.heading[rows[~full]])
    soup.add(
        geo.arcs(origin[~full], reach[~full], facing, fov[~full], CONE_WIDTH), palette.SIGHT_CONE
    )
    for code, ink in enumerate(REASON_INKS):
        ray = reason == code
        if ray.any():
            soup.add(geo.segments(origin[ray], target[ray], RAY_WIDTH), ink)
