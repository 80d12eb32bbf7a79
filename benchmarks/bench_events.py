"""What the events machinery costs a tick when the game watches nothing (and when it watches some).

evade_or_flock scaled to N agents in all (default 10,000), its largest group (the
prey) grown as ``behaviortk bench --grow prey --scale N`` does,
batch engine, two simulations from the same scenario and seed, so both do the
same work every tick (their positions are checked equal at the end):

* **with**: a plain ``Simulation``: each step ends with ``event_log.collect`` and
  ``dispatch`` (nothing recorded, nothing watched, no subscribers);
* **without**: the same, with ``event_log`` swapped for a stub whose two methods
  return at once (what is left is two empty calls, ~0.1 µs).

Each round ticks the pair interleaved A B B A (drift in the machine's speed hits
both alike), once with one of them stubbed (which one alternates by round) and
once with both plain (A/A: the noise floor of the comparison on this machine
now). The report gives each round's ratio of median ms per tick, with / without
and A / A, and their medians over the rounds. It also times the idle
end-of-tick call alone (µs per call) and the cost of watching 10 and 100 agents
(status events from ``Decision.status``). Not a test: figures depend on the
machine and its load.

    .venv/bin/python benchmarks/bench_events.py [--agents 10000] [--ticks 100] [--rounds 5]
        [--out benchmarks/results_events.md]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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

EMPTY: list[Any] = []


class NoEvents:
    """Stands in for ``EventLog``: the end of a tick does nothing."""

    def collect(self, tick: int) -> list[Any]:
        return EMPTY

    def dispatch(self, events: list[Any]) -> None:
        return None


def scenario(file: str, agents: int) -> Any:
    raw = load(ROOT / file).raw
    data, _ = scale_definition(raw, agents, grow=largest_group(raw))
    total = sum(int(g["count"]) for g in data["groups"])
    return load_text(json.dumps(data), file, max_agents=max(MAX_AGENTS, total))


def interleaved(a: Simulation, b: Simulation, ticks: int) -> tuple[list[float], list[float]]:
    """Seconds per tick of ``a`` and ``b``, ticked A B B A ..."""
    clock = time.perf_counter
    ta: list[float] = []
    tb: list[float] = []
    for k in range(ticks):
        order = ((a, ta), (b, tb)) if k % 2 == 0 else ((b, tb), (a, ta))
        for sim, out in order:
            t0 = clock()
            sim.step()
            out.append(clock() - t0)
    return ta, tb


def idle_call_us(sim: Simulation, calls: int = 200_000) -> float:
    """µs per end-of-tick events work (collect + dispatch) with nothing to do."""
    log = sim.event_log
    clock = time.perf_counter
    t0 = clock()
    for _ in range(calls):
        log.dispatch(log.collect(0))
    return (clock() - t0) / calls * 1e6


def watched_us(sim: Simulation, agents: int, calls: int = 2_000) -> float:
    """µs per end-of-tick events work while ``agents`` agents are watched."""
    sim.watch(range(agents))
    log = sim.event_log
    tick = sim.tick - 1
    clock = time.perf_counter
    t0 = clock()
    for _ in range(calls):
        log.dispatch(log.collect(tick))
    spent = (clock() - t0) / calls * 1e6
    sim.unwatch(range(agents))
    return spent


def median_ms(seconds: list[float]) -> float:
    return statistics.median(seconds) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="definitions/evade_or_flock.json")
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--ticks", type=int, default=100, help="interleaved ticks per measurement")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--out", default="benchmarks/results_events.md")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    sc = scenario(args.file, args.agents)
    pair = [Simulation(sc, engine="batch"), Simulation(sc, engine="batch")]
    logs = [sim.event_log for sim in pair]
    n = pair[0].agents.n
    interleaved(pair[0], pair[1], args.warmup)
    rows = []
    ratios, floors = [], []
    for r in range(args.rounds):
        real, stubbed = (pair[0], pair[1]) if r % 2 == 0 else (pair[1], pair[0])
        stubbed.event_log = NoEvents()  # type: ignore[assignment]
        t_real, t_stub = interleaved(real, stubbed, args.ticks)
        stubbed.event_log = logs[pair.index(stubbed)]
        t_a, t_b = interleaved(pair[0], pair[1], args.ticks)
        ratio = median_ms(t_real) / median_ms(t_stub)
        floor = median_ms(t_a) / median_ms(t_b)
        ratios.append(ratio)
        floors.append(floor)
        rows.append(
            f"| {r + 1} | {median_ms(t_real):.3f} | {median_ms(t_stub):.3f} | {ratio:.4f} "
            f"| {median_ms(t_a):.3f} | {median_ms(t_b):.3f} | {floor:.4f} |"
        )
        print(rows[-1], file=sys.stderr)
    assert (pair[0].agents.pos == pair[1].agents.pos).all(), "the two runs diverged"
    idle = idle_call_us(pair[0])
    tick_us = statistics.median(float(row.split("|")[3]) for row in rows) * 1e3
    watch10, watch100 = watched_us(pair[0], 10), watched_us(pair[0], 100)
    text = (
        f"Events machinery, batch engine, {Path(args.file).stem} scaled to {n:,} agents; "
        f"{args.rounds} rounds of {args.ticks} interleaved ticks per simulation and "
        f"measurement, after {args.warmup} warm-up.\n\n"
        "| round | with ms/tick | without ms/tick | with / without "
        "| A/A: A ms/tick | B ms/tick | A / B |\n"
        "|---:|---:|---:|---:|---:|---:|---:|\n"
        + "\n".join(rows)
        + f"\n| median | | | **{statistics.median(ratios):.4f}** | | "
        f"| **{statistics.median(floors):.4f}** |\n\n"
        f"Idle end-of-tick events work alone (collect + dispatch, nothing recorded or "
        f"watched): {idle:.3f} µs per tick ({idle / tick_us * 100:.4f} % of a tick). "
        f"Watching 10 agents: {watch10:.1f} µs per tick; 100 agents: {watch100:.1f} µs per tick.\n\n"
        f"{os.cpu_count()} cores; 1-minute load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after (other work on the machine inflates the figures).\n"
    )
    print(text)
    (ROOT / args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
