"""The first run on an empty kernel cache, and the next one: wall time of the real command.

Issue 25 item 3: ``behaviortk run definitions/evacuation.json --headless --ticks 10``
on an empty numba cache took 30-38 s, nearly all of it compiling every kernel.
This runs that command in fresh processes, each first run with a cache folder of
its own (``NUMBA_CACHE_DIR``, empty), then once more on that now-warm cache, and
reports each process's wall time, its CPU time (with its children: the second process
that compiles alongside, ``sim/compile_ahead.py``) and the summary's ``compile`` figure. With
``--baseline DIR`` (a checkout of the code before, e.g. ``git archive <commit>``
unpacked there) the two trees run alternately, so the machine's load falls on
both alike and the ratio of their medians is the figure to quote.

    python benchmarks/bench_compile.py --baseline /tmp/base --repeats 3
    python benchmarks/bench_compile.py --definition definitions/wander.json --engine batch

On a machine other work keeps busy the wall times swing with that work; the CPU
times (the compiler's work) and the alternating order are what make the two
trees comparable there.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPILE = re.compile(r"compile (\d+\.\d+) s")


def cpu_of_children() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def one_run(
    tree: Path, cache: Path, definition: str, ticks: int, engine: str
) -> tuple[float, float, float]:
    """``(wall seconds of the whole process, its CPU seconds, the summary's compile seconds)``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "NUMBA_CACHE_DIR": str(cache)}
    env.pop("BEHAVIORTK_KERNELS", None)
    argv = [sys.executable, "-m", "behaviortk", "run", definition, "--headless"]
    argv += ["--ticks", str(ticks), "--engine", engine]
    start, cpu = time.perf_counter(), cpu_of_children()
    proc = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, cpu_of_children() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    found = COMPILE.search(proc.stdout)
    return wall, cpu, float(found.group(1)) if found else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definition", default="definitions/evacuation.json")
    parser.add_argument("--ticks", type=int, default=10)
    parser.add_argument("--engine", default="auto", help="run's --engine (default auto)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="a checkout of the code before")
    args = parser.parse_args()
    trees = [("this tree", ROOT)]
    if args.baseline is not None:
        trees.insert(0, ("baseline", args.baseline.resolve()))
    figures: dict[str, dict[str, list[float]]] = {name: {} for name, _ in trees}
    for repeat in range(args.repeats):
        for name, tree in trees:
            with tempfile.TemporaryDirectory(prefix="kernels-") as cache:
                cold = one_run(tree, Path(cache), args.definition, args.ticks, args.engine)
                warm = one_run(tree, Path(cache), args.definition, args.ticks, args.engine)
            for label, value in (
                ("cold wall", cold[0]), ("cold cpu", cold[1]), ("cold compile", cold[2]),
                ("warm wall", warm[0]), ("warm cpu", warm[1]), ("warm compile", warm[2]),
            ):  # fmt: skip
                figures[name].setdefault(label, []).append(value)
            print(
                f"repeat {repeat + 1} {name}: empty cache {cold[0]:.1f} s wall, {cold[1]:.1f} s"
                f" CPU (compile {cold[2]:.1f} s); warm cache {warm[0]:.1f} s wall, {warm[1]:.1f}"
                f" s CPU (compile {warm[2]:.2f} s); load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    print(f"\nload average at the end: {os.getloadavg()}")
    print("median over repeats:")
    for name, found in figures.items():
        text = ", ".join(f"{k} {statistics.median(v):.2f} s" for k, v in found.items())
        print(f"  {name}: {text}")
    if args.baseline is not None:
        base, new = figures["baseline"], figures["this tree"]
        for label in ("cold wall", "cold cpu", "warm wall", "warm cpu"):
            ratio = statistics.median(base[label]) / statistics.median(new[label])
            print(f"  {label}: baseline / this tree = {ratio:.2f}x")


if __name__ == "__main__":
    main()
