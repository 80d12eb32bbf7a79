"""Dense crowds: what the neighbour cap costs against no cap (issue 25, item 1).

evade_or_flock's trees with 4,997 prey and its 3 predators in its own 800 x 600
world (flocks clump to about 150 prey in view each), once per ``max_neighbours``
of the prey: 8, 64 (the default) and one above the count (no cap). The scenes
step in turn, tick by tick, in one process (batch engine, numba kernels), so
they share the machine's load; each scene's median ms per tick (wall, and CPU
time of this process) is divided by the no-cap scene's. Then the same scene with 200,000 agents in the same world
(about 3,500 prey in view each, cap 64), numba against NumPy kernels, in turn;
and other prey counts, caps 8 to 64 against no cap.

    .venv/bin/python benchmarks/bench_dense.py [--ticks 60] [--warmup 100]
        [--rounds 3] [--big-ticks 3] [--out benchmarks/results_dense.md]

Not a test: figures depend on the machine and its load; the ratios are what to read.
The targets' figures (``bench_targets.py``) are appended by that script.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from behaviortk.format.loader import load, load_text  # noqa: E402
from behaviortk.sim.simulation import Simulation  # noqa: E402

EVADE = ROOT / "definitions" / "evade_or_flock.json"
NO_CAP = 1_000_000
DENSE_PREY = 4_997
BIG_PREY = 199_997


def scene(prey: int, cap: int, kernels: str) -> Simulation:
    """evade_or_flock with ``prey`` prey keeping at most ``cap`` neighbours, world as shipped."""
    raw = load(EVADE).raw
    data = json.loads(json.dumps(raw))
    data["groups"][0]["count"] = prey
    data["groups"][0]["max_neighbours"] = cap
    scenario = load_text(json.dumps(data), str(EVADE), max_agents=max(prey + 3, 200_000))
    sim = Simulation(scenario, engine="batch", kernels=kernels)
    assert sim.kernel_name == kernels, f"{kernels} kernels did not load"
    return sim


def interleaved(
    sims: dict[str, Simulation], ticks: int, warmup: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall and CPU ms per tick of each simulation, stepped in turn tick by tick
    after ``warmup`` (CPU time of this process: other work on the machine disturbs it less)."""
    for _ in range(warmup):
        for sim in sims.values():
            sim.step()
    wall: dict[str, list[float]] = {name: [] for name in sims}
    cpu: dict[str, list[float]] = {name: [] for name in sims}
    for _ in range(ticks):
        for name, sim in sims.items():
            w, c = tick_time(sim.step)
            wall[name].append(w)
            cpu[name].append(c)
    med = statistics.median
    return (
        {name: 1000 * med(t) for name, t in wall.items()},
        {name: 1000 * med(t) for name, t in cpu.items()},
    )


