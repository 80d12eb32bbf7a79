"""When the command line may colour its output or draw on the terminal, and the colours.

Colour and progress bars are for a person at a terminal: a stream that is not
a TTY (a pipe, a file, a CI log) gets plain text. ``NO_COLOR`` (any non-empty
value, https://no-color.org) turns colour off everywhere and ``TERM=dumb``
too; ``FORCE_COLOR`` (non-empty) turns it on even when piped.

Plain ANSI escapes, no rich: ``validate`` renders coloured errors and must
stay light to start (tests/test_imports.py). Stdlib only.
"""

from __future__ import annotations

import os
from typing import IO, Any

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
RED = "\x1b[31m"
GREEN = "\x1b[32m"
YELLOW = "\x1b[33m"
BLUE = "\x1b[34m"
CYAN = "\x1b[36m"


def is_terminal(stream: IO[Any]) -> bool:
    """``stream`` is an interactive terminal (False for pipes, files and closed streams)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def use_color(stream: IO[Any]) -> bool:
    """Colour ``stream``: a terminal, unless ``NO_COLOR`` or ``TERM=dumb``; ``FORCE_COLOR`` wins."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    return is_terminal(stream)


class Paint:
    """``paint(text, BOLD, RED)``: ``text`` in those styles, or as it is when colour is off."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles or not text:
            return text
        return "".join(styles) + text + RESET
