"""What the tree panel shows for one agent at one tick, from a live run or a recording.

A ``TreeFrame`` is the flat tree (``tree/flat.py``: the node numbering both
engines and traces share), one status code per node (``tree/status.py``) and the
weighted force each steering leaf asked for (NaN where it asked for none). The
live viewer builds it with ``frame_from_sim``; a replay builds it from a
recorded tick's status codes with ``frame_from_codes``. The panel
(``tree_panel.TreeView``) draws either the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.sim.agent_facts import leaf_forces
from behaviortk.tree.flat import FlatTree
from behaviortk.viewer.hud import tick_label


@dataclass(frozen=True)
class TreeFrame:
    tree: FlatTree
    status: np.ndarray  # (nodes,) int8: INVALID 0 (not ticked), RUNNING 1, SUCCESS 2, FAILURE 3
    forces: np.ndarray  # (steering leaves,  2) weighted force asked for; NaN rows: no request
    max_force: float  # the agent's limit: force arrows are drawn relative to it
    title: str = ""
    notes: tuple[str, ...] = ()  # per node: its why and time in status (viewer/agent_notes.py)


def frame_from_codes(
    tree: FlatTree,
    status: Any,
    forces: Any = None,
    *,
    max_force: float = 1.0,
    title: str = "",
) -> TreeFrame:
    """A frame from recorded data: ``status`` one code per node (flat order), ``forces``
    ``(steering leaves, 2)`` or None when the recording has none."""
    codes = np.zeros(len(tree), dtype=np.int8)
    given = np.asarray(status, dtype=np.int8).ravel()[: len(tree)]
    codes[: given.size] = given
    f = np.full((len(tree.steering), 2), np.nan)
    if forces is not None:
        f[:] = np.asarray(forces, dtype=np.float64).reshape(len(tree.steering), 2)
    return TreeFrame(tree, codes, f, float(max_force), title)


def status_row(sim: Any, row: int) -> tuple[FlatTree, np.ndarray | None] | None:
    """The tree of the agent in ``row`` and its node statuses after the last tick (None
    before any); None for an agent the game moves (no tree). Reads that one row only."""
    ag = sim.agents
    group = ag.group_names[int(ag.group[row])]
    tree = getattr(sim, "trees", {}).get(group)
    if tree is None:
        return None
    local = row - ag.slices[group].start
    decision = (getattr(sim, "decisions", None) or {}).get(group)
    status = None
    if decision is not None and local < decision.emitted.shape[0]:
        status = decision.status_of([local])[0]  # one row: the engine reads only this agent
    return tree, status


def frame_from_sim(sim: Any, row: int) -> TreeFrame | None:
    """The agent in ``row`` after the last tick (None: an agent the game moves, no tree)."""
    found = status_row(sim, row)
    if found is None:
        return None
    tree, status = found
    ag = sim.agents
    group = ag.group_names[int(ag.group[row])]
    forces = leaf_forces(sim, row, group, len(tree.steering))
    title = f"{ag.names[row]}  ({group}, {tick_label(sim)})"
    return frame_from_codes(
        tree,
        np.zeros(len(tree)) if status is None else status,
        forces,
        max_force=float(ag.max_force[row]),
        title=title,
    )
