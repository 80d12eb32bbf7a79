"""``streams.uniforms`` compiled: the same formulas (``mix``, ``agent_key``, ``uniform``) per
row, so the same bits; and only some rows and slots when a leaf reads no more."""

from __future__ import annotations

import numpy as np

from behaviortk.jit.compile import kernel
from behaviortk.world.streams import agent_key, mix, uniform


@kernel
def uniforms(seed: np.uint64, ids: np.ndarray, tick: np.uint64, slots: int) -> np.ndarray:
    """``(len(ids), slots)`` uniform numbers in [0, 1): ``seed`` and ``tick`` already mod 2**64."""
    out = np.empty((ids.shape[0], slots))
    seeded = mix(seed)
    for r in range(ids.shape[0]):
        key = agent_key(seeded, np.uint64(ids[r]), tick)
        for s in range(slots):
            out[r, s] = uniform(key, np.uint64(s))
    return out


@kernel
def uniforms_rows(
    seed: np.uint64, ids: np.ndarray, rows: np.ndarray, tick: np.uint64, first: int, width: int
) -> np.ndarray:
    """``uniforms(seed, ids, tick, first + width)[rows, first:]``, drawing only those numbers."""
    out = np.empty((rows.shape[0], width))
    seeded = mix(seed)
    for r in range(rows.shape[0]):
        key = agent_key(seeded, np.uint64(ids[rows[r]]), tick)
        for s in range(width):
            out[r, s] = uniform(key, np.uint64(first + s))
    return out
