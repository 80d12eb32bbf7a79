"""Command-line value types and options shared by several commands.

Every command module imports this while the parser is built (``--help``
included), so it imports only argparse and the engine names.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from behaviortk.engines.names import ENGINES, KERNELS


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


def add_engine_option(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default=default,
        help=f"decide engine: py_trees (reference), batch (vectorised) or auto (default {default})",
    )


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
