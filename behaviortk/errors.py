"""The exception a game gets for a bad call on a running Simulation."""

from __future__ import annotations


class CallError(ValueError):
    """A Simulation call with a bad argument (unknown group or id, a position of the wrong
    shape or not finite, ...). The message names the bad value and the valid choices;
    the call changed nothing, and the run continues as if it had not been made."""
