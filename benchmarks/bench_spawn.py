"""Spawning and despawning 100 agents in a 10,000-agent batch simulation, against one tick.

evade_or_flock scaled to 10,000 agents (world grown to keep the density); each
round times one tick, then ``spawn("prey", 100)`` plus ``despawn`` of 100
random prey, interleaved so both see the same machine load. The target is a
ratio below 0.5 (spawn + despawn cost less than half a tick).

    .venv/bin/python benchmarks/bench_spawn.py [--agents N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from behaviortk.commands.scaling import largest_group, scale_definition
from behaviortk.format.loader import load_text
from behaviortk.sim import Simulation

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    raw = json.loads((ROOT / "definitions" / "evade_or_flock.json").read_text())
    data, _ = scale_definition(raw, args.agents, grow=largest_group(raw))
    sim = Simulation(load_text(json.dumps(data), "scaled"), engine="batch")
    sim.run(5)
    rng = np.random.default_rng(0)
    ticks, changes = [], []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        sim.step()
        t1 = time.perf_counter()
        sim.spawn("prey", 100)
        prey = sim.ids[sim.agents.slices["prey"]]
        sim.despawn(rng.choice(prey, 100, replace=False).tolist())
        t2 = time.perf_counter()
        ticks.append(t1 - t0)
        changes.append(t2 - t1)
    tick, change = statistics.median(ticks) * 1e3, statistics.median(changes) * 1e3
    print(f"agents {sim.agents.n:,}  batch engine, median of {args.rounds} interleaved rounds")
    print(f"one tick:                          {tick:8.2f} ms")
    print(f"spawn 100 + despawn 100:           {change:8.2f} ms")
    print(f"ratio (target < 0.5):              {change / tick:8.3f}")


if __name__ == "__main__":
    main()
