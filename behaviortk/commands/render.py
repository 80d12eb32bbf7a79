"""``behaviortk render FILE --ticks N --out frame.png|anim.gif``: draw frames without a screen."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from behaviortk.commands.options import (
    add_engine_option,
    add_kernels_option,
    add_seed_option,
    apply_kernels_option,
    non_negative_int,
    positive_int,
)

OVERLAY_NAMES = (
    "velocity",
    "force",
    "crosshair",
    "wander",
    "view",
    "neighbours",
    "feelers",
    "hiding",
    "waypoints",
    "potential",
)


def add_render_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``render`` and ``demo``."""
    add_engine_option(parser, "py_trees")
    add_kernels_option(parser)
    add_seed_option(parser)
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
    parser.add_argument(
        "--select", default=None, metavar="AGENT_ID", help="inspect this agent (panel, overlays)"
    )


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "render",
        help="render a frame (PNG) or an animation (GIF) headless",
        description="Run FILE for --ticks ticks with no screen and write the last frame "
        "(--out x.png) or an animated GIF of every K-th tick (--out x.gif --every K).",
    )
    parser.add_argument("file", metavar="FILE", help="definition file (JSON)")
    parser.add_argument("--ticks", type=non_negative_int, default=120, metavar="N")
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
    from behaviortk.format.errors import DefinitionError
    from behaviortk.format.loader import load
    from behaviortk.sim import Simulation
    from behaviortk.viewer.render import render  # sets ARCADE_HEADLESS before arcade loads

    if not out.lower().endswith((".png", ".gif")):
        print(
            f"behaviortk render: error: --out must end in .png or .gif, got {out!r}",
            file=sys.stderr,
        )
        return 2
    try:
        sim = Simulation(load(path), engine=args.engine, seed=args.seed, debug=True)
    except DefinitionError as exc:
        for issue in exc.issues:
            print(issue, file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"behaviortk render: error: {exc}", file=sys.stderr)
        return 1
    from behaviortk.commands.bench import announce_auto

    announce_auto("behaviortk render", args.engine, sim)
    selected = None
    if args.select is not None:
        if args.select not in sim.agents.names:
            print(f"behaviortk render: error: no agent {args.select!r} in {path}", file=sys.stderr)
            return 1
        selected = sim.agents.index_of(args.select)
    from behaviortk.commands.output import atomic_output

    fmt = "gif" if out.lower().endswith(".gif") else "png"
    with atomic_output(out, "wb", inputs=[path], what="image", parents=True) as image:
        render(
            sim,
            image,
            ticks,
            fmt=fmt,
            every=every,
            overlays=overlays_of(args),
            color_by=args.color_by,
            selected=selected,
        )
    print(f"wrote {out} ({ticks} ticks)")
    return 0


def run(args: argparse.Namespace) -> int:
    return render_file(args, args.file, args.out, args.ticks, args.every)
