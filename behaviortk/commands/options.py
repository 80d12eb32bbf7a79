"""Command-line value types and options shared by several commands.

Every command module imports this while the parser is built (``--help``
included), so it imports only argparse and the engine names.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from behaviortk.engines.names import AUTO_BATCH_AGENTS, ENGINES, KERNELS

DEFAULT_ENGINE = "auto"
"""The one default of run, render, bench, check and sweep: batch from ``AUTO_BATCH_AGENTS``
agents in all, py_trees below (the reference engine; both give identical results)."""


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum`` (``10_000`` and ``10,000`` accepted)."""

    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", "").replace(",", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


positive_int = whole_number(1)
non_negative_int = whole_number(0)


def add_engine_option(parser: argparse.ArgumentParser, default: str = DEFAULT_ENGINE) -> None:
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default=default,
        help=f"decide engine: py_trees (the reference), batch (vectorised) or auto (default "
        f"{default}; auto = batch from {AUTO_BATCH_AGENTS:,} agents, py_trees below; both give "
        "identical results)",
    )


def engine_note(requested: str, sim: Any) -> str:
    """Which engine ran and why: ``batch (auto: 3,000 agents, batch from 2,000)``."""
    ran = str(sim.engine.name)
    if requested != "auto":
        return ran
    return f"{ran} (auto: {sim.agents.n:,} agents, batch from {AUTO_BATCH_AGENTS:,})"


def definition_files(prefix: str, **_: Any) -> list[str]:
    """Shell completion of a FILE argument: ``*.json`` files and folders starting with ``prefix``."""
    folder, sep, start = prefix.rpartition("/")
    where = (folder or "/") if sep else "."
    try:
        names = sorted(os.listdir(where))
    except OSError:
        return []
    out = []
    for name in names:
        if not name.startswith(start) or (name.startswith(".") and not start.startswith(".")):
            continue
        shown = f"{folder}{sep}{name}"
        if os.path.isdir(os.path.join(where, name)):
            out.append(shown + "/")
        elif name.endswith(".json"):
            out.append(shown)
    return out


def add_file_argument(parser: argparse.ArgumentParser) -> None:
    """The ``FILE`` positional of the commands that read one definition, completed by the shell."""
    file = parser.add_argument("file", metavar="FILE", help="definition file (JSON)")
    file.completer = definition_files  # type: ignore[attr-defined]


def add_kernels_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kernels",
        choices=KERNELS,
        default="auto",
        help="numba (compiled) or numpy (the reference) for sense, act and integrate; auto "
        "(default): $BEHAVIORTK_KERNELS if set, else numba with the batch engine",
    )


def apply_kernels_option(args: argparse.Namespace) -> None:
    """Make ``--kernels`` what ``kernels="auto"`` means in this process (every Simulation the
    command makes, the viewer's included, reads it through ``BEHAVIORTK_KERNELS``)."""
    import os

    choice = getattr(args, "kernels", "auto")
    if choice != "auto":
        os.environ["BEHAVIORTK_KERNELS"] = choice


def add_seed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=None,
        metavar="S",
        help="seed (default: the file's)",
    )
