"""Spawning and despawning in a running batch simulation, against one tick of it.

evade_or_flock scaled to N agents (``--grow prey``: the world grows to keep the
density). Two simulations of the same scene run side by side, interleaved so
both see the same machine load: a *control* that only ticks, and a *churned*
one where each round spawns K prey and despawns K random prey before its tick
(a game adding and removing shots or enemies every frame). Reported, medians
over the rounds:

- ``tick``: the control's tick;
- ``calls``: spawn K + despawn K on the churned simulation (ids, checks, events
  recorded; the rows wait for the step: ``sim/pending.py``);
- ``after``: the churned simulation's tick minus the control's (what the calls
  cost the next tick: the frame's rows made in one batch, caches rebuilt, rows
  out of cell order);
- the ratio ``calls / tick`` and ``(calls + after) / tick`` (targets, for the
  latter: at most 0.05 for K = 1, 0.25 for K = 100);
- what reading the results costs a game that does, outside the calls: ``ids``,
  ``sim.ids`` read after the step (a snapshot copied once per change of rows),
  and ``events``, ``sim.events`` read after it (the spawn and despawn events
  made into ``Event`` objects when first read).

    .venv/bin/python benchmarks/bench_spawn.py [--agents 10000,100000] [--counts 1,100]
        [--rounds 40] [--kernels numba]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from behaviortk.commands.scaling import scale_definition
from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parent.parent


def measure(agents: int, count: int, rounds: int, kernels: str) -> dict[str, float]:
    raw = json.loads((ROOT / "definitions" / "evade_or_flock.json").read_text())
    data, _ = scale_definition(raw, agents, grow="prey")
    scenario = load_text(json.dumps(data), "scaled")
    control = Simulation(scenario, engine="batch", kernels=kernels)
    churned = Simulation(scenario, engine="batch", kernels=kernels)
    for sim in (control, churned):
        sim.run(3)
    rng = np.random.default_rng(0)
    ticks, calls, after, ids, events = [], [], [], [], []
    for _ in range(rounds):
        t = time.perf_counter()
        prey = churned.ids[churned.agents.slices["prey"]]
        ids.append(time.perf_counter() - t)
        gone = rng.choice(prey, count, replace=False)
        t0 = time.perf_counter()
        control.step()
        t1 = time.perf_counter()
        churned.spawn("prey", count)
        churned.despawn(gone)
        t2 = time.perf_counter()
        churned.step()
        t3 = time.perf_counter()
        assert len(churned.events) == 2 * count
        events.append(time.perf_counter() - t3)
        ticks.append(t1 - t0)
        calls.append(t2 - t1)
        after.append((t3 - t2) - (t1 - t0))
    tick = statistics.median(ticks)
    call = statistics.median(calls)
    extra = statistics.median(after)
    return {
        "agents": churned.agents.n,
        "count": count,
        "tick_ms": tick * 1e3,
        "calls_ms": call * 1e3,
        "after_ms": extra * 1e3,
        "ratio": call / tick,
        "ratio_with_after": (call + extra) / tick,
        "ids_us": statistics.median(ids) * 1e6,
        "events_us": statistics.median(events) * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="10000,100000")
    parser.add_argument("--counts", default="1,100")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--kernels", default="numba", choices=("numba", "numpy"))
    args = parser.parse_args()
    print(f"batch engine, {args.kernels} kernels, medians of {args.rounds} interleaved rounds")
    print(f"{'agents':>8} {'K':>4} {'tick ms':>8} {'calls ms':>9} {'after ms':>9} "
          f"{'calls/tick':>10} {'(calls+after)/tick':>19} {'ids us':>7} {'events us':>9}")  # fmt: skip
    for agents in (int(a) for a in args.agents.split(",")):
        for count in (int(c) for c in args.counts.split(",")):
            r = measure(agents, count, args.rounds, args.kernels)
            print(
                f"{r['agents']:>8,} {count:>4} {r['tick_ms']:>8.2f} {r['calls_ms']:>9.3f} "
                f"{r['after_ms']:>9.3f} {r['ratio']:>10.3f} {r['ratio_with_after']:>19.3f} "
                f"{r['ids_us']:>7.1f} {r['events_us']:>9.1f}"
            )


if __name__ == "__main__":
    main()
