"""Built-in utility inputs: what a `utility` consideration reads, model + implementation.

An input is an open registry entry (``registries.inputs``, ``plugin.utility_input``): an
``InputOps`` class built per group as ``cls(model, NodeContext)`` whose ``values(rows)`` is
the raw number the consideration normalises. Sensed inputs keep the tick's arrays in
``prepare``, so both engines read the same numbers whatever order they tick in; the
blackboard is read when the utility ticks (an earlier node of the same tick may have
written it).

* ``distance``: to a target (nearest image on a wrapping world); +inf without a target.
* ``blackboard``: a number key; NaN while unset.
* ``speed``: the agent's own speed.
* ``neighbours``: how many agents it sees (view distance, field of view, ``max_neighbours``).
* ``since_success``: ticks since a node of the tree (by name) last ended a tick in SUCCESS;
  huge before it ever did (the utility remembers it: ``leaves/utility.UtilityOps``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

import numpy as np

from behaviortk.format.fields import BlackboardKeyName, BlackboardRef, Model, NodeRef, doc
from behaviortk.format.nodes import Target
from behaviortk.registry import Registries
from behaviortk.tree.ops import InputOps, NodeContext, Rows
from behaviortk.vec import length

if TYPE_CHECKING:
    from behaviortk.sense.sensing import Sense


class DistanceInput(Model):
    """Distance from the agent to a target (world units); +inf where there is none."""

    kind: Literal["distance"] = "distance"
    target: Target = doc("The target measured to (any target kind)")


class BlackboardInput(Model):
    """A number on the agent's own blackboard (a need, a mood); NaN while unset."""

    kind: Literal["blackboard"] = "blackboard"
    key: Annotated[BlackboardKeyName, BlackboardRef("number", "a `blackboard` utility input")] = (
        doc("A blackboard key declared with type number")
    )


class SpeedInput(Model):
    """The agent's own speed (world units per second)."""

    kind: Literal["speed"] = "speed"


class NeighboursInput(Model):
    """How many agents the agent sees (view distance, field of view, capped by
    ``max_neighbours``)."""

    kind: Literal["neighbours"] = "neighbours"
    of: str = doc(
        "Whose agents count: `same` (own group), `any`, or a group name", "same", min_length=1
    )


class SinceSuccessInput(Model):
    """Ticks since a node of this tree last ended a tick in SUCCESS (huge before it ever did)."""

    kind: Literal["since_success"] = "since_success"
    node: NodeRef = doc(
        "A node's name (its `name`, else its type) in this same tree; several nodes so named: "
        "whichever succeeded last"
    )


class DistanceOps(InputOps):
    def __init__(self, model: DistanceInput, ctx: NodeContext) -> None:
        self.target, self.group = model.target, ctx.group
        self.distance = np.zeros(0)

    def prepare(self, sense: Sense) -> None:
        facts = sense.target(self.target, self.group)
        own = sense.agents.pos[sense.rows(self.group)]
        d = length(facts.pos - own)
        self.distance = np.where(facts.valid, d, np.inf)

    def values(self, rows: Rows) -> np.ndarray:
        return self.distance[rows]


class BlackboardOps(InputOps):
    def __init__(self, model: BlackboardInput, ctx: NodeContext) -> None:
        self.key, self.board = model.key, ctx.board

    def values(self, rows: Rows) -> np.ndarray:
        return self.board.numbers(self.key, rows)


class SpeedOps(InputOps):
    def __init__(self, model: SpeedInput, ctx: NodeContext) -> None:
        self.group = ctx.group
        self.speed = np.zeros(0)

    def prepare(self, sense: Sense) -> None:
        vel = sense.agents.vel[sense.rows(self.group)]
        self.speed = length(vel)

    def values(self, rows: Rows) -> np.ndarray:
        return self.speed[rows]


class NeighboursOps(InputOps):
    def __init__(self, model: NeighboursInput, ctx: NodeContext) -> None:
        self.of, self.group = model.of, ctx.group
        self.count = np.zeros(0)

    def prepare(self, sense: Sense) -> None:
        self.count = np.asarray(sense.neighbour_count(self.group, self.of), dtype=np.float64)

    def values(self, rows: Rows) -> np.ndarray:
        return self.count[rows]


class SinceSuccessOps(InputOps):
    """Reads the owning utility's memory (``UtilityOps.since``), bound when it is built."""

    def __init__(self, model: SinceSuccessInput, ctx: NodeContext) -> None:
        self.watches = model.node
        self.owner: Any = None
        self.column = -1

    def bind(self, owner: Any, column: int) -> None:
        self.owner, self.column = owner, column

    def values(self, rows: Rows) -> np.ndarray:
        return np.asarray(self.owner.since(self.column, rows), dtype=np.float64)


BUILTIN = (
    (DistanceInput, DistanceOps),
    (BlackboardInput, BlackboardOps),
    (SpeedInput, SpeedOps),
    (NeighboursInput, NeighboursOps),
    (SinceSuccessInput, SinceSuccessOps),
)


def register(registries: Registries) -> None:
    for model, impl in BUILTIN:
        registries.inputs.register(model, impl)
