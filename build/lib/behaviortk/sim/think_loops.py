"""``sim/think.py``'s pass over a group's rows, compiled: who thinks this tick, in one loop.

:func:`due_rows` is the rule of ``think.py`` (``(t - i) % r == 0  or  t - last(i) >= K``)
on the phases ``ThinkSchedule`` keeps (``i % every`` and ``i % far`` per row), with each
thinker's ``last`` set to the tick as it goes: what ``ThinkSchedule.thinkers`` does with
a handful of NumPy passes over every row (integers only, so both give the same rows).
"""

from __future__ import annotations

import numpy as np

from behaviortk.jit.compile import kernel


@kernel
def due_rows(
    ids: np.ndarray,
    near_slot: np.ndarray,
    far_slot: np.ndarray,
    near: np.ndarray,
    lod: bool,
    tick: int,
    every: int,
    far: int,
    last: np.ndarray,
) -> np.ndarray:
    """The sorted local rows ``k`` (id ``ids[k]``) that think on ``tick``: at their near slot
    (``near_slot[k] == tick % every``; with ``lod``, for a row not ``near[k]``, at its far slot
    ``far_slot[k] == tick % far``) or ``far`` ticks after their ``last`` think; their ``last``
    becomes ``tick``."""
    n = ids.shape[0]
    out = np.empty(n, dtype=np.int64)
    at_near = tick % every
    at_far = tick % far
    stale = tick - far
    m = 0
    for k in range(n):
        i = ids[k]
        slot = far_slot[k] == at_far if lod and not near[k] else near_slot[k] == at_near
        if slot or last[i] <= stale:
            last[i] = tick
            out[m] = k
            m += 1
    return out[:m].copy()
