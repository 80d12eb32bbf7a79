"""``behaviortk bench FILE --engine E --scale N``: how fast a scenario ticks at a given crowd size.

The largest group is resized to N agents and the world grown by
``sqrt(new total / old total)`` in both directions so the density stays the same
(spawn regions, obstacles, walls, paths and point targets move with it; radii
and view distances do not). After a warm-up, every tick is timed; the report is
the median ms per tick, ticks/s, the mean time per phase and the overlap figure
(the fraction of agents closer to another than the sum of their radii, measured
after every timed tick but not timed: the largest and the mean). Compiling the
kernels (or loading them from numba's disk cache) happens when the Simulation is
made and is reported apart as ``compile_s``, never in a tick. ``--json`` adds a
last line with the same figures (and peak resident memory) for scripts.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import resource
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from behaviortk.commands.options import (
    add_engine_option,
    add_file_argument,
    add_kernels_option,
    add_seed_option,
    apply_kernels_option,
    engine_note,
    non_negative_int,
    positive_int,
)

DEFAULT_TICKS = 200
DEFAULT_WARMUP = 20


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "bench",
        help="measure ticks per second at a given number of agents",
        description="Scale the largest group of FILE to N agents (world grown to keep the "
        "density), warm up, then time T ticks: median ms per tick, ticks/s, time per phase.",
    )
    add_file_argument(parser)
    add_engine_option(parser)
    add_kernels_option(parser)
    parser.add_argument(
        "--scale",
        type=positive_int,
        default=None,
        metavar="N",
        help="agents in the largest group (default: as in the file)",
    )
    parser.add_argument(
        "--ticks",
        type=positive_int,
        default=DEFAULT_TICKS,
        metavar="T",
        help=f"timed ticks (default {DEFAULT_TICKS})",
    )
    parser.add_argument(
        "--warmup",
        type=non_negative_int,
        default=DEFAULT_WARMUP,
        metavar="W",
        help=f"untimed ticks first (default {DEFAULT_WARMUP})",
    )
    add_seed_option(parser)
    parser.add_argument(
        "--json", action="store_true", help="end with one JSON line of the figures (for scripts)"
    )
    return parser


# ------------------------------------------------------------------ scaling


def _scale_point(value: Any, s: float) -> Any:
    if isinstance(value, list) and len(value) == 2 and all(_is_number(v) for v in value):
        return [value[0] * s, value[1] * s]
    return value


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _scale_targets(node: Any, s: float) -> None:
    """Move every ``point``/``pointer`` target position of a tree (nested anywhere) by ``s``."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("kind") in ("point", "pointer") and "at" in item:
                item["at"] = _scale_point(item["at"], s)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def scale_definition(raw: dict[str, Any], agents: int) -> tuple[dict[str, Any], float]:
    """A copy of the parsed definition with its largest group at ``agents`` and the same density.

    Returns ``(data, s)`` where ``s`` is the factor applied to the world's width and height.
    """
    data = copy.deepcopy(raw)
    groups = data.get("groups") or []
    if not groups:
        raise ValueError("the definition has no groups to scale")
    counts = [int(g.get("count", 0)) for g in groups]
    largest = max(range(len(groups)), key=lambda i: counts[i])
    old_total = sum(counts)
    new_total = old_total - counts[largest] + agents
    s = math.sqrt(new_total / old_total) if old_total > 0 else 1.0
    world = data["world"]
    world["width"] = world["width"] * s
    world["height"] = world["height"] * s
    for group in groups:
        spawn = group.get("spawn")
        if isinstance(spawn, dict):
            for key in ("min", "max", "center"):
                if key in spawn:
                    spawn[key] = _scale_point(spawn[key], s)
            if spawn.get("kind") == "ring" and _is_number(spawn.get("radius")):
                spawn["radius"] = spawn["radius"] * s
    big = groups[largest]
    big["count"] = agents
    spawn = big.get("spawn")
    if isinstance(spawn, dict) and spawn.get("kind") == "positions":
        # a list of positions cannot grow: spawn over the area it spanned (or the whole world)
        pts = [_scale_point(p, s) for p in spawn.get("points", [])]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        if pts and max(xs) > min(xs) and max(ys) > min(ys):
            big["spawn"] = {"kind": "area", "min": [min(xs), min(ys)], "max": [max(xs), max(ys)]}
        else:
            big["spawn"] = {"kind": "area", "min": [0, 0], "max": [world["width"], world["height"]]}
    if isinstance(big.get("names"), list):
        big["names"] = big["names"][:agents]
    for obstacle in data.get("obstacles") or []:
        if isinstance(obstacle, dict) and "at" in obstacle:
            obstacle["at"] = _scale_point(obstacle["at"], s)
    for wall in data.get("walls") or []:
        if isinstance(wall, dict):
            for key in ("from", "to"):
                if key in wall:
                    wall[key] = _scale_point(wall[key], s)
    for path in data.get("paths") or []:
        if isinstance(path, dict) and isinstance(path.get("points"), list):
            path["points"] = [_scale_point(p, s) for p in path["points"]]
    _scale_targets(data.get("trees"), s)
    return data, s


