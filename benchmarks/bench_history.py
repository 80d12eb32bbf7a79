"""The live viewer's step-back ring at 1,000 agents: its memory, and its cost against a tick.

A shipped scene scaled to N agents (every group in proportion, the world grown to keep the
density), run by the viewer's ring (``viewer/history.History``, default 10 simulated
seconds, a keyframe every 10 ticks) for ``--warm`` ticks, then rounds of, in one process and
interleaved so each sees the same machine load:

- ``tick``: one ``step()`` at the head, as the viewer takes it (inputs logged; every 10th
  tick a keyframe captured: its cost is spread over the ten);
- ``capture``: one ``Capture(sim)`` (a keyframe);
- ``back``: one ``,`` (the keyframe before restored, stepped to the tick before: at most 10
  ticks) and the ``.`` back to the head (one tick replayed).

Reported: medians, the ratios ``capture / tick`` and ``back / tick``, bytes per keyframe
(and per agent), and the ring's bytes once full: the memory the default 10 s costs.

    .venv/bin/python benchmarks/bench_history.py [--agents 1000] [--rounds 9]
        [--engines batch,py_trees] [--scenes guard_patrol,evade_or_flock,wander]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from behaviortk.commands.scaling import scale_definition
from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation
from behaviortk.sim.snapshot_memory import Capture
from behaviortk.viewer.history import History

ROOT = Path(__file__).resolve().parent.parent


def measure(scene: str, agents: int, engine: str, rounds: int, warm: int) -> dict[str, float]:
    raw = json.loads((ROOT / "definitions" / f"{scene}.json").read_text())
    data, _ = scale_definition(raw, agents)
    sim = Simulation(load_text(json.dumps(data), scene), engine=engine, debug=True)
    history = History(sim)

    def step(sim: Simulation) -> Simulation:
        sim = history.before_step(sim)
        sim.step()
        history.after_step(sim)
        return sim

    for _ in range(warm):
        sim = step(sim)
    ticks, captures, backs = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(10):
            sim = step(sim)
        t1 = time.perf_counter()
        capture = Capture(sim)
        t2 = time.perf_counter()
        past = history.step_back(sim)
        sim = step(past)
        t3 = time.perf_counter()
        ticks.append((t1 - t0) / 10)
        captures.append(t2 - t1)
        backs.append(t3 - t2)
    tick, cap, back = (statistics.median(v) for v in (ticks, captures, backs))
    return {
        "agents": sim.agents.n,
        "kernels": sim.kernel_name,
        "dt": float(sim.dt),
        "capacity": history.capacity,
        "span": history.span,
        "tick_ms": 1e3 * tick,
        "capture_ticks": cap / tick,
        "back_ticks": back / tick,
        "back_ms": 1e3 * back,
        "keyframe": capture.nbytes,
        "ring": history.nbytes,
        "keyframes": len(history.keyframes),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--engines", default="batch,py_trees")
    parser.add_argument("--scenes", default="guard_patrol,evade_or_flock,wander")
    parser.add_argument("--warm", type=int, default=0, help="ticks before the rounds (default: "
                        "the ring's capacity, so it is full)")  # fmt: skip
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| scene | engine | agents | kernels | tick ms | capture / tick | back ms "
          "| back / tick | keyframe KB (B / agent) | ring MB (keyframes, ticks) |")  # fmt: skip
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for scene in args.scenes.split(","):
        for engine in args.engines.split(","):
            warm = args.warm or 600
            r = measure(scene, args.agents, engine, args.rounds, warm)
            print(
                f"| {scene} | {engine} | {r['agents']:,} | {r['kernels']} | {r['tick_ms']:.2f} "
                f"| **{r['capture_ticks']:.2f}** | {r['back_ms']:.1f} | **{r['back_ticks']:.1f}** "
                f"| {r['keyframe'] / 1e3:.0f} ({r['keyframe'] / r['agents']:.0f}) "
                f"| {r['ring'] / 1e6:.1f} ({r['keyframes']}, {r['span']} of {r['capacity']}) |",
                flush=True,
            )
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
