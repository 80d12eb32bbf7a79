"""Peak memory and time of ONE tick of the batch engine in dense crowds.

Cases (a flocking tree like ``definitions/evade_or_flock.json``: prey evade the
nearest of 3 predators, else flock while a neighbour is in view, else wander;
the definition is built here):

- ``point``: 20,000 prey spawned on one point of an 800 x 600 world (everyone
  sees everyone: 4e8 candidate pairs);
- ``world``: 200,000 prey spread over an 800 x 600 world (~3,500 in view each);
- ``file200k``: ``definitions/evade_or_flock.json`` itself with ``count`` 199,997
  (200,000 agents, the figure of issue 23).

Each case runs in a fresh interpreter, which builds the simulation, then
times ``--ticks`` calls of ``step()`` (with ``--overlap``, also the overlap figure
after each, as ``behaviortk run --headless`` measures it: issue 23's 4.9 GB was
that search); peak resident memory is ``ru_maxrss`` of that process (building
included, shown apart as RSS before the ticks).
``--kernels numba,numpy`` runs every case on each kernel choice (interleaved:
case by case, kernels by kernels, versions by versions). ``--before REV`` runs
the same cases on the code of a git revision (exported with ``git archive``)
for comparison, each under ``--timeout`` seconds and an address-space limit
of ``--limit-gib`` (so a blow-up fails fast instead of swapping). Building
includes compiling (or loading) the numba kernels. Not a test: figures depend
on the machine.

Usage: python benchmarks/bench_memory.py [--cases point,world] [--kernels numba,numpy] [--overlap]
       [--ticks 2] [--before 177bf1a] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

CASES: dict[str, tuple[int, list[float], list[float]]] = {
    # name: (prey, spawn min, spawn max)
    "point": (20_000, [400.0, 300.0], [400.0, 300.0]),
    "world": (200_000, [0.0, 0.0], [800.0, 600.0]),
    "world50k": (50_000, [0.0, 0.0], [800.0, 600.0]),
    "point5k": (5_000, [400.0, 300.0], [400.0, 300.0]),
}

FILES: dict[str, tuple[str, int]] = {
    # name: (definition file, prey count)
    "file200k": ("definitions/evade_or_flock.json", 199_997),
}


def definition(prey: int, lo: list[float], hi: list[float]) -> dict[str, Any]:
    """evade_or_flock with ``prey`` prey spawned in the rectangle ``lo``..``hi``."""
    return {
        "name": f"bench_memory_{prey}",
        "world": {"width": 800, "height": 600, "edges": "wrap", "seed": 7},
        "groups": [
            {
                "name": "prey",
                "count": prey,
                "spawn": {"kind": "area", "min": lo, "max": hi},
                "speed": 40,
                "max_speed": 110,
                "max_force": 260,
                "view_distance": 60,
                "fov": 270,
                "tree": "prey",
            },
            {
                "name": "predator",
                "count": 3,
                "spawn": {"kind": "area", "min": [0, 0], "max": [800, 600]},
                "speed": 40,
                "max_speed": 95,
                "view_distance": 200,
                "fov": 360,
                "tree": "predator",
            },
        ],
        "trees": {
            "prey": {
                "root": {
                    "type": "selector",
                    "memory": False,
                    "children": [
                        {
                            "type": "eternal_guard",
                            "condition": {
                                "type": "in_range",
                                "target": {"kind": "nearest", "group": "predator"},
                                "radius": 100,
                            },
                            "child": {
                                "type": "evade",
                                "target": {"kind": "nearest", "group": "predator"},
                                "threat_range": None,
                            },
                        },
                        {
                            "type": "eternal_guard",
                            "condition": {"type": "neighbours", "min_count": 1},
                            "child": {
                                "type": "blend",
                                "children": [
                                    {"type": "separation", "weight": 1.5},
                                    {"type": "alignment", "weight": 1.0},
                                    {"type": "cohesion", "weight": 0.8, "normalize": False},
                                ],
                            },
                        },
                        {"type": "wander"},
                    ],
                }
            },
            "predator": {
                "root": {"type": "pursuit", "target": {"kind": "nearest", "group": "prey"}}
            },
        },
    }


def case_definition(case: str) -> tuple[dict[str, Any], int]:
    """The definition of ``case`` and its agent count."""
    if case in FILES:
        name, prey = FILES[case]
        doc: dict[str, Any] = json.loads((ROOT / name).read_text())
        doc["groups"][0]["count"] = prey
        return doc, sum(int(g["count"]) for g in doc["groups"])
    prey, lo, hi = CASES[case]
    return definition(prey, lo, hi), prey + 3


def rss_mib() -> float:
    """Current resident set of this process."""
    with open("/proc/self/statm", encoding="ascii") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(case: str, path: str, kernels: str, ticks: int, overlap: bool) -> None:
    """Build the simulation, time ``ticks`` ticks (and, with ``overlap``, the overlap figure
    after each, as ``run --headless`` measures it), print one JSON line."""
    from behaviortk.format.loader import load
    from behaviortk.sim.simulation import Simulation
    from behaviortk.world.overlap import OverlapLog

    t0 = time.perf_counter()
    sim = Simulation(load(path, max_agents=10**7), engine="batch", kernels=kernels)
    t1 = time.perf_counter()
    before = rss_mib()
    log = OverlapLog()
    ticking = measuring = 0.0
    for _ in range(ticks):
        t2 = time.perf_counter()
        sim.step()
        t3 = time.perf_counter()
        if overlap:
            log.measure(sim.world, sim.agents)
        ticking += t3 - t2
        measuring += time.perf_counter() - t3
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "case": case,
                "kernels": getattr(sim, "kernel_name", kernels),
                "build_s": t1 - t0,
                "tick_s": ticking / ticks,
                "overlap_s": measuring / ticks,
                "rss_before": before,
                "peak": peak,
            }
        )
    )


def export(rev: str, into: Path) -> Path:
    """The tree of ``rev`` (git archive) under ``into``."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev],
        check=True,
        capture_output=True,
    ).stdout
    archive = into / "code.tar"
    archive.write_bytes(data)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "code", filter="data")
    return into / "code"


