"""Rearranging agents: stacking groups and moving rows when agents spawn or despawn.

Agents of one group stay contiguous and groups keep the definition's order, so
a group's rows remain a slice. Every per-agent array of ``Agents`` follows the
same row map.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, replace
from typing import Any

import numpy as np

from behaviortk.world.state import Agents

PER_AGENT = tuple(
    f.name
    for f in fields(Agents)
    if f.name not in ("names", "group_names", "group", "slices", "smoother")
)
"""Fields of ``Agents`` that are arrays with one row per agent."""


def slices_of(group: np.ndarray, group_names: Sequence[str]) -> dict[str, slice]:
    """Each group's contiguous rows (an empty slice for a group without agents)."""
    counts = (
        np.bincount(group, minlength=len(group_names))
        if group.size
        else np.zeros(len(group_names), dtype=np.int64)
    )
    starts = np.concatenate([[0], np.cumsum(counts)])
    return {name: slice(int(starts[k]), int(starts[k + 1])) for k, name in enumerate(group_names)}


def stack(parts: Sequence[Agents], group_names: Sequence[str]) -> Agents:
    """One ``Agents`` of several, in order; each part's group must be one of ``group_names``."""
    index = {name: k for k, name in enumerate(group_names)}
    group = np.concatenate(
        [np.array([index[p.group_names[g]] for g in p.group], dtype=np.int64) for p in parts]
        or [np.zeros(0, dtype=np.int64)]
    )
    arrays = {name: np.concatenate([getattr(p, name) for p in parts]) for name in PER_AGENT}
    make: Any = Agents  # the per-agent arrays are keyword arguments by name
    return make(
        names=[n for p in parts for n in p.names],
        group_names=list(group_names),
        group=group,
        slices=slices_of(group, group_names),
        **arrays,
    )


def take(agents: Agents, rows: np.ndarray) -> Agents:
    """The agents at ``rows`` (a group's rows must stay contiguous and in group order)."""
    rows = np.asarray(rows, dtype=np.int64)
    arrays = {name: getattr(agents, name)[rows] for name in PER_AGENT}
    group = agents.group[rows]
    return replace(
        agents,
        names=[agents.names[r] for r in rows.tolist()],
        group=group,
        slices=slices_of(group, agents.group_names),
        smoother=None,
        **arrays,
    )
