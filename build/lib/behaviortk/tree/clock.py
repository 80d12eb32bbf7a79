"""Simulated time as nodes see it: whole ticks, never the wall clock.

Durations in seconds become whole numbers of ticks with :func:`ticks_for`, so
both engines compare integers and agree bit for bit.
"""

from __future__ import annotations

import math
from typing import Protocol

TICK_EPS = 1e-9
MAX_TICKS = 2**62
"""Durations longer than this many ticks are "forever" (tick counters are int64 in the batch engine)."""


class Clock(Protocol):
    """The tick being decided (from 0) and the step length (``Simulation`` satisfies this)."""

    @property
    def tick(self) -> int: ...

    @property
    def dt(self) -> float: ...


def ticks_for(seconds: float, dt: float) -> int:
    """Whole ticks covering ``seconds``: ``ceil(seconds / dt)``, tolerant of float noise.

    ``0.3 / 0.1`` is ``2.9999999999999996`` in floating point; it means 3 ticks,
    so a relative ``1e-9`` is taken off before rounding up (and 1.0 / 0.1 stays 10).
    At most ``MAX_TICKS``, so both engines agree on durations of any length.
    """
    if seconds <= 0.0:
        return 0
    ratio = seconds / dt
    if not ratio < MAX_TICKS:  # also inf and nan
        return MAX_TICKS
    return max(0, math.ceil(ratio - TICK_EPS * max(1.0, ratio)))
