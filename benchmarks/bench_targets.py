"""Many targets: `nearest` over a large group against 3 predators (issue 25, item 2).

evade_or_flock at 100,000 agents at the shipped density (``behaviortk bench --scale
100000``): every group in proportion (95,238 prey, 4,762 predators: every prey looks
for the nearest of 4,762 predators and every predator for the nearest of 95,238 prey)
against ``--grow prey`` (99,997 prey, 3 predators). Besides the shipped trees, the
predators' tree is varied so that each kind of target query runs over the large
group: the nearest prey it can see (`"visible": true`), an `in_range` guard and a
`can_see` guard on the nearest prey. Each variant runs both ways; all the scenes of
one kernel choice step in turn, tick by tick, in one process, and each figure is
divided by the shipped trees' 3-predator figure (and by the same variant's).

    .venv/bin/python benchmarks/bench_targets.py [--ticks 20] [--warmup 5] [--rounds 3]
        [--kernels numba numpy] [--out benchmarks/results_dense.md]

Appends its tables to ``--out`` (``bench_dense.py`` writes the file first).
Not a test: figures depend on the machine and its load; the ratios are what to read.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from behaviortk.commands.scaling import scale_definition  # noqa: E402
from behaviortk.format.loader import load, load_text  # noqa: E402
from behaviortk.sim.simulation import Simulation  # noqa: E402

EVADE = ROOT / "definitions" / "evade_or_flock.json"
AGENTS = 100_000
NEAREST = {"kind": "nearest", "group": "prey"}
PURSUE = {"type": "pursuit", "name": "pursue prey", "target": NEAREST}
WANDER = {"type": "wander", "name": "wander"}


def guarded(condition: dict[str, Any]) -> dict[str, Any]:
    """Pursue the nearest prey while ``condition`` holds, else wander."""
    return {
        "type": "selector",
        "memory": False,
        "children": [
            {"type": "eternal_guard", "name": "prey near", "condition": condition, "child": PURSUE},
            WANDER,
        ],
    }


VARIANTS: dict[str, dict[str, Any] | None] = {
    "nearest (shipped)": None,
    "nearest, visible": {
        "type": "pursuit",
        "name": "pursue prey",
        "target": {**NEAREST, "visible": True},
    },
    "in_range guard": guarded({"type": "in_range", "target": NEAREST, "radius": 150}),
    "can_see guard": guarded({"type": "can_see", "target": NEAREST}),
}


def definition(variant: str, grow: bool) -> Any:
    """The scene at ``AGENTS`` agents: every group in proportion, or only the prey grown."""
    raw = copy.deepcopy(load(EVADE).raw)
    root = VARIANTS[variant]
    if root is not None:
        raw["trees"]["predator"]["root"] = root
    data, _ = scale_definition(raw, AGENTS, grow="prey" if grow else None)
    return load_text(json.dumps(data), str(EVADE), max_agents=AGENTS)


def run(kernels: str, ticks: int, warmup: int) -> dict[tuple[str, bool], tuple[float, float]]:
    """Median wall and CPU ms per tick of every (variant, grown) scene, stepped in turn."""
    sims = {
        (v, grow): Simulation(definition(v, grow), engine="batch", kernels=kernels)
        for v in VARIANTS
        for grow in (False, True)
    }
    for sim in sims.values():
        assert sim.kernel_name == kernels, f"{kernels} kernels did not load"
    for _ in range(warmup):
        for sim in sims.values():
            sim.step()
    wall: dict[tuple[str, bool], list[float]] = {key: [] for key in sims}
    cpu: dict[tuple[str, bool], list[float]] = {key: [] for key in sims}
    for _ in range(ticks):
        for key, sim in sims.items():
            w0, c0 = time.perf_counter(), time.process_time()
            sim.step()
            wall[key].append(time.perf_counter() - w0)
            cpu[key].append(time.process_time() - c0)
    med = statistics.median
    return {key: (1000 * med(wall[key]), 1000 * med(cpu[key])) for key in sims}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="fresh scenes, medians reported")
    parser.add_argument("--kernels", nargs="+", default=["numba"])
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results_dense.md"))
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    lines = [
        "",
        "## Many targets: nearest over a large group",
        "",
        f"`{' '.join(['python', 'benchmarks/bench_targets.py', *sys.argv[1:]])}`: "
        f"evade_or_flock at {AGENTS:,} agents (world 31,873 x 23,905), batch engine; "
        "proportional = 95,238 prey + 4,762 predators, grown = 99,997 prey + 3 predators "
        "(`bench --grow prey`). The predators' tree per row; scenes stepped in turn tick by "
        f"tick in one process, {args.rounds} rounds of {args.ticks} ticks after "
        f"{args.warmup} (medians). 1-minute load average {load_start:.2f} at the start.",
    ]
    raw: dict[str, Any] = {}
    for kernels in args.kernels:
        rounds = [run(kernels, args.ticks, args.warmup) for _ in range(args.rounds)]
        raw[kernels] = [{f"{v}/{'grown' if g else 'proportional'}": ms for (v, g), ms in r.items()}
                        for r in rounds]  # fmt: skip
        base = ("nearest (shipped)", True)
        lines += [
            "",
            f"{kernels} kernels (ratios of wall times, and of this process's CPU times):",
            "",
            "| predators' target | scene | ms/tick | ratio to 3 predators (shipped) "
            "| ratio to 3 predators (same tree) | CPU ratio (shipped) |",
            "| --- | --- | ---: | ---: | ---: | ---: |",
        ]
        med = statistics.median
        for variant in VARIANTS:
            for grow in (True, False):
                key = (variant, grow)
                ms = med(r[key][0] for r in rounds)
                to_base = med(r[key][0] / r[base][0] for r in rounds)
                to_same = med(r[key][0] / r[(variant, True)][0] for r in rounds)
                cpu = med(r[key][1] / r[base][1] for r in rounds)
                scene = "3 predators" if grow else "4,762 predators"
                lines.append(
                    f"| {variant} | {scene} | {ms:.1f} | {to_base:.2f} | {to_same:.2f} "
                    f"| {cpu:.2f} |"
                )
                print(lines[-1], flush=True)
    lines.append(f"\n1-minute load average at the end: {os.getloadavg()[0]:.2f}.")
    out = Path(args.out)
    previous = out.read_text() if out.exists() else ""
    marker = previous.find("\n## Many targets")
    kept = previous[:marker] if marker >= 0 else previous
    out.write_text(kept.rstrip("\n") + "\n" + "\n".join(lines) + "\n")
    Path(out.with_name("results_targets.jsonl")).write_text(json.dumps(raw) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
