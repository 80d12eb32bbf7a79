"""What a formation costs a tick, and what one re-assignment of its slots costs.

A captain seeks a far point; a squad of N (default 500) follows it, as one of two
simulations from the same scenario and seed, batch engine, default kernels:

* **formation**: the squad keeps a `grid` formation on the captain (`formation_slot`:
  each tick, every member's slot in the captain's frame, then Millington's Arrive with the
  captain's velocity fed forward; `sense/formations.py`);
* **offset pursuit**: every soldier runs `offset_pursuit` on the captain with one offset
  (Buckland's leader-relative arrive: the nearest node the toolkit had before).

Each round ticks the pair interleaved A B B A (drift in the machine's speed hits both
alike) and gives the ratio of their median ms per tick; the report gives each round's and
their median. The steady state assigns nothing (slots change only with the members), so
the cost of one assignment (``scipy.optimize.linear_sum_assignment`` on N members, the
O(N^3) step) is timed apart, against the median formation tick. Not a test: figures depend
on the machine and its load.

    .venv/bin/python benchmarks/bench_formations.py [--agents 500] [--ticks 60]
        [--rounds 5] [--out benchmarks/results_formations.md]
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's package, wherever the script is run from

import numpy as np  # noqa: E402

from behaviortk.format.loader import load_text  # noqa: E402
from behaviortk.sense import formations as fm  # noqa: E402
from behaviortk.sim.simulation import Simulation  # noqa: E402


def scenario(agents: int, leaf: dict[str, Any]) -> str:
    """A captain going right and ``agents`` soldiers behind it running ``leaf``."""
    return json.dumps(
        {
            "name": "formation bench",
            "world": {"width": 20000, "height": 4000, "edges": "contain", "dt": 0.02, "seed": 5},
            "formations": [{"name": "block", "pattern": "grid", "spacing": 12}],
            "groups": [
                {
                    "name": "captain",
                    "count": 1,
                    "spawn": {"kind": "positions", "points": [[1000, 2000]]},
                    "heading": 0,
                    "max_speed": 30,
                    "tree": "go",
                },
                {
                    "name": "squad",
                    "count": agents,
                    "spawn": {"kind": "area", "min": [200, 1600], "max": [900, 2400]},
                    "heading": 0,
                    "max_speed": 60,
                    "tree": "follow",
                    "formation": {
                        "name": "block",
                        "anchor": {"kind": "nearest", "group": "captain"},
                    },
                },
            ],
            "trees": {
                "go": {"root": {"type": "seek", "target": {"kind": "point", "at": [19000, 2000]}}},
                "follow": {"root": leaf},
            },
        }
    )


LEAVES = {
    "formation": {"type": "formation_slot"},
    "offset pursuit": {
        "type": "offset_pursuit",
        "target": {"kind": "nearest", "group": "captain"},
        "offset": [-40, 0],
    },
}


def tick_ms(sim: Simulation, ticks: int) -> float:
    """Median ms per step over ``ticks`` steps."""
    times = []
    for _ in range(ticks):
        t0 = time.perf_counter()
        sim.step()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times)


def assign_ms(members: int) -> float:
    """Median ms of one assignment of ``members`` members to a grid's slots."""
    rng = np.random.default_rng(1)
    pos = rng.uniform(0, 400, (members, 2))
    offsets = fm.pattern_offsets("grid", 12.0, members)
    anchor, heading = np.full((members, 2), 500.0), np.tile([1.0, 0.0], (members, 1))
    points = fm.slot_points(anchor, heading, offsets)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        fm.assign(pos, points)
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=500)
    parser.add_argument("--ticks", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results_formations.md")
    args = parser.parse_args()

    sims = {
        name: Simulation(load_text(scenario(args.agents, leaf)), "batch")
        for name, leaf in LEAVES.items()
    }
    for sim in sims.values():
        sim.run(20)  # formed, kernels warm
    a, b = sims["formation"], sims["offset pursuit"]
    ratios, formation_ticks = [], []
    for _ in range(args.rounds):
        ta1, tb1 = tick_ms(a, args.ticks), tick_ms(b, args.ticks)
        tb2, ta2 = tick_ms(b, args.ticks), tick_ms(a, args.ticks)
        ratios.append((ta1 + ta2) / (tb1 + tb2))
        formation_ticks.append((ta1 + ta2) / 2)

    assigns = {m: assign_ms(m) for m in sorted({10, 50, 200, args.agents})}
    tick = statistics.median(formation_ticks)
    load = os.getloadavg()
    lines = [
        "# Formations: cost per tick and per re-assignment",
        "",
        f"Command: `python benchmarks/bench_formations.py --agents {args.agents} "
        f"--ticks {args.ticks} --rounds {args.rounds}`",
        f"Load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (2 cores, shared)",
        f"Kernels: {a.kernel_name}; batch engine; squad of {args.agents:,} and a captain.",
        "",
        "| round | formation / offset pursuit (median ms per tick, A B B A) |",
        "| --- | --- |",
        *[f"| {i + 1} | {r:.3f} |" for i, r in enumerate(ratios)],
        f"| median | **{statistics.median(ratios):.3f}** |",
        "",
        f"Median formation tick: {tick:.2f} ms. One assignment (linear_sum_assignment on "
        "members spread over 400 x 400, slots of a grid 500 away; median of 3), which runs "
        "only when the members change:",
        "",
        "| members | ms | formation ticks of this run |",
        "| --- | --- | --- |",
        *[f"| {m:,} | {ms:.2f} | {ms / tick:.2f} |" for m, ms in assigns.items()],
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
