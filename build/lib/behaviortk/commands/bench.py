"""``behaviortk bench FILE --scale N [--grow GROUP]``: how fast a scenario ticks at a crowd size.

``--scale N`` makes N agents in all: every group in proportion (largest-remainder
rounding, each group keeping at least one agent), or with ``--grow GROUP`` only
that group (``--grow prey --scale 50000``: the other groups as in the file, prey
making up the rest). The world is grown by ``sqrt(new total / old total)`` in both
directions so the density stays the same; what moves with it and what does not
is in ``commands/scaling.py``. After a warm-up, every tick is timed. The report
is a table: agents per group, the median and mean ms per tick, ticks/s, the mean
time per phase, compile time, peak resident memory and the overlap figure (the
fraction of agents closer to another than the sum of their radii, measured after
every timed tick but not timed: the largest and the mean). Compiling the kernels
(or loading them from numba's disk cache) happens when the Simulation is made
and is reported apart as ``compile_s``, never in a tick: the kernels are readied
before the simulation is built, so the peak resident memory (``peak_rss_mb``) is
that of building and ticking it, not the compiler's (``commands/resident.py``;
``startup_peak_rss_mb`` keeps the peak before), and ``bytes_per_agent`` is its
share above what was resident before (interpreter, libraries, kernels).
``--json`` adds a last line with the same figures for scripts.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from behaviortk.commands.options import (
    TICKS_LIMIT,
    add_engine_option,
    add_file_argument,
    add_kernels_option,
    add_seed_option,
    apply_kernels_option,
    engine_note,
    positive_int,
    tick_count,
    tick_count_or_zero,
)
from behaviortk.commands.resident import lifetime_peak_mb, peak_mb, reset_peak, resident_mb
from behaviortk.commands.scaling import ScaleError, scale_definition

__all__ = ["add_parser", "measure", "run", "scale_definition"]

DEFAULT_TICKS = 200
DEFAULT_WARMUP = 20


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "bench",
        help="measure ticks per second at a given number of agents",
        description="Scale FILE to N agents in all (every group in proportion, or only "
        "--grow GROUP; the world grown to keep the density), warm up, then time T ticks: "
        "a table of agents, ms per tick, ticks/s, time per phase, compile time, peak memory "
        "and the overlap figure.",
    )
    add_file_argument(parser)
    add_engine_option(parser)
    add_kernels_option(parser)
    parser.add_argument(
        "--scale",
        type=positive_int,
        default=None,
        metavar="N",
        help="agents in all: every group scaled in proportion (largest remainder, each "
        "keeps at least 1), the world grown by sqrt(N / agents in the file) (default: as in "
        "the file)",
    )
    parser.add_argument(
        "--grow",
        default=None,
        metavar="GROUP",
        help="with --scale N: change only this group, to N minus the other groups' agents",
    )
    parser.add_argument(
        "--ticks",
        type=tick_count,
        default=DEFAULT_TICKS,
        metavar="T",
        help=f"timed ticks, {TICKS_LIMIT} (default {DEFAULT_TICKS})",
    )
    parser.add_argument(
        "--warmup",
        type=tick_count_or_zero,
        default=DEFAULT_WARMUP,
        metavar="W",
        help=f"untimed ticks first (default {DEFAULT_WARMUP})",
    )
    add_seed_option(parser)
    parser.add_argument(
        "--json", action="store_true", help="end with one JSON line of the figures (for scripts)"
    )
    return parser


# ------------------------------------------------------------------ running


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
    from behaviortk.sim.simulation import PHASES
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


def scaling_note(args: argparse.Namespace, s: float | None, world: Any) -> str:
    """How the file was scaled: ``--scale 630, every group in proportion; world 2,529.8 x ...``."""
    if s is None:
        return "as in the file"
    how = f"only {args.grow}" if args.grow is not None else "every group in proportion"
    return (
        f"--scale {args.scale:,}, {how}; world {world.width:,.1f} x {world.height:,.1f} "
        f"(sides x{s:.4g}, same density)"
    )


def overlap_note(log: Any) -> str:
    """The overlap row: the figures of an ``OverlapLog`` as percentages, and what they count."""
    from behaviortk.world.overlap import percent

    return (
        f"{percent(log.max)} at most, {percent(log.mean)} mean, {percent(log.last)} after the "
        f"last of {log.ticks} ticks (agents closer to another than the sum of their radii)"
    )


def ready_kernels(engine: str, scenario: Any, written: Any, seed: int | None) -> float:
    """Compile (or load) the kernels the run will use before its simulation is built, so
    neither their time nor their memory counts as the simulation's: those a Simulation of
    the definition as ``written`` calls (``sim/choice.py`` compiles what a Simulation's nodes
    need; ``--scale`` changes counts, not nodes, and what the bigger run adds, large groups'
    cell order, is compiled as it is built, its time kept apart all the same); the seconds
    it took."""
    from behaviortk.sim import choice
    from behaviortk.sim.simulation import Simulation

    if choice.resolve("auto", sum(g.count for g in scenario.definition.groups)) != "numba":
        return 0.0
    compile_s = float(Simulation(written, engine=engine, seed=seed, kernels="numba").compile_s)
    gc.collect()  # that Simulation (its cycles too) is gone before memory is measured
    return compile_s


def memory_note(result: dict[str, Any]) -> str:
    """The peak memory row: the peak, what was resident before, and the share per agent."""
    scope = (
        "while building and ticking"
        if result["peak_rss_scope"] == "simulation"
        else "over the whole process (compiling included)"
    )
    return (
        f"{result['peak_rss_mb']:,.0f} MB resident {scope}; {result['baseline_rss_mb']:,.0f} "
        f"MB before it was built (interpreter, libraries, compiled kernels if any), "
        f"~{result['bytes_per_agent']:,} bytes per agent above that"
    )


def report(rows: list[tuple[str, str]]) -> str:
    """Two aligned columns, indented, as ``run --headless`` ends (plain text, also in logs)."""
    from behaviortk.commands.run import table

    return table(rows)


def run(args: argparse.Namespace) -> int:
    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.limits import MAX_AGENTS
    from behaviortk.format.loader import load, load_text
    from behaviortk.sim.simulation import Simulation, freeze_gc

    prog = "behaviortk bench"
    if args.grow is not None and args.scale is None:
        print(
            f"{prog}: error: --grow {args.grow} needs --scale N (the agents in all, "
            f"e.g. --grow {args.grow} --scale 50000)",
            file=sys.stderr,
        )
        return 2
    sources: dict[str, str] = {}  # a scaled definition's errors point into its JSON text
    apply_kernels_option(args)
    s: float | None = None
    try:
        scenario = written = load(args.file)
        if args.scale is not None:
            data, s = scale_definition(scenario.raw, args.scale, grow=args.grow)
            total = sum(int(g["count"]) for g in data["groups"])
            sources[str(args.file)] = text = json.dumps(data)
            scenario = load_text(text, str(args.file), max_agents=max(MAX_AGENTS, total))
        compile_s = ready_kernels(args.engine, scenario, written, args.seed)
    except DefinitionError as exc:
        from behaviortk.commands.diagnostics import print_issues

        print_issues(exc.issues, sources=sources)
        return 1
    except ScaleError as exc:  # a bad --scale / --grow: a usage error
        print(f"{prog}: error: {args.file}: {exc}".splitlines()[0], file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"{prog}: {args.file}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    startup_peak = lifetime_peak_mb()  # compiling included
    baseline = resident_mb()  # interpreter, libraries and kernels: before the simulation
    scoped = reset_peak()
    build_start = time.perf_counter()
    sim = Simulation(scenario, engine=args.engine, seed=args.seed)
    compile_s += sim.compile_s  # kernels compiled or loaded from the disk cache, apart
    build_s = time.perf_counter() - build_start - sim.compile_s
    n = sim.agents.n
    groups = {name: sl.stop - sl.start for name, sl in sim.agents.slices.items()}
    freeze_gc()
    from behaviortk.commands.progress import Progress

    with Progress(
        args.ticks + args.warmup, f"bench {sim.name} ({sim.engine.name})", unit="ticks"
    ) as progress:
        figures = measure(sim, args.ticks, args.warmup, progress.update)
    overlap = figures.pop("overlap_log")
    peak = peak_mb() if scoped else lifetime_peak_mb()
    world = scenario.definition.world
    result = {
        "scenario": sim.name,
        "engine": sim.engine.name,
        "engine_requested": args.engine,
        "kernels": sim.kernel_name,
        "agents": n,
        "groups": groups,
        "scale": args.scale,
        "grow": args.grow,
        "world": [world.width, world.height],
        "world_factor": 1.0 if s is None else s,
        "ticks": args.ticks,
        "warmup": args.warmup,
        **figures,
        "build_s": round(build_s, 3),
        "compile_s": round(compile_s, 3),
        "peak_rss_mb": round(peak, 1),
        "peak_rss_scope": "simulation" if scoped else "process",
        "baseline_rss_mb": round(baseline, 1),
        "startup_peak_rss_mb": round(startup_peak, 1),
        "bytes_per_agent": round((peak - baseline) * 1024 * 1024 / max(n, 1)),
    }
    phases = ", ".join(f"{p} {ms:.3f} ms" for p, ms in figures["phases_ms"].items())
    counts = ", ".join(f"{name} {count:,}" for name, count in groups.items())
    print(
        f"{sim.name}: {n:,} agents, engine {engine_note(args.engine, sim)}, {args.ticks} ticks "
        f"after {args.warmup} warm-up"
    )
    rows = [
        ("agents", f"{counts} ({n:,} in all)"),
        ("scaled", scaling_note(args, s, world)),
        (
            "ms/tick",
            f"{figures['ms_per_tick']:,.3f} median, {figures['mean_ms_per_tick']:,.3f} mean",
        ),
        ("ticks/s", f"{figures['ticks_per_s']:,.1f}"),
        ("per phase", f"{phases} (mean per tick)"),
        ("compile", f"{compile_s:.2f} s, {sim.kernel_name} kernels (not in the ticks)"),
        ("build", f"{build_s:.2f} s"),
        ("peak memory", memory_note(result)),
        ("overlap", overlap_note(overlap)),
    ]
    print(report(rows))
    if args.json:
        print(json.dumps(result, separators=(",", ":")))
    return 0
