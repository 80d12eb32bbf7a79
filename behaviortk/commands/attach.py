"""``behaviortk attach HOST:PORT``: the viewer on a running game, or its frames as a trace.

The game serves with ``port = sim.serve()`` (``sim/serve.py``) and keeps calling
``sim.step()``. Without ``--headless`` the viewer's window opens on it
(``viewer/attach_app.py``): the world, the selected agent's tree with its why and
history, breakpoints that hold the game. With ``--headless --ticks N --trace OUT`` the
next N frames are written as a trace
(Parquet for ``.parquet``, else JSON Lines) that ``behaviortk replay`` opens: the same
bytes the game's own ``--trace`` would write for those ticks when no frame was dropped
(the summary says how many the game dropped). ``--token`` is the token a game serving
on a non-loopback address printed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from behaviortk.commands.options import whole_number

WAIT_S = 10.0
"""Seconds without a frame after which a headless recording ends (the game stopped)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "attach",
        help="attach the viewer to a running game (sim.serve), or record it headless",
        description="Attach to a game that called sim.serve(): open the viewer on it, or "
        "with --headless --ticks N --trace OUT record its next N ticks as a trace.",
    )
    parser.add_argument("address", metavar="HOST:PORT", help="where the game serves")
    parser.add_argument("--token", default=None, help="the token a non-loopback game printed")
    parser.add_argument("--headless", action="store_true", help="record, no window")
    parser.add_argument(
        "--ticks", type=whole_number(1, 10**9), default=None, metavar="N", help="ticks to record"
    )
    parser.add_argument("--trace", metavar="OUT", help="trace to write (.parquet or .jsonl)")
    parser.add_argument(
        "--wait",
        type=float,
        default=WAIT_S,
        metavar="S",
        help=f"stop after S seconds without a frame (default {WAIT_S:g})",
    )
    return parser


def _fail(message: str) -> int:
    print(f"behaviortk attach: error: {message}", file=sys.stderr)
    return 1


def run(args: argparse.Namespace) -> int:
    from behaviortk.viewer.remote import AttachError, Remote, address

    if args.headless and (args.ticks is None or not args.trace):
        print(
            "behaviortk attach: error: --headless needs --ticks N and --trace OUT", file=sys.stderr
        )
        return 2
    if not args.wait > 0:
        print("behaviortk attach: error: --wait must be > 0", file=sys.stderr)
        return 2
    try:
        host, port = address(args.address)
        remote = Remote(host, port, args.token)
    except AttachError as exc:
        return _fail(str(exc))
    try:
        if args.headless:
            return record(remote, args.ticks, args.trace, args.wait)
        return window(remote)
    finally:
        remote.close()


def window(remote: Any) -> int:
    """The viewer's window on the game; without a display, one line saying what works."""
    try:
        from behaviortk.viewer.attach_app import run_attach
    except ImportError as exc:
        return _fail(f"the viewer is not available: {exc}")
    try:
        return run_attach(remote)
    except Exception as exc:  # no display, no OpenGL: say what works instead
        if type(exc).__module__.split(".")[0] not in ("pyglet", "arcade"):
            raise
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        return _fail(
            f"cannot open a window ({reason}); record the game headless with "
            "--headless --ticks N --trace OUT"
        )


def record(remote: Any, ticks: int, path: str, wait: float) -> int:
    """Write the next ``ticks`` frames of ``remote`` to the trace ``path``; ended
    ``interrupted`` when the game stops sending for ``wait`` seconds."""
    from behaviortk.commands.run import is_parquet, trace_writer
    from behaviortk.files import atomic_output

    states = remote.frames(wait)
    if not states:
        if remote.closed:
            return _fail(f"the game at {remote.where} stopped serving before a frame came")
        return _fail(f"no frame from {remote.where} within {wait:g} s")
    columnar = is_parquet(path)
    got, gaps, last = 0, 0, states[0].tick - 1
    with atomic_output(path, "wb" if columnar else "w", inputs=[], what="trace") as out:
        view = remote.view(states[0])
        writer = trace_writer(out, view, 1, columnar, leaf_forces=False)  # frames carry few
        while got < ticks:
            for state in states[: ticks - got]:
                gaps += state.tick - last - 1
                last = state.tick
                view = remote.view(state)
                writer.on_tick(view)
                got += 1
            if got < ticks:
                states = remote.frames(wait)
                if not states:
                    why = "stopped serving" if remote.closed else f"sent no frame for {wait:g} s"
                    writer.interrupt(view, f"the game {why}")
                    break
        else:
            writer.finish(view)
    dropped = remote.last.get("dropped") or 0
    print(
        f"trace: {path} ({got} ticks from {remote.where}, ticks {last - got - gaps + 1}..{last}; "
        f"{gaps} missing; the game dropped {dropped} frames)"
    )
    return 0
