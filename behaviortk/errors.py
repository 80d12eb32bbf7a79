"""The exception a game gets for a bad call on a running Simulation."""

from __future__ import annotations


class SimulationError(ValueError):
    """A Simulation call with a value it cannot use: an unknown group, a malformed,
    unknown or despawned agent id, a position of the wrong shape or not finite, moving
    an agent its tree moves, an event name no node raises, a negative or non-finite
    time. The message names the bad value and the valid choices; the call changed
    nothing, and the run continues as if it had not been made."""
