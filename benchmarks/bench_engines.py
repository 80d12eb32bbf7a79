"""Both engines on evade_or_flock scaled to N agents: ms per tick and peak memory per agent.

N agents in all, the largest group (the prey) grown and the others as in the file:
``behaviortk bench FILE --grow prey --scale N``, at the file's density.
Each (engine, N) runs in its own process (``behaviortk bench ... --json``), so the
peak resident memory it reports belongs to that configuration alone; memory per
agent is ``(peak - resident before the simulation was built) / N``. The py_trees
engine is measured up to the first size where a tick takes longer than 5 s.

    .venv/bin/python benchmarks/bench_engines.py [--sizes 100 1000 5000 10000 50000]
        [--file definitions/evade_or_flock.json] [--out benchmarks/results_engines.md]

Prints a Markdown table and writes it (plus the raw JSON lines next to it).
Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZES = (100, 1_000, 5_000, 10_000, 50_000)
SLOW_TICK_MS = 5_000.0
"""The py_trees engine stops being measured once a tick takes longer than this."""


def ticks_for(engine: str, n: int) -> tuple[int, int]:
    """(timed ticks, warm-up ticks): fewer for the py_trees engine at large sizes."""
    if engine == "batch":
        return (200, 20) if n <= 10_000 else (60, 10)
    if n <= 1_000:
        return 100, 10
    if n <= 10_000:
        return 10, 2
    return 3, 1


def largest_group(file: str) -> str:
    """The group ``--grow`` grows: the one with the most agents in the file."""
    groups = json.loads((ROOT / file).read_text())["groups"]
    return str(max(groups, key=lambda g: int(g["count"]))["name"])


def bench(file: str, engine: str, n: int) -> dict[str, Any]:
    ticks, warmup = ticks_for(engine, n)
    cmd = [
        sys.executable,
        "-m",
        "behaviortk",
        "bench",
        file,
        "--engine",
        engine,
        "--grow",
        largest_group(file),
        "--scale",
        str(n),
        "--ticks",
        str(ticks),
        "--warmup",
        str(warmup),
        "--json",
    ]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def table(rows: list[dict[str, Any]], sizes: list[int]) -> str:
    by = {(r["engine"], r["requested"]): r for r in rows}
    lines = [
        "| agents | batch ms/tick | batch ticks/s | batch KB/agent "
        "| py_trees ms/tick | py_trees ticks/s | py_trees KB/agent |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        cells = [f"{n:,}"]
        for engine in ("batch", "py_trees"):
            r = by.get((engine, n))
            if r is None:
                cells += ["(> 5 s/tick, skipped)", "", ""]
                continue
            cells += [
                f"{r['ms_per_tick']:,.2f}",
                f"{1000.0 / r['ms_per_tick']:,.1f}",
                f"{r['bytes_per_agent'] / 1024:,.1f}",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="definitions/evade_or_flock.json")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--out", default="benchmarks/results_engines.md")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    load_before = os.getloadavg()[0]
    for engine in ("batch", "py_trees"):
        for n in args.sizes:
            r = bench(args.file, engine, n)
            r["requested"] = n
            rows.append(r)
            print(
                f"{engine:>8} {r['agents']:>7,} agents: {r['ms_per_tick']:9.2f} ms/tick "
                f"(sense {r['phases_ms']['sense']:.2f}, decide {r['phases_ms']['decide']:.2f}, "
                f"act {r['phases_ms']['act']:.2f}, integrate {r['phases_ms']['integrate']:.2f}), "
                f"{r['bytes_per_agent'] / 1024:.1f} KB/agent",
                file=sys.stderr,
            )
            if r["ms_per_tick"] > SLOW_TICK_MS:
                break
    text = (
        f"Median ms per tick (whole tick: sense + decide + act + integrate) and peak memory "
        f"per agent, {Path(args.file).stem} scaled to N agents in all (its largest group grown) at "
        f"constant density.\n\n"
        + table(rows, args.sizes)
        + f"\n\n{os.cpu_count()} cores; 1-minute load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after (other work on the machine inflates the figures).\n"
    )
    print(text)
    out = ROOT / args.out
    out.write_text(text)
    out.with_suffix(".jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
