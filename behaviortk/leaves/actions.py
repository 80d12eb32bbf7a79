"""Action leaves that do not steer: write the blackboard, wait, tell the game.

Steering requests are actions too, but they live in ``behaviortk.steering``;
these change only tree state (or report to the game). Each is a leaf ops class (``tree/ops.py``)
that both engines run, so its meaning is written once:

* ``blackboard_set``: stores :func:`stored_value` under ``key`` in the agent's
  own blackboard and returns SUCCESS on the tick it is ticked. The loader has
  checked that the tree declares ``key`` and that the value is of its type.
* ``blackboard_add``: adds ``value`` to a number key (unset counts as 0), clamped to
  ``[min, max]``, and returns SUCCESS: needs that grow each tick (`utility_villager.json`).
* ``wait``: with ``n = ticks_for(duration, dt)``, started on tick ``t0`` (the
  first tick it is ticked while not RUNNING), returns RUNNING while
  ``now - t0 < n`` and SUCCESS once ``now - t0 >= n``; so a 1 s wait at
  dt = 0.1 is RUNNING on 10 ticks and its successor runs 1 s after it began.
  Pre-emption (INVALID) forgets the start.
* ``despawn``: the agent leaves the simulation at the end of the tick, as if the game
  called ``sim.despawn(id)`` right after the step (its ``despawn`` event, stamped with the
  tick, comes with that tick's events; formations re-assign their slots); SUCCESS.
* ``emit``: records event ``event`` for every agent that ticks it (in the
  NodeContext's event sink; the game reads ``sim.events`` or subscribes with
  ``sim.on``, see ``behaviortk.sim.embed``) and returns SUCCESS on that tick.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import model_validator

from behaviortk.format.fields import (
    BlackboardKey,
    BlackboardKeyName,
    BlackboardRef,
    BlackboardValue,
    EventName,
    Finite,
    ParamValue,
    PFinite,
    PNonNeg,
    doc,
)
from behaviortk.format.limits import MAX_MAGNITUDE
from behaviortk.format.nodes import NodeModel
from behaviortk.registry import Registries
from behaviortk.tree.clock import ticks_for
from behaviortk.tree.ops import Codes, LeafOps, NodeContext, Rows
from behaviortk.tree.status import RUNNING, SUCCESS


class BlackboardSet(NodeModel):
    """Write a constant to the agent's blackboard (a point may then serve as a `blackboard` target)."""

    type: Literal["blackboard_set"] = "blackboard_set"
    key: BlackboardKey = doc("Blackboard key (per agent), declared in the tree's `blackboard`")
    value: Annotated[ParamValue, BlackboardValue()] = doc(
        "Value to store, of the key's declared type: bool, number, string or point [x, y]"
    )


class BlackboardAdd(NodeModel):
    """Add a number to a number key of the agent's blackboard, kept within [min, max] (a need
    that grows every tick, an energy spent); SUCCESS. Unset counts as 0."""

    type: Literal["blackboard_add"] = "blackboard_add"
    key: Annotated[BlackboardKeyName, BlackboardRef("number", "`blackboard_add`")] = doc(
        "Blackboard key declared with type number"
    )
    value: PFinite = doc("Added each tick the node is ticked (negative: subtracted)")
    min: Finite = doc("The result is never below this", -MAX_MAGNITUDE)
    max: Finite = doc("The result is never above this", MAX_MAGNITUDE)

    @model_validator(mode="after")
    def _bounds_in_order(self) -> BlackboardAdd:
        if not self.min <= self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        return self


class Wait(NodeModel):
    """Stay RUNNING for ``duration`` seconds of simulated time, then succeed."""

    type: Literal["wait"] = "wait"
    duration: PNonNeg = doc("How long to wait", 1.0, unit="seconds (simulated)")


class Emit(NodeModel):
    """Tell the game something happened: record event ``event`` for this agent; SUCCESS on that tick.

    The game sees it after the tick in ``sim.events`` (with the tick and the
    agent's id) and in callbacks subscribed with ``sim.on(event, callback)``.
    Put it after what it reports: in a sequence after `in_range`, it fires on
    every tick the agent is in range; under `one_shot`, once.
    """

    type: Literal["emit"] = "emit"
    event: EventName = doc(
        "Name of the event the game receives, e.g. `caught`; not `spawn`, `despawn` or "
        "`status` (the simulation raises those itself)"
    )


