"""This tick's steering requests of every group, for leaves that depend on what others do.

``follow`` passes over agents that are following themselves. Whether an agent
follows this tick is known once every tree has decided: the act phase builds
one ``Requests`` from the tick's decisions before it computes any force, so
every leaf of every group reads the same answer whatever order they run in,
and both engines read the same answer because their decisions are equal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from behaviortk.tree.flat import Decision, FlatTree


@dataclass
class Requests:
    """Which rows emitted which steering leaf this tick, over all groups."""

    trees: Mapping[str, FlatTree]
    decisions: Mapping[str, Decision]
    slices: Mapping[str, slice]
    memo: dict[str, Any] = field(default_factory=dict)

    def leaves(self, tag: str) -> Iterator[tuple[str, Any, np.ndarray]]:
        """``(group, model, global rows)`` of every emitted leaf of type ``tag``.

        A combiner's children count with the rows that emitted the combiner.
        """
        for group, decision in self.decisions.items():
            tree = self.trees[group]
            start = self.slices[group].start
            for emit_index, node_index in enumerate(tree.steering):
                model = tree.nodes[node_index].model
                found = [m for m in (model, *getattr(model, "children", ())) if m.type == tag]
                if not found:
                    continue
                rows = start + np.flatnonzero(decision.emitted[:, emit_index])
                if rows.size:
                    for m in found:
                        yield group, m, rows

    def once(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` the first time ``key`` is asked for this tick, the same answer after."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]
