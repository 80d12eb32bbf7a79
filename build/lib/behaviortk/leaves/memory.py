"""Memory leaves: remember where a target was, recall how long ago, forget.

A guard that loses sight of an intruder should go where it last saw it.
Buckland (*Programming Game AI by Example*, ch. 7) gives Raven's bots a sensory
memory: per opponent, the position and the time it was last sensed, forgotten
after a memory span; Millington (*AI for Games*, behaviour trees) passes such
data between tasks on a blackboard. Here the facts live on the agent's typed
blackboard (``tree/blackboard.py``), which stamps every value with the tick it was stored on (``Stamps``), so a memory has an age
on both engines alike and the game reads both (``view[key]``,
``view.stored_tick(key)``). All three are leaf ops classes (``tree/ops.py``)
run by both engines:

* ``remember``: for the rows that tick it, stores the position of ``target``
  (as sensed this tick, before any tree ticked: ``prepare``) under a point key
  and returns SUCCESS; FAILURE, and nothing stored, where the target does not
  exist (an empty group, no agent within a ``nearest`` radius, an unset
  ``blackboard`` key). On a wrapped world the point is folded into the world.
* ``recall``: read when ticked, like ``blackboard_compare``: SUCCESS where the
  key holds a value stored less than ``max_age`` seconds ago, i.e. with
  ``n = ticks_for(max_age, dt)``, where ``now - stored_tick < n``; so a value
  stored on tick 5 with ``max_age`` 1 s at dt = 0.1 is recalled on ticks 5..14.
  Without ``max_age``, while the key holds a value, whatever its age.
* ``forget``: unsets the key (its default does not come back) and returns
  SUCCESS; ``recall`` is then false and a ``blackboard`` target on it finds
  nothing, so its leaf fails.

A ``blackboard`` target reads the board when the tick's facts are sensed, so a
point remembered on tick t steers from tick t + 1 on (and the game's write
between ticks steers on the next one).
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np

from behaviortk.format.fields import (
    BlackboardKey,
    BlackboardKeyName,
    BlackboardRef,
    PNonNeg,
    doc,
)
from behaviortk.format.nodes import NodeModel, Target
from behaviortk.registry import Registries
from behaviortk.sense.sensing import Sense
from behaviortk.tree.blackboard import UNSET_TICK
from behaviortk.tree.clock import ticks_for
from behaviortk.tree.ops import Codes, LeafOps, NodeContext, Rows
from behaviortk.tree.status import FAILURE, SUCCESS
from behaviortk.world.spatial import wrap_positions

RememberKey = Annotated[BlackboardKeyName, BlackboardRef("point", "`remember`")]
"""A key ``remember`` stores into: declared with type point."""


class Remember(NodeModel):
    """Store where the target is now, and the tick, under a point key; FAILURE if there is no target.

    The position is the target's as sensed this tick (an agent's centre, a point,
    a zone's centre...). Where the target does not exist (an empty group, nobody
    within a `nearest` radius, an unset `blackboard` key) nothing is stored and the
    node fails. Read it back with a `blackboard` target (from the next tick on), its
    age with `recall`, clear it with `forget`. As Buckland's sensory memory (ch. 7:
    the last sensed position and when), kept on the blackboard (Millington).
    """

    type: Literal["remember"] = "remember"
    key: RememberKey = doc(
        "Blackboard key to store the position in, declared in the tree's `blackboard` "
        'with "type": "point"'
    )
    target: Target = doc("Whose position to remember")


class Recall(NodeModel):
    """True while the key holds a value stored less than `max_age` seconds ago (simulated time).

    Ages are whole ticks: with n = ceil(max_age / dt), true while now - stored < n,
    so `max_age` 0 is never true. Without `max_age`, true while the key holds a
    value, whatever its age. Any key type works: a `remember`ed point, a
    `blackboard_set` flag, the game's write (stored on the tick after it), a
    declared default (stored on the agent's first tick). Read when ticked, so a
    `remember` earlier in the same tick is recalled (age 0).
    """

    type: Literal["recall"] = "recall"
    key: BlackboardKey = doc("Blackboard key, declared in the tree's `blackboard`")
    max_age: PNonNeg | None = doc(
        "Only values stored less than this long ago count (null = any age while stored)",
        None,
        unit="seconds (simulated)",
    )


class Forget(NodeModel):
    """Clear the key: `recall` is false and a `blackboard` target on it finds nothing until
    it is stored again (its default does not come back). SUCCESS."""

    type: Literal["forget"] = "forget"
    key: BlackboardKey = doc("Blackboard key to clear, declared in the tree's `blackboard`")


class RememberOps(LeafOps):
    """Store the target's sensed position for the rows that tick it; FAILURE where it is missing."""

    def __init__(self, model: Remember, ctx: NodeContext) -> None:
        self.key, self.target, self.group = model.key, model.target, ctx.group
        self.board = ctx.board
        self.pos = np.zeros((ctx.n_agents, 2))
        self.valid = np.zeros(ctx.n_agents, dtype=bool)

    def prepare(self, sense: Sense) -> None:
        facts = sense.target(self.target, self.group)
        self.pos = facts.pos
        if sense.world.edges == "wrap":
            self.pos = wrap_positions(facts.pos, sense.world)
        self.valid = facts.valid

    def update(self, rows: Rows) -> Codes:
        found = self.valid[rows]
        stored = rows[found]
        if stored.size:
            self.board.set_points(self.key, stored, self.pos[stored])
        return np.where(found, SUCCESS, FAILURE).astype(np.int8)


class RecallOps(LeafOps):
    """SUCCESS where the key was stored less than ``max_age`` ago (any age without one)."""

    def __init__(self, model: Recall, ctx: NodeContext) -> None:
        self.key, self.board, self.clock = model.key, ctx.board, ctx.clock
        self.limit = None if model.max_age is None else ticks_for(model.max_age, ctx.clock.dt)

    def update(self, rows: Rows) -> Codes:
        stored = self.board.stored_ticks(self.key, rows)
        ok = stored != UNSET_TICK
        if self.limit is not None:
            ok &= self.clock.tick - stored < self.limit
        return np.where(ok, SUCCESS, FAILURE).astype(np.int8)


class ForgetOps(LeafOps):
    """Unset the key for every agent that ticks it; SUCCESS."""

    def __init__(self, model: Forget, ctx: NodeContext) -> None:
        self.key, self.board = model.key, ctx.board

    def update(self, rows: Rows) -> Codes:
        self.board.unset(self.key, rows)
        return np.full(rows.size, SUCCESS, dtype=np.int8)


def register(registries: Registries) -> None:
    registries.actions.register(Remember, RememberOps)
    registries.conditions.register(Recall, RecallOps)
    registries.actions.register(Forget, ForgetOps)
