"""Rearranging agents: stacking groups and moving rows when agents spawn or despawn.

Agents of one group stay contiguous and groups keep the definition's order, so
a group's rows remain a slice. Every per-agent array of ``Agents`` follows the
same row map.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from itertools import chain
from operator import itemgetter
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
        [np.array([index[n] for n in p.group_names], dtype=np.int64)[p.group] for p in parts]
        or [np.zeros(0, dtype=np.int64)]
    )
    arrays = {name: np.concatenate([getattr(p, name) for p in parts]) for name in PER_AGENT}
    make: Any = Agents  # the per-agent arrays are keyword arguments by name
    return make(
        names=list(chain.from_iterable(p.names for p in parts)),
        group_names=list(group_names),
        group=group,
        slices=slices_of(group, group_names),
        **arrays,
    )


def rearrange(old: Agents, src: np.ndarray, names: list[str], fresh: Agents | None) -> Agents:
    """Agents whose row ``r`` is ``old``'s row ``src[r]``, or, where ``src[r] < 0``, the next
    row of ``fresh`` (in order); ``names`` are the new rows' names. One gather per array;
    groups must stay contiguous."""
    new = np.flatnonzero(src < 0)
    safe = np.where(src < 0, 0, src)
    index = {name: k for k, name in enumerate(old.group_names)}
    arrays = {}
    for name in (*PER_AGENT, "group"):
        out = getattr(old, name).take(safe, axis=0)
        if fresh is not None:
            added = getattr(fresh, name)
            if name == "group":
                added = np.array([index[n] for n in fresh.group_names], dtype=np.int64)[added]
            out[new] = added
        arrays[name] = out
    make: Any = Agents
    return make(
        names=names,
        group_names=list(old.group_names),
        slices=slices_of(arrays["group"], old.group_names),
        **arrays,
    )


def pick(values: list[str], rows: list[int]) -> list[str]:
    """``[values[r] for r in rows]`` at C speed."""
    if not rows:
        return []
    picked = itemgetter(*rows)(values)
    return [picked] if len(rows) == 1 else list(picked)
