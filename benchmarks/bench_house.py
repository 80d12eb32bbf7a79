"""Two checkouts of behaviortk on the same scenes, interleaved: did a refactor cost speed?

Issue 24 moved every formula and deleted the compiled mirror; its contract is that
``bench`` on evade_or_flock at 10,000 and 50,000 agents and flocking_lj_obstacles at
50,000 stays within noise. Each round runs ``behaviortk bench --json`` once per
checkout (the order alternates between rounds, so both see the same machine load)
and the medians of the per-run ``ms_per_tick`` medians are compared as a ratio.

    python benchmarks/bench_house.py --old /path/to/old/checkout [--new .] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENES = [
    ("evade_or_flock", 10_000),
    ("evade_or_flock", 50_000),
    ("flocking_lj_obstacles", 50_000),
]


def ms_per_tick(checkout: Path, scene: str, agents: int, ticks: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    argv = [
        sys.executable, "-m", "behaviortk", "bench", str(ROOT / "definitions" / f"{scene}.json"),
        "--scale", str(agents), "--engine", "batch", "--kernels", "numba",
        "--ticks", str(ticks), "--warmup", "10", "--json",
    ]  # fmt: skip
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return float(json.loads(done.stdout.strip().splitlines()[-1])["ms_per_tick"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the checkout before the change")
    parser.add_argument("--new", type=Path, default=ROOT, help="the checkout after (default: this)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ticks", type=int, default=60)
    args = parser.parse_args()
    print("| scene | agents | old ms/tick | new ms/tick | new / old | runs each |")
    print("|---|---:|---:|---:|---:|---:|")
    for scene, agents in SCENES:
        times: dict[str, list[float]] = {"old": [], "new": []}
        for k in range(args.rounds):
            order = [("old", args.old), ("new", args.new)]
            for label, checkout in order if k % 2 == 0 else order[::-1]:
                times[label].append(ms_per_tick(checkout.resolve(), scene, agents, args.ticks))
        old, new = statistics.median(times["old"]), statistics.median(times["new"])
        print(
            f"| {scene} | {agents:,} | {old:.2f} | {new:.2f} | {new / old:.3f} | {args.rounds} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
