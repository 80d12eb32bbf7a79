"""Status of steering leaves, vectorised over a group (shared by both engines).

A ticked steering leaf emits one request for its agent, except where its
status is FAILURE. The status of every steering leaf for every agent of the
group is computed here once per tick, before the trees are ticked:

* FAILURE where one of the leaf's targets (its ``target``, and every other
  ``Target`` field, such as interpose's ``other``) is missing: ``sense.target(...).valid``
  is False (no nearest agent in radius, nothing visible, an empty group, no
  visible neighbour, unknown agent, missing blackboard point): the leaf does
  not emit.
* SUCCESS where the primitive says it is done; it still emits that tick.
  A primitive registers that test as ``done`` beside its implementation
  (``arrive``: within ``tolerance`` of its target; ``path_following``: at
  the end of an open path).
* RUNNING everywhere else (combiners always run; their children's targets are
  handled by the steering library).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from behaviortk.format.nodes import target_fields
from behaviortk.sense.sensing import Sense, facts_at
from behaviortk.tree.status import FAILURE, RUNNING, SUCCESS

DoneCheck = Callable[[Any, Sense, str, Any], np.ndarray]
"""``fn(model, sense, group, memory) -> bool (n_group,)``: where the primitive is done."""


def steering_status(model: Any, sense: Sense, group: str, memory: Any = None) -> np.ndarray:
    """int8 status per row of ``group`` that a steering leaf returns when ticked this tick."""
    rows = sense.rows(group)
    n = rows.stop - rows.start
    status = np.full(n, RUNNING, dtype=np.int8)
    check = sense.registries.node(model.type).done
    if check is not None:
        status[np.asarray(check(model, sense, group, memory), dtype=bool)] = SUCCESS
    targets = target_fields(model)
    plain = getattr(model, "target", None)  # a plugin's target field of another annotation
    if plain is not None and not any(t is plain for t in targets):
        targets.append(plain)
    only = sense.deciding_rows(group)  # think-rate LOD: the thinkers' statuses alone
    for target in targets:
        facts = sense.target(target, group)
        if only is None:
            status[~facts.valid] = FAILURE
        else:
            status[only[~facts_at(facts, only).valid]] = FAILURE
    return status