def tick_time(step: Callable[[], None]) -> tuple[float, float]:
    """Wall and CPU seconds of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    step()
    return time.perf_counter() - w0, time.process_time() - c0


def in_view(sim: Simulation) -> float:
    """Mean prey each prey sees (within view and field of view), uncapped."""
    sense = sim.sense()
    rows = sim.agents.slices["prey"]
    saved = sim.agents.max_neighbours[rows].copy()
    sim.agents.max_neighbours[rows] = NO_CAP
    try:
        return float(sense.neighbours("prey").count.mean())
    finally:
        sim.agents.max_neighbours[rows] = saved


def query_alone(sim: Simulation, caps: dict[str, int], reps: int = 15) -> dict[str, float]:
    """CPU ms of the prey's neighbour query alone on ``sim``'s state, per cap (the caps in
    turn, ``reps`` times, the fastest of each): what the cap costs with the crowd held
    still (the scenes above also differ in how the flocks move)."""
    ag, world = sim.agents, sim.world
    rows = ag.slices["prey"]
    saved = ag.max_neighbours[rows].copy()
    times: dict[str, list[float]] = {name: [] for name in caps}
    try:
        for _ in range(reps):
            for name, cap in caps.items():
                ag.max_neighbours[rows] = cap
                t0 = time.process_time()
                sim.kernels.neighbours(world, ag, rows, rows)
                times[name].append(time.process_time() - t0)
    finally:
        ag.max_neighbours[rows] = saved
    return {name: 1000 * min(t) for name, t in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=60)
    parser.add_argument(
        "--warmup", type=int, default=100, help="ticks before timing (flocks clump)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="fresh scenes, medians reported")
    parser.add_argument("--big-ticks", type=int, default=3, help="ticks of the 200,000 scene")
    parser.add_argument(
        "--sweep", type=int, nargs="*", default=[500, 1_000, 2_000, 10_000],
        help="other prey counts, caps 8 to 64 against no cap (one round each)",
    )  # fmt: skip
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results_dense.md"))
    args = parser.parse_args()
    load_start = os.getloadavg()[0]

    caps = {"8": 8, "64": 64, "no cap": NO_CAP}
    rounds: list[dict[str, float]] = []
    cpu_rounds: list[dict[str, float]] = []
    alone: list[dict[str, float]] = []
    seen: list[float] = []
    for _ in range(args.rounds):
        sims = {name: scene(DENSE_PREY, cap, "numba") for name, cap in caps.items()}
        wall, cpu = interleaved(sims, args.ticks, args.warmup)
        rounds.append(wall)
        cpu_rounds.append(cpu)
        seen.append(in_view(sims["no cap"]))
        alone.append(query_alone(sims["no cap"], caps))
        print(wall, cpu, alone[-1], flush=True)
    med = statistics.median
    dense = {name: med(r[name] for r in rounds) for name in caps}
    ratio = {name: med(r[name] / r["no cap"] for r in rounds) for name in caps}
    cpu_ratio = {name: med(r[name] / r["no cap"] for r in cpu_rounds) for name in caps}
    query_ms = {name: med(r[name] for r in alone) for name in caps}

    sweep_caps = {"8": 8, "16": 16, "32": 32, "64": 64, "no cap": NO_CAP}
    sweep: dict[int, tuple[float, dict[str, float], dict[str, float], dict[str, float]]] = {}
    for prey in args.sweep:
        sims = {name: scene(prey, cap, "numba") for name, cap in sweep_caps.items()}
        wall, cpu = interleaved(sims, args.ticks, args.warmup)
        still = query_alone(sims["no cap"], sweep_caps)
        sweep[prey] = (in_view(sims["no cap"]), wall, cpu, still)
        print(prey, sweep[prey], flush=True)

    big_ms: dict[str, float] = {}
    big_cpu: dict[str, float] = {}
    if args.big_ticks > 0:
        big = {k: scene(BIG_PREY, 64, k) for k in ("numba", "numpy")}
        big_ms, big_cpu = interleaved(big, args.big_ticks, 2)
        print(big_ms, big_cpu, flush=True)

    lines = [
        "# Dense crowds: the neighbour cap against no cap",
        "",
        f"`{' '.join(['python', 'benchmarks/bench_dense.py', *sys.argv[1:]])}`: batch engine, "
        f"scenes stepped in turn tick by tick in one process; {args.rounds} rounds of fresh "
        f"scenes, {args.ticks} ticks timed after {args.warmup} (medians). 1-minute load average "
        f"{load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end (2 cores shared "
        "with other work: read the ratios).",
        "",
        f"evade_or_flock's trees, {DENSE_PREY:,} prey + 3 predators in 800 x 600 (prey see "
        f"{statistics.median(seen):.0f} prey on average when timing ends), numba kernels:",
        "",
        "| scene | cap | ms/tick | ratio to no cap | CPU ratio | query alone, CPU ms "
        "| ratio to no cap |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, cap in caps.items():
        shown = "none" if cap == NO_CAP else str(cap)
        lines.append(
            f"| {DENSE_PREY:,} prey | {shown} | {dense[name]:.1f} | {ratio[name]:.2f} "
            f"| {cpu_ratio[name]:.2f} | {query_ms[name]:.2f} "
            f"| {query_ms[name] / query_ms['no cap']:.2f} |"
        )
    lines += [
        "",
        "The query alone: the prey's neighbour query on the no-cap scene's last state, each "
        "cap in turn, fastest of 15 (rows in the cell order of the no-cap grid).",
    ]
    if sweep:
        lines += [
            "",
            "Other crowds in the same world (one round each; each cell: ms/tick, then the "
            "wall and CPU ratios to no cap, then the query alone's CPU ratio to no cap):",
            "",
            "| prey | in view | "
            + " | ".join(c if c == "no cap" else f"cap {c}" for c in sweep_caps)
            + " |",
            "| ---: | ---: | " + " | ".join("---:" for _ in sweep_caps) + " |",
        ]
        for prey, (seen_here, wall, cpu, still) in sweep.items():
            cells = [
                f"{wall[c]:.1f} ({wall[c] / wall['no cap']:.2f}, {cpu[c] / cpu['no cap']:.2f}; "
                f"{still[c] / still['no cap']:.2f})"
                for c in sweep_caps
            ]
            lines.append(f"| {prey:,} | {seen_here:.0f} | " + " | ".join(cells) + " |")
    if big_ms:
        lines += [
            "",
            f"The same scene with {BIG_PREY + 3:,} agents in 800 x 600 (cap 64), "
            f"{args.big_ticks} ticks after 2, in turn:",
            "",
            "| kernels | ms/tick | ratio to NumPy | CPU ratio |",
            "| --- | ---: | ---: | ---: |",
        ]
    for name, ms in big_ms.items():
        lines.append(
            f"| {name} | {ms:.0f} | {ms / big_ms['numpy']:.2f} "
            f"| {big_cpu[name] / big_cpu['numpy']:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).write_text(text)
    raw: dict[str, Any] = {
        "rounds": rounds, "cpu_rounds": cpu_rounds, "alone": alone, "in_view": seen,
        "big": big_ms,
        "big_cpu": big_cpu, "sweep": {str(k): v for k, v in sweep.items()},
    }  # fmt: skip
    Path(args.out).with_suffix(".jsonl").write_text(json.dumps(raw) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
