"""The `visible` nearest target against the plain nearest and one neighbour query.

10,000 observers among 10,000 agents of another group (or of their own), 50
obstacle circles and 50 wall segments, field of view 120 degrees: per run, the
best and median milliseconds of

- nearest: ``Sense.nearest`` (one k-d tree query);
- visible: ``Sense.nearest_visible`` (k nearest, the first visible, more candidates
  for those that need them), with how many observers looked again;
- neighbours: ``Sense.neighbours`` (what flocking reads each tick), for scale;

each measured on a fresh ``Sense`` (nothing cached), interleaved in rounds so
that load on the machine hits them alike; then whole batch-engine ticks of the
same crowd with guards running ``selector(pursuit nearest thief, wander)``, the
target with ``"visible": true`` or without, ticked in turns. Ratios within one
run are the figures to compare.

Usage: python benchmarks/bench_visible.py [--n 10000] [--rounds 5] [--repeat 5] [--ticks 10]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from behaviortk.format.loader import load_text
from behaviortk.format.world import Wall
from behaviortk.sense.sensing import Sense
from behaviortk.sim.simulation import Simulation
from behaviortk.world import visible_nearest
from behaviortk.world.build import wall_geometry
from behaviortk.world.factory import make_agents
from behaviortk.world.state import World


def scene(n: int, seed: int = 0) -> tuple[World, object]:
    """A wrapped square with ~8 agents within the view distance of each, 50 obstacles and
    50 walls; two groups of n (observers, observed)."""
    rng = np.random.default_rng(seed)
    side = float(np.sqrt(2 * n) * 10.0)
    view = float(np.sqrt(8.0 / (np.pi * 2 * n / side**2)))
    starts = rng.random((50, 2)) * side
    ends = starts + rng.normal(size=(50, 2)) * 4 * view
    a, b, normal = wall_geometry(
        [
            Wall.model_validate({"from": p.tolist(), "to": q.tolist()})
            for p, q in zip(starts, ends, strict=True)
        ]
    )
    world = World(
        width=side,
        height=side,
        edges="wrap",
        obstacle_pos=rng.random((50, 2)) * side,
        obstacle_radius=rng.random(50) * view + 2.0,
        wall_a=a,
        wall_b=b,
        wall_normal=normal,
    )
    angle = rng.random(2 * n) * 2 * np.pi
    agents = make_agents(
        rng.random((2 * n, 2)) * side,
        heading=np.stack([np.cos(angle), np.sin(angle)], axis=1),
        view_distance=view,
        fov=np.radians(120.0),
        groups=[("guards", n), ("thieves", n)],
    )
    return world, agents


def definition(n: int, world: World, agents: Any, visible: bool) -> dict[str, Any]:
    """The scene as a file: guards pursue the nearest (visible) thief, else wander."""
    target = {"kind": "nearest", "group": "thieves", "visible": visible}
    guard = {
        "type": "selector",
        "memory": False,
        "children": [{"type": "pursuit", "target": target}, {"type": "wander"}],
    }
    common = {"view_distance": float(agents.view_distance[0]), "fov": 120, "max_speed": 20}
    pos = agents.pos.tolist()
    walls = [
        {"from": a.tolist(), "to": b.tolist()}
        for a, b in zip(world.wall_a, world.wall_b, strict=True)
    ]
    return {
        "name": "visible_bench",
        "world": {"width": world.width, "height": world.height, "edges": "wrap", "dt": 0.05},
        "obstacles": [
            {"at": c.tolist(), "radius": float(r)}
            for c, r in zip(world.obstacle_pos, world.obstacle_radius, strict=True)
        ],
        "walls": walls,
        "groups": [
            {
                "name": "guards",
                "count": n,
                "tree": "guard",
                **common,
                "spawn": {"kind": "positions", "points": pos[:n]},
            },
            {
                "name": "thieves",
                "count": n,
                "tree": "roam",
                **common,
                "spawn": {"kind": "positions", "points": pos[n:]},
            },
        ],
        "trees": {"guard": {"root": guard}, "roam": {"root": {"type": "wander"}}},
    }


def ticks(
    n: int, world: World, agents: Any, rounds: int, per_round: int
) -> dict[bool, list[float]]:
    """Median ms per batch tick, per round, with the target visible and not."""
    sims = {}
    for visible in (True, False):
        text = json.dumps(definition(n, world, agents, visible))
        sims[visible] = Simulation(load_text(text, "bench.json", max_agents=2 * n), engine="batch")
    for sim in sims.values():
        sim.run(5)  # warm up
    out: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(rounds):
        for visible, sim in sims.items():
            out[visible].append(float(np.median(timed(sim.step, per_round))))
    return out


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1e3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ticks", type=int, default=10, help="ticks per round and simulation")
    args = parser.parse_args()
    world, agents = scene(args.n)

    def fresh() -> Sense:
        return Sense(world, agents, np.zeros((agents.n, 0)), 0, 0.0)  # type: ignore[arg-type]

    calls: list[int] = []
    one_round = visible_nearest._round

    def counting(*a: object, **kw: object) -> np.ndarray:
        calls.append(len(a[3]))  # type: ignore[arg-type]
        return one_round(*a, **kw)  # type: ignore[arg-type]

    visible_nearest._round = counting  # type: ignore[assignment]
    cases = {
        "nearest": lambda: fresh().nearest("guards", "thieves"),
        "visible": lambda: fresh().nearest_visible("guards", "thieves"),
        "visible, own group": lambda: fresh().nearest_visible("guards", "same"),
        "neighbours": lambda: fresh().neighbours("guards", "thieves"),
    }
    for fn in cases.values():
        fn()  # warm up (scipy import, caches)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, fn in cases.items():
            times[name] += timed(fn, args.repeat)
    calls.clear()
    found = fresh().nearest_visible("guards", "thieves")[0]
    print(
        f"{args.n:,} guards, {args.n:,} thieves, 50 obstacles, 50 walls, fov 120; "
        f"{(found >= 0).mean():.1%} see a thief; {sum(calls) - args.n:,} guards looked again "
        f"({len(calls)} queries)"
    )
    print("| query | best ms | median ms | median / neighbours |")
    print("|---|---:|---:|---:|")
    base = float(np.median(times["neighbours"]))
    for name, values in times.items():
        median = float(np.median(values))
        print(f"| {name} | {min(values):.2f} | {median:.2f} | {median / base:.2f} |")
    per_tick = ticks(args.n, world, agents, args.rounds, args.ticks)
    print()
    print("| round | visible ms/tick | plain ms/tick | visible - plain ms |")
    print("|---:|---:|---:|---:|")
    for r, (v, plain) in enumerate(zip(per_tick[True], per_tick[False], strict=True)):
        print(f"| {r + 1} | {v:.1f} | {plain:.1f} | {v - plain:.1f} |")
    v, plain = np.median(per_tick[True]), np.median(per_tick[False])
    print(f"| median | {v:.1f} | {plain:.1f} | **{v - plain:.1f}** |")


if __name__ == "__main__":
    main()
