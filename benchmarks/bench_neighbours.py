"""Neighbour query for N agents with about 8 neighbours each: which index is faster.

Prints a table (best and median of repeated runs, milliseconds) for:
- grid pairs: the uniform grid's unordered pairs (behaviortk.world.grid)
- tree pairs: cKDTree.query_pairs(output_type="ndarray")
- tree sdm: cKDTree.sparse_distance_matrix(self, output_type="ndarray") (directed)
- sense.neighbours: the full Sense query as the engines see it (index + sort by
  (i, j) + view distance + field of view + CSR offsets), with a 270 degree FOV
and the same full query with glibc's default malloc thresholds for contrast
(run as a subprocess, since the setting is process-wide).

Usage: python benchmarks/bench_neighbours.py [--n 10000] [--repeat 40]
Not a test: figures depend on the machine and its load; best-of is the
figure to compare.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.spatial import cKDTree

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from behaviortk.sense.sensing import Sense
from behaviortk.sim.allocator import reuse_freed_memory
from behaviortk.world.factory import make_agents
from behaviortk.world.grid import grid_pairs
from behaviortk.world.state import World

NEIGHBOURS = 8.0


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3, float(np.median(times)) * 1e3


def scene(n: int, seed: int = 0) -> tuple[World, np.ndarray, float]:
    """A wrapped square world whose density gives ~8 agents within the view radius."""
    side = float(np.sqrt(n) * 10.0)
    radius = float(np.sqrt(NEIGHBOURS / (np.pi * n / side**2)))
    pos = np.random.default_rng(seed).random((n, 2)) * side
    return World(width=side, height=side, edges="wrap"), pos, radius


def full_query(n: int, repeat: int) -> tuple[float, float, float]:
    world, pos, radius = scene(n)
    vel = np.random.default_rng(1).normal(size=(n, 2))
    agents = make_agents(pos, vel, view_distance=radius, fov=np.radians(270))

    def run() -> object:
        return Sense(world, agents, np.zeros((n, 0)), 0, 0.0).neighbours("agents")

    best, median = timed(run, repeat)
    pairs = Sense(world, agents, np.zeros((n, 0)), 0, 0.0).neighbours("agents").i.size
    return best, median, pairs / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--only-full", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only_full:
        best, median, _ = full_query(args.n, args.repeat)
        print(f"{best:.2f} {median:.2f}")
        return

    reuse_freed_memory()
    n = args.n
    world, pos, radius = scene(n)
    size = world.size
    rows: list[tuple[str, float, float, str]] = []

    def add(name: str, fn: Callable[[], object], note: str = "") -> None:
        best, median = timed(fn, args.repeat)
        rows.append((name, best, median, note))

    add("grid pairs", lambda: grid_pairs(pos, world.width, world.height, radius, True))

    def tree_pairs() -> object:
        tree = cKDTree(pos, boxsize=size, balanced_tree=False, compact_nodes=False)
        return tree.query_pairs(radius, output_type="ndarray")

    def tree_sdm() -> object:
        tree = cKDTree(pos, boxsize=size, balanced_tree=False, compact_nodes=False)
        return tree.sparse_distance_matrix(tree, radius, output_type="ndarray")

    add("tree pairs (build + query_pairs)", tree_pairs)
    add("tree sdm (build + sparse_distance_matrix)", tree_sdm)
    best, median, per_agent = full_query(n, args.repeat)
    rows.append(("sense.neighbours (fov 270)", best, median, f"{per_agent:.1f} in view/agent"))
    env = dict(os.environ, BEHAVIORTK_KEEP_MALLOC="1")
    out = subprocess.run(
        [sys.executable, __file__, "--n", str(n), "--repeat", str(args.repeat), "--only-full"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    rows.append(("sense.neighbours, default malloc", float(out[0]), float(out[1]), ""))

    print(f"neighbour query, N={n}, radius {radius:.2f} (~{NEIGHBOURS:.0f} within), wrapped world")
    print(f"{'method':44s} {'best ms':>8s} {'median ms':>10s}  note")
    for name, b, m, note in rows:
        print(f"{name:44s} {b:8.2f} {m:10.2f}  {note}")


if __name__ == "__main__":
    main()
