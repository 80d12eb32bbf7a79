"""can_see against 50 obstacles and 50 walls for 10,000 agents, against one sense phase.

evade_or_flock scaled to 10,000 agents (world grown to keep the density), with 50
obstacle circles and 50 wall segments scattered over it. Each round runs one tick
(its sense phase timed by the Simulation) and then evaluates ``can_see`` for every
prey on a fresh ``Sense`` of the next tick, interleaved so both see the same load:

- ``view``: the prey's own view (distance 60, fov 270) towards the nearest other prey;
- ``worst``: distance and fov unbounded, so all 10,000 rows run the line-of-sight test.

Each is timed cold (the target resolved inside the call) and warm (the target
already cached by the sense phase, as when another leaf of the tree uses it). Warm
is what ``can_see`` itself adds; cold adds the target's own resolution (a nearest
query), which any leaf on that target pays. The target: warm ``can_see / sense
phase`` at most 1.

    .venv/bin/python benchmarks/bench_can_see.py [--agents N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from behaviortk.commands.scaling import largest_group, scale_definition
from behaviortk.format.adapters import validate_node
from behaviortk.format.loader import load_text
from behaviortk.leaves.conditions import can_see
from behaviortk.registry import default
from behaviortk.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parent.parent


def cluttered(agents: int) -> dict[str, Any]:
    """evade_or_flock at ``agents`` with 50 obstacles and 50 walls (seeded layout)."""
    raw = json.loads((ROOT / "definitions" / "evade_or_flock.json").read_text())
    data, _ = scale_definition(raw, agents, grow=largest_group(raw))
    w, h = data["world"]["width"], data["world"]["height"]
    rng = np.random.default_rng(3)
    data["obstacles"] = [
        {"at": [float(x), float(y)], "radius": float(r)}
        for x, y, r in zip(
            rng.uniform(0, w, 50), rng.uniform(0, h, 50), rng.uniform(5, 20, 50), strict=True
        )
    ]
    start = np.column_stack([rng.uniform(0, w, 50), rng.uniform(0, h, 50)])
    angle = rng.uniform(0, 2 * np.pi, 50)
    end = start + 40.0 * np.column_stack([np.cos(angle), np.sin(angle)])
    data["walls"] = [
        {"from": a.tolist(), "to": b.tolist()} for a, b in zip(start, end, strict=True)
    ]
    return data


def timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    sim = Simulation(load_text(json.dumps(cluttered(args.agents)), "cluttered"), engine="batch")
    sim.run(3)
    nodes = {
        "view": validate_node(
            {"type": "can_see", "target": {"kind": "nearest", "group": "prey"}}, default()
        ),
        "worst": validate_node(
            {
                "type": "can_see",
                "target": {"kind": "nearest", "group": "predator"},
                "distance": 1e9,
                "fov": 360,
            },
            default(),
        ),
    }
    rows = sim.agents.slices["prey"]
    prev = np.zeros(rows.stop - rows.start, dtype=bool)
    times: dict[str, list[float]] = {"sense": []}
    seen: dict[str, float] = {}
    for _ in range(args.rounds):
        before = sim.timings["sense"]
        sim.step()
        times["sense"].append(sim.timings["sense"] - before)
        for name, model in nodes.items():
            cold = sim.sense()
            times.setdefault(f"{name} cold", []).append(
                timed(lambda m=model, s=cold: can_see(m, s, "prey", prev, None))
            )
            warm = sim.sense()
            warm.target(model.target, "prey")
            times.setdefault(f"{name} warm", []).append(
                timed(lambda m=model, s=warm: can_see(m, s, "prey", prev, None))
            )
            seen[name] = float(can_see(model, warm, "prey", prev, None).mean())
    sense = statistics.median(times.pop("sense")) * 1e3
    print(
        f"agents {sim.agents.n:,}, 50 obstacles, 50 walls; batch engine, "
        f"median of {args.rounds} interleaved rounds"
    )
    print(f"sense phase of a tick:        {sense:8.2f} ms")
    for name, values in times.items():
        ms = statistics.median(values) * 1e3
        kind = name.split()[0]
        print(
            f"can_see {name:<12} {ms:8.2f} ms  ratio {ms / sense:5.2f}  "
            f"(sees {seen[kind]:.1%} of prey)"
        )


if __name__ == "__main__":
    main()
