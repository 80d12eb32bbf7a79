"""py_trees engine speed: evade_or_flock scaled to N agents, ticks per second.

The target (issue 4): 300 agents at >= 60 ticks/s (16.7 ms per tick) on a
2-core machine. The scenario's prey/predator ratio (20:1) is kept and the
world is scaled so the density (and so the neighbour counts) stays the same.

    .venv/bin/python benchmarks/bench_pytrees.py [--ticks 300] [--sizes 100 300 1000]

Prints a Markdown table: ms per tick in total and per phase, ticks/s.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from behaviortk.format.loader import load_text  # noqa: E402
from behaviortk.sim import PHASES, Simulation, freeze_gc  # noqa: E402

REFERENCE = ROOT / "definitions" / "evade_or_flock.json"
WARMUP = 20


def scaled_definition(n: int) -> str:
    """evade_or_flock with about ``n`` agents at the reference density."""
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    groups = data["groups"]
    base = sum(g["count"] for g in groups)
    predators = max(1, round(n / 21))
    prey = n - predators
    for g in groups:
        g["count"] = prey if g["name"] == "prey" else predators
    scale = math.sqrt(n / base)
    world = data["world"]
    world["width"] = round(world["width"] * scale)
    world["height"] = round(world["height"] * scale)
    for g in groups:
        g["spawn"] = {"kind": "area", "min": [0, 0], "max": [world["width"], world["height"]]}
    return json.dumps(data)


def measure(n: int, ticks: int, engine: str) -> dict[str, float]:
    scenario = load_text(scaled_definition(n), f"evade_or_flock_{n}.json")
    sim = Simulation(scenario, engine=engine)
    freeze_gc()
    sim.run(WARMUP)
    sim.timings = dict.fromkeys(PHASES, 0.0)
    start = time.perf_counter()
    sim.run(ticks)
    wall = time.perf_counter() - start
    row = {p: 1000.0 * sim.timings[p] / ticks for p in PHASES}
    row["total"] = 1000.0 * wall / ticks
    row["ticks_per_s"] = ticks / wall
    row["agents"] = sim.agents.n
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--engine", default="py_trees")
    args = parser.parse_args()
    print(f"engine {args.engine}, {args.ticks} ticks after {WARMUP} warm-up ticks\n")
    print("| agents | ms/tick | sense | decide | act | integrate | ticks/s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        r = measure(n, args.ticks, args.engine)
        print(
            f"| {int(r['agents'])} | {r['total']:.2f} | {r['sense']:.2f} | {r['decide']:.2f} "
            f"| {r['act']:.2f} | {r['integrate']:.2f} | {r['ticks_per_s']:.0f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
