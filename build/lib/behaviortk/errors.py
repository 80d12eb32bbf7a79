"""The exception a game gets for a bad call on a running Simulation, and ``shown``: how a
value the user typed is quoted in a one-line message (the command line, sweep grids).

Stdlib only: command modules import it while the parser is built."""

from __future__ import annotations


class SimulationError(ValueError):
    """A Simulation call with a value it cannot use: an unknown group, a malformed,
    unknown or despawned agent id, a position of the wrong shape or not finite, moving
    an agent its tree moves, an event name no node raises, a negative or non-finite
    time. The message names the bad value and the valid choices; the call changed
    nothing, and the run continues as if it had not been made."""


def shown(text: str, limit: int = 40) -> str:
    """``repr`` of a command-line value, cut to about ``limit`` characters when longer (a
    5,000-digit number; escapes such as ``\\U0001f600`` count as what they print)."""
    if len(repr(text)) <= limit:
        return repr(text)
    keep = limit
    while len(repr(text[:keep])) > limit:
        keep //= 2
    return f"{text[:keep]!r}... ({len(text):,} characters)"


class SnapshotError(SimulationError):
    """A snapshot that cannot be saved or restored (``Simulation.save`` / ``restore``): a
    file that is empty, truncated, damaged, of another format or a newer version, holds
    arrays of the wrong shape or type, or a definition that no longer validates. The
    message names the file and what is wrong, in one line."""
