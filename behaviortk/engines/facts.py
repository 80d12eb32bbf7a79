"""What every tree of a group reads this tick, computed once for all its agents.

Before any tree ticks, both engines compute here every steering leaf's status
(``leaf_status``) and every sensed condition (conditions with a vectorised
implementation, and guards over them) for all the group's rows; leaves then
only index the results, so both engines see the very same arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.engines.leaf_status import steering_status
from behaviortk.leaves.conditions import evaluate_condition
from behaviortk.registry import CONDITION, Registries
from behaviortk.sense.sensing import Sense
from behaviortk.tree.flat import FlatNode, FlatTree
from behaviortk.tree.ops import is_leaf_ops


def guard_condition(model: Any) -> Any:
    """The condition a decorator checks every tick (``eternal_guard``), or None."""
    return getattr(model, "condition", None)


def is_sensed(model: Any, registries: Registries) -> bool:
    """A condition computed from sense for all rows (not an ops class read when ticked)."""
    return not is_leaf_ops(registries.conditions.impl(model.type))


def sensed_nodes(tree: FlatTree, registries: Registries) -> list[FlatNode]:
    """Condition leaves and guards whose result comes from sense, evaluated every tick."""
    out = []
    for node in tree.nodes:
        guard = guard_condition(node.model)
        model = node.model if node.kind == CONDITION else guard
        if model is not None and is_sensed(model, registries):
            out.append(node)
    return out


@dataclass
class TickFacts:
    """One tick's group-wide results, by flat node index."""

    leaf: dict[int, np.ndarray]  # int8 status of each steering leaf, per row
    cond: dict[int, np.ndarray]  # bool result of each sensed condition or guard, per row


def compute_facts(
    tree: FlatTree,
    group: str,
    sensed: list[FlatNode],
    prev: dict[int, np.ndarray],
    sense: Sense,
    memory: dict[tuple[str, int], Any],
    thinking: np.ndarray | None = None,
) -> TickFacts:
    """Leaf statuses and sensed conditions of ``group``; updates ``prev`` (hysteresis).

    With ``thinking`` (the local rows that think this tick, ``sim/think.py``) only those
    rows' ``prev`` change: the others' trees do not tick, so their conditions were not
    checked (their results here, from held perception, are never read)."""
    leaf = {}
    for index in tree.steering:
        node = tree.nodes[index]
        mem = memory.get((group, node.emit_index))
        leaf[index] = steering_status(node.model, sense, group, mem)
    cond = {}
    for node in sensed:
        model = guard_condition(node.model) if node.kind != CONDITION else node.model
        result = evaluate_condition(model, sense, group, prev[node.index], node.rand_slot)
        if thinking is None:
            prev[node.index] = result
        elif sense.kernels is not None and result.dtype == np.bool_ == prev[node.index].dtype:
            sense.kernels.copy_rows(prev[node.index], result, thinking)
        else:
            prev[node.index][thinking] = result[thinking]
        cond[node.index] = result
    return TickFacts(leaf, cond)