# ------------------------------------------------------------------ running


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure(
    sim: Any, ticks: int, warmup: int, on_tick: Callable[[int], Any] | None = None
) -> dict[str, Any]:
    """Warm up, then time each tick; figures in milliseconds.

    ``on_tick(done)`` counts warm-up and timed ticks together (progress), outside
    the timed span of each tick. After each timed tick the overlap figure
    (``world/overlap.py``) is measured, outside the timing: ``overlap`` is its largest
    value over the timed ticks, ``overlap_mean`` its mean and ``overlap_log`` the
    ``OverlapLog``.
    """
    from behaviortk.sim import PHASES
    from behaviortk.world.overlap import OverlapLog

    for done in range(1, warmup + 1):
        sim.step()
        if on_tick is not None:
            on_tick(done)
    for phase in PHASES:
        sim.timings[phase] = 0.0
    per_tick = []
    overlap = OverlapLog()
    clock = time.perf_counter
    start = clock()
    measuring = 0.0
    for done in range(warmup + 1, warmup + ticks + 1):
        t0 = clock()
        sim.step()
        t1 = clock()
        per_tick.append(t1 - t0)
        overlap.measure(sim.world, sim.agents)
        if on_tick is not None:
            on_tick(done)
        measuring += clock() - t1
    wall = clock() - start - measuring
    median = statistics.median(per_tick) * 1000.0
    return {
        "ms_per_tick": round(median, 4),
        "mean_ms_per_tick": round(1000.0 * wall / ticks, 4),
        "ticks_per_s": round(ticks / wall, 2) if wall > 0 else float("inf"),
        "phases_ms": {p: round(1000.0 * sim.timings[p] / ticks, 4) for p in PHASES},
        "overlap": round(overlap.max, 6),
        "overlap_mean": round(overlap.mean, 6),
        "overlap_log": overlap,
    }


def run(args: argparse.Namespace) -> int:
    from behaviortk.format.errors import DefinitionError
    from behaviortk.format.limits import MAX_AGENTS
    from behaviortk.format.loader import load, load_text
    from behaviortk.sim import Simulation, freeze_gc

    prog = "behaviortk bench"
    sources: dict[str, str] = {}  # a scaled definition's errors point into its JSON text
    apply_kernels_option(args)
    try:
        scenario = load(args.file)
        if args.scale is not None:
            data, _ = scale_definition(scenario.raw, args.scale)
            total = sum(int(g["count"]) for g in data["groups"])
            sources[str(args.file)] = text = json.dumps(data)
            scenario = load_text(text, str(args.file), max_agents=max(MAX_AGENTS, total))
    except DefinitionError as exc:
        from behaviortk.commands.diagnostics import print_issues

        print_issues(exc.issues, sources=sources)
        return 1
    except (OSError, ValueError) as exc:
        print(f"{prog}: {args.file}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    baseline = peak_rss_mb()
    build_start = time.perf_counter()
    sim = Simulation(scenario, engine=args.engine, seed=args.seed)
    compile_s = sim.compile_s  # kernels compiled or loaded from the disk cache, apart
    build_s = time.perf_counter() - build_start - compile_s
    n = sim.agents.n
    freeze_gc()
    from behaviortk.commands.progress import Progress

    with Progress(
        args.ticks + args.warmup, f"bench {sim.name} ({sim.engine.name})", unit="ticks"
    ) as progress:
        figures = measure(sim, args.ticks, args.warmup, progress.update)
    overlap = figures.pop("overlap_log")
    peak = peak_rss_mb()
    result = {
        "scenario": sim.name,
        "engine": sim.engine.name,
        "engine_requested": args.engine,
        "kernels": sim.kernel_name,
        "agents": n,
        "ticks": args.ticks,
        "warmup": args.warmup,
        **figures,
        "build_s": round(build_s, 3),
        "compile_s": round(compile_s, 3),
        "peak_rss_mb": round(peak, 1),
        "baseline_rss_mb": round(baseline, 1),
        "bytes_per_agent": round((peak - baseline) * 1024 * 1024 / max(n, 1)),
    }
    phases = ", ".join(f"{p} {ms:.3f} ms" for p, ms in figures["phases_ms"].items())
    print(
        f"{sim.name}: {n:,} agents, engine {engine_note(args.engine, sim)}, {args.ticks} ticks "
        f"after {args.warmup} warm-up ({sim.kernel_name} kernels): median {figures['ms_per_tick']:.3f} ms per tick, "
        f"{figures['ticks_per_s']:,.1f} ticks/s"
    )
    print(f"per tick: {phases}")
    print(overlap.describe())
    print(
        f"build {build_s:.2f} s, compile {compile_s:.2f} s (not in the ticks), "
        f"peak memory {peak:,.0f} MB "
        f"(~{result['bytes_per_agent']:,} bytes per agent above {baseline:,.0f} MB)"
    )
    if args.json:
        print(json.dumps(result, separators=(",", ":")))
    return 0
