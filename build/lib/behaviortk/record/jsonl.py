"""Traces: what a run did, as JSON Lines (one JSON object per line).

Line 1, the header::

    {"format": "behaviortk-trace", "version": 2, "scenario": str, "seed": int,
     "dt": float, "engine": str, "every": K,
     "world": {"width": w, "height": h, "edges": "wrap"|"bounce"|"contain"},
     "statuses": ["INVALID", "RUNNING", "SUCCESS", "FAILURE"],
     "trees": {group: [node path, ...]}, "definition": {...}}

``statuses`` names the status codes (index = code, ``tree/status.py``);
``trees`` lists each tree-driven group's nodes in flat-tree order (DFS
pre-order of the expanded tree, ``tree/flat.py``), as paths such as
``"selector/sequence[1]/evade"``; ``definition`` is the definition file as
parsed (key order kept), so a trace is self-contained: loading it again gives
the same flat trees (``behaviortk.record.reader`` checks it before a replay).

Then one line per recorded tick::

    {"tick": t, "time": s, "agents": [{"id", "name", "group", "pos": [x, y],
     "vel": [vx, vy], "active": [names of the steering leaves whose request gave a force],
     "status": "2130..."}]}

``status`` holds one digit per node of the agent's tree, in the order of
``trees[group]``: the node's status code after that tick (``""`` for an agent
of an external group, which has no tree). When some group does not think every
tick (``think_every`` > 1 or an ``lod``: ``sim/think.py``) each agent also has
``"thought": true|false``, last: whether it ticked its tree in that step (the
others kept their last decision; an external agent never thinks); without them
the key is left out and the line is as it always was. ``tick`` is the 0-based index of the
step just taken, ``pos``/``vel`` the state after that step's integration and
``time`` the simulated time of that state, ``(tick + 1) * dt``. With ``every =
K`` the ticks recorded are 0, K, 2K, ... Agents appear in row order (groups in
file order). Floats are written with Python's ``repr`` (shortest round-trip),
keys in a fixed order and no spaces, so the same run gives the same bytes.

The last line says how the run ended (``finish`` / ``interrupt`` write it)::

    {"end": "complete", "ticks": n, "overlap": {...}}
    {"end": "interrupted", "tick": t, "reason": str, "overlap": {...}}
    {"end": "interrupted", "tick": t, "reason": str, "breakpoint": spec, "overlap": {...}}

``ticks`` is the number of ticks run; ``tick`` the 0-based index of the tick
that did not complete (= the number that did) and ``reason`` why: ``"interrupted
(SIGINT)"`` for ^C, else the error's ``Type: message``. A run stopped by a breakpoint
(``run --break``) ran its last tick in full: ``reason`` says what hit (``"breakpoint:
guard/decide[2]/chase[0] became RUNNING for agent 0 at tick 106"``) and ``breakpoint``
is the spec as ``--break`` writes it. ``overlap`` is
``{"ticks", "last", "max", "mean"}``: the fraction of agents closer to another
agent than the sum of their radii (``world/overlap.py``), measured after every
tick the writer saw (also those ``every`` leaves out), at the last one, the
largest and the mean. A trace without an end
line was cut short without a chance to say so (a killed process, or a writer
never finished). ``read`` keeps the end line out of the records and exposes it
as ``records.end``.

``parquet.py`` writes the same run as Parquet columns (``--trace x.parquet``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from behaviortk.record.tick_state import TickState
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.status import STATUS_NAMES
from behaviortk.world.overlap import OverlapLog

FORMAT = "behaviortk-trace"
VERSION = 2
"""Trace format version: 2 added node statuses, ``trees`` and the definition (JSONL and
Parquet share it). Version 1 (no ``format``/``version`` keys) cannot be replayed."""

_dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False, ensure_ascii=False).encode


def tree_paths(sim: Simulation) -> dict[str, list[str]]:
    """Each tree-driven group's node paths in flat-tree order (the order of status codes)."""
    return {group: [node.path for node in tree.nodes] for group, tree in sim.trees.items()}


def header(sim: Simulation, every: int = 1) -> dict[str, Any]:
    """The header both trace formats record (JSONL line 1; Parquet metadata)."""
    w = sim.world
    return {
        "format": FORMAT,
        "version": VERSION,
        "scenario": sim.name,
        "seed": int(sim.seed),
        "dt": float(sim.dt),
        "engine": str(sim.engine.name),
        "every": int(every),
        "world": {"width": float(w.width), "height": float(w.height), "edges": str(w.edges)},
        "statuses": list(STATUS_NAMES),
        "trees": tree_paths(sim),
        "definition": sim.scenario.raw,
    }


