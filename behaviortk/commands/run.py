"""``behaviortk run FILE``: open the viewer, or run headless with a trace and a summary."""

from __future__ import annotations

import argparse
import sys
import time
import typing
from collections.abc import Callable
from typing import IO, Any

from behaviortk.commands.options import (
    add_engine_option,
    add_kernels_option,
    add_seed_option,
    apply_kernels_option,
    positive_int,
)

DEFAULT_TICKS = 600
PROGRESS_AFTER = 1.0
"""Seconds of running before the progress bar appears (short runs stay quiet)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "run",
        help="run a definition (viewer, or --headless with a trace)",
        description="Run a definition. Without --headless it opens the viewer; with --headless "
        "it steps N ticks, optionally writes a JSON Lines trace, and prints a summary.",
    )
    parser.add_argument("file", metavar="FILE", help="definition file (JSON)")
    parser.add_argument("--headless", action="store_true", help="no window: run and summarise")
    parser.add_argument(
        "--ticks",
        type=positive_int,
        default=DEFAULT_TICKS,
        metavar="N",
        help=f"ticks to run headless (default {DEFAULT_TICKS})",
    )
    add_seed_option(parser)
    parser.add_argument("--trace", metavar="OUT.jsonl", help="write a JSON Lines trace here")
    parser.add_argument(
        "--every",
        type=positive_int,
        default=1,
        metavar="K",
        help="record every K-th tick in the trace (default 1)",
    )
    add_engine_option(parser, "py_trees")
    add_kernels_option(parser)
    return parser


class Progress:
    """A one-line progress bar on stderr that appears only once a run has taken a second."""

    def __init__(self, total: int, out: IO[str] = sys.stderr, width: int = 30) -> None:
        self.total = max(1, total)
        self.out = out
        self.width = width
        self.start = time.perf_counter()
        self.shown = False
        self.next_draw = self.start + PROGRESS_AFTER

    def update(self, done: int) -> None:
        now = time.perf_counter()
        if now < self.next_draw and done < self.total:
            return
        if not self.shown and now - self.start < PROGRESS_AFTER:
            return
        self.shown = True
        self.next_draw = now + 0.1
        filled = self.width * done // self.total
        rate = done / max(now - self.start, 1e-9)
        bar = "#" * filled + "." * (self.width - filled)
        self.out.write(f"\r[{bar}] {done}/{self.total} ticks {rate:,.0f} ticks/s")
        self.out.flush()

    def close(self) -> None:
        if self.shown:
            self.shown = False
            self.out.write("\n")
            self.out.flush()


def summary(sim: Any, wall: float) -> str:
    """Ticks/s, agents and mean time per phase, for the end of a headless run."""
    from behaviortk.sim import PHASES

    ticks = max(sim.tick, 1)
    rate = sim.tick / wall if wall > 0 else float("inf")
    phases = ", ".join(f"{p} {1000.0 * sim.timings[p] / ticks:.3f} ms" for p in PHASES)
    return (
        f"{sim.name}: {sim.tick} ticks, {sim.agents.n} agents, engine {sim.engine.name}, "
        f"seed {sim.seed}: {wall:.2f} s, {rate:,.1f} ticks/s\n"
        f"per tick: {phases}"
        + (f" ({sim.kernel_name} kernels, compile {sim.compile_s:.2f} s)" if sim.kernels else "")
    )


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
    from behaviortk.sim import Simulation, freeze_gc

    scenario = _load(args.file)
    sim = Simulation(scenario, engine=args.engine, seed=args.seed)
    from behaviortk.commands.bench import announce_auto

    announce_auto("behaviortk run", args.engine, sim)
    freeze_gc()
    progress = Progress(args.ticks)
    start = time.perf_counter()
    try:
        if args.trace:
            writer = _run_traced(args, sim, progress)
        else:
            for done in range(1, args.ticks + 1):
                sim.step()
                progress.update(done)
            writer = None
    finally:
        progress.close()
    wall = time.perf_counter() - start
    print(summary(sim, wall))
    if writer is not None:
        print(f"trace: {args.trace} ({writer.lines} lines)")
    return 0


def _run_traced(args: argparse.Namespace, sim: Any, progress: Progress) -> Any:
    """Run ``args.ticks`` ticks writing the trace; re-raise what cut the run short."""
    from behaviortk.commands.output import atomic_output
    from behaviortk.trace import TraceWriter

    stopped: BaseException | None = None
    with atomic_output(args.trace, "w", inputs=[args.file], what="trace") as out:
        writer = TraceWriter(out, sim, every=args.every)
        try:
            for done in range(1, args.ticks + 1):
                sim.step()
                writer.on_tick(sim)
                progress.update(done)
        except BaseException as exc:  # an error or ^C: end the trace saying so, then re-raise
            if exc is writer.write_error:
                raise  # the trace itself cannot be written: atomic_output removes it
            writer.interrupt(sim, exc)
            stopped = exc
        else:
            writer.finish(sim)
    if stopped is not None:
        progress.close()
        print(
            f"trace: {args.trace} ({writer.lines} lines, interrupted at tick {sim.tick})",
            file=sys.stderr,
        )
        raise stopped
    return writer


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
    _load(args.file)  # report definition errors before a window opens
    return int(opener(args.file, engine=args.engine, seed=args.seed))


def run(args: argparse.Namespace) -> int:
    from behaviortk.format.errors import DefinitionError

    apply_kernels_option(args)
    try:
        return run_headless(args) if args.headless else run_window(args)
    except DefinitionError as exc:
        for issue in exc.issues:
            print(issue, file=sys.stderr)
        return 1
