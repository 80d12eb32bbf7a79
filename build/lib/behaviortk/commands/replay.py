"""``behaviortk replay TRACE``: the viewer on a recorded run, or one recorded tick as a PNG.

``TRACE`` is a Parquet (``run --trace x.parquet``) or JSON Lines trace; it
carries its definition, so nothing else is needed. Without ``--out`` a window
opens with a timeline; with ``--out frame.png`` the recorded ``--tick N`` (default:
the last recorded tick) is drawn headless. A trace that cannot be replayed is
one line naming the file and why, exit code 1, and no window opens.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from behaviortk.commands.options import whole_number
from behaviortk.commands.render import add_look_options
from behaviortk.format.limits import MAX_TRACE_TICK


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "replay",
        help="replay a recorded trace in the viewer (timeline), or render one tick",
        description="Open the viewer on a recorded run (Parquet or JSON Lines trace) with a "
        "timeline: space play/pause, left/right step, drag the timeline to any tick, +/- "
        "speed. With --out frame.png, draw the recorded --tick N headless instead.",
    )
    parser.add_argument("trace", metavar="TRACE", help="trace file (.parquet or .jsonl)")
    parser.add_argument(
        "--tick",
        type=whole_number(0, MAX_TRACE_TICK),
        default=None,
        metavar="N",
        help="start at (or, with --out, render) recorded tick N (default: first; --out: last)",
    )
    parser.add_argument("--out", metavar="PATH", help="write tick N as a PNG instead of a window")
    add_look_options(parser)
    parser.add_argument(
        "--select", default=None, metavar="AGENT", help="inspect this agent (name or id)"
    )
    return parser


def _fail(message: str) -> int:
    print(f"behaviortk replay: error: {message}", file=sys.stderr)
    return 1


_ID = re.compile(r"[0-9]{1,19}")
"""An agent id as ``--select`` takes it: ASCII digits, at most int64's 19 (not ``²``)."""


def agent_id(rec: Any, tick: int, select: str | None) -> int | None:
    """The id of ``select`` (a name or an id) in recorded ``tick``; ValueError if absent."""
    if select is None:
        return None
    from behaviortk.viewer.recorded import RecordedWorld

    state = rec.state(tick)
    names = RecordedWorld(rec).names(state)
    if select in names:
        return int(state.ids[names.index(select)])
    if _ID.fullmatch(select) and int(select) in set(state.ids.tolist()):
        return int(select)
    raise ValueError(f"no agent {select!r} at tick {tick} of {rec.path}")


def run(args: argparse.Namespace) -> int:
    from behaviortk.commands.render import overlays_of
    from behaviortk.record.reader import TraceError, open_recording

    out: str | None = args.out
    if out is not None and not out.lower().endswith(".png"):
        print(f"behaviortk replay: error: --out must end in .png, got {out!r}", file=sys.stderr)
        return 2
    try:
        rec = open_recording(args.trace)
        if rec.ticks.size == 0:
            return _fail(f"{rec.path}: no tick was recorded; nothing to replay")
        tick = args.tick
        if tick is None:
            tick = int(rec.ticks[-1] if out is not None else rec.ticks[0])
        rec.state(tick)  # decoded before any window or file: a bad tick stops here
        selected = agent_id(rec, tick, args.select)
    except (TraceError, ValueError) as exc:
        return _fail(str(exc))
    for note in rec.notes:
        print(f"behaviortk replay: {rec.path}: {note}", file=sys.stderr)
    options = {"overlays": overlays_of(args), "color_by": args.color_by, "select": selected}
    if out is None:
        try:
            from behaviortk.viewer.replay_app import run_replay
        except ImportError as exc:
            return _fail(f"the viewer is not available: {exc}")
        try:
            return run_replay(rec, tick, **options)
        except Exception as exc:  # no display, no OpenGL: say what works instead
            if type(exc).__module__.split(".")[0] not in ("pyglet", "arcade"):
                raise
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
            return _fail(
                f"cannot open a window ({reason}); render a tick headless with "
                f"--tick N --out frame.png"
            )
    from behaviortk.files import atomic_output
    from behaviortk.viewer import render  # sets ARCADE_HEADLESS before arcade loads

    del render
    from behaviortk.viewer.replay_app import render_replay

    with atomic_output(out, "wb", inputs=[args.trace], what="image", parents=True) as image:
        render_replay(rec, tick, image, **options)
    print(f"wrote {out} (tick {tick} of {rec.path})")
    return 0
