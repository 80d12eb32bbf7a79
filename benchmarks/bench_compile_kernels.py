"""Each hand-written kernel's cold compile on its own: CPU seconds per ``backend.WARM`` entry.

Issue 25 item 3 asks which kernels make evacuation's first run slow. Every
measurement is a fresh process with an empty cache folder of its own
(``NUMBA_CACHE_DIR``): it imports the compiled path, compiles one tiny function
first (numba's own first-compile set-up, the same for every kernel, is reported
apart as ``set-up``), then times the kernel's warm-up (``WARM[name]()``) in CPU
seconds of that process. Helpers a kernel shares with another (a formula, a
spatial helper) are counted in each, so the sum is a little above a run's
total. ``--baseline DIR`` (a checkout of the code before) alternates the two trees
kernel by kernel. ``--opt N`` sets numba's LLVM optimisation level (``NUMBA_OPT``) for the
children; with ``--opt 3,0`` the levels alternate kernel by kernel, so the
machine's load falls on both alike.

    python benchmarks/bench_compile_kernels.py                       # every WARM kernel
    python benchmarks/bench_compile_kernels.py --names neighbour_query,non_penetration \\
        --opt 3,0 --repeats 3
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
import sys, time
from numba import njit
from behaviortk.sim.backend import WARM
start = time.process_time()
njit(lambda x: x + 1)(1)
setup = time.process_time() - start
start = time.process_time()
WARM[sys.argv[1]]()
print(setup, time.process_time() - start)
"""


def one(tree: Path, name: str, opt: str | None) -> tuple[float, float]:
    """``(numba's set-up, the kernel's compile)`` in CPU seconds, in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="kernels-") as cache:
        env = {**os.environ, "PYTHONPATH": str(tree), "NUMBA_CACHE_DIR": cache}
        env.pop("NUMBA_OPT", None)
        if opt is not None:
            env["NUMBA_OPT"] = opt
        out = subprocess.run(
            [sys.executable, "-c", CHILD, name],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    return float(out[-2]), float(out[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", help="comma-separated WARM names (default: all)")
    parser.add_argument("--opt", help="NUMBA_OPT level(s), comma-separated (default: numba's)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--baseline", type=Path, help="a checkout of the code before")
    args = parser.parse_args()
    trees = [("this tree", ROOT)]
    if args.baseline is not None:
        trees.insert(0, ("baseline", args.baseline.resolve()))
    if args.names:
        names = args.names.split(",")
    else:
        sys.path.insert(0, str(ROOT))
        from behaviortk.sim.backend import WARM

        names = list(WARM)
    opts: list[str | None] = args.opt.split(",") if args.opt else [None]
    columns = [(label, tree, opt) for label, tree in trees for opt in opts]
    found: dict[tuple[str, str, str | None], list[float]] = {}
    setups: list[float] = []
    for repeat in range(args.repeats):
        for name in names:
            for label, tree, opt in columns:
                setup, seconds = one(tree, name, opt)
                setups.append(setup)
                found.setdefault((name, label, opt), []).append(seconds)
                level = "default" if opt is None else opt
                print(
                    f"repeat {repeat + 1} {name} {label} opt {level}: {seconds:.2f} s CPU"
                    f" (set-up {setup:.2f} s), load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
    print(f"\nload average at the end: {os.getloadavg()}")
    print(f"set-up (median): {statistics.median(setups):.2f} s CPU")
    heads = [f"{label}, opt {opt or 'default'}, s CPU" for label, _, opt in columns]
    print("| kernel | " + " | ".join(heads) + " |")
    print("| --- |" + " ---: |" * len(columns))
    total = dict.fromkeys(((label, opt) for label, _, opt in columns), 0.0)
    for name in names:
        cells = []
        for label, _, opt in columns:
            median = statistics.median(found[(name, label, opt)])
            total[(label, opt)] += median
            cells.append(f"{median:.2f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("| sum | " + " | ".join(f"{v:.2f}" for v in total.values()) + " |")


if __name__ == "__main__":
    main()
