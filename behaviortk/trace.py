"""Traces: what a run did, as JSON Lines (one JSON object per line).

Line 1, the header::

    {"scenario": str, "seed": int, "dt": float, "engine": str,
     "world": {"width": w, "height": h, "edges": "wrap"|"bounce"|"contain"}}

Then one line per recorded tick::

    {"tick": t, "time": s, "agents": [{"id", "name", "group", "pos": [x, y],
     "vel": [vx, vy], "active": [names of the steering leaves whose request gave a force]}]}

``tick`` is the 0-based index of the step just taken, ``pos``/``vel`` the state
after that step's integration and ``time`` the simulated time of that state,
``(tick + 1) * dt``. With ``every = K`` the ticks recorded are 0, K, 2K, ...
Agents appear in row order (groups in file order). Floats are written with
Python's ``repr`` (shortest round-trip), keys in a fixed order and no spaces,
so the same run gives the same bytes.

The last line says how the run ended (``finish`` / ``interrupt`` write it)::

    {"end": "complete", "ticks": n, "overlap": {...}}
    {"end": "interrupted", "tick": t, "reason": str, "overlap": {...}}

``ticks`` is the number of ticks run; ``tick`` the 0-based index of the tick
that did not complete (= the number that did) and ``reason`` why: ``"interrupted
(SIGINT)"`` for ^C, else the error's ``Type: message``. ``overlap`` is
``{"ticks", "last", "max", "mean"}``: the fraction of agents closer to another
agent than the sum of their radii (``world/overlap.py``), measured after every
tick the writer saw (also those ``every`` leaves out), at the last one, the
largest and the mean. A trace without an end
line was cut short without a chance to say so (a killed process, or a writer
never finished). ``read`` keeps the end line out of the records and exposes it
as ``records.end``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from behaviortk.sim import Simulation
from behaviortk.world.overlap import OverlapLog

_dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False, ensure_ascii=False).encode


def header(sim: Simulation) -> dict[str, Any]:
    w = sim.world
    return {
        "scenario": sim.name,
        "seed": int(sim.seed),
        "dt": float(sim.dt),
        "engine": str(sim.engine.name),
        "world": {"width": float(w.width), "height": float(w.height), "edges": str(w.edges)},
    }


def record(sim: Simulation) -> dict[str, Any]:
    """The line for the step just taken (``sim.tick - 1``)."""
    ag = sim.agents
    pos = ag.pos.tolist()
    vel = ag.vel.tolist()
    active = sim.active_table()
    group_of = [ag.group_names[g] for g in ag.group.tolist()]
    return {
        "tick": sim.tick - 1,
        "time": float(sim.time),
        "agents": [
            {"id": i, "name": n, "group": g, "pos": p, "vel": v, "active": a}
            for i, n, g, p, v, a in zip(
                ag.ids.tolist(), ag.names, group_of, pos, vel, active, strict=True
            )
        ],
    }


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
        self._write(header(sim))

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

    def finish(self, sim: Simulation) -> None:
        """End a complete run: ``{"end": "complete", "ticks": sim.tick}``."""
        end = {"end": "complete", "ticks": int(sim.tick), "overlap": self.overlap.summary()}
        self._write(end)
        self.end = end

    def interrupt(self, sim: Simulation, reason: BaseException | str) -> None:
        """End a run cut short by ``reason`` (an exception, or words): the last line says so."""
        if self._writing:  # cut inside a write: the end line goes on a line of its own
            self.out.write("\n")
            self._writing = False
        end = {
            "end": "interrupted",
            "tick": int(sim.tick),
            "reason": reason_of(reason),
            "overlap": self.overlap.summary(),
        }
        self._write(end)
        self.end = end


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
