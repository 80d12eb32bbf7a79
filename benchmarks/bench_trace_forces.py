"""What recording each steering leaf's force costs a Parquet trace (``leaf_force``).

Three simulations of the same definition tick in turn in one process: one writing
no trace, one a Parquet trace without ``leaf_force`` (``--no-leaf-forces``), one with
it (the default); the medians of the per-tick wall times are compared as ratios.

    python benchmarks/bench_trace_forces.py [--definition definitions/evacuation.json]
        [--ticks 200] [--engine batch] [--kernels numpy]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definition", default=str(ROOT / "definitions" / "evacuation.json"))
    parser.add_argument("--ticks", type=int, default=200)
    parser.add_argument("--engine", default="batch")
    parser.add_argument("--kernels", default="numpy")
    args = parser.parse_args()
    os.environ["BEHAVIORTK_KERNELS"] = args.kernels

    import behaviortk
    from behaviortk.record.parquet import ParquetTraceWriter
    from behaviortk.sim.simulation import Simulation

    scenario = behaviortk.load(args.definition)
    folder = Path(tempfile.mkdtemp())
    sims = [Simulation(scenario, engine=args.engine) for _ in range(3)]
    writers = [
        None,
        ParquetTraceWriter(str(folder / "off.parquet"), sims[1], leaf_forces=False),
        ParquetTraceWriter(str(folder / "on.parquet"), sims[2]),
    ]
    times: list[list[float]] = [[], [], []]
    for _ in range(args.ticks):
        for k, (sim, writer) in enumerate(zip(sims, writers, strict=True)):
            start = time.perf_counter()
            sim.step()
            if writer is not None:
                writer.on_tick(sim)
            times[k].append(time.perf_counter() - start)
    for sim, writer in zip(sims, writers, strict=True):
        if writer is not None:
            writer.finish(sim)
    base, off, on = (statistics.median(t) * 1e3 for t in times)
    sizes = [(folder / f"{n}.parquet").stat().st_size for n in ("off", "on")]
    print(
        f"{args.definition}: {sims[0].agents.n} agents, {args.ticks} ticks, load {os.getloadavg()[0]:.1f}"
    )
    print(f"  no trace        {base:7.2f} ms a tick")
    print(f"  without forces  {off:7.2f} ms  ({off / base:.3f} of no trace)  {sizes[0]:,} bytes")
    print(
        f"  with forces     {on:7.2f} ms  ({on / base:.3f} of no trace, {on / off:.3f} of without)  {sizes[1]:,} bytes"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
