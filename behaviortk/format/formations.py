"""Formations: the definition's named patterns and a group's place in one.

Millington, *AI for Games* (3rd ed.), "Coordinated Movement": a formation is a set of
slots in the frame of an anchor; fixed formations list their slots, scalable ones
(line, column, wedge, circle, grid) are re-spaced for however many members there are.
A group joins one with its ``formation`` field; its agents run ``formation_slot`` to
arrive at their slot (the slots' maths: ``sense/formations.py``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from behaviortk.format.fields import POSITIVE_RANGE, Model, NameRef, Point, Positive, doc
from behaviortk.format.limits import MAX_PATH_POINTS
from behaviortk.format.nodes import Target

FormationRef = Annotated[str, NameRef("formation"), Field(min_length=1)]
"""The name of a formation of the definition's ``formations``."""


class FormationDef(Model):
    """A named formation pattern (Millington, "Coordinated Movement"): slots [forward, left]
    in the anchor's frame. The scalable patterns lie behind or around the anchor, leaving
    its own place free for a leader: `line` abreast one spacing behind it, `column` single
    file behind it, `wedge` a V with the anchor at its point, `circle` a ring around it
    (neighbours `spacing` apart, at least `spacing` from it), `grid` ranks of
    ceil(sqrt(n)) behind it. `slots` is fixed: the listed offsets."""

    name: str = doc("Name a group's `formation` refers to (unique among formations)", min_length=1)
    pattern: Literal["line", "column", "wedge", "circle", "grid", "slots"] = doc(
        "How the slots are laid out: line, column, wedge, circle, grid (scalable: re-spaced "
        "for the current number of members) or slots (fixed: the `slots` listed)"
    )
    spacing: Positive = doc(
        f"Distance between neighbouring slots of a scalable pattern, {POSITIVE_RANGE}",
        12.0,
        unit="world units",
    )
    slots: list[Point] | None = doc(
        "For pattern `slots` only: each slot's offset [forward, left] from the anchor, in "
        f"its frame, 1 to {MAX_PATH_POINTS:,}",
        None,
        unit="world units",
        min_length=1,
        max_length=MAX_PATH_POINTS,
    )

    @model_validator(mode="after")
    def _slots_with_their_pattern(self) -> FormationDef:
        if self.pattern == "slots" and self.slots is None:
            raise ValueError(
                "pattern 'slots' needs `slots`: a list of offsets [forward, left], one per member"
            )
        if self.pattern != "slots" and self.slots is not None:
            raise ValueError(
                f"pattern {self.pattern!r} lays its own slots out: remove `slots` or use "
                "pattern 'slots'"
            )
        return self


class GroupFormation(Model):
    """Which formation a group keeps and what anchors it (Millington's two-level steering:
    the anchor moves, members arrive at their slots in its frame). An `agent` or `nearest`
    target is a leader: the slots turn with its heading. Any other target is where the
    group's own anchor goes: it starts with the pattern centred on the members' centroid
    and moves to the target no faster than the slowest member, facing the way it moves."""

    name: FormationRef = doc("Name of a formation of the definition's `formations`")
    anchor: Target = doc(
        'The leader (e.g. {"kind": "nearest", "group": "captain"}) or where the centroid '
        "anchor goes"
    )


LEADER_KINDS = ("agent", "nearest")
"""Anchor target kinds that are a leader agent (the others move a centroid anchor)."""
