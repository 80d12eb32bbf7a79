"""Tick time of one tree's compiled kernels, for comparing two trees run alternately.

Issue 25 item 3 changed how kernels are compiled (helpers as calls, not numba's
IR inlining); this checks the ticks did not get slower. One process per tree
(two checkouts cannot share a process) builds evacuation and evade_or_flock's
dense scene (4,997 prey, caps 64 and 8; batch engine, numba kernels), warms
them up, then steps them in turn and prints each one's median ms per tick (CPU
time of the process). It imports the tree it is run in (the current folder), so
run it alternately in both trees, each with its own warm cache, and compare:

    for t in /tmp/base $PWD; do (cd $t && PYTHONPATH=$t python $OLDPWD/benchmarks/bench_tick_trees.py); done
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path.cwd()
sys.path.insert(0, str(ROOT))

from behaviortk.format.loader import load_text  # noqa: E402
from behaviortk.sim.simulation import Simulation  # noqa: E402


def dense(cap: int) -> object:
    """evade_or_flock with 4,997 prey keeping at most ``cap`` neighbours."""
    found = json.loads((ROOT / "definitions" / "evade_or_flock.json").read_text())
    for group in found["groups"]:
        if group["name"] == "prey":
            group["count"], group["max_neighbours"] = 4_997, cap
    return load_text(json.dumps(found))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--ticks", type=int, default=80)
    args = parser.parse_args()
    scenes = {
        "evacuation": Simulation(
            str(ROOT / "definitions" / "evacuation.json"), engine="batch", kernels="numba"
        ),
        "dense64": Simulation(dense(64), engine="batch", kernels="numba"),
        "dense8": Simulation(dense(8), engine="batch", kernels="numba"),
    }
    for sim in scenes.values():
        for _ in range(args.warmup):
            sim.step()
    found: dict[str, list[float]] = {name: [] for name in scenes}
    for _ in range(args.ticks):
        for name, sim in scenes.items():
            start = time.process_time()
            sim.step()
            found[name].append(time.process_time() - start)
    print(" ".join(f"{k} {1000 * statistics.median(v):.2f}" for k, v in found.items()))


if __name__ == "__main__":
    main()
