"""The ``formation_slot`` steering primitive: arrive at this agent's slot of its group's
formation, turned with the anchor (Millington, *AI for Games*, "Coordinated Movement").

Which slot is whose, and where the anchor is, is the formation's state
(``sense/formations.py``, updated once per tick by the simulation); this leaf reads it
for its rows and applies ``formulas.formation_slot`` to all of them at once. Both
engines and both kernel choices run this one vectorised implementation.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from behaviortk.format.fields import PNonNeg, PPositive, doc
from behaviortk.format.nodes import DefinitionFinding
from behaviortk.registry import Registries
from behaviortk.sense.formations import needs_formation
from behaviortk.steering import formulas as f
from behaviortk.steering.context import Steering, SteeringContext
from behaviortk.steering.primitives import SteeringModel
from behaviortk.steering.requests import Requests
from behaviortk.vec import xy


class FormationSlot(SteeringModel):
    """Arrive at this agent's slot in its group's `formation` (Millington, AI for Games,
    "Coordinated Movement": two-level steering). The slot is an offset [forward, left]
    turned with the anchor's heading; slots are assigned by least total distance when the
    formation forms and whenever its members change (an agent is a member while its tree
    runs this leaf). The desired velocity is the anchor's plus Millington's Arrive toward
    the slot, capped at max speed, reached within `time_to_target`. Agents without a slot
    (more members than a fixed pattern's slots, no leader found) get no force."""

    type: Literal["formation_slot"] = "formation_slot"
    slowing_radius: PNonNeg = doc(
        "Millington: slow down within this distance of the slot", 40.0, unit="world units"
    )
    tolerance: PNonNeg = doc(
        "Within this distance of the slot, only match the anchor's velocity",
        0.5,
        unit="world units",
    )
    time_to_target: PPositive = doc(
        "Millington: time over which to reach the desired velocity", 0.1, unit="s"
    )

    def definition_findings(self, definition: Any, group: Any) -> list[DefinitionFinding]:
        return needs_formation("formation_slot", group)


def formation_slot(p: FormationSlot, ctx: SteeringContext) -> Steering:
    formations = getattr(ctx.sense, "formations", None)
    if formations is None or ctx.group not in formations.groups:
        return Steering(np.zeros((ctx.n, 2)))
    points, vel, ok = formations.slots_of(ctx.sense, ctx.group, ctx.rows)
    fx, fy = f.formation_slot(
        *xy(ctx.pos), *xy(ctx.vel), ctx.per_agent("max_speed"), ctx.per_agent("mass"),
        *xy(points), *xy(vel), float(p.slowing_radius), float(p.tolerance),
        float(p.time_to_target),
    )  # fmt: skip
    force = np.stack([fx, fy], axis=1)
    force[~ok] = 0.0
    if ctx.debug.enabled:
        ctx.debug.add("crosshair", ctx.rows[ok], point=points[ok])
    return Steering(force)


def members(requests: Requests) -> dict[str, np.ndarray]:
    """Each group's rows that ran ``formation_slot`` this tick (a formation's members)."""
    found: dict[str, list[np.ndarray]] = {}
    for group, _model, rows in requests.leaves("formation_slot"):
        found.setdefault(group, []).append(rows)
    return {group: np.unique(np.concatenate(rows)) for group, rows in found.items()}


def register(registries: Registries) -> None:
    registries.primitives.register(FormationSlot, formation_slot)
