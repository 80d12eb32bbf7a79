"""The selected agent's debugging notes: why each condition holds, each `utility` option's
score, its status history, its blackboard.

Kept for ONE agent (the selection), so the rest of the run pays nothing: the py_trees
engine reads a node's status only when asked (issue 14), and reading every agent's row
each tick costs a fifth more per tick at 1,000 agents (``benchmarks/bench_pytrees.py
--statuses``), so an agent's history starts when it is selected and says so. Each new tick
the agent's status row is diffed with the last one (``record``: the live viewer calls it
after every step, so a fast run misses no tick between two frames): changes go to a ring
of the last ``HISTORY`` (tick, node path, from -> to), and each node remembers the tick
its status last changed (the tree panel shows the time in the current status beside it).
Shown an earlier tick of the same run (the live viewer's step back, a replay's), the
changes after it are dropped and each node's tick is found again from those kept. The why
of every condition (``sim/why.why_shown``: as the tick shown saw it) is asked once per tick
and agent shown. An attached game's view (``viewer/remote.py``) carries them in its frame
instead (``shipped``: what ``sim/agent_facts.facts`` said on the game's side), so both
windows show the same. The History tab lists the changes (``viewer/status_history.py``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.leaves.why import Why
from behaviortk.sim.agent_facts import BoardEntry, board_entries
from behaviortk.sim.why import option_scores, why_shown
from behaviortk.tree.status import STATUS_NAMES

HISTORY = 200
"""Status changes kept per selected agent (the issue's "last 200")."""


@dataclass(frozen=True)
class Change:
    tick: int  # ``sim.tick`` after the step that changed it (steps taken)
    node: str  # flat node path
    was: int
    now: int

    @property
    def step(self) -> int:
        """The step's 0-based tick: as the HUD, traces and breakpoints number it."""
        return self.tick - 1

    def __str__(self) -> str:
        return f"{self.step}: {self.node} {STATUS_NAMES[self.was]} -> {STATUS_NAMES[self.now]}"


class AgentNotes:
    """What the panels show of the selected agent, followed tick by tick."""

    def __init__(self) -> None:
        self.agent: int | None = None  # id followed
        self.tick = -1
        self.start = -1  # the tick the agent was first followed
        self.status: np.ndarray | None = None
        self.since: np.ndarray | None = None  # tick each node's status last changed
        self.history: deque[Change] = deque(maxlen=HISTORY)
        self.count = 0  # changes seen since ``start`` (the ring keeps the last HISTORY)
        self.whys: dict[int, Why | None] = {}
        self.scores: dict[int, float] = {}  # `utility` options' scores, by child node
        self._asked: tuple[int, int | None] = (-1, None)  # (tick, agent) whys were asked of

    def observe(self, sim: Any, row: int, tree: Any, status: np.ndarray) -> None:
        """``record`` the agent in ``row`` at tick ``sim.tick``, and ask its whys and scores
        the first time this tick and agent are shown."""
        self.record(sim, row, tree, status)
        if (self.tick, self.agent) != self._asked:
            assert self.agent is not None
            self.whys = _whys(sim, self.agent)
            self.scores = _scores(sim, self.agent)
            self._asked = (self.tick, self.agent)

    def record(self, sim: Any, row: int, tree: Any, status: np.ndarray) -> None:
        """Take the ``status`` row of the agent in ``row`` at tick ``sim.tick``; a newly
        selected agent starts afresh."""
        tick = int(getattr(sim, "tick", 0))
        agent = int(sim.agents.ids[row])
        if (
            agent != self.agent
            or self.status is None
            or self.status.shape != status.shape
            or tick < self.start
        ):
            self.agent, self.status, self.start = agent, status.copy(), tick
            self.since = np.full(status.shape, tick, dtype=np.int64)
            self.history.clear()
            self.count = 0
        elif tick < self.tick:
            self._rewind(tick, tree, status)
        elif tick != self.tick:
            assert self.since is not None
            changed = np.flatnonzero(status != self.status)
            for k in changed.tolist():
                self.history.append(
                    Change(tick, tree.nodes[k].path, int(self.status[k]), int(status[k]))
                )
            self.count += len(changed)
            self.since[changed] = tick
            self.status = status.copy()
        self.tick = tick

    def _rewind(self, tick: int, tree: Any, status: np.ndarray) -> None:
        """Back to ``tick`` (not before ``start``): a node whose last change came later has
        held its status since its last change kept, else since the oldest tick known."""
        assert self.since is not None
        full = len(self.history) == HISTORY  # older changes may have been dropped
        known = self.history[0].tick if full else self.start
        kept = [c for c in self.history if c.tick <= tick]
        self.count -= len(self.history) - len(kept)
        self.history = deque(kept, maxlen=HISTORY)
        later = self.since > tick
        index = {node.path: k for k, node in enumerate(tree.nodes)}
        last = np.full(status.shape, known, dtype=np.int64)
        for change in kept:  # in tick order: the latest wins
            last[index[change.node]] = change.tick
        self.since = np.where(later, last, self.since)
        self.status = status.copy()

    def notes(self, tick: int) -> tuple[str, ...]:
        """Per node: its utility score (a `utility` option), its why (conditions) and the ticks
        spent in its current status."""
        if self.since is None:
            return ()
        out = []
        for k, since in enumerate(self.since.tolist()):
            why, score = self.whys.get(k), self.scores.get(k)
            parts = [] if score is None else [f"score {score:.2f}"]
            parts += [] if why is None else [why.text]
            out.append("   ".join([*parts, f"{tick - since} ticks"]))
        return tuple(out)


def shipped(sim: Any, agent: int) -> dict[str, Any] | None:
    """The facts an attached game's frame carried of agent ``agent`` (``{}`` when it carried
    none: a replay, an agent not selected yet); None for a live Simulation (ask it)."""
    carried = getattr(sim, "facts", None)
    return None if carried is None else carried.get(agent) or {}


def _whys(sim: Any, agent: int) -> dict[int, Why | None]:
    """The live Simulation's explanations of agent ``agent`` (an id), or those a frame carried;
    none for a recording (its sense is not kept)."""
    carried = shipped(sim, agent)
    if carried is not None:
        return {k: Why(*w) for k, w in carried.get("whys", {}).items()}
    if not hasattr(sim, "row_of") or not hasattr(sim, "why_watch"):
        return {}
    return why_shown(sim, agent)


def _scores(sim: Any, agent: int) -> dict[int, float]:
    """The live Simulation's `utility` scores of agent ``agent`` (an id), or those a frame
    carried; none for a recording."""
    carried = shipped(sim, agent)
    if carried is not None:
        return dict(carried.get("scores", {}))
    if not hasattr(sim, "row_of") or not hasattr(sim, "engine"):
        return {}
    return option_scores(sim, agent)


def since_text(notes: AgentNotes) -> str:
    """Since when the history runs: the tick the agent was selected (its 0-based tick, as
    the HUD says it), or the run's start."""
    return "since selected at " + ("start" if notes.start <= 0 else f"tick {notes.start - 1}")


def history_text(notes: AgentNotes, frame: Any) -> str:
    """The info tab's pointer to the status history: how many changes, since when, the
    latest; the History tab lists them all (``status_history.py``)."""
    if frame is None:
        return ""
    latest = f"\n  latest {notes.history[-1]}" if notes.history else ""
    return (
        f"\n\nStatus history: {notes.count} changes {since_text(notes)}{latest}"
        f"\n  (the last {HISTORY}: the History tab, or PgUp / PgDn)"
    )


def blackboard_lines(sim: Any, row: int) -> list[str]:
    """Each declared key of the agent in ``row``: value, type and age in ticks."""
    if getattr(sim, "facts", None) is None:
        entries = board_entries(sim, row)
    else:
        carried = shipped(sim, int(sim.agents.ids[row])) or {}  # a trace: none
        entries = [BoardEntry(*e) for e in carried.get("board", [])]
    tick = int(getattr(sim, "tick", 0))
    out = []
    for e in entries:
        age = "unset" if e.stored is None else f"age {tick - e.stored} ticks"
        out.append(f"  {e.key} = {e.value}  ({e.type}, {age})")
    return out
