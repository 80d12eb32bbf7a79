"""Command-line value types and options shared by several commands.

Every command module imports this while the parser is built (``--help``
included), so it imports only argparse and the engine names.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from behaviortk.engines.names import ENGINES


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


def add_seed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=None,
        metavar="S",
        help="seed (default: the file's)",
    )