class Despawn(NodeModel):
    """Leave the simulation at the end of this tick (a unit killed, a visitor gone home): the
    agent acts and moves this tick, then is removed as `sim.despawn` removes it. The game gets
    a `despawn` event among this tick's events (`sim.events` after the step), a formation
    re-assigns its slots, and the trace's record of the tick no longer holds the agent.
    SUCCESS."""

    type: Literal["despawn"] = "despawn"


def stored_value(model: BlackboardSet) -> Any:
    """What ``blackboard_set`` stores: points become ``(x, y)`` float tuples, the rest as written."""
    value = model.value
    if isinstance(value, list | tuple):
        return (float(value[0]), float(value[1]))
    return value


class BlackboardSetOps(LeafOps):
    """Store the constant for every agent that ticks it; SUCCESS."""

    def __init__(self, model: BlackboardSet, ctx: NodeContext) -> None:
        self.key, self.value, self.board = model.key, stored_value(model), ctx.board

    def update(self, rows: Rows) -> Codes:
        self.board.set(self.key, rows, self.value)
        return np.full(rows.size, SUCCESS, dtype=np.int8)


class BlackboardAddOps(LeafOps):
    """``clamp(value + step, min, max)`` per agent, stored one write per distinct result."""

    def __init__(self, model: BlackboardAdd, ctx: NodeContext) -> None:
        self.key, self.board = model.key, ctx.board
        self.step, self.low, self.high = float(model.value), float(model.min), float(model.max)

    def update(self, rows: Rows) -> Codes:
        now = self.board.numbers(self.key, rows)
        new = np.clip(np.where(np.isnan(now), 0.0, now) + self.step, self.low, self.high)
        for value in np.unique(new).tolist():
            self.board.set(self.key, rows[new == value], value)
        return np.full(rows.size, SUCCESS, dtype=np.int8)


class WaitOps(LeafOps):
    """RUNNING until ``ticks_for(duration, dt)`` ticks have passed since the wait started, then SUCCESS."""

    per_agent = ("start",)

    def __init__(self, model: Wait, ctx: NodeContext) -> None:
        self.clock = ctx.clock
        self.limit = ticks_for(model.duration, ctx.clock.dt)
        self.start = np.zeros(ctx.n_agents, dtype=np.int64)

    def initialise(self, rows: Rows) -> None:
        self.start[rows] = self.clock.tick

    def update(self, rows: Rows) -> Codes:
        elapsed = self.clock.tick - self.start[rows]
        return np.where(elapsed >= self.limit, SUCCESS, RUNNING).astype(np.int8)


class EmitOps(LeafOps):
    """Record the event for every agent that ticks it (``NodeContext.events``); SUCCESS."""

    def __init__(self, model: Emit, ctx: NodeContext) -> None:
        self.event, self.group = model.event, ctx.group
        self.sink, self.clock = ctx.events, ctx.clock

    def update(self, rows: Rows) -> Codes:
        self.sink.record(self.clock.tick, self.group, rows, self.event)
        return np.full(rows.size, SUCCESS, dtype=np.int8)


class DespawnOps(LeafOps):
    """Hand every agent that ticks it to the simulation to remove after the tick; SUCCESS."""

    def __init__(self, model: Despawn, ctx: NodeContext) -> None:
        self.group, self.sink = ctx.group, ctx.events

    def update(self, rows: Rows) -> Codes:
        self.sink.leave(self.group, rows)
        return np.full(rows.size, SUCCESS, dtype=np.int8)


def register(registries: Registries) -> None:
    registries.actions.register(BlackboardSet, BlackboardSetOps)
    registries.actions.register(BlackboardAdd, BlackboardAddOps)
    registries.actions.register(Wait, WaitOps)
    registries.actions.register(Emit, EmitOps)
    registries.actions.register(Despawn, DespawnOps)
