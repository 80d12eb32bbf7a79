"""What an attached viewer costs a game's tick (``sim.serve``, ``sim/serve.py``).

evade_or_flock scaled to N agents (default 1,000; the prey grown as ``behaviortk bench
--grow prey --scale N`` does), batch engine, default kernels, two simulations from the
same scenario and seed:

* **served**: ``sim.serve()`` with a viewer attached: a second process (``Remote``,
  ``viewer/remote.py``) receiving and decoding every frame, as ``behaviortk attach``
  does;
* **plain**: not served.

Each round ticks them interleaved A B B A (``--ticks`` each), so drift in the machine's
speed hits both alike, and covers the same ticks of both (their cost grows as the
flocks form). Per tick it times the wall clock and the game thread's own CPU time
(``time.thread_time``: the work the game's thread does, packing and sending frames
included, without the time the machine's other processes take it off its core). The
report gives each round's ratio served / plain of median ms per tick on both clocks,
their medians (the issue's target: at most 1.10), the load average, the frames the game
sent and dropped. On a loaded machine the wall ratio follows the scheduler more than the
game (runs vary both ways); the CPU ratio is the game's own extra work. It also times
the server's own calls inside the served ticks (``Server.holding`` and
``Server.after_step``: reading the viewer's messages, building, packing and sending the
frame) on the game thread's CPU clock and gives their share: serve CPU / (served tick
CPU - serve CPU), measured in the very same ticks, so the machine's drift cancels. Not a test: figures depend on the
machine.

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


def ms_per_tick(sim: Simulation, ticks: int) -> tuple[float, float]:
    """Median ms per tick ``(wall clock, this thread's CPU time)`` over ``ticks`` steps."""
    wall, cpu = [], []
    for _ in range(ticks):
        t0, c0 = time.perf_counter(), time.thread_time()
        sim.step()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    return statistics.median(wall) * 1000, statistics.median(cpu) * 1000


class Stopwatch:
    """CPU seconds of the game's thread spent in the wrapped calls (the server's)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, call: Any) -> Any:
        def timed(*args: Any) -> Any:
            t0 = time.thread_time()
            try:
                return call(*args)
            finally:
                self.seconds += time.thread_time() - t0

        return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="definitions/evade_or_flock.json")
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--ticks", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=9)
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
        watch = Stopwatch()
        server.holding = watch.wrap(server.holding)  # type: ignore[method-assign]
        server.after_step = watch.wrap(server.after_step)  # type: ignore[method-assign]
        rounds, shares = [], []
        load0 = os.getloadavg()[0]
        for _ in range(args.rounds):
            watch.seconds, t0 = 0.0, time.thread_time()
            a1 = ms_per_tick(served, args.ticks)
            served_s, serving_s = time.thread_time() - t0, watch.seconds
            b1 = ms_per_tick(plain, args.ticks)
            b2 = ms_per_tick(plain, args.ticks)
            watch.seconds, t0 = 0.0, time.thread_time()
            a2 = ms_per_tick(served, args.ticks)
            served_s, serving_s = served_s + time.thread_time() - t0, serving_s + watch.seconds
            shares.append(serving_s / (served_s - serving_s))
            rounds.append(
                [(a1[k] + a2[k]) / 2 for k in (0, 1)] + [(b1[k] + b2[k]) / 2 for k in (0, 1)]
            )
        time.sleep(0.5)
        sent, dropped, attached = server.sent, server.dropped, server.attached
    finally:
        viewer.kill()
        viewer.wait()
        server.close()
    load1 = os.getloadavg()[0]
    lines = [
        "Command: `.venv/bin/python benchmarks/bench_attach.py --agents "
        f"{args.agents} --ticks {args.ticks} --rounds {args.rounds}`",
        f"({args.file} scaled to {plain.agents.n} agents, batch engine, kernels "
        f"{plain.kernel_name}; load average {load0:.2f} before, {load1:.2f} after, on "
        f"{os.cpu_count()} cores)",
        "",
        "| round | served wall ms | plain wall ms | wall ratio | served CPU ms | plain CPU ms "
        "| CPU ratio |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for i, (aw, ac, bw, bc) in enumerate(rounds, 1):
        lines.append(
            f"| {i} | {aw:.3f} | {bw:.3f} | {aw / bw:.3f} | {ac:.3f} | {bc:.3f} | {ac / bc:.3f} |"
        )
    wall = statistics.median(aw / bw for aw, _, bw, _ in rounds)
    cpu = statistics.median(ac / bc for _, ac, _, bc in rounds)
    share = statistics.median(shares)
    lines += [
        "",
        f"Median ratio served / plain: wall **{wall:.3f}**, game thread CPU **{cpu:.3f}** "
        "(target at most 1.10).",
        "The server's own calls inside the served ticks (game thread CPU): median "
        f"**{100 * share:.2f} %** of the rest of the tick (per round: "
        + ", ".join(f"{100 * x:.2f}" for x in shares)
        + ").",
        f"Frames sent {sent}, dropped {dropped}; viewers attached at the end: {attached}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with Path(args.out).open("a") as out:
            out.write("\n" + text)


if __name__ == "__main__":
    main()
