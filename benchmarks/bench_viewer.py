"""Frame preparation cost of the viewer for 5,000 agents (CPU only: NumPy geometry and colours).

Times ``build_scene(...).build()``: everything the window computes before the
single upload + draw call for the world picture. The requirement is <= 5 ms
per frame for 5,000 agents with overlays off. Run:

    .venv/bin/python benchmarks/bench_viewer.py
"""

from __future__ import annotations

import statistics
import time
from types import SimpleNamespace

import numpy as np

from behaviortk.steering.debug import DebugBuffer
from behaviortk.viewer.scene import ViewOptions, build_scene
from behaviortk.viewer.viewport import Viewport
from behaviortk.world.factory import make_agents
from behaviortk.world.state import World


def state(n: int) -> SimpleNamespace:
    rng = np.random.default_rng(0)
    world = World(
        2000.0,
        1500.0,
        "wrap",
        obstacle_pos=rng.uniform(0, 2000, (20, 2)),
        obstacle_radius=rng.uniform(10, 40, 20),
    )
    groups = [("prey", n - n // 10), ("predators", n // 10)]
    agents = make_agents(
        rng.uniform(0, 1500, (n, 2)), rng.normal(0, 30, (n, 2)), groups=groups, radius=4.0
    )
    return SimpleNamespace(world=world, agents=agents, trees={}, decisions={}, debug=DebugBuffer())


def median_ms(sim: SimpleNamespace, opts: ViewOptions, repeats: int = 60) -> float:
    vp = Viewport(sim.world.width, sim.world.height, 8, 8, 904, 718)
    build_scene(sim, vp, opts).build()  # warm-up
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        build_scene(sim, vp, opts).build()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def main() -> None:
    print("| agents | overlays | frame prep (median ms) |")
    print("| ---: | --- | ---: |")
    for n in (500, 5000, 20000):
        sim = state(n)
        print(f"| {n} | none | {median_ms(sim, ViewOptions()):.2f} |")
    sim = state(5000)
    print(
        f"| 5000 | velocity+force | {median_ms(sim, ViewOptions(overlays={'velocity', 'force'})):.2f} |"
    )
    print(f"| 5000 | none, selected 0 | {median_ms(sim, ViewOptions(selected=0)):.2f} |")


if __name__ == "__main__":
    main()
