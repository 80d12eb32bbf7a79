"""Recording and replaying at scale: trace cost per tick, and seeking a long, large recording.

evade_or_flock scaled to ``--agents`` (5,000) on the batch engine:

1. Recording cost: ``--sample`` ticks with the Parquet writer attached; the time
   spent in its ``on_tick`` is divided by the time spent in ``sim.step`` over the
   same ticks, and since it encodes and writes on a thread of its own, the wall
   time of the block is also compared with blocks run without a trace (one before,
   one after). The issue's target: Parquet under 20% of the tick it records. The
   JSON Lines writer (all on the simulation's thread) is measured for reference.
2. A ``--ticks`` (3,600) tick Parquet recording is written to a temporary file
   (time, size, row groups).
3. Seeking: the file is opened (``open_recording``: metadata, index, definition),
   then ``--seeks`` ticks spread over the whole run, in shuffled order so each
   lands in another row group than the last, are decoded (``Recording.state``)
   and dressed for the painter (``RecordedView``: agents with their constants).
   The target: any tick in under 100 ms.

    .venv/bin/python benchmarks/bench_replay.py [--agents 5000] [--ticks 3600]
        [--out benchmarks/results_replay.md]

Not a test: the figures depend on the machine and its load (2 cores, shared).
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's behaviortk

import numpy as np

import behaviortk
from behaviortk.commands.scaling import largest_group, scale_definition
from behaviortk.format.loader import load_text
from behaviortk.record.jsonl import TraceWriter
from behaviortk.record.parquet import ParquetTraceWriter
from behaviortk.record.reader import open_recording
from behaviortk.sim.simulation import Simulation
from behaviortk.viewer.recorded import RecordedView, RecordedWorld

ROOT = Path(__file__).resolve().parent.parent


def scenario(agents: int) -> behaviortk.Scenario:
    base = behaviortk.load(ROOT / "definitions" / "evade_or_flock.json")
    data, _ = scale_definition(base.raw, agents, grow=largest_group(base.raw))
    return load_text(json.dumps(data), "evade_or_flock (scaled)")


def recording_cost(agents: int, sample: int) -> dict[str, float]:
    """Writer time inside ``on_tick`` per tick, and the run's wall time with and without it.

    The Parquet writer encodes on a thread of its own, so the time spent in ``on_tick``
    (on the simulation's thread) is not all it costs: the wall time of ``sample`` ticks
    with the writer is also compared with the mean of a block without before and after.
    """
    sim = Simulation(scenario(agents), engine="batch")
    sim.run(10)  # warm-up: caches, first allocations
    clock = time.perf_counter

    def plain() -> float:
        t0 = clock()
        sim.run(sample)
        return clock() - t0

    before = plain()
    parquet = ParquetTraceWriter(io.BytesIO(), sim)
    step = pq = 0.0
    t_start = clock()
    for _ in range(sample):
        t0 = clock()
        sim.step()
        t1 = clock()
        parquet.on_tick(sim)
        step += t1 - t0
        pq += clock() - t1
    parquet.finish(sim)
    traced = clock() - t_start
    after = plain()
    jsonl = TraceWriter(io.StringIO(), sim)
    js = js_step = 0.0
    for _ in range(max(sample // 4, 10)):
        t0 = clock()
        sim.step()
        t1 = clock()
        jsonl.on_tick(sim)
        js_step += t1 - t0
        js += clock() - t1
    untraced = (before + after) / 2.0
    return {
        "tick_ms": 1e3 * step / sample,
        "parquet_ms": 1e3 * pq / sample,
        "plain_wall_ms": 1e3 * untraced / sample,
        "traced_wall_ms": 1e3 * traced / sample,
        "jsonl_ms": 1e3 * js / max(sample // 4, 10),
        "jsonl_tick_ms": 1e3 * js_step / max(sample // 4, 10),
    }


def record(agents: int, ticks: int, path: Path) -> dict[str, float]:
    sim = Simulation(scenario(agents), engine="batch")
    with path.open("wb") as out:
        writer = ParquetTraceWriter(out, sim)
        t0 = time.perf_counter()
        sim.run(ticks, writer.on_tick)
        writer.finish(sim)
        wall = time.perf_counter() - t0
    return {
        "wall_s": wall,
        "mb": path.stat().st_size / 1e6,
        "row_groups": len(writer.row_groups),
        "rows": writer.rows,
    }


def seeks(path: Path, count: int) -> dict[str, float]:
    t0 = time.perf_counter()
    rec = open_recording(path)
    fixed = RecordedWorld(rec)
    open_ms = 1e3 * (time.perf_counter() - t0)
    rng = np.random.default_rng(0)
    picks = rng.permutation(np.linspace(0, rec.ticks.size - 1, count).astype(int))
    decode, view, total = [], [], []
    for i in picks.tolist():
        tick = int(rec.ticks[i])
        t0 = time.perf_counter()
        state = rec.state(tick)
        t1 = time.perf_counter()
        RecordedView(rec, fixed, state)
        t2 = time.perf_counter()
        decode.append(1e3 * (t1 - t0))
        view.append(1e3 * (t2 - t1))
        total.append(1e3 * (t2 - t0))
    step = []
    for tick in rec.ticks[:50].tolist():  # playing forward: mostly the cached row group
        t0 = time.perf_counter()
        RecordedView(rec, fixed, rec.state(tick))
        step.append(1e3 * (time.perf_counter() - t0))
    return {
        "open_ms": open_ms,
        "decode_median_ms": statistics.median(decode),
        "view_median_ms": statistics.median(view),
        "seek_first_ms": total[0],
        "seek_median_ms": statistics.median(total),
        "seek_max_ms": max(total),
        "step_median_ms": statistics.median(step),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=5_000)
    parser.add_argument("--ticks", type=int, default=3_600)
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--seeks", type=int, default=60)
    parser.add_argument("--out", default=None, help="also write the Markdown here")
    args = parser.parse_args()

    cost = recording_cost(args.agents, args.sample)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.parquet"
        rec = record(args.agents, args.ticks, path)
        seek = seeks(path, args.seeks)
    n = f"{args.agents:,}"
    lines = [
        f"## Recording ({n} agents, batch engine, {args.sample} ticks per block)",
        "",
        "| | ms per tick | share of the tick |",
        "|---|---:|---:|",
        f"| tick (sense + decide + act + integrate) | {cost['tick_ms']:.2f} | |",
        f"| Parquet writer, time in on_tick | {cost['parquet_ms']:.2f} "
        f"| {cost['parquet_ms'] / cost['tick_ms']:.1%} |",
        f"| run without a trace (wall, mean of a block before and after) "
        f"| {cost['plain_wall_ms']:.2f} | |",
        f"| run with the Parquet trace (wall, writer thread included) "
        f"| {cost['traced_wall_ms']:.2f} "
        f"| +{cost['traced_wall_ms'] / cost['plain_wall_ms'] - 1.0:.1%} |",
        f"| JSON Lines writer, time in on_tick | {cost['jsonl_ms']:.2f} "
        f"| {cost['jsonl_ms'] / cost['jsonl_tick_ms']:.1%} |",
        "",
        f"## A {args.ticks:,}-tick recording of {n} agents",
        "",
        f"{rec['rows']:,} rows in {rec['row_groups']} row groups, {rec['mb']:.0f} MB, "
        f"written in {rec['wall_s']:.0f} s (simulation included).",
        "",
        f"## Seeking ({args.seeks} ticks spread over the run, shuffled)",
        "",
        "| | ms |",
        "|---|---:|",
        f"| open (metadata, index, definition) | {seek['open_ms']:.1f} |",
        f"| decode one tick (median) | {seek['decode_median_ms']:.1f} |",
        f"| dress it for the painter (median) | {seek['view_median_ms']:.1f} |",
        f"| first seek after opening | {seek['seek_first_ms']:.1f} |",
        f"| seek, median | {seek['seek_median_ms']:.1f} |",
        f"| seek, worst | {seek['seek_max_ms']:.1f} |",
        f"| next tick while playing (median) | {seek['step_median_ms']:.1f} |",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(
            "# benchmarks/bench_replay.py\n\n"
            "Measured on the 2-core development machine, shared with other work; "
            "ratios within one run are what counts.\n\n" + text + "\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
