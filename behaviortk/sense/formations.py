"""Formations at run time: slot offsets, slot assignment and the anchors' frames.

Millington, *AI for Games* (3rd ed.), "Coordinated Movement": two-level steering. An
anchor moves (a leader agent, or the group's own anchor going to a target no faster
than its slowest member) and each member arrives at its slot, an offset
``[forward, left]`` turned with the anchor's heading. Slots go to members by least
total distance (``scipy.optimize.linear_sum_assignment``), once per change of
members, never per tick.

Members are the agents that ran ``formation_slot`` this tick. The simulation calls
:meth:`Formations.update` once per tick between decide and act, with those rows (so
both engines, which decide alike, give it the same members); the set is compared by
agent id, so spawning, despawning, and agents leaving (their tree stops running
``formation_slot``) or rejoining re-assign, and nothing else does. Members are taken
in id order, so the answer does not depend on where their rows are. This is state
(``sim/snapshot.py`` saves it): members, their slots and the centroid anchor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from behaviortk.format.formations import LEADER_KINDS
from behaviortk.format.nodes import DefinitionFinding
from behaviortk.sense.sensing import offset_point, target_heading
from behaviortk.vec import EPS, Array, length, normalize
from behaviortk.world.spatial import displacement

NO_IDS = np.zeros(0, dtype=np.int64)


def needs_formation(node: str, group: Any) -> list[DefinitionFinding]:
    """A node that reads the group's formation, in a group without one."""
    if getattr(group, "formation", None) is not None:
        return []
    return [
        (
            ["type"],
            f"{node} needs the group's `formation`: add "
            '"formation": {"name": ..., "anchor": {...}} to the group, naming one of the '
            "definition's `formations`",
            "no_formation",
        )
    ]


def pattern_offsets(pattern: str, spacing: float, count: int, slots: Any = None) -> Array:
    """The slots ``(k, 2)`` ``[forward, left]`` of ``pattern`` for ``count`` members.

    Scalable patterns give ``count`` slots spaced ``spacing`` apart, behind or around the
    anchor (its own place stays free for a leader); ``slots`` gives the listed offsets.
    """
    s, n = float(spacing), int(count)
    i = np.arange(n, dtype=np.float64)
    if pattern == "slots":
        return np.asarray(slots, dtype=np.float64).reshape(-1, 2)
    if pattern == "line":  # abreast, one spacing behind, centred
        forward, left = np.full(n, -s), ((n - 1) / 2.0 - i) * s
    elif pattern == "column":  # single file behind
        forward, left = -(i + 1.0) * s, np.zeros(n)
    elif pattern == "wedge":  # a V: rank r holds one slot each side, r spacings back
        rank = np.floor(i / 2.0) + 1.0
        side = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        forward, left = -rank * s, side * rank * s
    elif pattern == "circle":  # neighbours a spacing apart, at least a spacing out
        radius = s if n <= 6 else s / (2.0 * math.sin(math.pi / n))
        angle = math.pi + 2.0 * math.pi * i / max(n, 1)
        forward, left = radius * np.cos(angle), radius * np.sin(angle)
    elif pattern == "grid":  # ranks of ceil(sqrt(n)), centred, behind
        width = max(1, math.ceil(math.sqrt(n)))
        rank, file = np.floor(i / width), i % width
        forward, left = -(rank + 1.0) * s, ((width - 1) / 2.0 - file) * s
    else:
        raise ValueError(f"unknown formation pattern {pattern!r}")
    return np.stack([forward, left], axis=1)


def slot_points(anchor: Array, heading: Array, offsets: Array) -> Array:
    """World points of ``offsets`` (k, 2) in each frame: ``(m, k, 2)`` for ``m`` anchors at
    ``anchor`` (m, 2) facing ``heading`` (m, 2) (``sensing.offset_point``'s frame)."""
    x, y = offset_point(
        anchor[:, 0:1], anchor[:, 1:2], heading[:, 0:1], heading[:, 1:2],
        offsets[None, :, 0], offsets[None, :, 1],
    )  # fmt: skip
    return np.stack([x, y], axis=-1)


def assign(pos: Array, points: Array) -> np.ndarray:
    """Each member's slot (-1: none left) by least total distance from ``pos`` (m, 2) to
    ``points`` (m, k, 2), the slots as each member's anchor places them."""
    m, k = points.shape[0], points.shape[1]
    out = np.full(m, -1, dtype=np.int64)
    if m == 0 or k == 0:
        return out
    from scipy.optimize import linear_sum_assignment  # only when members change

    cost = length(points - pos[:, None, :])
    rows, cols = linear_sum_assignment(cost)
    out[rows] = cols
    return out


@dataclass
class Formation:
    """One group's formation: its pattern, its anchor, the members (ids, sorted) and their
    slots, and the centroid anchor's pose (unused for a leader)."""

    pattern: str
    spacing: float
    fixed: Any
    anchor: Any  # the target spec
    leader: bool
    members: np.ndarray = field(default_factory=lambda: NO_IDS)
    slot: np.ndarray = field(default_factory=lambda: NO_IDS)
    offsets: Array = field(default_factory=lambda: np.zeros((0, 2)))
    formed: bool = False
    pose: Array = field(default_factory=lambda: np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]]))
    """The centroid anchor's position, unit heading and velocity (rows of a (3, 2) array)."""

    def set_members(self, ids: np.ndarray) -> None:
        self.members = ids
        self.offsets = pattern_offsets(self.pattern, self.spacing, ids.size, self.fixed)


