"""Overlap and cost of non-penetration: evade_or_flock with the world option off and on.

For each size, ``definitions/evade_or_flock.json`` is grown to that many prey
(``behaviortk bench``'s scaling: the world grown to keep the shipped density;
the 3 predators stay) and loaded twice, as shipped (``non_penetration`` off)
and with ``"non_penetration": true``. The two simulations are stepped
alternately in this one process (which goes first alternates too), every tick
timed; after the warm-up ticks the timed medians and means are compared (the
ratio on / off is the extra tick time). The overlap figure (fraction of agents
closer to another than the sum of their radii, ``world/overlap.py``) is
measured after every tick, warm-up included, outside the timing: the target is
under 1 % at every tick with the option on.

Not a test: times depend on the machine and its load; the ratio, taken within
one run, is what to compare. On compiled kernels the constraint builds its
next lists on a second thread (``world/non_penetration.py``, ``PREPARE_AT``):
run under ``taskset -c 0`` to see the cost on one core.

``--kernels numba`` (the batch engine's default) runs both on compiled
kernels, the constraint's passes included; ``--kernels numpy`` on the NumPy
reference.

Usage: python benchmarks/bench_overlap.py [--prey 60,50000] [--ticks 300] [--warmup 30]
       [--kernels numba|numpy] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from behaviortk.commands.bench import scale_definition  # noqa: E402
from behaviortk.format.loader import load, load_text  # noqa: E402
from behaviortk.sim.simulation import Simulation, freeze_gc  # noqa: E402
from behaviortk.world.overlap import OverlapLog  # noqa: E402

REFERENCE = ROOT / "definitions" / "evade_or_flock.json"


def scenarios(prey: int) -> tuple[Any, Any]:
    """evade_or_flock with ``prey`` prey at the shipped density: (as shipped, non-penetration on)."""
    raw = load(REFERENCE).raw
    others = sum(int(g["count"]) for g in raw["groups"] if g["name"] != "prey")
    data, _ = scale_definition(raw, prey + others, grow="prey")  # bench --grow prey
    total = sum(int(g["count"]) for g in data["groups"])
    off = load_text(json.dumps(data), "evade_or_flock", max_agents=max(total, 1))
    data["world"]["non_penetration"] = True
    on = load_text(json.dumps(data), "evade_or_flock+np", max_agents=max(total, 1))
    return off, on


def measure(
    prey: int, ticks: int, warmup: int, seed: int | None, kernels: str = "numba"
) -> dict[str, Any]:
    off_scenario, on_scenario = scenarios(prey)
    sims = {"off": Simulation(off_scenario, "batch", seed=seed, kernels=kernels)}
    sims["on"] = Simulation(on_scenario, "batch", seed=seed, kernels=kernels)
    freeze_gc()
    times: dict[str, list[float]] = {"off": [], "on": []}
    logs = {"off": OverlapLog(), "on": OverlapLog()}
    integrate: dict[str, float] = {"off": 0.0, "on": 0.0}
    passes: list[int] = []
    clock = time.perf_counter
    for t in range(warmup + ticks):
        order = ("off", "on") if t % 2 == 0 else ("on", "off")
        for name in order:
            sim = sims[name]
            before = sim.timings["integrate"]
            t0 = clock()
            sim.step()
            took = clock() - t0
            if t >= warmup:
                times[name].append(took)
                integrate[name] += sim.timings["integrate"] - before
            logs[name].measure(sim.world, sim.agents)
        constraint = sims["on"].non_penetration
        assert constraint is not None
        passes.append(constraint.last_passes)
    med = {k: 1000.0 * statistics.median(v) for k, v in times.items()}
    mean = {k: 1000.0 * statistics.fmean(v) for k, v in times.items()}
    constraint = sims["on"].non_penetration
    assert constraint is not None
    return {
        "prey": prey,
        "kernels": sims["on"].kernel_name,
        "agents": sims["on"].agents.n,
        "ticks": ticks,
        "warmup": warmup,
        "median_ms_off": round(med["off"], 3),
        "median_ms_on": round(med["on"], 3),
        "median_ratio": round(med["on"] / med["off"], 3),
        "mean_ms_off": round(mean["off"], 3),
        "mean_ms_on": round(mean["on"], 3),
        "mean_ratio": round(mean["on"] / mean["off"], 3),
        "integrate_ms_off": round(1000.0 * integrate["off"] / ticks, 3),
        "integrate_ms_on": round(1000.0 * integrate["on"] / ticks, 3),
        "overlap_max_on": logs["on"].max,
        "overlap_mean_on": round(logs["on"].mean, 6),
        "overlap_max_off": round(logs["off"].max, 4),
        "overlap_mean_off": round(logs["off"].mean, 4),
        "list_builds": constraint.builds,
        "list_builds_ahead": constraint.built_ahead,
        "passes_mean": round(statistics.fmean(passes), 2),
        "passes_max": max(passes),
        "load_average": round(os.getloadavg()[0], 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prey", default="60,50000", help="comma-separated prey counts")
    parser.add_argument("--ticks", type=int, default=300, help="timed ticks per size")
    parser.add_argument("--warmup", type=int, default=30, help="untimed ticks first")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--kernels", choices=("numba", "numpy"), default="numba")
    parser.add_argument("--json", action="store_true", help="one JSON line per size")
    args = parser.parse_args()
    for prey in (int(p) for p in args.prey.split(",")):
        r = measure(prey, args.ticks, args.warmup, args.seed, args.kernels)
        if args.json:
            print(json.dumps(r, separators=(",", ":")), flush=True)
            continue
        print(
            f"{r['agents']:,} agents ({r['kernels']}), {r['ticks']} ticks after {r['warmup']}: "
            f"median {r['median_ms_off']:.2f} -> {r['median_ms_on']:.2f} ms per tick "
            f"(x{r['median_ratio']:.3f}; mean x{r['mean_ratio']:.3f}), integrate "
            f"{r['integrate_ms_off']:.2f} -> {r['integrate_ms_on']:.2f} ms; overlap on: max "
            f"{100 * r['overlap_max_on']:.3f}% mean {100 * r['overlap_mean_on']:.4f}% "
            f"(off: max {100 * r['overlap_max_off']:.1f}% mean {100 * r['overlap_mean_off']:.1f}%); "
            f"{r['list_builds']} list builds ({r['list_builds_ahead']} on the other thread), "
            f"passes mean {r['passes_mean']} max "
            f"{r['passes_max']}; load {r['load_average']}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
