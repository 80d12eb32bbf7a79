"""Traces: what a run did, as JSON Lines (one JSON object per line).

Line 1, the header::

    {"scenario": str, "seed": int, "dt": float, "engine": str,
     "world": {"width": w, "height": h, "edges": "wrap"|"bounce"|"contain"}}

Then one line per recorded tick::

    {"tick": t, "time": s, "agents": [{"id", "group", "pos": [x, y],
     "vel": [vx, vy], "active": [names of the steering leaves that emitted]}]}

``tick`` is the 0-based index of the step just taken, ``pos``/``vel`` the state
after that step's integration and ``time`` the simulated time of that state,
``(tick + 1) * dt``. With ``every = K`` the ticks recorded are 0, K, 2K, ...
Agents appear in row order (groups in file order). Floats are written with
Python's ``repr`` (shortest round-trip), keys in a fixed order and no spaces,
so the same run gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

from behaviortk.sim import Simulation

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
            {"id": i, "group": g, "pos": p, "vel": v, "active": a}
            for i, g, p, v, a in zip(ag.ids, group_of, pos, vel, active, strict=True)
        ],
    }


class TraceWriter:
    """Write a trace while a simulation runs: pass ``writer.on_tick`` to ``Simulation.run``."""

    def __init__(self, out: IO[str], sim: Simulation, every: int = 1) -> None:
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        self.out = out
        self.every = int(every)
        self.lines = 0
        self._write(header(sim))

    def _write(self, obj: dict[str, Any]) -> None:
        self.out.write(_dumps(obj))
        self.out.write("\n")
        self.lines += 1

    def on_tick(self, sim: Simulation) -> None:
        if (sim.tick - 1) % self.every == 0:
            self._write(record(sim))


def read(lines: IO[str] | list[str]) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """``(header, records)`` of a trace, records parsed lazily line by line."""
    it = iter(lines)
    head = json.loads(next(it))
    return head, (json.loads(line) for line in it if line.strip())