class Formations:
    """Every group's formation (groups with a ``formation`` field), by group name."""

    def __init__(self, definition: Any) -> None:
        specs = {f.name: f for f in getattr(definition, "formations", ())}
        self.groups: dict[str, Formation] = {}
        for g in definition.groups:
            if g.formation is None:
                continue
            spec = specs[g.formation.name]
            anchor = g.formation.anchor
            self.groups[g.name] = Formation(
                spec.pattern, float(spec.spacing), spec.slots, anchor,
                getattr(anchor, "kind", None) in LEADER_KINDS,
            )  # fmt: skip

    # ------------------------------------------------------------------ the tick
    def update(self, sense: Any, members: dict[str, np.ndarray], dt: float) -> None:
        """Once per tick, after decide: ``members`` are each group's rows that ran
        ``formation_slot``. Moves centroid anchors; re-assigns where the members changed."""
        for group, form in self.groups.items():
            rows = np.asarray(members.get(group, NO_IDS), dtype=np.int64)
            ids = sense.agents.ids[rows]
            order = np.argsort(ids, kind="stable")
            rows, ids = rows[order], ids[order]
            changed = not np.array_equal(ids, form.members)
            if changed:
                form.set_members(ids)
            if not form.leader:
                self._move_anchor(form, sense, group, rows, dt)
            if changed:
                anchor, heading, _vel, _ok = self.frames(sense, group, rows)
                form.slot = assign(
                    sense.agents.pos[rows], slot_points(anchor, heading, form.offsets)
                )

    def _move_anchor(
        self, form: Formation, sense: Any, group: str, rows: np.ndarray, dt: float
    ) -> None:
        """The centroid anchor: formed on the members' centroid when they gather, then moved
        toward the target at the slowest member's speed; gone when nobody is a member."""
        if rows.size == 0:
            form.formed = False
            return
        agents = sense.agents
        facts = sense.target(form.anchor, group)
        local = rows - sense.rows(group).start
        valid = np.flatnonzero(facts.valid[local])
        goal = None if valid.size == 0 else facts.pos[local[valid[0]]]
        pos, heading = form.pose[0].copy(), form.pose[1].copy()
        if not form.formed:
            pos = agents.pos[rows].mean(axis=0)
            toward = np.zeros(2) if goal is None else goal - pos
            heading = _unit(toward, _unit(agents.heading[rows].mean(axis=0), np.array([1.0, 0.0])))
            centre = form.offsets.mean(axis=0) if form.offsets.size else np.zeros(2)
            pos = pos - slot_points(np.zeros((1, 2)), heading[None], centre[None])[0, 0]
            form.pose = np.stack([pos, heading, np.zeros(2)])
            form.formed = True
            return
        velocity = np.zeros(2)
        if goal is not None:
            toward = goal - pos
            dist = float(np.hypot(toward[0], toward[1]))
            if dist > EPS:
                step = min(float(agents.max_speed[rows].min()) * dt, dist)
                heading = toward / dist
                pos = pos + heading * step
                velocity = heading * (step / dt)
        form.pose = np.stack([pos, heading, velocity])

    # ------------------------------------------------------------- what is read
    def frames(
        self, sense: Any, group: str, rows: np.ndarray
    ) -> tuple[Array, Array, Array, np.ndarray]:
        """The anchor each of ``rows`` (global rows of ``group``) follows: position, heading,
        velocity ``(n, 2)`` and whether there is one (a leader found, an anchor formed)."""
        form = self.groups[group]
        n = rows.shape[0]
        if not form.leader:
            pose = np.broadcast_to(form.pose, (n, 3, 2))
            return pose[:, 0].copy(), pose[:, 1].copy(), pose[:, 2].copy(), np.full(n, form.formed)
        facts = sense.target(form.anchor, group)
        local = rows - sense.rows(group).start
        heading = target_heading(sense.agents, facts)[local]
        return facts.pos[local], heading, facts.vel[local], facts.valid[local]

    def slots_of(self, sense: Any, group: str, rows: np.ndarray) -> tuple[Array, Array, np.ndarray]:
        """Where each of ``rows`` (global rows of ``group``) should be: its slot's point (the
        nearest image), the anchor's velocity, and whether it has a slot and an anchor."""
        form = self.groups.get(group)
        n = rows.shape[0]
        own = sense.agents.pos[rows]
        if form is None or form.members.size == 0:
            return own.copy(), np.zeros((n, 2)), np.zeros(n, dtype=bool)
        ids = sense.agents.ids[rows]
        at = np.minimum(np.searchsorted(form.members, ids), form.members.size - 1)
        slot = np.where(form.members[at] == ids, form.slot[at], -1)
        anchor, heading, vel, ok = self.frames(sense, group, rows)
        ok = ok & (slot >= 0)
        offsets = form.offsets[np.where(ok, slot, 0)] if form.offsets.size else np.zeros((n, 2))
        x, y = offset_point(
            anchor[:, 0], anchor[:, 1], heading[:, 0], heading[:, 1], offsets[:, 0], offsets[:, 1]
        )
        points = own + displacement(own, np.stack([x, y], axis=1), sense.world)
        points[~ok] = own[~ok]
        vel = np.where(ok[:, None], vel, 0.0)
        return points, vel, ok


def _unit(v: Array, otherwise: Array) -> Array:
    """``v`` made unit length, or ``otherwise`` where it is (nearly) zero."""
    u = normalize(np.asarray(v, dtype=np.float64)[None])[0]
    return otherwise if not u.any() else u
