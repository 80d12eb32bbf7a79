"""What an attached viewer costs a game's tick (``sim.serve``, ``sim/serve.py``).

evade_or_flock scaled to N agents (default 1,000; the prey grown as ``behaviortk bench
--grow prey --scale N`` does), batch engine, default kernels, two simulations from the
same scenario and seed:

* **served**: ``sim.serve()`` with a viewer attached: a second process (``Remote``,
  ``viewer/remote.py``) receiving and decoding every frame, as ``behaviortk attach``
  does;
* **plain**: not served.

Each round ticks them interleaved A B B A (``--ticks`` each), so drift in the machine's
speed hits both alike; the report gives each round's ratio served / plain of median ms
per tick, their median (the issue's target: at most 1.10), the frames the game sent and
dropped, and the frames the viewer received. Not a test: figures depend on the machine.

    .venv/bin/python benchmarks/bench_attach.py [--agents 1000] [--ticks 200] [--rounds 5]
        [--out benchmarks/results_attach.md]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's package, wherever the script is run from

from behaviortk.commands.scaling import largest_group, scale_definition  # noqa: E402
from behaviortk.format.limits import MAX_AGENTS  # noqa: E402
from behaviortk.format.loader import load, load_text  # noqa: E402
from behaviortk.sim.simulation import Simulation  # noqa: E402

VIEWER = """
import sys
from behaviortk.viewer.remote import Remote
remote = Remote("127.0.0.1", int(sys.argv[1]))
print("attached", flush=True)
while True:
    remote.frames(0.05)
"""
"""The viewer process: receive and decode every frame until killed."""


def scenario(file: str, agents: int) -> Any:
    raw = load(ROOT / file).raw
    data, _ = scale_definition(raw, agents, grow=largest_group(raw))
    total = sum(int(g["count"]) for g in data["groups"])
    return load_text(json.dumps(data), file, max_agents=max(MAX_AGENTS, total))


def ms_per_tick(sim: Simulation, ticks: int) -> float:
    times = []
    for _ in range(ticks):
        t0 = time.perf_counter()
        sim.step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="definitions/evade_or_flock.json")
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--ticks", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    scen = scenario(args.file, args.agents)
    served, plain = Simulation(scen, "batch"), Simulation(scen, "batch")
    served.step(), plain.step()  # compile or load kernels before timing
    port = served.serve()
    viewer = subprocess.Popen(
        [sys.executable, "-c", VIEWER, str(port)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    server = served.server
    assert server is not None
    try:
        assert viewer.stdout is not None and viewer.stdout.readline().startswith("attached")
        deadline = time.monotonic() + 10
        while server.attached == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        ratios = []
        for _ in range(args.rounds):
            a1 = ms_per_tick(served, args.ticks)
            b1 = ms_per_tick(plain, args.ticks)
            b2 = ms_per_tick(plain, args.ticks)
            a2 = ms_per_tick(served, args.ticks)
            ratios.append(((a1 + a2) / 2, (b1 + b2) / 2))
        time.sleep(0.5)
        sent, dropped, attached = server.sent, server.dropped, server.attached
    finally:
        viewer.kill()
        viewer.wait()
        server.close()
    load1 = os.getloadavg()[0]
    lines = [
        "# Attach: what a viewer costs a game's tick",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_attach.py --agents {args.agents} "
        f"--ticks {args.ticks} --rounds {args.rounds}`",
        f"({args.file} scaled to {plain.agents.n} agents, batch engine, kernels "
        f"{plain.kernel_name}; load average {load1:.2f} on {os.cpu_count()} cores)",
        "",
        "| round | served ms/tick | plain ms/tick | ratio |",
        "| --- | --- | --- | --- |",
    ]
    for i, (a, b) in enumerate(ratios, 1):
        lines.append(f"| {i} | {a:.3f} | {b:.3f} | {a / b:.3f} |")
    median = statistics.median(a / b for a, b in ratios)
    lines += [
        "",
        f"Median ratio served / plain: **{median:.3f}** (target at most 1.10).",
        f"Frames sent {sent}, dropped {dropped}; viewers attached at the end: {attached}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
