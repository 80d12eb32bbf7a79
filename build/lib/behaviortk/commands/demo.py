"""``behaviortk demo``: evade_or_flock in the viewer, or as a GIF when there is no display."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from behaviortk.commands.options import TICKS_LIMIT, apply_kernels_option, tick_count
from behaviortk.commands.render import add_render_options, render_file

DEMO_FILE = Path(__file__).resolve().parents[2] / "definitions" / "evade_or_flock.json"


def has_display() -> bool:
    """A window can open: not forced headless, and an X11/Wayland display (or not Linux)."""
    if os.environ.get("ARCADE_HEADLESS"):
        return False
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "demo",
        help="the reference scenario in the viewer (a GIF when there is no display)",
        description="Open definitions/evade_or_flock.json in the viewer. Without a display "
        "(or with --headless) render an animated GIF instead and print where it is.",
    )
    parser.add_argument("--headless", action="store_true", help="render a GIF even with a display")
    parser.add_argument("--out", default="behaviortk-demo.gif", metavar="PATH")
    parser.add_argument(
        "--ticks", type=tick_count, default=240, metavar="N", help=f"{TICKS_LIMIT} (default 240)"
    )
    parser.add_argument("--every", type=int, default=3, metavar="K")
    add_render_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    if not DEMO_FILE.exists():
        print(f"behaviortk demo: error: {DEMO_FILE} is missing", file=sys.stderr)
        return 1
    if args.headless or not has_display():
        if not args.overlay:
            args.overlay = ["crosshair"]
        print("no display: rendering the demo as a GIF instead of opening a window")
        return render_file(args, str(DEMO_FILE), args.out, args.ticks, args.every)
    from behaviortk.viewer.app import run_viewer

    apply_kernels_option(args)
    return run_viewer(DEMO_FILE, engine=args.engine, seed=args.seed, overlays=args.overlay)