def run_case(
    case: str,
    kernels: str,
    ticks: int,
    overlap: bool,
    code: Path,
    tmp: Path,
    timeout: float,
    limit_gib: float,
) -> dict[str, Any] | str:
    path = tmp / f"{case}.json"
    path.write_text(json.dumps(case_definition(case)[0]))
    limit = int(limit_gib * 2**30)

    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = dict(os.environ, PYTHONPATH=str(code), ARCADE_HEADLESS="1")
    try:
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                case,
                str(path),
                kernels,
                str(ticks),
                str(overlap),
            ],
            cwd=code,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=cap_memory,
        )
    except subprocess.TimeoutExpired:
        return f"over {timeout:.0f} s"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return "failed: " + last[:70]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="point,world", help=f"of {', '.join([*CASES, *FILES])}")
    parser.add_argument("--kernels", default="auto", help="comma-separated: numba, numpy, auto")
    parser.add_argument("--ticks", type=int, default=1, help="ticks timed per run (mean kept)")
    parser.add_argument("--before", metavar="REV", help="also run the code of this git revision")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per case")
    parser.add_argument("--limit-gib", type=float, default=16.0, help="address space per case")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (best tick kept)")
    parser.add_argument(
        "--overlap",
        action="store_true",
        help="also measure the overlap figure after each tick, as run --headless does",
    )
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        case, path, kernels, ticks, overlap = args.child
        child(case, path, kernels, int(ticks), overlap == "True")
        return
    cases = args.cases.split(",")
    choices = args.kernels.split(",")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        versions = [("after", ROOT)]
        if args.before:
            versions.insert(0, (f"before ({args.before})", export(args.before, tmp)))
        print(
            f"batch engine, {args.ticks} tick(s) per run; RSS limit {args.limit_gib:g} GiB, "
            f"timeout {args.timeout:g} s; 1-minute load {os.getloadavg()[0]:.1f}"
        )
        print(
            f"{'case':10s} {'agents':>8s} {'kernels':7s} {'code':22s} {'build s':>8s} "
            f"{'tick s':>8s} {'overlap s':>9s} {'RSS before':>11s} {'peak RSS':>9s}"
        )
        for case in cases:
            agents = f"{case_definition(case)[1]:,}"
            runs: dict[tuple[str, str], list[dict[str, Any] | str]] = {}
            for _ in range(args.repeat):  # interleaved: kernels and versions take turns
                for kernels in choices:
                    for label, code in versions:
                        got = runs.setdefault((kernels, label), [])
                        if got and isinstance(got[-1], str):
                            continue  # failed once: not again
                        got.append(
                            run_case(
                                case,
                                kernels,
                                args.ticks,
                                args.overlap,
                                code,
                                tmp,
                                args.timeout,
                                args.limit_gib,
                            )
                        )
            for (kernels, label), got in runs.items():
                head = f"{case:10s} {agents:>8s} {kernels:7s} {label:22s}"
                done = [r for r in got if not isinstance(r, str)]
                if not done:
                    print(f"{head} {got[-1]}", flush=True)
                    continue
                best = min(done, key=lambda r: float(r["tick_s"]))
                print(
                    f"{head} {best['build_s']:8.2f} {best['tick_s']:8.2f} "
                    f"{best['overlap_s']:9.2f} "
                    f"{best['rss_before']:8.0f} MiB {best['peak']:5.0f} MiB",
                    flush=True,
                )


if __name__ == "__main__":
    main()
