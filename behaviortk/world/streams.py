"""Per-agent random numbers from a counter-based hash: ``u(seed, id, tick, slot)`` in [0, 1).

Each number depends only on the run's seed, the agent's id, the tick and the
column (slot) it is drawn for, so spawning or despawning other agents never
changes an agent's numbers, and nothing holds a generator object per agent.
The hash is SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable
pseudorandom number generators", OOPSLA 2014) applied to the four keys in
turn, over whole uint64 arrays; the top 53 bits make the double.
"""

from __future__ import annotations

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)

SPAWN = -1
"""The ``tick`` key of numbers drawn when an agent is created (its position, heading)."""


def _mix(z: np.ndarray) -> np.ndarray:
    z = z + _GOLDEN
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


def uniforms(seed: int, ids: np.ndarray, tick: int, slots: int) -> np.ndarray:
    """``(len(ids), slots)`` uniform numbers in [0, 1), one row per agent id."""
    ids = np.asarray(ids, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        h = _mix(np.full(ids.shape, np.uint64(seed % 2**64), dtype=np.uint64))
        h = _mix(h ^ ids)
        h = _mix(h ^ np.uint64(tick % 2**64))
        cols = np.arange(slots, dtype=np.uint64)
        h = _mix(h[:, None] ^ cols[None, :])
    return (h >> _S11).astype(np.float64) * (1.0 / 2**53)
