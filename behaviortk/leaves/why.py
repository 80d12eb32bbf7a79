"""Why a condition holds or not, for ONE agent: what it measured and what it compared against.

The debugger's question ("why is my guard not chasing?") answered per condition kind from
the very facts both engines read (``sense.sensing.Sense``, the agent's blackboard, the
node's hysteresis state), so both engines give the same words. Nothing here runs during a
tick: the viewer asks for the selected agent only, and costs nothing when nobody asks.
Millington (*AI for Games*, behaviour trees) and Buckland (ch. 7, Raven's sensory memory)
motivate the conditions; the sight reasons are Buckland's view test in its order: view
distance, then the field of view, then walls and obstacles on the line.

Each explainer returns a :class:`Why`: a short text (``in_range: 143.2 > 100``), whether
the condition holds, and a reason code (for ``can_see``: ``seen``, ``out of range``,
``outside the cone``, ``blocked``; the overlay colours by it). A plugin's condition
without an explainer has none (its status alone is shown).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.leaves.conditions import compare, inside
from behaviortk.sense.sensing import Sense
from behaviortk.tree.clock import ticks_for
from behaviortk.vec import EPS, length
from behaviortk.world.sight import FOV_COS_TOLERANCE, first_blocker

SEEN = "seen"
OUT_OF_RANGE = "out of range"
OUTSIDE_CONE = "outside the cone"
BLOCKED = "blocked"
NO_TARGET = "no target"
HOLDS = "holds"
FAILS = "fails"
SIGHT_REASONS = (SEEN, OUT_OF_RANGE, OUTSIDE_CONE, BLOCKED)
"""The reasons a view test gives, in the order it checks them (the overlay's colours)."""


@dataclass(frozen=True)
class Why:
    """One condition's answer for one agent, and why."""

    text: str
    holds: bool
    reason: str


@dataclass(frozen=True)
class At:
    """Where a condition is explained: one agent (``local`` row of ``group``) in a sensed tick."""

    sense: Sense
    group: str
    local: int
    prev: bool  # the node's last result (hysteresis)
    board: Any  # the agent's BlackboardView, or None
    rand: np.ndarray | None  # the node's random numbers for this agent
    dt: float

    @property
    def row(self) -> int:
        return self.sense.rows(self.group).start + self.local

    def target(self, spec: Any) -> tuple[np.ndarray, bool]:
        """The target's position (nearest image) and whether there is one."""
        facts = self.sense.target(spec, self.group)
        return np.asarray(facts.pos[self.local], np.float64), bool(facts.valid[self.local])


def num(x: float) -> str:
    """A measured number as the panel shows it: at most one decimal, no trailing ``.0``."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def shown(value: Any) -> str:
    """A blackboard value as the definition writes it (JSON's ``true``, points as ``[x, y]``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return num(float(value))
    if isinstance(value, list | tuple | np.ndarray):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    if value is None:
        return "unset"
    return f'"{value}"' if isinstance(value, str) else str(value)


def _verdict(text: str, holds: bool) -> Why:
    return Why(text, holds, HOLDS if holds else FAILS)


def _offset(at: At, to: np.ndarray) -> tuple[float, float]:
    """Distance to ``to`` and its angle off the agent's heading, in degrees."""
    d = to - at.sense.agents.pos[at.row]
    dist = math.hypot(float(d[0]), float(d[1]))
    h = at.sense.agents.heading[at.row]
    if dist <= EPS:
        return dist, 0.0
    cos = (float(h[0]) * float(d[0]) + float(h[1]) * float(d[1])) / dist
    return dist, math.degrees(math.acos(max(-1.0, min(1.0, cos))))


def _in_cone(off_deg: float, full_deg: float) -> bool:
    """``leaves/conditions.facing_mask``'s test on one angle (its cosine slack included)."""
    half = math.radians(full_deg) / 2.0
    return half >= math.pi or math.cos(math.radians(off_deg)) >= math.cos(half) - FOV_COS_TOLERANCE


def in_range(m: Any, at: At) -> Why:
    to, valid = at.target(m.target)
    if not valid:
        return Why("in_range: no target", False, NO_TARGET)
    dist, _ = _offset(at, to)
    limit = m.radius + m.hysteresis if at.prev else m.radius
    holds = dist <= limit
    bound = num(limit) if limit == m.radius else f"{num(limit)} ({num(m.radius)} + hysteresis)"
    return _verdict(f"in_range: {num(dist)} {'<=' if holds else '>'} {bound}", holds)


def can_see(m: Any, at: At) -> Why:
    to, valid = at.target(m.target)
    if not valid:
        return Why("can_see: no target", False, NO_TARGET)
    ag, row = at.sense.agents, at.row
    reach = float(ag.view_distance[row]) if m.distance is None else float(m.distance)
    fov = math.degrees(float(ag.fov[row])) if m.fov is None else float(m.fov)
    dist, off = _offset(at, to)
    if dist > reach:
        return Why(f"can_see: out of range ({num(dist)} > {num(reach)})", False, OUT_OF_RANGE)
    if not (_in_cone(off, fov) or dist <= EPS):
        text = f"can_see: outside the {num(fov)}° cone ({num(off)}° off heading)"
        return Why(text, False, OUTSIDE_CONE)
    if m.line_of_sight:
        blocker = first_blocker(ag.pos[row], to, at.sense.world)
        if blocker is not None:
            return Why(f"can_see: blocked by {blocker[0]} {blocker[1]}", False, BLOCKED)
    return Why(f"can_see: seen ({num(dist)} <= {num(reach)}, {num(off)}° off heading)", True, SEEN)


def facing(m: Any, at: At) -> Why:
    to, valid = at.target(m.target)
    if not valid:
        return Why("facing: no target", False, NO_TARGET)
    dist, off = _offset(at, to)
    holds = dist <= EPS or _in_cone(off, m.angle)
    sign = "<=" if holds else ">"
    return _verdict(f"facing: {num(off)}° off heading {sign} {num(m.angle / 2)}°", holds)


def arrived(m: Any, at: At) -> Why:
    to, valid = at.target(m.target)
    if not valid:
        return Why("arrived: no target", False, NO_TARGET)
    dist, _ = _offset(at, to)
    vel = at.sense.agents.vel[at.row]
    speed = math.hypot(float(vel[0]), float(vel[1]))
    near, slow = dist <= m.tolerance, speed <= m.max_speed
    parts = (
        f"{num(dist)} {'<=' if near else '>'} {num(m.tolerance)}",
        f"speed {num(speed)} {'<=' if slow else '>'} {num(m.max_speed)}",
    )
    return _verdict("arrived: " + ", ".join(parts), near and slow)


def neighbours(m: Any, at: At) -> Why:
    found = at.sense.neighbours(at.group, m.of)
    if m.radius is None:
        count = int(found.count[at.local])
    else:
        mine = found.i == at.row
        count = int(np.count_nonzero(np.asarray(found.dist)[mine] <= m.radius))
    holds = count >= m.min_count
    within = "" if m.radius is None else f" within {num(m.radius)}"
    sign = ">=" if holds else "<"
    return _verdict(f"neighbours: {count} visible{within} {sign} {m.min_count}", holds)


def in_zone(m: Any, at: At) -> Why:
    zone = at.sense.world.zones[m.zone]
    pos = at.sense.agents.pos[at.row : at.row + 1]
    holds = bool(inside(zone, pos, at.sense.world)[0])
    where = "inside" if holds else "outside"
    return _verdict(f'in_zone: {where} "{m.zone}"', holds)


def in_formation(m: Any, at: At) -> Why:
    """``leaves/conditions.in_formation``'s test on one row: the distance to its slot."""
    formations = getattr(at.sense, "formations", None)
    if formations is None:
        return Why("in_formation: no slot", False, NO_TARGET)
    rows = np.array([at.row], dtype=np.int64)
    points, _vel, ok = formations.slots_of(at.sense, at.group, rows)
    if not bool(ok[0]):
        return Why("in_formation: no slot", False, NO_TARGET)
    dist = float(length(points - at.sense.agents.pos[rows])[0])
    holds = dist <= m.tolerance
    sign = "<=" if holds else ">"
    return _verdict(f"in_formation: {num(dist)} {sign} {num(m.tolerance)} from its slot", holds)


def chance(m: Any, at: At) -> Why:
    if at.rand is None:
        return Why("chance: no random number", False, FAILS)
    drawn = float(at.rand[0])
    holds = drawn < m.probability
    sign = "<" if holds else ">="
    return _verdict(f"chance: drew {drawn:.2f} {sign} {m.probability:g}", holds)


def blackboard_compare(m: Any, at: At) -> Why:
    value = None if at.board is None else at.board.get(m.key)
    holds = compare(m.op, value, m.value)
    wants = shown(m.value) if m.op == "==" else f"{m.op} {shown(m.value)}"
    return _verdict(f"blackboard_compare: {m.key} = {shown(value)}, wants {wants}", holds)


def recall(m: Any, at: At) -> Why:
    stored = None if at.board is None else at.board.stored_tick(m.key)
    if stored is None:
        return _verdict(f"recall: {m.key} unset", False)
    age = at.sense.tick - stored
    if m.max_age is None:
        return _verdict(f"recall: {m.key} stored {age} ticks ago", True)
    limit = ticks_for(m.max_age, at.dt)
    holds = age < limit
    sign = "<" if holds else ">="
    return _verdict(f"recall: {m.key} stored {age} ticks ago {sign} {limit}", holds)


EXPLAINERS: dict[str, Callable[[Any, At], Why]] = {
    "in_range": in_range,
    "can_see": can_see,
    "facing": facing,
    "arrived": arrived,
    "neighbours": neighbours,
    "in_zone": in_zone,
    "in_formation": in_formation,
    "chance": chance,
    "blackboard_compare": blackboard_compare,
    "recall": recall,
}
"""Every built-in condition's explainer, by type (a plugin's condition has none)."""


def explain(model: Any, at: At) -> Why | None:
    """Why ``model`` holds or not at ``at``; None for a condition without an explainer."""
    fn = EXPLAINERS.get(getattr(model, "type", ""))
    return None if fn is None else fn(model, at)
