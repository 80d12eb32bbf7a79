"""``behaviortk render FILE --ticks N --out frame.png|anim.gif``: draw frames without a screen."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
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
    tick_count_or_zero,
    whole_number,
)

OVERLAY_NAMES = (
    "trails",
    "velocity",
    "force",
    "crosshair",
    "wander",
    "view",
    "sight",
    "neighbours",
    "feelers",
    "hiding",
    "waypoints",
    "potential",
    "thinking",
)


MIN_SIZE, MAX_SIZE = 64, 8192


def finite_float(text: str) -> float:
    """An argparse type: a finite number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def positive_float(text: str) -> float:
    value = finite_float(text)
    if value <= 0.0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def pixels(text: str) -> int:
    value = whole_number(MIN_SIZE)(text)
    if value > MAX_SIZE:
        raise argparse.ArgumentTypeError(f"must be <= {MAX_SIZE}, got {value}")
    return value


def add_look_options(parser: argparse.ArgumentParser) -> None:
    """``--overlay`` and ``--color-by``: how agents are drawn (``render``, ``demo``, ``replay``)."""
    parser.add_argument(
        "--overlay",
        action="append",
        choices=(*OVERLAY_NAMES, "all"),
        default=[],
        metavar="NAME",
        help="draw an overlay (repeatable): " + ", ".join(OVERLAY_NAMES) + ", or all",
    )
    parser.add_argument(
        "--color-by", choices=("group", "action"), default="group", help="agent colours"
    )


def add_render_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``render`` and ``demo``."""
    add_engine_option(parser)
    add_kernels_option(parser)
    add_seed_option(parser)
    add_look_options(parser)
    parser.add_argument(
        "--select", default=None, metavar="AGENT_ID", help="inspect this agent (panel, overlays)"
    )
    parser.add_argument(
        "--region",
        nargs=4,
        type=finite_float,
        default=None,
        metavar=("X0", "Y0", "X1", "Y1"),
        help="the world rectangle to show, in world units (default: the whole world)",
    )
    parser.add_argument(
        "--zoom",
        type=positive_float,
        default=1.0,
        metavar="Z",
        help="magnify around the centre of the region (2: half as wide, twice as large)",
    )
    parser.add_argument(
        "--size",
        nargs=2,
        type=pixels,
        default=None,
        metavar=("W", "H"),
        help=f"image size in pixels, {MIN_SIZE}..{MAX_SIZE} each (default 1100 640)",
    )


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "render",
        help="render a frame (PNG) or an animation (GIF) headless",
        description="Run FILE for --ticks ticks with no screen and write the last frame "
        "(--out x.png) or an animated GIF of every K-th tick (--out x.gif --every K). "
        "A progress bar shows on a terminal.",
    )
    add_file_argument(parser)
    parser.add_argument(
        "--ticks",
        type=tick_count_or_zero,
        default=120,
        metavar="N",
        help=f"ticks to run before the last frame, {TICKS_LIMIT} (default 120)",
    )
    parser.add_argument("--out", required=True, metavar="PATH", help=".png or .gif")
    parser.add_argument(
        "--every", type=positive_int, default=2, metavar="K", help="GIF: every K ticks"
    )
    add_render_options(parser)
    return parser


def overlays_of(args: argparse.Namespace) -> list[str]:
    chosen: list[str] = list(args.overlay)
    return list(OVERLAY_NAMES) if "all" in chosen else chosen


def render_file(args: argparse.Namespace, path: str, out: str, ticks: int, every: int) -> int:
    """Load, render and write ``out`` atomically, never over ``path``; errors are one line each."""
    apply_kernels_option(args)
    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.loader import load
    from behaviortk.sim.simulation import Simulation
    from behaviortk.viewer.render import RENDER_SIZE, render  # sets ARCADE_HEADLESS first

    region = getattr(args, "region", None)
    if region is not None and not (region[0] < region[2] and region[1] < region[3]):
        print(
            "behaviortk render: error: --region X0 Y0 X1 Y1 needs X0 < X1 and Y0 < Y1, "
            f"got {' '.join(f'{v:g}' for v in region)}",
            file=sys.stderr,
        )
        return 2
    if not out.lower().endswith((".png", ".gif")):
        print(
            f"behaviortk render: error: --out must end in .png or .gif, got {out!r}",
            file=sys.stderr,
        )
        return 2
    try:
        sim = Simulation(load(path), engine=args.engine, seed=args.seed, debug=True)
    except DefinitionError as exc:
        from behaviortk.commands.diagnostics import print_issues

        print_issues(exc.issues)
        return 1
    except OSError as exc:
        print(f"behaviortk render: error: {exc}", file=sys.stderr)
        return 1
    selected = None
    if args.select is not None:
        if args.select not in sim.agents.names:
            print(f"behaviortk render: error: no agent {args.select!r} in {path}", file=sys.stderr)
            return 1
        selected = sim.agents.index_of(args.select)
    from behaviortk.commands.progress import Progress
    from behaviortk.files import atomic_output

    fmt = "gif" if out.lower().endswith(".gif") else "png"
    with (
        atomic_output(out, "wb", inputs=[path], what="image", parents=True) as image,
        Progress(ticks, f"rendering {Path(out).name}", unit="ticks") as progress,
    ):
        render(
            sim,
            image,
            ticks,
            fmt=fmt,
            every=every,
            overlays=overlays_of(args),
            color_by=args.color_by,
            selected=selected,
            on_tick=progress.update,
            size=tuple(args.size) if getattr(args, "size", None) else RENDER_SIZE,
            region=tuple(region) if region is not None else None,
            zoom=float(getattr(args, "zoom", 1.0)),
        )
    print(f"wrote {out}: {ticks} ticks, engine {engine_note(args.engine, sim)}")
    return 0


def run(args: argparse.Namespace) -> int:
    return render_file(args, args.file, args.out, args.ticks, args.every)
