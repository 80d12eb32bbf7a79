"""Steering benchmark: flocking forces for 10,000 agents with about 8 neighbours each.

Measures, per tick, the neighbour query (``Sense.neighbours``: cKDTree pairs,
view distance and field of view), then separation, alignment and cohesion
through the registered adapters (the same path ``act`` takes), and the whole
tick of the three requests accumulated by ``act``. Prints a table; no
assertions. Run: ``.venv/bin/python benchmarks/bench_steering.py``.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np

from behaviortk.format.adapters import validate_node
from behaviortk.registry import default
from behaviortk.sense.sensing import Sense
from behaviortk.sim.allocator import reuse_freed_memory
from behaviortk.steering.act import act, make_context
from behaviortk.steering.context import steer
from behaviortk.steering.debug import DebugBuffer
from behaviortk.tree.flat import Decision, flatten
from behaviortk.world.factory import make_agents
from behaviortk.world.state import World

N = 10_000
NEIGHBOURS = 8.0
VIEW = 10.0
REPEATS = 25


def setup() -> tuple[World, object]:
    """Uniform agents at the density that puts ~8 others within the view distance."""
    side = math.sqrt(N * math.pi * VIEW * VIEW / NEIGHBOURS)
    rng = np.random.default_rng(1)
    pos = rng.uniform(0, side, (N, 2))
    vel = rng.normal(0, 20, (N, 2))
    agents = make_agents(pos, vel, max_speed=50.0, view_distance=VIEW, fov=2 * math.pi)
    return World(width=side, height=side, edges="wrap"), agents


def timed_ms(fn: Callable[[], object]) -> tuple[float, float, float]:
    """(median wall, best wall, median CPU) in ms; CPU time is the figure least
    disturbed by other processes on a shared machine."""
    fn()  # warm-up
    wall, cpu = [], []
    for _ in range(REPEATS):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall) * 1e3, min(wall) * 1e3, statistics.median(cpu) * 1e3


def main() -> None:
    reuse_freed_memory()  # as Simulation does
    w, agents = setup()
    models = {
        t: validate_node({"type": t}, default()) for t in ("separation", "alignment", "cohesion")
    }
    rows = np.arange(N)
    rand = np.zeros((N, 1))

    def fresh() -> Sense:
        return Sense(w, agents, rand=rand, tick=0, time=0.0)

    def force_of(tag: str, sense: Sense) -> np.ndarray:
        ctx = make_context(
            models[tag],
            group="agents",
            rows=rows,
            agents=agents,
            world=w,
            sense=sense,
            dt=1 / 60,
            rand_slot=-1,
            memory={},
            debug=DebugBuffer(),
        )
        return steer(models[tag], ctx).linear

    warm = fresh()
    pairs = warm.neighbours("agents").i.size
    root = validate_node(
        {"type": "parallel", "policy": "success_on_all", "children": [{"type": t} for t in models]}
    )
    sim = SimpleNamespace(
        trees={"agents": flatten(root, default())},
        agents=agents,
        world=w,
        memory={},
        debug=DebugBuffer(),
        dt=1 / 60,
        engine=SimpleNamespace(),
        contributions={},
    )
    decisions = {"agents": Decision(np.ones((N, 3), bool), np.zeros((N, 4), np.int8))}

    def query() -> None:
        fresh().neighbours("agents")

    def forces_only() -> None:
        for tag in models:
            force_of(tag, warm)

    def query_and_forces() -> None:
        s = fresh()
        for tag in models:
            force_of(tag, s)

    def whole_act() -> None:
        act(sim, fresh(), decisions)

    rows_out = [
        ("neighbour query (Sense.neighbours)", timed_ms(query)),
        ("separation + alignment + cohesion (cached pairs)", timed_ms(forces_only)),
        ("query + the three forces", timed_ms(query_and_forces)),
        ("act(): query + three leaves + AccumulateForce", timed_ms(whole_act)),
    ]
    print(f"agents: {N}, neighbour pairs: {pairs} ({pairs / N:.2f} per agent), {REPEATS} runs")
    print(f"{'phase':<52} {'median ms':>10} {'best ms':>9} {'cpu ms':>8}")
    print("-" * 82)
    for name, (med, best, cpu) in rows_out:
        print(f"{name:<52} {med:10.2f} {best:9.2f} {cpu:8.2f}")
    print("target: query + the three forces <= 10 ms")


if __name__ == "__main__":
    main()
