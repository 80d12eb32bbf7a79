"""``run``'s snapshots: ``--resume SNAPSHOT`` continues a saved run, ``--save-every N
--save-dir DIR`` keeps one every N ticks (``sim/snapshot.py`` has what a snapshot holds).

``--resume`` runs the snapshot's own definition (a snapshot is self-contained: its state
fits the definition it was saved with). ``FILE`` is still read and validated; when it
differs from the saved definition a warning says so and the saved one runs. The seed is
the snapshot's (``--seed`` is refused); ``--engine auto`` (the default) continues on the
engine the run was saved on, another ``--engine`` on that one (both give the same bits).

``--save-every N`` saves after every tick that is a multiple of N (counted from the
run's start, also when resumed) as ``DIR/tick-000600.btks``; ``DIR`` is made when
missing. Before the first tick the names the run will write are checked: if one exists,
nothing runs and the command says which (exit 2), so no snapshot is ever replaced.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from behaviortk.files import REFUSED, OutputError


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--resume",
        metavar="SNAPSHOT",
        help="continue the run saved in SNAPSHOT (sim.save, --save-every): its definition, "
        "seed and tick; --ticks more ticks, in the viewer or --headless",
    )
    parser.add_argument(
        "--save-every",
        type=_positive,
        metavar="N",
        help="with --headless: save a snapshot after every N-th tick into --save-dir",
    )
    parser.add_argument(
        "--save-dir",
        metavar="DIR",
        help="where --save-every writes (DIR/tick-000600.btks; made if missing)",
    )


def _positive(text: str) -> int:
    from behaviortk.commands.options import positive_int

    return int(positive_int(text))


def usage_problem(args: argparse.Namespace) -> str | None:
    """The message for a combination of these options that cannot run, else None."""
    if args.resume is not None and args.seed is not None:
        return "--seed cannot be used with --resume: the snapshot holds its run's seed"
    if (args.save_every is None) != (args.save_dir is None):
        return "--save-every N and --save-dir DIR go together"
    if args.save_every is not None and not args.headless:
        return "--save-every needs --headless (the viewer saves nothing)"
    return None


def resumed(args: argparse.Namespace, scenario: Any) -> Any:
    """The Simulation saved in ``args.resume``; a warning when ``FILE`` (``scenario``)
    differs from the definition it holds."""
    from behaviortk.sim.simulation import Simulation

    engine = None if args.engine == "auto" else args.engine
    sim = Simulation.restore(args.resume, engine)
    _warn_if_other(args, sim.scenario.raw, scenario)
    return sim


def checked(args: argparse.Namespace, scenario: Any) -> None:
    """Read ``args.resume``'s manifest before a window opens (``SnapshotError`` for a file
    that is not a snapshot this version reads); a warning when ``FILE`` differs from it.
    The viewer restores it while its window shows the kernels loading."""
    import json

    from behaviortk.sim.snapshot_file import SnapshotFile

    saved = SnapshotFile(args.resume)
    try:
        definition = json.loads(saved.key("definition", str))
    except ValueError:
        raise saved.error("its saved definition is not JSON") from None
    _warn_if_other(args, definition, scenario)


def _warn_if_other(args: argparse.Namespace, saved: Any, scenario: Any) -> None:
    if saved != scenario.raw:
        print(
            f"behaviortk run: warning: {args.resume} was saved from another definition than "
            f"{args.file}; continuing the saved one",
            file=sys.stderr,
        )


class Keeper:
    """Saves a snapshot after every ``every``-th tick into ``folder`` (module docstring)."""

    def __init__(self, every: int, folder: str) -> None:
        self.every, self.folder = every, folder
        self.saved: list[tuple[str, int]] = []  # (path, bytes)

    def path(self, tick: int) -> str:
        from behaviortk.sim.snapshot_file import SUFFIX

        return os.path.join(self.folder, f"tick-{tick:06d}{SUFFIX}")

    def check(self, first: int, ticks: int) -> None:
        """Refuse (exit 2) before a run from tick ``first`` for ``ticks`` ticks when a
        snapshot it would write exists; make the folder."""
        after = (first // self.every + 1) * self.every  # the first multiple past ``first``
        for tick in range(after, first + ticks + 1, self.every):
            self._not_there(self.path(tick))
        if os.path.exists(self.folder) and not os.path.isdir(self.folder):
            raise OutputError(f"--save-dir {self.folder} is a file, not a folder", REFUSED)
        try:
            os.makedirs(self.folder, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot make --save-dir {self.folder}: {exc.strerror}") from None

    def _not_there(self, path: str) -> None:
        if os.path.lexists(path):
            raise OutputError(
                f"refusing to overwrite snapshot {path}: it exists (nothing was run; "
                "remove it or choose another --save-dir)",
                REFUSED,
            )

    def after_tick(self, sim: Any) -> None:
        if sim.tick % self.every == 0:
            path = self.path(sim.tick)
            self._not_there(path)  # made while the run ran
            self.saved.append((path, sim.save(path)))
