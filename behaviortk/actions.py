"""Action leaves that do not steer: write the blackboard, wait.

Steering requests are actions too, but they live in ``behaviortk.steering``;
these two change only tree state. Both engines share the functions
registered here, so their meaning is written once:

* ``blackboard_set``: stores :func:`stored_value` under ``key`` in the agent's
  own blackboard and returns SUCCESS on the tick it is ticked.
* ``wait``: with ``n = ticks_for(duration, dt)``, started on tick ``t0`` (the
  first tick it is ticked while not RUNNING), returns RUNNING while
  ``now - t0 < n`` and SUCCESS once ``now - t0 >= n``; so a 1 s wait at
  dt = 0.1 is RUNNING on 10 ticks and its successor runs 1 s after it began.
  Pre-emption (INVALID) forgets the start.
"""

from __future__ import annotations

from typing import Any, Literal

from behaviortk.format.fields import ParamValue, PNonNeg, doc
from behaviortk.format.nodes import NodeModel
from behaviortk.registry import Registries
from behaviortk.tree.status import RUNNING, SUCCESS


class BlackboardSet(NodeModel):
    """Write a constant to the agent's blackboard (a point may then serve as a `blackboard` target)."""

    type: Literal["blackboard_set"] = "blackboard_set"
    key: str = doc("Blackboard key (per agent)", min_length=1)
    value: ParamValue = doc("Value to store: number, bool, string or point [x, y]")


class Wait(NodeModel):
    """Stay RUNNING for ``duration`` seconds of simulated time, then succeed."""

    type: Literal["wait"] = "wait"
    duration: PNonNeg = doc("How long to wait", 1.0, unit="seconds (simulated)")


def stored_value(model: BlackboardSet) -> Any:
    """What ``blackboard_set`` stores: points become ``(x, y)`` float tuples, the rest as written."""
    value = model.value
    if isinstance(value, list | tuple):
        return (float(value[0]), float(value[1]))
    return value


def wait_status(elapsed_ticks: int, limit_ticks: int) -> int:
    """RUNNING until ``limit_ticks`` ticks have passed since the wait started, then SUCCESS."""
    return SUCCESS if elapsed_ticks >= limit_ticks else RUNNING


def register(registries: Registries) -> None:
    registries.actions.register(BlackboardSet, stored_value)
    registries.actions.register(Wait, wait_status)
