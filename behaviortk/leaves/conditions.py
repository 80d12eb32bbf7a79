"""Condition leaves: models, and their vectorised meaning over a whole group.

A condition answers yes/no for every agent of a group at once, from the
tick's sensed facts (``behaviortk.sense.sensing.Sense``). Both engines compute each
condition node once per tick for all the group's rows, whether or not an
agent ticks it, and then only index the result, so they agree bit for bit.

Registered implementation signature (``Registries.conditions``)::

    fn(model, sense, group, prev, rand) -> bool array over the group's rows

``prev`` is the node's result of the previous tick for the same rows (all
False on the first tick): conditions with hysteresis depend on it. ``rand`` is
the ``(n, k)`` block of ``sense.rand`` starting at the node's random slot
(``FlatNode.rand_slot``), or None when the node reads none. Call
:func:`evaluate_condition` rather than the registry directly: it slices ``rand``.

``blackboard_compare`` is the exception: it reads the agent's blackboard at
the moment it is ticked (a ``blackboard_set`` earlier in the same tick must be
seen), so its implementation is a leaf ops class (``tree/ops.py``) that both
engines run when it is ticked, comparing with :func:`compare`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal

import numpy as np

from behaviortk.format.fields import (
    BlackboardKey,
    BlackboardValue,
    ParamValue,
    PDegrees,
    PNonNeg,
    PProbability,
    ZoneRef,
    doc,
)
from behaviortk.format.limits import MAX_COUNT
from behaviortk.format.nodes import DefinitionFinding, NodeModel, Target
from behaviortk.registry import Registries
from behaviortk.sense.formations import needs_formation
from behaviortk.sense.sensing import Sense, facts_at
from behaviortk.tree.ops import Codes, LeafOps, NodeContext, Rows
from behaviortk.tree.status import FAILURE, SUCCESS
from behaviortk.vec import Array, formula, length, length_xy, select
from behaviortk.world.sight import in_view, sees
from behaviortk.world.sight import line_blocked as line_blocked  # re-exported: its old home
from behaviortk.world.spatial import displacement
from behaviortk.world.state import World, Zone

BoolArray = np.ndarray
Op = Literal["==", "!=", "<", "<=", ">", ">="]

# --------------------------------------------------------------------- models


class InRange(NodeModel):
    """True while the target is within ``radius``; with hysteresis it stays true until ``radius + hysteresis``."""

    type: Literal["in_range"] = "in_range"
    target: Target = doc("What to measure the distance to")
    radius: PNonNeg = doc("Distance at which the condition becomes true", unit="world units")
    hysteresis: PNonNeg = doc(
        "Extra distance the target must move beyond `radius` before the condition turns false again",
        0.0,
        unit="world units",
    )


class NeighboursCond(NodeModel):
    """True when at least ``min_count`` agents are visible (view distance and field of view)."""

    type: Literal["neighbours"] = "neighbours"
    min_count: int = doc("How many visible agents are needed", 1, ge=0, le=MAX_COUNT)
    of: str = doc(
        "Whose agents count: `same` (own group), `any`, or a group name", "same", min_length=1
    )
    radius: PNonNeg | None = doc(
        "Only count neighbours this close (within the view distance as well)",
        None,
        unit="world units",
    )


class Arrived(NodeModel):
    """True when the agent is within ``tolerance`` of the target and slower than ``max_speed``."""

    type: Literal["arrived"] = "arrived"
    target: Target = doc("Where the agent should be")
    tolerance: PNonNeg = doc("Largest distance that counts as arrived", 2.0, unit="world units")
    max_speed: PNonNeg = doc(
        "Largest speed that counts as stopped", 1.0, unit="world units per second"
    )


class Facing(NodeModel):
    """True when the target lies inside the cone of full angle ``angle`` around the agent's
    heading (half of it either side), the same convention as the group's `fov` and
    `can_see`'s `fov`: `facing` with angle A is `can_see` with fov A, any distance and no
    line of sight. Buckland's Raven bots test their field of view so (ch. 7,
    ``isSecondInFOVOfFirst``: ``facing . to_target >= cos(fov / 2)``)."""

    type: Literal["facing"] = "facing"
    target: Target = doc("What the agent should be facing")
    angle: PDegrees = doc(
        "Full angle of the cone around the heading, 0..360, like the group's `fov` (the "
        "direction to the target may be up to half of it off the heading; 40 = 20 either side)",
        40.0,
        unit="degrees",
    )


class CanSee(NodeModel):
    """True when the target is within view distance, inside the field of view (a full
    angle, as the group's `fov`; half of it either side of the heading) and, with
    `line_of_sight`, no obstacle circle or wall segment crosses the line to it.

    A wall blocks where it properly crosses the line (touching an end does not); an
    obstacle blocks where the line passes closer to its centre than its radius. On
    wrapped worlds the line runs to the target's nearest image and obstacles and walls
    are taken where they are (not their images).
    """

    type: Literal["can_see"] = "can_see"
    target: Target = doc("What the agent looks for")
    distance: PNonNeg | None = doc(
        "How far the agent sees (null = the group's `view_distance`)", None, unit="world units"
    )
    fov: PDegrees | None = doc(
        "Full field-of-view angle, 0..360 (null = the group's `fov`)", None, unit="degrees"
    )
    line_of_sight: bool = doc("Whether obstacles and walls block the view", True)


class InZone(NodeModel):
    """True while the agent is inside the named zone (a circle: distance to its centre at
    most its radius, nearest image on wrapped worlds; a rectangle: min <= position <= max)."""

    type: Literal["in_zone"] = "in_zone"
    zone: ZoneRef = doc("Name of a zone of the definition's `zones`")


class InFormation(NodeModel):
    """True while the agent is within ``tolerance`` of its slot in its group's `formation`
    (Millington, AI for Games, "Coordinated Movement"); false for agents without a slot:
    slots go to the agents that ran `formation_slot`, and are read as the last tick left
    them, turned with the anchor where it is now."""

    type: Literal["in_formation"] = "in_formation"
    tolerance: PNonNeg = doc("Largest distance from the slot that counts", 5.0, unit="world units")

    def definition_findings(self, definition: Any, group: Any) -> list[DefinitionFinding]:
        return needs_formation("in_formation", group)


class Chance(NodeModel):
    """True with ``probability`` each tick, drawn from the scenario's seeded stream."""

    type: Literal["chance"] = "chance"
    random_numbers: ClassVar[int] = 1
    probability: PProbability = doc("Probability of success per tick", 0.5)


class BlackboardCompare(NodeModel):
    """Compare a value on the agent's blackboard with a constant; false when the key is unset."""

    type: Literal["blackboard_compare"] = "blackboard_compare"
    key: BlackboardKey = doc("Blackboard key (per agent), declared in the tree's `blackboard`")
    op: Op = doc("Comparison: ==, !=, <, <=, >, >= (ordering only on number keys)", "==")
    value: Annotated[ParamValue, BlackboardValue(op="op")] = doc(
        "Constant to compare with, of the key's declared type"
    )


# ------------------------------------------------------- pure vector formulas


def distances(pos: Array, target_pos: Array) -> Array:
    """Distance from each agent to its target (positions are already nearest images)."""
    d = target_pos - pos
    return np.asarray(length_xy(d[:, 0], d[:, 1]))


@formula
def within_range(dist: Any, valid: Any, radius: Any, hysteresis: Any, prev: Any) -> Any:
    """``dist <= radius``, or ``dist <= radius + hysteresis`` where it was true last tick
    (Schmitt trigger); false where the target is not ``valid``."""
    return valid & (dist <= select(prev, radius + hysteresis, radius))


def in_range_mask(
    dist: Array, valid: BoolArray, radius: float, hysteresis: float, prev: BoolArray
) -> BoolArray:
    """:func:`within_range` over a group's rows."""
    return np.asarray(within_range(dist, valid, radius, hysteresis, prev), dtype=bool)


def arrived_mask(
    dist: Array, speed: Array, valid: BoolArray, tolerance: float, max_speed: float
) -> BoolArray:
    return np.asarray(valid & (dist <= tolerance) & (speed <= max_speed), dtype=bool)


def facing_mask(
    heading: Array, pos: Array, target_pos: Array, valid: BoolArray, angle_deg: float
) -> BoolArray:
    """Whether the target lies in the cone of full angle ``angle_deg`` around ``heading``:
    ``h . d >= |d| cos(angle / 2)`` (no division), the field-of-view test of ``can_see``.

    ``heading`` is unit length; an agent standing on its target counts as facing it.
    """
    d = target_pos - pos
    dist = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])
    half = np.full(dist.shape, 0.5 * math.radians(float(angle_deg)))
    return np.asarray(valid & in_view(heading, d, dist, half), dtype=bool)


