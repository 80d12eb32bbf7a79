"""Step back in the live viewer: a bounded ring of past ticks, and replaying them exactly.

Keyframes plus an input log, as a deterministic game's replay does: every ``every`` ticks
the simulation is captured in memory (``sim/snapshot_memory.Capture``: all the state a
continuation needs), and before every step the viewer's inputs to it are logged (the
pointer target and the obstacles' positions: the mouse moves both). To show tick ``t``
the latest keyframe before ``t`` is restored and stepped to ``t`` with the logged inputs,
so each tick shown was stepped (its debug geometry and events are there) and stepping
forward again gives the same bits as the run did: the snapshot's contract (tree statuses,
blackboards, wander and path memory, think-rate LOD; randomness is a hash of seed, id and
tick). Stepping forward while behind the head replays the logged inputs; at the head a
tick is simulated anew.

Edits change the future: tuning a value or dragging an obstacle while stepped back drops
the ticks after the one shown (``truncate``), and a tune is captured as a keyframe of its
own (the scenario and agents it changed) that replays pass through. A reload or a restart
starts a new ring.

Memory: one keyframe is the snapshot's arrays, 0.23 to 0.31 KB per agent in the shipped
scenes (``benchmarks/results_history.md``), the input log a few bytes per tick. The ring
keeps ``seconds / dt`` ticks (default ``SECONDS``: 600 ticks at dt 1/60, 61 keyframes, 14
to 19 MB at 1,000 agents); a step back restores a keyframe and re-simulates at most
``every`` ticks (py_trees rebuilds its trees on a restore: the dearer engine to step back).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.sim.snapshot_memory import Capture

SECONDS = 10.0
"""Simulated seconds the ring keeps by default (``behaviortk run --history-seconds``)."""
EVERY = 10
"""Ticks between keyframes: a step back re-simulates at most this many."""


@dataclass(frozen=True)
class Inputs:
    """What the viewer's user set before a step: the pointer target and obstacle centres."""

    pointer: np.ndarray | None
    obstacles: np.ndarray

    @classmethod
    def of(cls, sim: Any) -> Inputs:
        pointer = None if sim.pointer is None else np.array(sim.pointer, dtype=np.float64)
        return cls(pointer, sim.world.obstacle_pos.copy())

    def apply(self, sim: Any) -> None:
        sim.pointer = None if self.pointer is None else self.pointer.copy()
        sim.world.obstacle_pos[...] = self.obstacles


class History:
    """The ticks of one live Simulation the viewer can go back to (see the module docstring).

    ``head``: the latest tick simulated; the Simulation shown is at ``head - back``."""

    def __init__(self, sim: Any, seconds: float = SECONDS, every: int = EVERY) -> None:
        self.capacity = max(1, math.ceil(seconds / float(sim.dt) - 1e-9))
        self.every = max(1, int(every))
        self.keyframes: dict[int, Capture] = {}
        self.inputs: dict[int, Inputs] = {}  # tick t -> the inputs of the step from t
        self.edits: set[int] = set()  # ticks whose keyframe is a tune's, taken after it
        self.head = int(sim.tick)
        self.back = 0
        self._keep(sim)

    # ------------------------------------------------------------ the ring
    @property
    def oldest(self) -> int:
        """The earliest tick that can be shown: one after the oldest keyframe, at most
        ``capacity`` behind the head."""
        return max(min(self.keyframes) + 1, self.head - self.capacity)

    @property
    def span(self) -> int:
        """Ticks behind the head that can be shown now."""
        return max(0, self.head - self.oldest)

    @property
    def nbytes(self) -> int:
        """Bytes the keyframes and the input log hold."""
        logged = sum(i.obstacles.nbytes + 16 for i in self.inputs.values())
        return sum(k.nbytes for k in self.keyframes.values()) + logged

    def _keep(self, sim: Any) -> None:
        self.keyframes[int(sim.tick)] = Capture(sim)

    def _prune(self) -> None:
        """Drop what only ticks more than ``capacity`` behind the head need."""
        floor = self.head - self.capacity
        older = [t for t in self.keyframes if t < floor]
        if older:
            keep = max(older)  # the keyframe tick ``floor`` is replayed from
            for t in older:
                if t != keep:
                    del self.keyframes[t]
            for t in [t for t in self.inputs if t < keep]:
                del self.inputs[t]

    # ----------------------------------------------------------- stepping
    def before_step(self, sim: Any) -> Any:
        """Ready ``sim`` for its next step; returns the Simulation to step (a tune's
        keyframe when one was captured at this tick and ``sim`` is a replay)."""
        tick = int(sim.tick)
        if self.back > 0:
            if tick in self.edits:
                sim = self.keyframes[tick].restore(debug=True)
            self.inputs[tick].apply(sim)
            return sim
        self.inputs[tick] = Inputs.of(sim)
        if tick % self.every == 0 and tick not in self.keyframes:
            self._keep(sim)
        return sim

    def after_step(self, sim: Any) -> None:
        """Note the step ``sim`` took (a replay moves toward the head, else the head moves)."""
        if self.back > 0:
            self.back -= 1
            return
        self.head = int(sim.tick)
        self._prune()

    def step_back(self, sim: Any, agent: int | None = None) -> Any:
        """The Simulation one tick before ``sim`` (restored, then replayed from the keyframe
        before that tick), or None at the start of the ring; ``agent`` (an id, the one
        selected) is asked why of on the tick it shows (``sim/why.py``)."""
        target = int(sim.tick) - 1
        if target < self.oldest:
            return None
        start = max(t for t in self.keyframes if t < target)  # a tune's, if one is later
        past = self.keyframes[start].restore(debug=True)
        for tick in range(start, target):
            self.inputs[tick].apply(past)
            if agent is not None and tick == target - 1:
                past.why_watch.asked.add(agent)
            past.step()
        self.back = self.head - target
        return past

    def again(self, sim: Any, agent: int) -> Any:
        """``sim``'s tick stepped once more from the ring with agent ``agent`` (an id) asked
        why of, so the why shown is the tick's own (``sim/why.py``: an agent selected after
        its tick ran); the same bits as ``sim``. None when the tick before is not kept."""
        target = int(sim.tick) - 1
        if target < self.oldest or target + 1 in self.edits:  # a tune since: not that tick
            return None
        start = max(t for t in self.keyframes if t <= target)
        again = self.keyframes[start].restore(debug=True)
        for tick in range(start, target + 1):
            self.inputs[tick].apply(again)
            if tick == target:
                again.why_watch.asked.add(agent)
            again.step()
        Inputs.of(sim).apply(again)  # obstacles dragged and the pointer set since the tick
        return again

    # -------------------------------------------------------------- edits
    def truncate(self, sim: Any) -> None:
        """The run goes on from ``sim`` (the tick shown): the ticks after it are dropped."""
        tick = int(sim.tick)
        for t in [t for t in self.keyframes if t > tick]:
            del self.keyframes[t]
            self.edits.discard(t)
        for t in [t for t in self.inputs if t >= tick]:
            del self.inputs[t]
        self.head, self.back = tick, 0

    def edited(self, sim: Any) -> None:
        """``sim``'s definition was changed (a tune) at the tick shown: the future goes, and
        replays restore this state when they reach its tick."""
        self.truncate(sim)
        self._keep(sim)
        self.edits.add(int(sim.tick))
