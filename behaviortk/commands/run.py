"""``behaviortk run FILE``: open the viewer, or run headless with a trace and a summary.

A headless run shows a progress bar on a terminal (``commands/progress.py``)
and ends with a summary table: the engine that ran (and why, for ``auto``),
ticks, simulated and wall time, ticks/s, agents per group at the end, events
counted by name, time per phase, the trace's path, size and lines, and the
snapshots kept. ``--resume`` and ``--save-every`` are ``commands/saves.py``'s.
``--break SPEC`` (``commands/breaks.py``; repeatable) stops the run after the first step
where one hits: it prints ``break: tick T, agent ID, node PATH, STATUS`` (``event NAME``;
``blackboard KEY OP VALUE, value V``: ``sim/breakpoints.Hit``) before the summary and
exits 0, and the trace ends with an ``interrupted`` end record whose ``reason`` says what
hit and whose ``breakpoint`` is the SPEC.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import typing
from collections import Counter
from collections.abc import Callable
from typing import IO, Any

from behaviortk.commands import saves
from behaviortk.commands.breaks import FORMS, break_spec, written
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
)
from behaviortk.commands.progress import Progress
from behaviortk.commands.render import positive_float

DEFAULT_TICKS = 600


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "run",
        help="run a definition (viewer, or --headless with a trace)",
        description="Run a definition. Without --headless it opens the viewer; with --headless "
        "it steps N ticks (a progress bar on a terminal), optionally writes a JSON Lines "
        "trace, and ends with a summary table.",
    )
    add_file_argument(parser)
    parser.add_argument("--headless", action="store_true", help="no window: run and summarise")
    parser.add_argument(
        "--ticks",
        type=tick_count,
        default=DEFAULT_TICKS,
        metavar="N",
        help=f"ticks to run headless, {TICKS_LIMIT} (default {DEFAULT_TICKS})",
    )
    add_seed_option(parser)
    parser.add_argument(
        "--trace",
        metavar="OUT",
        help="write a trace here: Parquet columns for OUT.parquet, else JSON Lines (OUT.jsonl)",
    )
    parser.add_argument(
        "--no-leaf-forces",
        action="store_true",
        help="leave each steering leaf's force out of a Parquet trace (a replay's tree panel "
        "then shows no force dials); JSON Lines traces never hold them",
    )
    parser.add_argument(
        "--every",
        type=positive_int,
        default=1,
        metavar="K",
        help="record every K-th tick in the trace (default 1)",
    )
    parser.add_argument(
        "--break",
        dest="breaks",
        action="append",
        type=break_spec,
        default=[],
        metavar="SPEC",
        help=f"headless: stop at this breakpoint and print where, exit 0 ({FORMS}; "
        "repeatable: the first to hit stops the run)",
    )
    parser.add_argument(
        "--history-seconds",
        type=positive_float,
        default=10.0,
        metavar="S",
        help="viewer: simulated seconds ',' can step back (default 10; a keyframe every 10 "
        "ticks, about 0.3 KB per agent each)",
    )
    add_engine_option(parser)
    add_kernels_option(parser)
    saves.add_options(parser)
    return parser


class Tally:
    """Events of a headless run, counted by name after every tick (``sim.events`` is one tick's)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def after_tick(self, sim: Any) -> None:
        if sim.events:
            self.counts.update(event.name for event in sim.events)


def size_text(size: int) -> str:
    """Bytes for people: ``812 B``, ``14.2 KB``, ``3.1 MB`` (powers of 1024)."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{size} B" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover - the loop always returns


def table(rows: list[tuple[str, str]]) -> str:
    """Two aligned columns, indented: the summary's layout (plain text, also in logs)."""
    width = max(len(key) for key, _ in rows)
    return "\n".join(f"  {key:<{width}}  {value}" for key, value in rows)


def summary(
    sim: Any,
    wall: float,
    *,
    engine: str = "",
    events: Counter[str] | None = None,
    trace: tuple[str, int, str] | None = None,
    overlap: Any = None,
    ran: int | None = None,
    extra: tuple[tuple[str, str], ...] = (),
) -> str:
    """The end of a headless run: what ran, how fast, who is left, what happened, where it went.

    ``engine`` says which engine ran (``engine_note``), ``events`` the events
    counted by name, ``trace`` the trace's ``(path, bytes, what it holds)`` (the
    writer's ``written``: ``"5 lines"``, or ``"600 ticks, 37,800 rows"`` for Parquet), ``overlap``
    an ``OverlapLog`` of the run (``world/overlap.py``), ``ran`` the ticks this command
    stepped (default ``sim.tick``; fewer for a resumed run), ``extra`` rows at the end.
    """
    from behaviortk.sim.simulation import PHASES

    ran = sim.tick if ran is None else ran
    ticks = max(ran, 1)
    rate = ran / wall if wall > 0 else float("inf")
    first = sim.tick - ran
    span = f"{sim.tick:,}" if first == 0 else f"{first:,} to {sim.tick:,}"
    groups = ", ".join(f"{name} {s.stop - s.start:,}" for name, s in sim.agents.slices.items())
    phases = ", ".join(f"{p} {1000.0 * sim.timings[p] / ticks:.3f} ms" for p in PHASES)
    counted = ", ".join(f"{name} {n:,}" for name, n in sorted((events or Counter()).items()))
    rows = [
        ("engine", engine or str(sim.engine.name)),
        ("ticks", f"{span} (seed {sim.seed})"),
        ("simulated", f"{sim.time:,.2f} s (dt {float(sim.dt):.4g} s)"),
        ("wall", f"{wall:,.2f} s, {rate:,.1f} ticks/s"),
        ("agents", f"{groups} ({sim.agents.n:,} in all)"),
        ("events", counted or "none"),
        ("per tick", phases),
    ]
    if sim.kernels:
        rows.append(("kernels", f"{sim.kernel_name}, compile {sim.compile_s:.2f} s"))
    if overlap is not None:
        rows.append(("overlap", overlap.describe().split(": ", 1)[1]))
    if trace is not None:
        path, size, what = trace
        rows.append(("trace", f"{path} ({size_text(size)}, {what})"))
    rows += extra
    return f"{sim.name}: {ran:,} ticks headless\n" + table(rows)


def _load(path: str) -> Any:
    from behaviortk.format.loader import load

    return load(path)


def run_headless(args: argparse.Namespace) -> int:
    """Step the simulation; with ``--trace`` write the trace through ``atomic_output``.

    The trace is renamed into place when the run ends, also when an error or ^C cuts
    it short: the ticks recorded so far are the user's data, and its last line
    (``{"end": "interrupted", ...}``) says the run did not complete. A trace that
    cannot be written (a full disk) is removed and any previous file stays as it was.
    """
    from behaviortk.sim.simulation import Simulation, freeze_gc
    from behaviortk.world.overlap import OverlapLog

    scenario = _load(args.file)
    if args.resume is not None:
        sim = saves.resumed(args, scenario)
        engine = f"{sim.engine.name} (resumed at tick {sim.tick:,})"
    else:
        sim = Simulation(scenario, engine=args.engine, seed=args.seed)
        engine = engine_note(args.engine, sim)
    keeper = None
    if args.save_every is not None:
        keeper = saves.Keeper(args.save_every, args.save_dir)
        keeper.check(sim.tick, args.ticks)
    if not set_breaks(sim, args.breaks):
        return 2
    freeze_gc()
    first = sim.tick  # a resumed run counts its own ticks
    tally = Tally()
    overlap = OverlapLog()
    start = time.perf_counter()
    with Progress(args.ticks, f"{sim.name} ({sim.engine.name})", unit="ticks") as progress:
        if args.trace:
            writer, hit = _run_traced(args, sim, progress, tally, keeper)
            overlap = writer.overlap
        else:

            def after_tick(sim: Any) -> None:
                tally.after_tick(sim)
                overlap.measure(sim.world, sim.agents)
                if keeper is not None:
                    keeper.after_tick(sim)
                progress.update(sim.tick - first)

            hit = sim.run(args.ticks, after_tick)
            writer = None
    wall = time.perf_counter() - start
    trace = None
    if writer is not None:
        trace = (args.trace, os.path.getsize(args.trace), writer.written)
    if hit is not None:
        print(hit)
    print(
        summary(
            sim,
            wall,
            engine=engine,
            events=tally.counts,
            trace=trace,
            overlap=overlap,
            ran=sim.tick - first,  # fewer when a breakpoint stopped the run
            extra=() if keeper is None else (kept(keeper),),
        )
    )
    return 0


def kept(keeper: saves.Keeper) -> tuple[str, str]:
    """The summary's row of the snapshots ``--save-every`` kept."""
    if not keeper.saved:
        return ("snapshots", f"none (no tick was a multiple of {keeper.every})")
    path, size = keeper.saved[-1]
    count = f"{len(keeper.saved):,} in {keeper.folder}"
    return ("snapshots", f"{count} (last {os.path.basename(path)}, {size_text(size)})")


PARQUET_SUFFIXES = (".parquet", ".pq")


def is_parquet(path: str) -> bool:
    """The trace format follows the extension: Parquet for .parquet/.pq, else JSON Lines."""
    return path.lower().endswith(PARQUET_SUFFIXES)


def trace_writer(
    out: IO[Any], sim: Any, every: int, columnar: bool, leaf_forces: bool = True
) -> Any:
    """A ``TraceWriter`` (JSON Lines, text ``out``) or ``ParquetTraceWriter`` (binary ``out``;
    ``leaf_forces``: with its ``leaf_force`` column)."""
    if columnar:
        from behaviortk.record.parquet import ParquetTraceWriter

        return ParquetTraceWriter(out, sim, every=every, leaf_forces=leaf_forces)
    from behaviortk.record.jsonl import TraceWriter

    return TraceWriter(out, sim, every=every)


def set_breaks(sim: Any, specs: list[dict[str, Any]]) -> bool:
    """Set each ``--break`` on ``sim``; False (and one line saying why) for one it refuses."""
    from behaviortk.errors import SimulationError

    for spec in specs:
        try:
            sim.break_on(**spec)
        except SimulationError as exc:
            print(f"behaviortk run: error: --break {written(spec)}: {exc}", file=sys.stderr)
            return False
    return True


def _run_traced(
    args: argparse.Namespace,
    sim: Any,
    progress: Progress,
    tally: Tally,
    keeper: saves.Keeper | None = None,
) -> tuple[Any, Any]:
    """Run ``args.ticks`` ticks writing the trace, or up to a breakpoint's hit (the trace
    then ends ``interrupted``, naming it); returns the writer and the hit (None); re-raises
    what cut the run short."""
    from behaviortk.files import atomic_output

    stopped: BaseException | None = None
    columnar = is_parquet(args.trace)
    mode = "wb" if columnar else "w"
    inputs = [args.file] if args.resume is None else [args.file, args.resume]
    with atomic_output(args.trace, mode, inputs=inputs, what="trace") as out:
        writer = trace_writer(out, sim, args.every, columnar, not args.no_leaf_forces)

        first = sim.tick  # a resumed run counts its own ticks

        def after_tick(sim: Any) -> None:
            writer.on_tick(sim)
            tally.after_tick(sim)
            if keeper is not None:
                keeper.after_tick(sim)
            progress.update(sim.tick - first)

        hit = None
        try:
            hit = sim.run(args.ticks, after_tick)
        except BaseException as exc:  # an error or ^C: end the trace saying so, then re-raise
            if exc is writer.write_error:
                raise  # the trace itself cannot be written: atomic_output removes it
            writer.interrupt(sim, exc)
            stopped = exc
        else:
            if hit is None:
                writer.finish(sim)
            else:
                writer.interrupt(sim, hit.reason(), breakpoint=hit.breakpoint.spec)
    if stopped is not None:
        progress.close()
        print(
            f"trace: {args.trace} ({writer.written}, interrupted at tick {sim.tick})",
            file=sys.stderr,
        )
        raise stopped
    return writer, hit


def _viewer_opener() -> Callable[..., Any] | None:
    """``behaviortk.viewer.run_window`` if the viewer exports it, else ``viewer.app.run_viewer``."""
    try:
        from behaviortk import viewer

        opener = getattr(viewer, "run_window", None)
        if opener is None:
            from behaviortk.viewer.app import run_viewer

            opener = run_viewer
    except ImportError:
        return None
    return typing.cast(Callable[..., Any], opener)


def run_window(args: argparse.Namespace) -> int:
    opener = _viewer_opener()
    if opener is None:
        print("behaviortk run: the viewer is not available; use --headless", file=sys.stderr)
        return 1
    scenario = _load(args.file)  # report definition errors before a window opens
    history = args.history_seconds
    if args.resume is None:
        return int(opener(args.file, engine=args.engine, seed=args.seed, history_seconds=history))
    saves.checked(args, scenario)  # a file that is no snapshot: an error before any window
    return int(opener(args.file, engine=args.engine, resume=args.resume, history_seconds=history))


def _window_problem(args: argparse.Namespace) -> str | None:
    """A headless-only option given for a window (which would ignore it), else None."""
    if args.headless:
        return None
    given = [
        (args.trace is not None, "--trace"),
        (args.no_leaf_forces, "--no-leaf-forces"),
        (args.every != 1, "--every"),
        (bool(args.breaks), "--break"),
    ]
    named = [flag for on, flag in given if on]
    if not named:
        return None
    why = "the viewer records no trace"
    if args.breaks:
        why = "in the viewer, select a node in the tree panel and press b"
    return f"{' and '.join(named)} need{'s' if len(named) == 1 else ''} --headless ({why})"


def run(args: argparse.Namespace) -> int:
    from behaviortk.commands.diagnostics import print_issues
    from behaviortk.errors import SnapshotError
    from behaviortk.format.issues import DefinitionError

    problem = saves.usage_problem(args) or _window_problem(args)
    if problem is not None:
        print(f"behaviortk run: error: {problem}", file=sys.stderr)
        return 2
    apply_kernels_option(args)
    try:
        return run_headless(args) if args.headless else run_window(args)
    except DefinitionError as exc:
        print_issues(exc.issues)
        return 1
    except SnapshotError as exc:
        print(f"behaviortk run: error: {exc}", file=sys.stderr)
        return 1