def chance_mask(column: Array, probability: float) -> BoolArray:
    """``u < p`` for u uniform in [0, 1): p = 0 never, p = 1 always."""
    return np.asarray(column < probability, dtype=bool)


def count_within(
    i: np.ndarray, dist: Array, start: int, n: int, radius: float | None
) -> np.ndarray:
    """Neighbour pairs per observer row (``i`` global rows from ``start``), optionally only within ``radius``."""
    keep = i if radius is None else i[dist <= radius]
    return np.bincount(keep - start, minlength=n)[:n]


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return float(x)


def _plain(x: Any) -> Any:
    """Points compare as tuples of floats, whether stored as list, tuple or array."""
    if isinstance(x, list | tuple | np.ndarray):
        return tuple(float(v) for v in x)
    return x


def compare(op: str, left: Any, right: Any) -> bool:
    """The one blackboard comparison both engines use.

    ``==``/``!=`` compare values exactly (numbers as numbers, so 1 == 1.0; a
    bool is not a number here, so True != 1). Ordering operators are True only
    when both sides are numbers. An unset key (``left is None``) is False for
    every operator, ``!=`` included.
    """
    if left is None:
        return False
    a, b = _number(left), _number(right)
    if op in ("==", "!="):
        if a is not None and b is not None:
            same = a == b
        elif a is not None or b is not None:
            same = False
        else:
            same = bool(_plain(left) == _plain(right))
        return same if op == "==" else not same
    if a is None or b is None:
        return False
    return bool(_ORDER[op](a, b))