def record(sim: Simulation) -> dict[str, Any]:
    """The line for the step just taken (``sim.tick - 1``)."""
    state = TickState.of(sim)
    group_of = [state.group_names[g] for g in state.group.tolist()]
    agents = [
        {"id": i, "name": n, "group": g, "pos": p, "vel": v, "active": a, "status": c}
        for i, n, g, p, v, a, c in zip(
            state.ids.tolist(),
            sim.agents.names,
            group_of,
            state.pos.tolist(),
            state.vel.tolist(),
            state.active_lists(),
            state.status_strings(),
            strict=True,
        )
    ]
    if state.thought is not None:
        for agent, thought in zip(agents, state.thought.tolist(), strict=True):
            agent["thought"] = thought
    return {"tick": state.tick, "time": state.time, "agents": agents}


class TraceWriter:
    """Write a trace while a simulation runs: pass ``writer.on_tick`` to ``Simulation.run``.

    End it with ``finish(sim)`` after the last tick, or ``interrupt(sim, exc)`` when
    the run was cut short, so the file's last line says which.
    """

    def __init__(self, out: IO[str], sim: Simulation, every: int = 1) -> None:
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        self.out = out
        self.every = int(every)
        self.lines = 0
        self.end: dict[str, Any] | None = None
        self.write_error: OSError | None = None
        """The ``OSError`` a write raised (a full disk...): the trace cannot be ended."""
        self._writing = False
        self.overlap = OverlapLog()
        """The overlap figure of every tick seen so far (for the end line)."""
        self._write(header(sim, self.every))

    def _write(self, obj: dict[str, Any]) -> None:
        if self.end is not None:
            raise ValueError(f"the trace has ended ({self.end['end']})")
        self._writing = True
        try:
            self.out.write(_dumps(obj) + "\n")
        except OSError as exc:
            self.write_error = exc
            raise
        self._writing = False
        self.lines += 1

    def on_tick(self, sim: Simulation) -> None:
        if self.end is None:
            self.overlap.measure(sim.world, sim.agents)
        if (sim.tick - 1) % self.every == 0:
            self._write(record(sim))

    @property
    def written(self) -> str:
        """What was written so far, for the run's summary: ``"5 lines"``."""
        return f"{self.lines} lines"

    def finish(self, sim: Simulation) -> None:
        """End a complete run: ``{"end": "complete", "ticks": sim.tick}``."""
        end = {"end": "complete", "ticks": int(sim.tick), "overlap": self.overlap.summary()}
        self._write(end)
        self.end = end

    def interrupt(
        self, sim: Simulation, reason: BaseException | str, breakpoint: str | None = None
    ) -> None:
        """End a run cut short by ``reason`` (an exception, or words): the last line says so;
        ``breakpoint``: the spec of the breakpoint that stopped it."""
        if self._writing:  # cut inside a write: the end line goes on a line of its own
            self.out.write("\n")
            self._writing = False
        end = interrupted(sim, reason, self.overlap, breakpoint)
        self._write(end)
        self.end = end


def interrupted(
    sim: Simulation, reason: BaseException | str, overlap: OverlapLog, breakpoint: str | None
) -> dict[str, Any]:
    """The end record of a run cut short (both formats write it)."""
    end: dict[str, Any] = {"end": "interrupted", "tick": int(sim.tick), "reason": reason_of(reason)}
    if breakpoint is not None:
        end["breakpoint"] = breakpoint
    end["overlap"] = overlap.summary()
    return end


def reason_of(reason: BaseException | str) -> str:
    """One line for an end record: ``interrupted (SIGINT)`` for ^C, else ``Type: message``."""
    if isinstance(reason, str):
        text = reason
    elif isinstance(reason, KeyboardInterrupt):
        text = "interrupted (SIGINT)"
    else:
        text = f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__
    return (text.splitlines() or [""])[0]


class Records(Iterator[dict[str, Any]]):
    """A trace's tick records, parsed lazily; ``end`` holds its end line once reached.

    ``end`` stays None until the iteration reaches the end line, and for a trace
    that has none (cut short, or written without ``finish``/``interrupt``).
    """

    def __init__(self, lines: Iterator[str]) -> None:
        self._lines = lines
        self.end: dict[str, Any] | None = None

    def __next__(self) -> dict[str, Any]:
        for line in self._lines:
            if not line.strip():
                continue
            obj: dict[str, Any] = json.loads(line)
            if "end" in obj:
                self.end = obj
                continue
            return obj
        raise StopIteration


def read(lines: Iterable[str]) -> tuple[dict[str, Any], Records]:
    """``(header, records)`` of a trace (an open file or lines), records parsed lazily."""
    it = iter(lines)
    head = json.loads(next(it))
    return head, Records(it)
