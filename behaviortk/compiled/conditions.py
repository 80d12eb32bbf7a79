"""Sensed conditions on kernels: the formulas of ``behaviortk.leaves.conditions`` in one pass per group."""

from __future__ import annotations

import math

import numpy as np

from behaviortk.jit.compile import kernel


@kernel
def in_range(
    pos: np.ndarray,
    target: np.ndarray,
    valid: np.ndarray,
    radius: float,
    hysteresis: float,
    prev: np.ndarray,
) -> np.ndarray:
    """``in_range_mask(distances(pos, target), valid, radius, hysteresis, prev)``: the
    distance ``sqrt(dx * dx + dy * dy)`` of ``target - pos``, within ``radius``, or within
    ``radius + hysteresis`` where it was true last tick (same operations, same order)."""
    n = pos.shape[0]
    out = np.empty(n, dtype=np.bool_)
    wide = radius + hysteresis
    for r in range(n):
        dx = target[r, 0] - pos[r, 0]
        dy = target[r, 1] - pos[r, 1]
        dist = math.sqrt(dx * dx + dy * dy)
        out[r] = valid[r] and dist <= (wide if prev[r] else radius)
    return out
