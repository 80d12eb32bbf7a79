"""The selected agent's debugging notes: why each condition holds, its status history, its blackboard.

Kept for ONE agent (the selection), so the rest of the run pays nothing. Each new tick
the agent's status row is diffed with the last one: changes go to a ring of the last
``HISTORY`` (tick, node path, from -> to), and each node remembers the tick its status
last changed (the tree panel shows the time in the current status beside it). The why
of every condition (``sim/why.explain_agent``) is asked once per tick shown.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.leaves.why import Why, shown
from behaviortk.sim.why import explain_agent
from behaviortk.tree.status import STATUS_NAMES

HISTORY = 200
"""Status changes kept per selected agent (the issue's "last 200")."""
SHOWN = 12
"""Of them, the latest the info tab has room for."""


@dataclass(frozen=True)
class Change:
    tick: int
    node: str  # flat node path
    was: int
    now: int

    def __str__(self) -> str:
        return f"{self.tick}: {self.node} {STATUS_NAMES[self.was]} -> {STATUS_NAMES[self.now]}"


class AgentNotes:
    """What the panels show of the selected agent, followed tick by tick."""

    def __init__(self) -> None:
        self.agent: int | None = None  # id followed
        self.tick = -1
        self.status: np.ndarray | None = None
        self.since: np.ndarray | None = None  # tick each node's status last changed
        self.history: deque[Change] = deque(maxlen=HISTORY)
        self.whys: dict[int, Why | None] = {}

    def observe(self, sim: Any, row: int, tree: Any, status: np.ndarray) -> None:
        """Take the ``status`` row of the agent in ``row`` at tick ``sim.tick``; a newly
        selected agent starts afresh."""
        tick = int(getattr(sim, "tick", 0))
        agent = int(sim.agents.ids[row])
        if agent != self.agent or self.status is None or self.status.shape != status.shape:
            self.agent, self.status = agent, status.copy()
            self.since = np.full(status.shape, tick, dtype=np.int64)
            self.history.clear()
        elif tick != self.tick:
            assert self.since is not None
            changed = np.flatnonzero(status != self.status)
            for k in changed.tolist():
                self.history.append(
                    Change(tick, tree.nodes[k].path, int(self.status[k]), int(status[k]))
                )
            self.since[changed] = tick
            self.status = status.copy()
        if tick != self.tick or agent != self.agent:
            self.whys = _whys(sim, agent)
        self.tick = tick

    def notes(self, tick: int) -> tuple[str, ...]:
        """Per node: its why (conditions) and the ticks spent in its current status."""
        if self.since is None:
            return ()
        out = []
        for k, since in enumerate(self.since.tolist()):
            why = self.whys.get(k)
            held = f"{tick - since} ticks"
            out.append(held if why is None else f"{why.text}   {held}")
        return tuple(out)


def _whys(sim: Any, agent: int) -> dict[int, Why | None]:
    """The live Simulation's explanations of agent ``agent`` (an id); none for a recording
    (its sense is not kept)."""
    if not hasattr(sim, "row_of") or not hasattr(sim, "sense"):
        return {}
    return explain_agent(sim, agent)


def history_text(notes: AgentNotes, frame: Any) -> str:
    """The info tab's status history: the latest changes first (all ``HISTORY`` are kept)."""
    if frame is None:
        return ""
    lines = [str(change) for change in reversed(notes.history)]
    return "\n\nStatus changes (tick: node from -> to)\n" + (
        "\n".join(f"  {line}" for line in lines[:SHOWN]) or "  (none yet)"
    )


def blackboard_lines(sim: Any, row: int) -> list[str]:
    """Each declared key of the agent in ``row``: value, type and age in ticks."""
    engine = getattr(sim, "engine", None)
    if engine is None or not hasattr(engine, "blackboard_view"):
        return []
    view = engine.blackboard_view(row)
    tick = int(getattr(sim, "tick", 0))
    out = []
    for key, spec in view.declared.specs.items():
        stored = view.stored_tick(key)
        age = "unset" if stored is None else f"age {tick - stored} ticks"
        out.append(f"  {key} = {shown(view.get(key))}  ({spec.type}, {age})")
    return out
