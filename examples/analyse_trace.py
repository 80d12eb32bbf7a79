"""Load a definition, run it headless with the Python API, and analyse what happened.

    .venv/bin/python examples/analyse_trace.py [definitions/evade_or_flock.json] [--ticks 600]

Prints, per group, how often each steering action ran, and for the prey of
evade_or_flock the mean distance to the nearest predator while evading and
while not. Everything comes from the in-memory trace records, the same
objects `behaviortk run --headless --trace` writes line by line.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import argparse
import io
from collections import Counter
from pathlib import Path

import numpy as np

import behaviortk
from behaviortk.record.jsonl import TraceWriter, read

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "file", nargs="?", default=str(ROOT / "definitions" / "evade_or_flock.json")
    )
    parser.add_argument("--ticks", type=int, default=600)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()

    scenario = behaviortk.load(args.file)
    sim = behaviortk.Simulation(scenario, engine="py_trees", seed=args.seed)
    buffer = io.StringIO()
    writer = TraceWriter(buffer, sim)
    sim.run(args.ticks, writer.on_tick)
    head, records = read(buffer.getvalue().splitlines())
    size = np.array([head["world"]["width"], head["world"]["height"]])

    counts: dict[str, Counter[str]] = {}
    evading, calm = [], []
    for rec in records:
        agents = rec["agents"]
        for a in agents:
            counts.setdefault(a["group"], Counter()).update(a["active"] or ["(none)"])
        groups = np.array([a["group"] for a in agents])
        if {"prey", "predator"} <= set(groups.tolist()):
            pos = np.array([a["pos"] for a in agents])
            d = pos[groups == "predator"][None] - pos[groups == "prey"][:, None]
            d -= size * np.round(d / size)  # wrapped world: nearest image
            nearest = np.sqrt((d * d).sum(axis=2)).min(axis=1)
            flags = np.array(["evade" in a["active"] for a in agents])[groups == "prey"]
            evading.extend(nearest[flags].tolist())
            calm.extend(nearest[~flags].tolist())

    print(f"{head['scenario']}: {args.ticks} ticks, seed {head['seed']}, dt {head['dt']:.4f} s")
    for group, counter in counts.items():
        total = sum(counter.values())
        shares = ", ".join(f"{name} {100 * n / total:.1f}%" for name, n in counter.most_common())
        print(f"  {group}: {shares}")
    if evading and calm:
        print(
            f"  prey-predator distance: {np.mean(evading):.1f} while evading, {np.mean(calm):.1f} otherwise"
        )
    print(f"  {sim.ticks_per_second():.0f} ticks/s; agent 0 now:\n{sim.snapshot(0)}")


if __name__ == "__main__":
    main()
