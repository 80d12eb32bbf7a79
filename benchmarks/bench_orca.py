"""Cost of ``orca``: a crowd avoiding by ORCA against the same crowd with separation only.

Two definitions of one crowd (``--agents``, default 10,000, spawned at random in a
square sized for ``--density`` agents per 10,000 square units, radius 2, view 15,
10 neighbours, heading for the world's centre): one runs ``orca`` (preferred speed half
the max speed), one ``separation`` only (the issue's baseline), one ``blend`` of
``arrive`` and ``separation`` (a crowd that also walks). All on the batch engine, on compiled kernels (``--kernels``), are
stepped alternately in this one process (which goes first alternates), every tick
timed; after the warm-up the ratio of median tick times orca / separation is what
the issue bounds (at most 2); the ratio of the fastest ticks, the least disturbed by
other processes, is printed too, and what ``keep_apart`` adds to ``orca``.

Not a test: times depend on the machine and its load; compare the ratio.

Usage: python benchmarks/bench_orca.py [--agents 10000] [--ticks 200] [--warmup 20]
       [--density 4] [--kernels numba|numpy]
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

from behaviortk.format.loader import load_text  # noqa: E402
from behaviortk.sim.simulation import Simulation  # noqa: E402


def crowd(n: int, density: float, root: dict[str, Any]) -> dict[str, Any]:
    """``n`` agents at ``density`` per 10,000 square units running ``root``."""
    side = float(round((n / density) ** 0.5 * 100.0))
    return {
        "name": "orca_bench",
        "world": {"width": side, "height": side, "edges": "contain", "dt": 0.05, "seed": 3},
        "groups": [
            {
                "name": "crowd",
                "count": n,
                "spawn": {"kind": "area", "min": [0, 0], "max": [side, side]},
                "max_speed": 20,
                "max_force": 1e6,
                "radius": 2,
                "view_distance": 15,
                "fov": 360,
                "max_neighbours": 10,
                "tree": "go",
            }
        ],
        "trees": {"go": {"root": root}},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=10_000)
    ap.add_argument("--ticks", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--density", type=float, default=4.0)
    ap.add_argument("--kernels", choices=["numba", "numpy"], default="numba")
    args = ap.parse_args()
    centre = {"kind": "point", "at": [0, 0]}  # replaced below by the world's centre
    side = float(round((args.agents / args.density) ** 0.5 * 100.0))
    centre["at"] = [side / 2, side / 2]
    orca = {"type": "orca", "target": centre, "preferred_speed": 10}
    walk = {
        "type": "blend",
        "children": [{"type": "arrive", "target": centre}, {"type": "separation"}],
    }
    apart = {**orca, "keep_apart": True}
    sims = {}
    roots = (("orca", orca), ("keep_apart", apart), ("separation", {"type": "separation"}),
             ("walk", walk))  # fmt: skip
    for name, root in roots:
        text = json.dumps(crowd(args.agents, args.density, root))
        sims[name] = Simulation(
            load_text(text, name, max_agents=args.agents), engine="batch", kernels=args.kernels
        )
    times: dict[str, list[float]] = {name: [] for name in sims}
    names = list(sims)
    for tick in range(args.warmup + args.ticks):
        order = names[tick % len(names) :] + names[: tick % len(names)]
        for name in order:
            start = time.perf_counter()
            sims[name].step()
            if tick >= args.warmup:
                times[name].append(time.perf_counter() - start)
    med = {name: statistics.median(t) for name, t in times.items()}
    print(f"command: python benchmarks/bench_orca.py {' '.join(sys.argv[1:])}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"agents {args.agents}, kernels {args.kernels}, {args.ticks} timed ticks")
    for name in names:
        mean, best = statistics.mean(times[name]) * 1e3, min(times[name]) * 1e3
        print(f"{name:>10}: median {med[name] * 1e3:.2f} ms/tick, mean {mean:.2f}, min {best:.2f}")
    print(f"ratio orca / separation (medians): {med['orca'] / med['separation']:.2f}")
    print(f"ratio orca / arrive+separation (medians): {med['orca'] / med['walk']:.2f}")
    print(f"ratio orca keep_apart / orca (medians): {med['keep_apart'] / med['orca']:.2f}")
    least = {name: min(t) for name, t in times.items()}
    print(f"ratio orca / separation (fastest ticks): {least['orca'] / least['separation']:.2f}")


if __name__ == "__main__":
    main()
