"""Command-line value types and options shared by several commands.

Every command module imports this while the parser is built (``--help``
included), so it imports only argparse, the engine names, the format's limits and
``errors.shown``.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from typing import Any

from behaviortk.engines.names import AUTO_BATCH_AGENTS, ENGINES, KERNELS
from behaviortk.errors import shown
from behaviortk.format.limits import MAX_RUN_TICKS, MAX_SEED, MAX_SEEDS

DEFAULT_ENGINE = "auto"
"""The one default of run, render, bench, check and sweep: batch from ``AUTO_BATCH_AGENTS``
agents in all, py_trees below (the reference engine; both give identical results)."""


_WHOLE = re.compile(r"-?[0-9]+")
_MOST_DIGITS = 1000
"""Digits read of an unbounded whole number (``int`` refuses more than 4,300)."""


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in ``minimum..maximum`` (``10_000`` and ``10,000`` accepted).

    The bound is checked on the digits before ``int`` runs, so a huge number is one
    line naming the limit (not a ``MemoryError`` or numpy's dimension error later)."""
    most = _MOST_DIGITS if maximum is None else len(str(maximum))
    limit = "too large" if maximum is None else f"must be <= {maximum:,}"

    def parse(text: str) -> int:
        digits = text.strip().replace("_", "").replace(",", "")
        if _WHOLE.fullmatch(digits) is None:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {shown(text)}")
        if len(digits.lstrip("-0")) > most:
            raise argparse.ArgumentTypeError(f"{limit}, got {shown(text)}")
        value = int(digits)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum:,}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be <= {maximum:,}, got {value}")
        return value

    return parse


positive_int = whole_number(1)
non_negative_int = whole_number(0)
tick_count = whole_number(1, MAX_RUN_TICKS)
"""``--ticks``: 1 to ``MAX_RUN_TICKS``."""
tick_count_or_zero = whole_number(0, MAX_RUN_TICKS)
"""``--ticks`` where none is a choice (render draws the first frame), and ``--warmup``."""
seed_count = whole_number(1, MAX_SEEDS)
"""``--seeds``: 1 to ``MAX_SEEDS``."""
seed_value = whole_number(0, MAX_SEED)
"""``--seed``: 0 to ``MAX_SEED``, the format's own bound."""
TICKS_LIMIT = f"at most {MAX_RUN_TICKS:,}"
SEEDS_LIMIT = f"at most {MAX_SEEDS:,}"


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
        "(default): $BEHAVIORTK_KERNELS if set, else numba from 2,000 agents on (as --engine "
        "auto), whatever the engine, so both engines give identical results",
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
        type=seed_value,
        default=None,
        metavar="S",
        help="seed, 0 to 2**63 - 1 (default: the file's)",
    )
