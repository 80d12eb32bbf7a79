"""The built-in metrics: one number per tick from the simulation state, vectorised.

A metric is a model discriminated on ``metric`` (its arguments) and
``fn(spec, sim, memory) -> float`` registered in ``Registries.metrics``; a
plugin adds one with ``Plugin.metric``. ``memory`` is a dict private to one
metric instance over one run (``survival`` keeps who was ever caught there).
Distances are wrap-aware on wrapped worlds. A metric of an empty group is NaN
(there is nothing to measure), which fails every comparison of a check.
Recording metrics over a run and judging checks is ``check_runs.py``'s job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import Field

from behaviortk.format.checks import MetricModel
from behaviortk.format.fields import GroupRef, NodeRef, NonNeg, ZoneRef, doc
from behaviortk.leaves.conditions import inside
from behaviortk.registry import Registries
from behaviortk.vec import Array
from behaviortk.world.overlap import overlapping

if TYPE_CHECKING:
    from behaviortk.sim.simulation import Simulation

NAN = float("nan")


class _Pair(MetricModel):
    groups: list[GroupRef] = Field(
        min_length=2,
        max_length=2,
        description="Two groups [a, b] (may be the same group: distances to the others)",
    )


class MinDistance(_Pair):
    """Smallest distance between an agent of group a and an agent of group b.

    min over i in a, j in b (i != j) of |p_i - p_j|, centre to centre.
    """

    metric: Literal["min_distance"] = "min_distance"


class MeanDistance(_Pair):
    """Mean over the agents of group a of the distance to the nearest agent of group b.

    (1/|a|) * sum over i in a of min over j in b (j != i) of |p_i - p_j|.
    """

    metric: Literal["mean_distance"] = "mean_distance"


class _OneGroup(MetricModel):
    group: GroupRef = doc("Name of the group measured")


class MeanSpeed(_OneGroup):
    """Mean speed of a group: (1/n) * sum |v_i| (world units per second)."""

    metric: Literal["mean_speed"] = "mean_speed"


class Polarisation(_OneGroup):
    """Alignment of a group's headings: |(1/n) * sum v_i / |v_i|| (Vicsek's order parameter).

    1 when every agent moves the same way, near 0 for random directions. An agent
    at rest contributes a zero vector (it points nowhere) but still counts in n.
    With `node`, only the agents whose active steering leaves include that node this
    tick count (the flocking ones, say, not those fleeing); NaN while there are none.
    """

    metric: Literal["polarisation"] = "polarisation"
    node: NodeRef | None = doc(
        "Count only agents running this node this tick (its `name`, else its type); "
        "null = the whole group",
        None,
    )


class Overlap(MetricModel):
    """Fraction of agents closer to another agent than the sum of their radii.

    (1/n) * #{i : exists j != i with |p_i - p_j| < r_i + r_j}; over the agents of
    `group` (their overlaps with any agent count), or of every group when null.
    """

    metric: Literal["overlap"] = "overlap"
    group: GroupRef | None = doc("Group measured (null = all agents)", None)


class Survival(MetricModel):
    """Fraction of group a never within `radius` of an agent of group b since the run began.

    1 - #{i in a ever caught} / #{i ever in a}, where caught means
    |p_i - p_j| <= radius for some j in b at some tick up to this one.
    """

    metric: Literal["survival"] = "survival"
    groups: list[GroupRef] = Field(
        min_length=2, max_length=2, description="[survivors, threats], e.g. [prey, predator]"
    )
    radius: NonNeg = doc("Contact radius: this close counts as caught", unit="world units")


class Count(_OneGroup):
    """Agents of a group alive now: n (spawns and despawns change it; 0, not NaN, when all
    are gone: counting is the one measure an empty group has)."""

    metric: Literal["count"] = "count"


class InZoneCount(_OneGroup):
    """Agents of a group inside a zone: their number, or their fraction of the group."""

    metric: Literal["in_zone"] = "in_zone"
    zone: ZoneRef = doc("Name of the zone")
    fraction: bool = doc("Report the fraction of the group instead of the number", False)


class ActiveFraction(_OneGroup):
    """Fraction of a group whose active steering leaves this tick include the named node.

    (1/n) * #{i : node is among the leaves that asked for a force}; a composite or
    decorator counts as active while one of the leaves below it is.
    """

    metric: Literal["active_fraction"] = "active_fraction"
    node: NodeRef = doc("Name of a node of the group's tree (its `name`, else its type)")


class FormationError(_OneGroup):
    """Mean distance of a group's formation members from their slots (Millington, AI for
    Games, "Coordinated Movement"): (1/m) * sum |p_i - slot_i| over the m agents that hold a
    slot (members: they ran `formation_slot` on the last tick); NaN when none does.
    """

    metric: Literal["formation_error"] = "formation_error"


# ----------------------------------------------------------------- implementations


def _nearest(sim: Simulation, a: slice, b: slice) -> Array:
    """Per agent of ``a``, the distance to the nearest agent of ``b`` other than itself."""
    from scipy.spatial import cKDTree

    pos = sim.agents.pos
    pa, pb = pos[a], pos[b]
    if len(pa) == 0 or len(pb) == 0:
        return np.zeros(0)
    box = None
    if sim.world.edges == "wrap":
        box = sim.world.size
        pa, pb = np.mod(pa, box), np.mod(pb, box)
    tree = cKDTree(pb, boxsize=box)
    same = a == b
    k = 2 if same else 1
    if same and len(pb) < 2:
        return np.zeros(0)
    dist, _ = tree.query(pa, k=k)
    return np.asarray(dist[:, 1] if same else dist, dtype=float)


def _pair(spec: Any, sim: Simulation) -> Array:
    slices = sim.agents.slices
    return _nearest(sim, slices[spec.groups[0]], slices[spec.groups[1]])


def min_distance(spec: MinDistance, sim: Simulation, memory: dict[str, Any]) -> float:
    d = _pair(spec, sim)
    return float(d.min()) if d.size else NAN


def mean_distance(spec: MeanDistance, sim: Simulation, memory: dict[str, Any]) -> float:
    d = _pair(spec, sim)
    return float(d.mean()) if d.size else NAN


def mean_speed(spec: MeanSpeed, sim: Simulation, memory: dict[str, Any]) -> float:
    vel = sim.agents.vel[sim.agents.slices[spec.group]]
    return float(np.hypot(vel[:, 0], vel[:, 1]).mean()) if len(vel) else NAN


def polarisation(spec: Polarisation, sim: Simulation, memory: dict[str, Any]) -> float:
    vel = sim.agents.vel[sim.agents.slices[spec.group]]
    if spec.node is not None:
        vel = vel[_running(sim, spec.group, spec.node, memory)]
    if not len(vel):
        return NAN
    speed = np.hypot(vel[:, 0], vel[:, 1])
    unit = np.divide(vel, speed[:, None], out=np.zeros_like(vel), where=speed[:, None] > 0)
    return float(np.hypot(*unit.mean(axis=0)))


def overlap(spec: Overlap, sim: Simulation, memory: dict[str, Any]) -> float:
    flags = overlapping(sim.world, sim.agents.pos, sim.agents.radius)
    rows = slice(None) if spec.group is None else sim.agents.slices[spec.group]
    chosen = flags[rows]
    return float(chosen.mean()) if chosen.size else NAN


def survival(spec: Survival, sim: Simulation, memory: dict[str, Any]) -> float:
    slices = sim.agents.slices
    a = slices[spec.groups[0]]
    ids = sim.agents.ids[a]
    seen: set[int] = memory.setdefault("seen", set())
    caught: set[int] = memory.setdefault("caught", set())
    seen.update(ids.tolist())
    d = _nearest(sim, a, slices[spec.groups[1]])
    if d.size:
        caught.update(ids[d <= spec.radius].tolist())
    return 1.0 - len(caught) / len(seen) if seen else NAN


def count(spec: Count, sim: Simulation, memory: dict[str, Any]) -> float:
    rows = sim.agents.slices[spec.group]
    return float(rows.stop - rows.start)


def in_zone(spec: InZoneCount, sim: Simulation, memory: dict[str, Any]) -> float:
    pos = sim.agents.pos[sim.agents.slices[spec.group]]
    count = float(inside(sim.world.zones[spec.zone], pos, sim.world).sum())
    if not spec.fraction:
        return count
    return count / len(pos) if len(pos) else NAN


def active_fraction(spec: ActiveFraction, sim: Simulation, memory: dict[str, Any]) -> float:
    running = _running(sim, spec.group, spec.node, memory)
    return float(running.mean()) if running.size else NAN


def _running(sim: Simulation, group: str, node: str, memory: dict[str, Any]) -> Array:
    """Per agent of ``group``, whether its active steering leaves include ``node`` this tick."""
    rows = sim.agents.slices[group]
    n = rows.stop - rows.start
    decision = sim.decisions.get(group)
    columns = memory.get("columns")
    if columns is None:
        columns = memory["columns"] = _leaf_columns(sim.trees[group], node)
    if decision is None or not columns:
        return np.zeros(n, dtype=bool)
    return np.asarray(decision.emitted[:, columns].any(axis=1))


def formation_error(spec: FormationError, sim: Simulation, memory: dict[str, Any]) -> float:
    if spec.group not in sim.formations.groups:
        return NAN
    rows = sim.agents.slices[spec.group]
    at = np.arange(rows.start, rows.stop, dtype=np.int64)
    points, _vel, ok = sim.formations.slots_of(sim.sense(), spec.group, at)
    if not ok.any():
        return NAN
    gap = points[ok] - sim.agents.pos[at[ok]]
    return float(np.sqrt(gap[:, 0] * gap[:, 0] + gap[:, 1] * gap[:, 1]).mean())


def _leaf_columns(tree: Any, node: str) -> list[int]:
    """Columns of ``emitted`` for the steering leaves named ``node`` or below a node so named."""
    nodes = tree.nodes
    named = {i for i, n in enumerate(nodes) if n.name == node}
    columns = []
    for column, index in enumerate(tree.steering):
        i = index
        while i >= 0 and i not in named:
            i = nodes[i].parent
        if i >= 0:
            columns.append(column)
    return columns


METRICS = (
    (MinDistance, min_distance),
    (MeanDistance, mean_distance),
    (MeanSpeed, mean_speed),
    (Polarisation, polarisation),
    (Overlap, overlap),
    (Survival, survival),
    (InZoneCount, in_zone),
    (Count, count),
    (ActiveFraction, active_fraction),
    (FormationError, formation_error),
)


def register(registries: Registries) -> None:
    for model, fn in METRICS:
        registries.metrics.register(model, fn)
