"""Think-rate LOD (issue 25, item 6): what ``think_every`` saves, both targets in one process.

evade_or_flock scaled with ``--grow prey`` (the world grown to keep the density; the
3 predators as in the file; ``--proportional``: every group in proportion, as ``bench
--scale`` does by default), every tree-driven group given ``think_every: k``.

1. *batch*: N agents (default 100,000), batch engine on compiled kernels: the sense +
   decide time of a tick (``sim.timings``: sensing, the facts, ticking the trees) with
   ``think_every`` 4 against 1. Target: the ratio at most 0.35. Act and integrate run
   every tick for every agent whatever ``k`` (held decisions keep steering), so they are
   reported apart, with the whole tick.
2. *py_trees*: the py_trees engine at 5,000 agents with ``think_every`` 5, and at 1,000
   with 1 (today's figure): ticks per second of the whole tick, on its default kernels
   (``auto``: NumPy for py_trees) and on numba. Target: 5,000 agents at 60 ticks/s.

The simulations of each part run side by side, one tick each in turn, so both see the
same machine load; the figures are medians over the rounds, after a warm-up (every agent
thinks on its first tick, so the first ticks are left out), with the garbage collector
frozen as ``behaviortk run`` and ``bench`` freeze it.

    .venv/bin/python benchmarks/bench_lod.py [--agents 100000] [--rounds 60] [--proportional]
        [--py-trees 5000:5,1000:1] [--py-trees-kernels auto,numba] [--skip-batch]
        [--skip-py-trees]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from behaviortk.commands.scaling import scale_definition
from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation, freeze_gc

ROOT = Path(__file__).resolve().parent.parent
WARMUP = 12


def scene(agents: int, every: int, grow: str | None = "prey") -> Any:
    """evade_or_flock at ``agents`` (``grow``: only that group, else every group in
    proportion, as ``bench --scale``), every tree thinking every ``every``."""
    raw = json.loads((ROOT / "definitions" / "evade_or_flock.json").read_text())
    data, _ = scale_definition(raw, agents, grow=grow)
    for group in data["groups"]:
        group["think_every"] = every
    return load_text(json.dumps(data), f"evade_or_flock x{agents} think_every {every}")


def phases(sim: Simulation) -> dict[str, float]:
    """Seconds of each phase of the tick just taken (from the accumulated timings)."""
    before = dict(sim.timings)
    start = time.perf_counter()
    sim.step()
    whole = time.perf_counter() - start
    out = {name: sim.timings[name] - before[name] for name in before}
    out["tick"] = whole
    return out


def interleaved(sims: list[Simulation], rounds: int) -> list[dict[str, float]]:
    """Per simulation, the median seconds of each phase over ``rounds`` ticks taken in turn
    (the collector frozen first, as ``behaviortk run`` and ``bench`` do: py_trees' many
    long-lived objects are then not walked by every full collection)."""
    freeze_gc()
    for _ in range(WARMUP):
        for sim in sims:
            sim.step()
    taken: list[list[dict[str, float]]] = [[] for _ in sims]
    for _ in range(rounds):
        for k, sim in enumerate(sims):
            taken[k].append(phases(sim))
    return [
        {name: statistics.median(t[name] for t in ticks) for name in ticks[0]} for ticks in taken
    ]


def batch(agents: int, rounds: int, grow: str | None) -> None:
    sims = [Simulation(scene(agents, k, grow), engine="batch", kernels="numba") for k in (1, 4)]
    one, four = interleaved(sims, rounds)
    how = f"--grow {grow}" if grow else "every group in proportion"
    print(f"batch engine, numba kernels, {sims[0].agents.n:,} agents ({how}), medians of {rounds}")
    print(f"{'think_every':>11} {'sense ms':>9} {'decide ms':>10} {'s+d ms':>8} "
          f"{'act ms':>7} {'integ. ms':>9} {'tick ms':>8}")  # fmt: skip
    for k, m in ((1, one), (4, four)):
        print(
            f"{k:>11} {m['sense'] * 1e3:>9.2f} {m['decide'] * 1e3:>10.2f} "
            f"{(m['sense'] + m['decide']) * 1e3:>8.2f} {m['act'] * 1e3:>7.2f} "
            f"{m['integrate'] * 1e3:>9.2f} {m['tick'] * 1e3:>8.2f}"
        )
    ratio = (four["sense"] + four["decide"]) / (one["sense"] + one["decide"])
    print(f"sense + decide, think_every 4 / think_every 1: {ratio:.3f} (target <= 0.35)")
    print(f"whole tick, think_every 4 / think_every 1: {four['tick'] / one['tick']:.3f}")


def py_trees(sizes: list[tuple[int, int]], kernels: list[str], rounds: int) -> None:
    runs = [(n, k, kern) for kern in kernels for n, k in sizes]
    sims = [Simulation(scene(n, k), engine="py_trees", kernels=kern) for n, k, kern in runs]
    medians = interleaved(sims, rounds)
    print(f"py_trees engine, medians of {rounds} (ms per tick, by phase)")
    print(f"{'agents':>8} {'think_every':>11} {'kernels':>12} {'tick ms':>8} {'ticks/s':>8} "
          f"{'sense':>7} {'decide':>7} {'act':>7} {'integ.':>7}")  # fmt: skip
    for (_, k, kern), sim, m in zip(runs, sims, medians, strict=True):
        name = f"{kern} ({sim.kernel_name})" if kern == "auto" else kern
        print(
            f"{sim.agents.n:>8,} {k:>11} {name:>12} {m['tick'] * 1e3:>8.2f} "
            f"{1.0 / m['tick']:>8.1f} {m['sense'] * 1e3:>7.2f} {m['decide'] * 1e3:>7.2f} "
            f"{m['act'] * 1e3:>7.2f} {m['integrate'] * 1e3:>7.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--py-trees", default="5000:5,1000:1", help="agents:think_every,...")
    parser.add_argument(
        "--py-trees-kernels",
        default="auto,numba",
        help="kernels of the py_trees runs (auto: NumPy for py_trees, the default)",
    )
    parser.add_argument(
        "--proportional",
        action="store_true",
        help="batch part: every group scaled in proportion (bench --scale's default: 4,762 "
        "predators at 100,000) instead of --grow prey",
    )
    parser.add_argument("--skip-batch", action="store_true")
    parser.add_argument("--skip-py-trees", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not args.skip_batch:
        batch(args.agents, args.rounds, None if args.proportional else "prey")
    if not args.skip_py_trees:
        sizes = [tuple(int(v) for v in part.split(":")) for part in args.py_trees.split(",")]
        kernels = args.py_trees_kernels.split(",")
        py_trees([(n, k) for n, k in sizes], kernels, args.rounds)
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
