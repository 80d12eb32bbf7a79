"""py_trees engine speed: evade_or_flock at N agents, median ms per tick.

Targets: issue 4, 300 agents at >= 60 ticks/s; issue 14 (item 4), 1,000 agents
of evade_or_flock at 60 ticks/s (16.7 ms per tick) on this 2-core machine.

Scaling: by default the scenario's prey/predator ratio (20:1) is kept; with
``--grow`` only the prey grow and the 3 predators stay (``behaviortk bench
--grow prey``, the issue 14 figure). Either way the world grows to keep the
shipped density, so neighbour counts stay the same.

    .venv/bin/python benchmarks/bench_pytrees.py [--ticks 300] [--sizes 100 300 1000] [--grow]

Prints a Markdown table: median ms per tick (each tick timed alone), mean ms
per phase, ticks/s at the median.

    .venv/bin/python benchmarks/bench_pytrees.py --grow --sizes 1000 --statuses

Two simulations of the same definition stepped alternately, tick by tick, in
one process: one nobody inspects, one whose node statuses are read after every
tick (what a trace does). The ratio is the cost of collecting statuses.

    .venv/bin/python benchmarks/bench_pytrees.py --grow --sizes 1000 --against ../other-checkout

Before/after across two checkouts: this script runs ``--rounds`` times
alternately on each checkout's ``behaviortk`` (a fresh process each), and the
ratio of the two medians of the round medians is printed. Not a test: the
figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parent / "definitions" / "evade_or_flock.json"
WARMUP = 20
KERNELS = "auto"  # --kernels: "auto" is NumPy on the py_trees engine


def scaled_definition(n: int, grow: bool) -> str:
    """evade_or_flock with ``n`` agents at the shipped density (``grow``: 3 predators kept)."""
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    groups = data["groups"]
    base = sum(g["count"] for g in groups)
    shipped = {g["name"]: g["count"] for g in groups}
    predators = shipped["predator"] if grow else max(1, round(n / 21))
    for g in groups:
        g["count"] = n - predators if g["name"] == "prey" else predators
    scale = math.sqrt(n / base)
    world = data["world"]
    world["width"] = round(world["width"] * scale)
    world["height"] = round(world["height"] * scale)
    for g in groups:
        g["spawn"] = {"kind": "area", "min": [0, 0], "max": [world["width"], world["height"]]}
    return json.dumps(data)


def make_sim(n: int, grow: bool, engine: str) -> Any:
    from behaviortk.format.loader import load_text
    from behaviortk.sim.simulation import Simulation

    scenario = load_text(scaled_definition(n, grow), f"evade_or_flock_{n}.json")
    return Simulation(scenario, engine, kernels=KERNELS)


def timed_ticks(sims: list[Any], ticks: int, ask: list[bool]) -> list[list[float]]:
    """Step ``sims`` alternately ``ticks`` times; seconds of each tick of each.

    ``ask[i]``: after each tick, read every node status of ``sims[i]`` (counted in its time).
    """
    times: list[list[float]] = [[] for _ in sims]
    clock = time.perf_counter
    order = list(range(len(sims)))
    for _ in range(ticks):
        order.reverse()  # each simulation goes first every other tick
        for i in order:
            sim = sims[i]
            start = clock()
            sim.step()
            if ask[i]:
                for decision in sim.decisions.values():
                    decision.status  # noqa: B018 (the read is what is timed)
            times[i].append(clock() - start)
    return times


def measure(n: int, ticks: int, engine: str, grow: bool) -> dict[str, float]:
    from behaviortk.sim.simulation import PHASES, freeze_gc

    sim = make_sim(n, grow, engine)
    freeze_gc()
    sim.run(WARMUP)
    sim.timings = dict.fromkeys(PHASES, 0.0)
    (times,) = timed_ticks([sim], ticks, [False])
    row = {p: 1000.0 * sim.timings[p] / ticks for p in PHASES}
    row["median"] = 1000.0 * statistics.median(times)
    row["ticks_per_s"] = 1000.0 / row["median"]
    row["agents"] = sim.agents.n
    return row


def statuses_cost(n: int, ticks: int, engine: str, grow: bool) -> tuple[float, float]:
    """Median ms/tick of (nobody asks, statuses read every tick), interleaved in one process."""
    from behaviortk.sim.simulation import freeze_gc

    sims = [make_sim(n, grow, engine) for _ in range(2)]
    freeze_gc()
    for sim in sims:
        sim.run(WARMUP)
    quiet, asked = timed_ticks(sims, ticks, [False, True])
    return 1000.0 * statistics.median(quiet), 1000.0 * statistics.median(asked)


def against(args: argparse.Namespace) -> int:
    """Alternate rounds on this checkout and ``args.against``; median of round medians each."""
    roots = {"this": str(HERE.parent), "other": str(Path(args.against).resolve())}
    medians: dict[str, list[float]] = {k: [] for k in roots}
    for _ in range(args.rounds):
        for key, root in roots.items():
            cmd = [sys.executable, __file__, "--root", root, "--json", "--ticks", str(args.ticks)]
            cmd += [
                "--engine",
                args.engine,
                "--sizes",
                str(args.sizes[0]),
                "--kernels",
                args.kernels,
            ]
            cmd += ["--grow"] if args.grow else []
            out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=root)
            medians[key].append(json.loads(out.stdout.splitlines()[-1])["median"])
    this, other = (statistics.median(medians[k]) for k in roots)
    print(f"{args.sizes[0]} agents, {args.rounds} rounds of {args.ticks} ticks, alternating")
    print(f"this checkout  {HERE.parent}: median {this:.2f} ms/tick {medians['this']}")
    print(f"other checkout {roots['other']}: median {other:.2f} ms/tick {medians['other']}")
    print(f"ratio this/other {this / other:.3f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--engine", default="py_trees")
    parser.add_argument("--kernels", default="auto", help="auto, numpy or numba (sense, act)")
    parser.add_argument("--grow", action="store_true", help="grow the prey only (3 predators)")
    parser.add_argument("--statuses", action="store_true", help="cost of reading statuses")
    parser.add_argument("--against", help="another checkout to compare with (before/after)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per checkout (--against)")
    parser.add_argument("--root", help=argparse.SUPPRESS)  # the checkout to import (--against)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against:
        return against(args)
    sys.path.insert(0, args.root or str(HERE.parent))
    global KERNELS
    KERNELS = args.kernels
    if args.json:
        print(json.dumps(measure(args.sizes[0], args.ticks, args.engine, args.grow)))
        return 0
    grown = "prey grown, 3 predators" if args.grow else "prey and predators 20:1"
    print(f"engine {args.engine}, kernels {args.kernels}, {grown}, load {os.getloadavg()[0]:.1f}")
    print(f"{args.ticks} ticks after {WARMUP} warm-up ticks\n")
    if args.statuses:
        print("| agents | nobody asks ms/tick | statuses read every tick ms/tick | ratio |")
        print("|---:|---:|---:|---:|")
        for n in args.sizes:
            quiet, asked = statuses_cost(n, args.ticks, args.engine, args.grow)
            print(f"| {n} | {quiet:.2f} | {asked:.2f} | {asked / quiet:.3f} |", flush=True)
        return 0
    print("| agents | median ms/tick | sense | decide | act | integrate | ticks/s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        r = measure(n, args.ticks, args.engine, args.grow)
        print(
            f"| {int(r['agents'])} | {r['median']:.2f} | {r['sense']:.2f} | {r['decide']:.2f} "
            f"| {r['act']:.2f} | {r['integrate']:.2f} | {r['ticks_per_s']:.0f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
