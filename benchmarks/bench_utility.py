"""What choosing by utility costs: utility_villager at 10,000 villagers, `utility` against a
`selector` over the same four options.

The shipped villagers (``definitions/utility_villager.json``) scaled to ``--agents``
villagers at the same density (``behaviortk bench --grow villagers``; the wolf stays
one), on the batch engine, in three variants: as shipped (six considerations:
blackboard numbers, the wolf's distance, the neighbours seen, ticks since the villager
slept); without the neighbours consideration (so no neighbour query is sensed); and a
selector (memory false) of the same four children instead of the `utility`, so the
trees differ only in how the option is chosen. All scenes step in turn, tick by tick,
in one process, per kernel choice. Each tick is timed whole and in its decide part
(``engine.prepare``, where inputs are sensed, plus ``engine.decide``); the figures to
read are ratios of medians.

    .venv/bin/python benchmarks/bench_utility.py [--agents 10000] [--ticks 40] [--warmup 5]
        [--kernels numpy numba] [--out benchmarks/results_utility.md]

Not a test: figures depend on the machine and its load; the ratios are what to read.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from behaviortk.commands.scaling import scale_definition  # noqa: E402
from behaviortk.format.loader import load_text  # noqa: E402
from behaviortk.sim.simulation import Simulation  # noqa: E402

VILLAGER = ROOT / "definitions" / "utility_villager.json"


def as_selector(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the villagers' `utility` replaced by a selector of the same children."""
    out = copy.deepcopy(data)
    live = out["trees"]["villager"]["root"]
    choose = live["children"][-1]
    assert choose["type"] == "utility"
    kids = [option["child"] for option in choose["children"]]
    live["children"][-1] = {"type": "selector", "name": "choose", "memory": False, "children": kids}
    return out


def without_neighbours(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without the `neighbours` consideration of the villagers' `utility`."""
    out = copy.deepcopy(data)
    choose = out["trees"]["villager"]["root"]["children"][-1]
    for option in choose["children"]:
        kept = [c for c in option.get("considerations", []) if c["input"]["kind"] != "neighbours"]
        option["considerations"] = kept
    return out


def scenes(agents: int) -> dict[str, dict[str, Any]]:
    raw = json.loads(VILLAGER.read_text())
    data, _ = scale_definition(raw, agents, grow="villagers")
    return {
        "utility": data,
        "utility, no neighbours": without_neighbours(data),
        "selector": as_selector(data),
    }


def timed(engine: Any, spent: list[float]) -> None:
    """Add the seconds ``engine.prepare`` and ``engine.decide`` take to ``spent[0]``."""
    for hook in ("prepare", "decide"):
        inner = getattr(engine, hook)

        def wrapper(*args: Any, _inner: Any = inner) -> Any:
            start = time.perf_counter()
            try:
                return _inner(*args)
            finally:
                spent[0] += time.perf_counter() - start

        setattr(engine, hook, wrapper)


def measure(agents: int, ticks: int, warmup: int, kernels: str) -> dict[str, tuple[float, float]]:
    """Median seconds per tick and in decide of each scene, stepped in turn."""
    sims = {
        name: Simulation(load_text(json.dumps(data)), engine="batch", kernels=kernels)
        for name, data in scenes(agents).items()
    }
    spent = {name: [0.0] for name in sims}
    for name, sim in sims.items():
        timed(sim.engine, spent[name])
    wall: dict[str, list[float]] = {name: [] for name in sims}
    decide: dict[str, list[float]] = {name: [] for name in sims}
    for t in range(warmup + ticks):
        for name, sim in sims.items():
            spent[name][0] = 0.0
            start = time.perf_counter()
            sim.step()
            if t >= warmup:
                wall[name].append(time.perf_counter() - start)
                decide[name].append(spent[name][0])
    med = statistics.median
    return {name: (med(wall[name]), med(decide[name])) for name in sims}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--ticks", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--kernels", nargs="+", default=["numpy", "numba"])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results_utility.md")
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    command = " ".join(["python", *sys.argv])
    lines = [
        "# Choosing by utility: utility_villager, `utility` against a selector",
        "",
        f"Command: `{command}`; batch engine, {args.agents:,} villagers and 1 wolf, "
        f"{args.ticks} ticks after {args.warmup} of warm-up, all scenes stepped in turn.",
        f"1-minute load average at the start: {load_start:.2f} (2 cores, shared).",
        "",
        "Medians in ms; each ratio divides by the selector's figure of the same run.",
        "",
        "| kernels | scene | tick | decide (prepare + decide) | tick / selector's "
        "| decide / selector's |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for kernels in args.kernels:
        med = measure(args.agents, args.ticks, args.warmup, kernels)
        tick0, decide0 = med["selector"]
        for name, (tick, decide) in med.items():
            lines.append(
                f"| {kernels} | {name} | {1e3 * tick:.2f} | {1e3 * decide:.2f} | "
                f"{tick / tick0:.2f} | {decide / decide0:.2f} |"
            )
            print(lines[-1], flush=True)
    lines.append(f"\n1-minute load average at the end: {os.getloadavg()[0]:.2f}.")
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
