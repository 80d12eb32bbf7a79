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
    last_rows: np.ndarray,
) -> np.ndarray:
    """The sorted local rows ``k`` (id ``ids[k]``) that think on ``tick``: at their near slot
    (``near_slot[k] == tick % every``; with ``lod``, for a row not ``near[k]``, at its far slot
    ``far_slot[k] == tick % far``) or ``far`` ticks after their ``last`` think (read from
    ``last_rows[k]``, ``last[ids[k]]`` in row order: ``world.rows.RowCopy``); their ``last``
    becomes ``tick``, in both."""
    n = ids.shape[0]
    out = np.empty(n, dtype=np.int64)
    at_near = tick % every
    at_far = tick % far
    stale = tick - far
    m = 0
    if lod:
        for k in range(n):
            slot = far_slot[k] == at_far if not near[k] else near_slot[k] == at_near
            due = slot | (last_rows[k] <= stale)
            out[m] = k
            m += due
    else:  # the stagger alone: a loop without branches
        for k in range(n):
            due = (near_slot[k] == at_near) | (last_rows[k] <= stale)
            out[m] = k
            m += due
    for r in range(m):  # the thinkers' alone
        k = out[r]
        last_rows[k] = tick
        last[ids[k]] = tick
    return out[:m].copy()
