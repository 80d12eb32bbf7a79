"""Crowds on compiled kernels: the batch engine against the hand-written ceiling (issue 14).

For evade_or_flock with its 3 predators and the prey grown to N agents in all
(world grown to keep the shipped density: ``behaviortk bench --grow prey
--scale N``), the engine (batch engine, numba kernels) and the
ceiling (``ceiling_kernel.py``: one fused numba kernel doing the same tick by
hand) start from the same state and are timed tick by tick, interleaved in
one process, so both see the same machine load. Reported per size: median ms
per tick of each (wall clock, and CPU time of this process, which other
processes on the machine disturb less), and the ratio engine / ceiling.
Also: flocking_lj_obstacles at 50,000 agents, the ceiling without its cell
sort (why the engine keeps rows in cell order), and peak resident memory of a
100,000-agent run in a fresh process (``behaviortk bench --json``).

    .venv/bin/python benchmarks/bench_crowd.py [--sizes 50000 100000] [--ticks 60]
        [--rounds 3] [--out benchmarks/results_crowd.md]

Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ceiling_kernel import SORT_EVERY, Ceiling  # noqa: E402

from behaviortk.commands.scaling import largest_group, scale_definition  # noqa: E402
from behaviortk.format.loader import load, load_text  # noqa: E402
from behaviortk.sim.simulation import Simulation  # noqa: E402

EVADE = ROOT / "definitions" / "evade_or_flock.json"
FLOCK_LJ = ROOT / "definitions" / "flocking_lj_obstacles.json"


def scaled(path: Path, total: int) -> Any:
    """The scenario with only its largest group (evade_or_flock's prey) grown so that there are
    ``total`` agents in all, the other groups as shipped: ``bench --grow GROUP --scale total``."""
    raw = load(path).raw
    data, _ = scale_definition(raw, total, grow=largest_group(raw))
    return load_text(json.dumps(data), str(path), max_agents=max(total, 200_000))


def tick_times(step: Callable[[], None]) -> tuple[float, float]:
    """Wall and CPU seconds of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    step()
    return time.perf_counter() - w0, time.process_time() - c0


def interleaved(n: int, ticks: int, warmup: int, sort: bool = True) -> dict[str, float]:
    """Engine and ceiling on evade_or_flock at ``n`` agents, tick by tick in turn."""
    sim = Simulation(scaled(EVADE, n), engine="batch", kernels="numba")
    assert sim.kernel_name == "numba", "numba kernels did not load"
    ceiling = Ceiling.from_sim(sim, sort_every=SORT_EVERY if sort else 0)
    for _ in range(warmup):
        sim.step()
        ceiling.step()
    eng_w, eng_c, cei_w, cei_c = [], [], [], []
    for _ in range(ticks):
        w, c = tick_times(sim.step)
        eng_w.append(w)
        eng_c.append(c)
        w, c = tick_times(ceiling.step)
        cei_w.append(w)
        cei_c.append(c)
    med = statistics.median
    return {
        "engine_ms": 1000 * med(eng_w),
        "ceiling_ms": 1000 * med(cei_w),
        "engine_cpu_ms": 1000 * med(eng_c),
        "ceiling_cpu_ms": 1000 * med(cei_c),
        "ratio": med(eng_w) / med(cei_w),
        "ratio_cpu": med(eng_c) / med(cei_c),
        "compile_s": sim.compile_s,
    }


def engine_alone(path: Path, n: int, ticks: int, warmup: int) -> dict[str, float]:
    sim = Simulation(scaled(path, n), engine="batch", kernels="numba")
    for _ in range(warmup):
        sim.step()
    walls, cpus = zip(*(tick_times(sim.step) for _ in range(ticks)), strict=True)
    return {
        "engine_ms": 1000 * statistics.median(walls),
        "engine_cpu_ms": 1000 * statistics.median(cpus),
    }


def peak_memory(n: int) -> dict[str, Any]:
    """``behaviortk bench --json`` at ``n`` agents in a fresh process (its own peak RSS)."""
    cmd = [
        sys.executable, "-m", "behaviortk", "bench", str(EVADE), "--engine", "batch",
        "--kernels", "numba", "--grow", "prey", "--scale", str(n), "--ticks", "20", "--warmup", "5",
        "--json",
    ]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50_000, 100_000])
    parser.add_argument("--ticks", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3, help="repeat each size (medians)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results_crowd.md"))
    args = parser.parse_args()

    lines = [
        "# Crowds on compiled kernels against the hand-written ceiling",
        "",
        "`benchmarks/bench_crowd.py`: batch engine on numba kernels and "
        "`benchmarks/ceiling_kernel.py`, timed tick by tick in turn in one process, "
        f"median of {args.rounds} rounds of {args.ticks} ticks after {args.warmup}; "
        "ms per tick (wall); the CPU ratio uses this process's CPU time.",
        "",
        "| scene | agents | engine ms/tick | ceiling ms/tick | ratio | CPU ratio |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    raw: dict[str, Any] = {"load_average_start": os.getloadavg()[0]}
    for n in args.sizes:
        rounds = [interleaved(n, args.ticks, args.warmup) for _ in range(args.rounds)]
        med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
        raw[f"evade_or_flock/{n}"] = rounds
        lines.append(
            f"| evade_or_flock | {n:,} | {med['engine_ms']:.1f} | {med['ceiling_ms']:.1f} | "
            f"{med['ratio']:.2f} | {med['ratio_cpu']:.2f} |"
        )
        print(lines[-1], flush=True)
    unsorted = interleaved(args.sizes[0], args.ticks, args.warmup, sort=False)
    raw["ceiling_without_cell_sort"] = unsorted
    lines.append(
        f"| evade_or_flock, against the ceiling without its cell sort | {args.sizes[0]:,} | "
        f"{unsorted['engine_ms']:.1f} | {unsorted['ceiling_ms']:.1f} | "
        f"{unsorted['ratio']:.2f} | {unsorted['ratio_cpu']:.2f} |"
    )
    print(lines[-1], flush=True)
    lj = engine_alone(FLOCK_LJ, 50_000, args.ticks, args.warmup)
    raw["flocking_lj_obstacles/50000"] = lj
    lines.append(f"| flocking_lj_obstacles | 50,000 | {lj['engine_ms']:.1f} | | | |")
    print(lines[-1], flush=True)
    memory = peak_memory(100_000)
    raw["memory/100000"] = memory
    summary = (
        f"\n100,000 agents of evade_or_flock in a fresh process: peak resident memory "
        f"{memory.get('peak_rss_mb', '?')} MB, {memory.get('ms_per_tick', '?')} ms per tick, "
        f"compile (disk cache) {memory.get('compile_s', '?')} s.\n"
        f"\nMachine load (1-minute load average, 2 cores, other work running): "
        f"{raw['load_average_start']:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
        "wall times grow with it, the CPU ratio much less."
    )
    print(summary)
    Path(args.out).write_text("\n".join(lines) + "\n" + summary + "\n")
    Path(args.out).with_suffix(".jsonl").write_text(json.dumps(raw) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
