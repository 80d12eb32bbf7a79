"""The batch engine against the hand-written ceiling, tick by tick in one process (issue 25).

For evade_or_flock grown to N agents (its prey; ``behaviortk bench --grow prey
--scale N``), first checks that the ceiling (``ceiling_kernel.py``) does the
engine's work: both step from the same state and must agree to round-off
(``ceiling_kernel.check``, largest difference of any position, velocity or
heading). Then, per round, a fresh Simulation (batch engine, numba kernels) and
a ceiling taken from it are warmed up and stepped in turn for a number of ticks
that is a multiple of 32 (both re-sort their rows into cell order every 32
ticks: the mean counts that tick, the median does not). Reported per size,
medians over the rounds: the engine's and the ceiling's median and mean ms per
tick, by CPU time of this process (other processes on the machine disturb it
less) and by wall clock, their ratios, and the engine's phases (CPU ms). The
results file's ``## Notes`` section, if any, is kept.

    .venv/bin/python benchmarks/bench_ceiling.py [--sizes 50000 100000] [--rounds 5]
        [--ticks 96] [--warmup 20] [--out benchmarks/results_ceiling.md]

Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_crowd import EVADE, scaled  # noqa: E402
from ceiling_kernel import Ceiling, check  # noqa: E402

import behaviortk.sim.simulation as simulation  # noqa: E402
from behaviortk.sim.simulation import PHASES, Simulation  # noqa: E402

simulation._time = types.SimpleNamespace(perf_counter=time.process_time)  # type: ignore[assignment]
"""The engine's phase timings in CPU time (``Simulation.timings``), like the ticks here."""


AGREE = 1e-9
"""Largest difference of one tick allowed: more means the ceiling no longer does the engine's work."""

NOTES = "## Notes"
"""A results file's hand-written section from this heading on: kept when the figures are rewritten."""


def engine(n: int) -> Simulation:
    sim = Simulation(scaled(EVADE, n), engine="batch", kernels="numba")
    if sim.kernel_name != "numba":
        raise SystemExit("numba kernels did not load")
    return sim


def one_round(n: int, ticks: int, warmup: int) -> dict[str, Any]:
    """Engine and ceiling from the same state, tick by tick in turn: CPU and wall per tick."""
    sim = engine(n)
    for _ in range(warmup):
        sim.step()
    ceiling = Ceiling.from_sim(sim)
    steps = {"engine": sim.step, "ceiling": ceiling.step}
    cpu: dict[str, list[float]] = {k: [] for k in steps}
    wall: dict[str, list[float]] = {k: [] for k in steps}
    for p in PHASES:
        sim.timings[p] = 0.0
    for _ in range(ticks):
        for name, step in steps.items():
            w0, c0 = time.perf_counter(), time.process_time()
            step()
            cpu[name].append(1000 * (time.process_time() - c0))
            wall[name].append(1000 * (time.perf_counter() - w0))
    phases = {p: round(1000 * sim.timings[p] / ticks, 3) for p in PHASES}
    med, mean = statistics.median, statistics.fmean
    out: dict[str, Any] = {"phases_cpu_ms": phases}
    for name in steps:
        out[f"{name}_cpu_median"] = med(cpu[name])
        out[f"{name}_cpu_mean"] = mean(cpu[name])
        out[f"{name}_wall_median"] = med(wall[name])
        out[f"{name}_wall_mean"] = mean(wall[name])
    for kind in ("cpu_median", "cpu_mean", "wall_median", "wall_mean"):
        out[f"ratio_{kind}"] = out[f"engine_{kind}"] / out[f"ceiling_{kind}"]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50_000, 100_000])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ticks", type=int, default=96, help="timed ticks a round (32 k)")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results_ceiling.md"))
    args = parser.parse_args()

    load_start = os.getloadavg()[0]
    raw: dict[str, Any] = {"load_average_start": load_start}
    rows = []
    for n in args.sizes:
        sim = engine(n)
        for _ in range(args.warmup):
            sim.step()
        agree = check(sim, ticks=1)
        if not agree <= AGREE:
            raise SystemExit(f"{n:,} agents: the ceiling and the engine differ by {agree:.1e}")
        rounds = [one_round(n, args.ticks, args.warmup) for _ in range(args.rounds)]
        med = {
            k: statistics.median(r[k] for r in rounds) for k in rounds[0] if k != "phases_cpu_ms"
        }
        phases = {p: statistics.median(r["phases_cpu_ms"][p] for r in rounds) for p in PHASES}
        raw[f"evade_or_flock/{n}"] = {"check": agree, "rounds": rounds}
        rows.append((n, agree, med, phases))
        print(n, f"check {agree:.1e}", {k: round(v, 3) for k, v in med.items()}, flush=True)
    load_end = os.getloadavg()[0]
    raw["load_average_end"] = load_end

    lines = [
        "# The batch engine against the hand-written ceiling",
        "",
        f"`{' '.join(['benchmarks/bench_ceiling.py', *sys.argv[1:]])}`: evade_or_flock "
        "grown to N agents (`bench --grow prey`), the batch engine on numba kernels and "
        "`benchmarks/ceiling_kernel.py` from the same state, stepped in turn in one process, "
        f"{args.rounds} rounds of {args.ticks} ticks after {args.warmup}; each figure is the "
        "median over the rounds of a round's median (or mean) ms per tick. CPU: this "
        "process's CPU time; the mean counts the re-sort into cell order every 32 ticks, "
        "the median does not. The check is the largest difference of any position, "
        "velocity or heading after one tick of each from the same state.",
        "",
        "| agents | check | engine CPU median | ceiling CPU median | ratio | "
        "engine CPU mean | ceiling CPU mean | ratio | wall ratio (median) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for n, agree, med, _ in rows:
        lines.append(
            f"| {n:,} | {agree:.0e} | {med['engine_cpu_median']:.2f} | "
            f"{med['ceiling_cpu_median']:.2f} | {med['ratio_cpu_median']:.2f} | "
            f"{med['engine_cpu_mean']:.2f} | {med['ceiling_cpu_mean']:.2f} | "
            f"{med['ratio_cpu_mean']:.2f} | {med['ratio_wall_median']:.2f} |"
        )
    lines += ["", "The engine's phases (CPU ms per tick, mean over a round, median of rounds):", ""]
    for n, _, _, phases in rows:
        lines.append(f"- {n:,}: " + ", ".join(f"{p} {ms:.2f}" for p, ms in phases.items()))
    lines += [
        "",
        f"Machine load (1-minute load average, 2 cores shared with other work): "
        f"{load_start:.1f} at the start, {load_end:.1f} at the end.",
    ]
    out = Path(args.out)
    notes = out.read_text().partition(NOTES)[2] if out.exists() else ""
    out.write_text("\n".join(lines) + "\n" + (f"\n{NOTES}{notes}" if notes else ""))
    Path(args.out).with_suffix(".jsonl").write_text(json.dumps(raw) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
