"""How a cold compile's work splits between the run's process and the second one.

``sim/compile_ahead.py`` shares a run's uncached kernels with a second process
when the machine has a core to spare. On a busy machine wall times say little,
so this measures CPU: a fresh process builds one Simulation on compiled kernels
with an empty cache (``NUMBA_CACHE_DIR``), alone or with the second process
(forced on whatever the load), and reports its wall time, its own CPU time
(the critical path on an idle machine with a core each) and the second
process's. Runs alternate, so the load falls on both alike.

    python benchmarks/bench_compile_lanes.py --definition definitions/evacuation.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import resource, sys, time
from behaviortk.sim import compile_ahead
if sys.argv[2] == "on":
    compile_ahead.wanted = lambda problem: problem is None
from behaviortk.sim.simulation import Simulation
start = time.perf_counter()
Simulation(sys.argv[1], engine="batch", kernels="numba")
wall = time.perf_counter() - start
own = resource.getrusage(resource.RUSAGE_SELF)
other = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, own.ru_utime + own.ru_stime, other.ru_utime + other.ru_stime)
"""


def one(definition: str, second: str) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory(prefix="kernels-") as cache:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": cache}
        out = subprocess.run(
            [sys.executable, "-c", CHILD, definition, second],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    wall, own, other = (float(v) for v in out[-3:])
    return wall, own, other


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definition", default="definitions/evacuation.json")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    found: dict[str, list[tuple[float, float, float]]] = {"off": [], "on": []}
    for repeat in range(args.repeats):
        for second in ("off", "on"):
            wall, own, other = one(args.definition, second)
            found[second].append((wall, own, other))
            print(
                f"repeat {repeat + 1}, second process {second}: wall {wall:.1f} s, this process"
                f" {own:.1f} s CPU, the second {other:.1f} s CPU, load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    for second, rows in found.items():
        wall, own, other = (statistics.median(r[k] for r in rows) for k in range(3))
        print(f"median, second process {second}: wall {wall:.1f} s, CPU {own:.1f} + {other:.1f} s")


if __name__ == "__main__":
    main()
