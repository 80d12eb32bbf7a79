"""``world.streams.uniforms`` compiled: the same SplitMix64 counter hash, the same bits."""

from __future__ import annotations

import numpy as np

from behaviortk.jit.compile import inline, kernel

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@inline
def _mix(z: np.uint64) -> np.uint64:
    z = z + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@kernel
def uniforms(seed: np.uint64, ids: np.ndarray, tick: np.uint64, slots: int) -> np.ndarray:
    """``(len(ids), slots)`` uniform numbers in [0, 1): ``seed`` and ``tick`` already mod 2**64."""
    out = np.empty((ids.shape[0], slots))
    first = _mix(seed)
    for r in range(ids.shape[0]):
        h = _mix(_mix(first ^ np.uint64(ids[r])) ^ tick)
        for s in range(slots):
            out[r, s] = np.float64(_mix(h ^ np.uint64(s)) >> np.uint64(11)) * (1.0 / 2.0**53)
    return out


@kernel
def uniforms_rows(
    seed: np.uint64, ids: np.ndarray, rows: np.ndarray, tick: np.uint64, first: int, width: int
) -> np.ndarray:
    """``uniforms(seed, ids, tick, first + width)[rows, first:]``, drawing only those numbers."""
    out = np.empty((rows.shape[0], width))
    start = _mix(seed)
    for r in range(rows.shape[0]):
        h = _mix(_mix(start ^ np.uint64(ids[rows[r]])) ^ tick)
        for s in range(width):
            slot = np.uint64(first + s)
            out[r, s] = np.float64(_mix(h ^ slot) >> np.uint64(11)) * (1.0 / 2.0**53)
    return out
