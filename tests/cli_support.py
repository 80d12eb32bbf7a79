"""Reading what the CLI prints about definition errors (``commands/diagnostics.py``).

Each issue is a block: its one-line form ``FILE:LINE:COL: /pointer: message [kind]``
first, then the source excerpt and notes, whose lines start with the gutter
(spaces, or the line number, then ``|`` or ``=``); a blank line ends the block.
"""

from __future__ import annotations

import re

GUTTER = re.compile(r"^ *\d* +[|=]( |$)")


def blocks(text: str) -> list[list[str]]:
    """The issue blocks of ``text``, each a list of lines."""
    return [b.splitlines() for b in text.split("\n\n") if b.strip()]


def headlines(text: str) -> list[str]:
    """The one-line form of every issue in ``text``, in order; checks the rest is gutter."""
    out = []
    for block in blocks(text):
        first, *rest = block
        assert not GUTTER.match(first), first
        for line in rest:
            assert GUTTER.match(line), f"not an excerpt or note line: {line!r}"
        out.append(first)
    return out