def compare_points(op: str, xy: Array, rhs: Any) -> BoolArray:
    """:func:`compare` over stored points at once: ``xy`` is ``(n, 2)``, NaN rows unset.

    The same answers as ``compare(op, (x, y), rhs)`` per row: ``==`` where both
    coordinates equal a point ``rhs``'s (never for any other ``rhs``), ``!=`` where
    set and not ``==``, ordering never; an unset row is False for every operator.
    """
    xy = np.asarray(xy, dtype=np.float64)
    is_set = ~np.isnan(xy[:, 0])
    same = np.zeros(xy.shape[0], dtype=bool)
    point = _point_operand(rhs)
    if point is not None:
        same = (xy[:, 0] == point[0]) & (xy[:, 1] == point[1])
    if op == "==":
        return same
    if op == "!=":
        return is_set & ~same
    return np.zeros(xy.shape[0], dtype=bool)


def _point_operand(rhs: Any) -> tuple[float, float] | None:
    """``rhs`` as ``compare`` sees a point: two numbers (bools count as 0/1, as ``float`` does)."""
    pair = isinstance(rhs, list | tuple | np.ndarray) and len(rhs) == 2
    if pair and all(isinstance(v, int | float | np.number) for v in rhs):
        return (float(rhs[0]), float(rhs[1]))
    return None


# ------------------------------------------------ registered implementations


def _own(sense: Sense, group: str) -> slice:
    return sense.rows(group)


def in_range(
    m: InRange, sense: Sense, group: str, prev: BoolArray, rand: Array | None
) -> BoolArray:
    facts = sense.target(m.target, group)
    rows = _own(sense, group)
    pos = sense.agents.pos[rows]
    only = sense.deciding_rows(group)  # think-rate LOD: the thinkers' rows alone
    if sense.kernels is not None:  # the same formulas in one pass (conditions_loops.py)
        found: BoolArray = sense.kernels.in_range(
            pos, facts, float(m.radius), float(m.hysteresis), prev, only
        )
        return found
    if only is None:
        return in_range_mask(distances(pos, facts.pos), facts.valid, m.radius, m.hysteresis, prev)
    some = facts_at(facts, only)
    out = np.zeros(rows.stop - rows.start, dtype=bool)
    out[only] = in_range_mask(
        distances(pos[only], some.pos), some.valid, m.radius, m.hysteresis, prev[only]
    )
    return out


def neighbours(
    m: NeighboursCond, sense: Sense, group: str, prev: BoolArray, rand: Array | None
) -> BoolArray:
    rows = _own(sense, group)
    only = sense.deciding_rows(group)
    if m.radius is None and only is not None:  # think-rate LOD: the thinkers' counts alone
        out = np.zeros(rows.stop - rows.start, dtype=bool)
        out[only] = sense.thinkers_neighbour_count(group, m.of) >= m.min_count
        return out
    found = sense.neighbours(group, m.of)
    if m.radius is None:
        counts = found.count
    else:
        counts = count_within(found.i, found.dist, rows.start, rows.stop - rows.start, m.radius)
    return np.asarray(counts >= m.min_count, dtype=bool)


