"""What a viewer shows of ONE selected agent beyond its tick's state, asked of a live Simulation.

The why of each condition (``sim/why.py``), the blackboard's declared keys with value,
type and the tick each was stored on, the steering leaves that asked for a force (a
trace keeps only those whose force counted) and the weighted force each asked for. The local viewer reads them from its Simulation (``viewer/agent_notes.py``,
``viewer/tree_frame.py``); ``sim.serve`` sends the same facts of the agents a viewer
selected (``facts``: plain values msgpack carries), so an attached window shows what
the local one does. Asked for the selected agents only: the rest of the run pays nothing.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.errors import SimulationError
from behaviortk.leaves.why import shown
from behaviortk.sim.why import option_scores, why_shown


@dataclass(frozen=True)
class BoardEntry:
    """One declared blackboard key of one agent: its value as the definition writes it."""

    key: str
    value: str
    type: str
    stored: int | None  # the tick the value was stored on; None while unset


def board_entries(sim: Any, row: int) -> list[BoardEntry]:
    """Every declared key of the agent in ``row`` (none when the engine keeps no boards)."""
    engine = getattr(sim, "engine", None)
    if engine is None or not hasattr(engine, "blackboard_view"):
        return []
    view = engine.blackboard_view(row)
    return [
        BoardEntry(key, shown(view.get(key)), str(spec.type), view.stored_tick(key))
        for key, spec in view.declared.specs.items()
    ]


def leaf_forces(sim: Any, row: int, group: str, leaves: int) -> np.ndarray:
    """``(leaves, 2)``: the weighted force each steering leaf of the agent in ``row`` asked
    for in the last act phase (``sim.contributions``); NaN where it asked for none."""
    forces = np.full((leaves, 2), np.nan)
    for k, (rows, f) in (getattr(sim, "contributions", None) or {}).get(group, {}).items():
        hit = np.flatnonzero(np.asarray(rows) == row)
        if hit.size and k < leaves:
            forces[k] = np.asarray(f)[hit[0]]
    return forces


def asked(sim: Any, row: int, group: str, leaves: int) -> np.ndarray:
    """``(leaves,)`` bool: the steering leaves of the agent in ``row`` that emitted a request
    in the last decide (none before the first)."""
    decision = (getattr(sim, "decisions", None) or {}).get(group)
    if decision is None:
        return np.zeros(leaves, dtype=bool)
    return np.array(decision.emitted[row - sim.agents.slices[group].start], dtype=bool)


def facts(sim: Any, agent: int) -> dict[str, Any] | None:
    """The selected agent ``agent`` (an id) as plain values: ``whys`` ``{node index: [text,
    holds, reason]}``, ``scores`` ``{node index: score}`` of its `utility` options,
    ``board`` ``[[key, value, type, stored tick]]``, ``asked`` and ``forces`` per steering
    leaf; None for an agent despawned since, or one the game moves (no tree)."""
    with contextlib.suppress(SimulationError):
        row = sim.row_of(agent)
        group = sim.agents.group_names[int(sim.agents.group[row])]
        tree = sim.trees.get(group)
        if tree is None:
            return None
        whys = why_shown(sim, agent)
        return {
            "whys": {k: [w.text, w.holds, w.reason] for k, w in whys.items() if w is not None},
            "scores": option_scores(sim, agent),
            "board": [[e.key, e.value, e.type, e.stored] for e in board_entries(sim, row)],
            "asked": asked(sim, row, group, len(tree.steering)),
            "forces": leaf_forces(sim, row, group, len(tree.steering)),
        }
    return None
