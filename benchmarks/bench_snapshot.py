"""Saving and restoring a running batch simulation, against one tick of it (issue 26).

A shipped scene scaled to N agents (``--grow``: the world grows to keep the density),
batch engine, run a few ticks (waits running, steering memory made), then rounds of, in
one process and interleaved so each sees the same machine load:

- ``tick``: one ``step()``;
- ``save``: ``sim.save(path)`` (the snapshot written to a temporary folder);
- ``load``: ``Simulation.restore(path)`` (read, checked, definition validated, the
  Simulation and its engine built, state imported; the compiled kernels are loaded once
  per process, by the first Simulation, as for any new Simulation).

Reported: medians over the rounds, the ratios ``save / tick`` and ``load / tick``
(target: under 20 each at 10,000 agents) and the snapshot's bytes per agent.

    .venv/bin/python benchmarks/bench_snapshot.py [--agents 10000] [--rounds 15]
        [--kernels numba] [--scenes evade_or_flock,evacuation]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from behaviortk.commands.scaling import largest_group, scale_definition
from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parent.parent


def measure(scene: str, agents: int, rounds: int, kernels: str) -> dict[str, float]:
    raw = json.loads((ROOT / "definitions" / f"{scene}.json").read_text())
    data, _ = scale_definition(raw, agents, grow=largest_group(raw))
    scenario = load_text(json.dumps(data), scene)
    sim = Simulation(scenario, engine="batch", kernels=kernels)
    sim.run(20)
    ticks, saves, loads = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.btks"
        for _ in range(rounds):
            t0 = time.perf_counter()
            sim.step()
            t1 = time.perf_counter()
            size = sim.save(path)
            t2 = time.perf_counter()
            restored = Simulation.restore(path, kernels=kernels)
            t3 = time.perf_counter()
            assert restored.tick == sim.tick and restored.agents.n == sim.agents.n
            del restored
            ticks.append(t1 - t0)
            saves.append(t2 - t1)
            loads.append(t3 - t2)
    tick, save, load = (statistics.median(v) for v in (ticks, saves, loads))
    return {
        "agents": sim.agents.n,
        "kernels": sim.kernel_name,
        "tick_ms": 1e3 * tick,
        "save_ms": 1e3 * save,
        "load_ms": 1e3 * load,
        "save_ticks": save / tick,
        "load_ticks": load / tick,
        "bytes_per_agent": size / sim.agents.n,
        "bytes": size,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="10000", help="comma-separated agent counts")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--kernels", default="auto", choices=["auto", "numba", "numpy"])
    parser.add_argument("--scenes", default="evade_or_flock,evacuation")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| scene | agents | kernels | tick ms | save ms | load ms | save / tick | load / tick "
          "| bytes / agent |")  # fmt: skip
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for scene in args.scenes.split(","):
        for agents in (int(a) for a in args.agents.split(",")):
            r = measure(scene, agents, args.rounds, args.kernels)
            print(
                f"| {scene} | {r['agents']:,} | {r['kernels']} | {r['tick_ms']:.2f} "
                f"| {r['save_ms']:.1f} | {r['load_ms']:.1f} | **{r['save_ticks']:.1f}** "
                f"| **{r['load_ticks']:.1f}** | {r['bytes_per_agent']:.0f} |",
                flush=True,
            )
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