def arrived(m: Arrived, sense: Sense, group: str, prev: BoolArray, rand: Array | None) -> BoolArray:
    facts = sense.target(m.target, group)
    rows = _own(sense, group)
    dist = distances(sense.agents.pos[rows], facts.pos)
    vel = sense.agents.vel[rows]
    speed = np.sqrt(vel[:, 0] * vel[:, 0] + vel[:, 1] * vel[:, 1])
    return arrived_mask(dist, speed, facts.valid, m.tolerance, m.max_speed)


def facing(m: Facing, sense: Sense, group: str, prev: BoolArray, rand: Array | None) -> BoolArray:
    facts = sense.target(m.target, group)
    rows = _own(sense, group)
    return facing_mask(
        sense.agents.heading[rows], sense.agents.pos[rows], facts.pos, facts.valid, m.angle
    )


def can_see(m: CanSee, sense: Sense, group: str, prev: BoolArray, rand: Array | None) -> BoolArray:
    facts = sense.target(m.target, group)
    rows = _own(sense, group)
    ag = sense.agents
    pos = ag.pos[rows]
    reach = ag.view_distance[rows] if m.distance is None else np.full(len(pos), m.distance)
    half = 0.5 * (ag.fov[rows] if m.fov is None else np.full(len(pos), np.radians(m.fov)))
    return sees(
        pos, ag.heading[rows], facts.pos, facts.valid, reach, half, sense.world, m.line_of_sight
    )


def inside(zone: Zone, pos: Array, world: World) -> BoolArray:
    """Which of ``pos`` (n, 2) lie inside ``zone`` (edges included)."""
    if zone.kind == "circle":
        d = displacement(pos, zone.center, world)
        return np.asarray(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] <= zone.radius**2, dtype=bool)
    return np.asarray(((pos >= zone.low) & (pos <= zone.high)).all(axis=1), dtype=bool)


def in_zone(m: InZone, sense: Sense, group: str, prev: BoolArray, rand: Array | None) -> BoolArray:
    return inside(sense.world.zones[m.zone], sense.agents.pos[_own(sense, group)], sense.world)


def in_formation(
    m: InFormation, sense: Sense, group: str, prev: BoolArray, rand: Array | None
) -> BoolArray:
    rows = _own(sense, group)
    formations = getattr(sense, "formations", None)
    if formations is None:
        return np.zeros(rows.stop - rows.start, dtype=bool)
    at = np.arange(rows.start, rows.stop, dtype=np.int64)
    points, _vel, ok = formations.slots_of(sense, group, at)
    return np.asarray(ok & (length(points - sense.agents.pos[rows]) <= m.tolerance), dtype=bool)


def chance(m: Chance, sense: Sense, group: str, prev: BoolArray, rand: Array | None) -> BoolArray:
    if rand is None:
        raise ValueError("chance needs a random slot (FlatNode.rand_slot)")
    return chance_mask(rand[:, 0], m.probability)


class BlackboardCompareOps(LeafOps):
    """``blackboard_compare``: read the agent's blackboard when ticked, with :func:`compare`."""

    def __init__(self, model: BlackboardCompare, ctx: NodeContext) -> None:
        self.model, self.board = model, ctx.board

    def passes(self, rows: Rows) -> BoolArray:
        m = self.model
        return self.board.passes(m.key, m.op, m.value, rows)

    def update(self, rows: Rows) -> Codes:
        return np.where(self.passes(rows), SUCCESS, FAILURE).astype(np.int8)


def evaluate_condition(
    model: Any, sense: Sense, group: str, prev: BoolArray, rand_slot: int
) -> BoolArray:
    """Evaluate a sensed condition for all of ``group``'s rows (the call both engines make)."""
    rand = None
    width = int(getattr(model, "random_numbers", 0) or 0)
    if rand_slot >= 0 and width:
        rows = sense.rows(group)
        rand = sense.rand[rows, rand_slot : rand_slot + width]
    impl = sense.registries.conditions.impl(model.type)
    return np.asarray(impl(model, sense, group, prev, rand), dtype=bool)


BUILTIN = (
    (InRange, in_range),
    (NeighboursCond, neighbours),
    (Arrived, arrived),
    (Facing, facing),
    (CanSee, can_see),
    (InZone, in_zone),
    (InFormation, in_formation),
    (Chance, chance),
    (BlackboardCompare, BlackboardCompareOps),
)
"""(model, implementation) of every built-in condition, in registration order."""


def register(registries: Registries) -> None:
    for model, impl in BUILTIN:
        registries.conditions.register(model, impl)
