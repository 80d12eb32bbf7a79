"""Sensed conditions compiled: ``conditions.py``'s formulas in one pass over a group's rows."""

from __future__ import annotations

import numpy as np

from behaviortk.jit.compile import kernel
from behaviortk.leaves.conditions import within_range
from behaviortk.vec import length_xy


@kernel
def in_range(
    pos: np.ndarray,
    target: np.ndarray,
    valid: np.ndarray,
    radius: float,
    hysteresis: float,
    prev: np.ndarray,
    only: np.ndarray,
    every: bool,
) -> np.ndarray:
    """``in_range_mask(distances(pos, target), valid, radius, hysteresis, prev)``; unless
    ``every``, at the rows ``only`` alone (false elsewhere: think-rate LOD's thinkers), the
    target's ``target`` and ``valid`` given for those rows alone, in their order."""
    n = pos.shape[0]
    out = np.empty(n, dtype=np.bool_) if every else np.zeros(n, dtype=np.bool_)
    m = n if every else only.shape[0]
    for k in range(m):
        r = k if every else only[k]
        dist = length_xy(target[k, 0] - pos[r, 0], target[k, 1] - pos[r, 1])
        out[r] = within_range(dist, valid[k], radius, hysteresis, prev[r])
    return out
