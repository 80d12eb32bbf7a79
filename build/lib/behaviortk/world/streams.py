"""Per-agent random numbers from a counter-based hash: ``u(seed, id, tick, slot)`` in [0, 1).

Each number depends only on the run's seed, the agent's id, the tick and the
column (slot) it is drawn for, so spawning or despawning other agents never
changes an agent's numbers, and nothing holds a generator object per agent.
The hash is SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable
pseudorandom number generators", OOPSLA 2014) applied to the four keys in
turn; the top 53 bits make the double. The hash is written once, as formulas
over uint64 that run on whole arrays here and per row in the compiled draw
(``streams_loops.py``), so both give the same bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.vec import formula

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)

SPAWN = -1
"""The ``tick`` key of numbers drawn when an agent is created (its position, heading)."""


@formula
def mix(z: Any) -> Any:
    """SplitMix64's step and finaliser on uint64 (wrapping arithmetic, on both paths)."""
    z = z + _GOLDEN
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@formula
def agent_key(seeded: Any, agent: Any, tick: Any) -> Any:
    """The hash of one agent at one tick, all uint64: ``seeded`` is ``mix(seed)``."""
    return mix(mix(seeded ^ agent) ^ tick)


@formula
def uniform(key: Any, slot: Any) -> Any:
    """The number of slot ``slot`` (uint64) of an :func:`agent_key`: the top 53 bits of
    ``mix(key ^ slot)`` as a double in [0, 1) (exact: no rounding)."""
    return (mix(key ^ slot) >> _S11) * (1.0 / 2**53)


def uniforms(seed: int, ids: np.ndarray, tick: int, slots: int) -> np.ndarray:
    """``(len(ids), slots)`` uniform numbers in [0, 1), one row per agent id."""
    ids = np.asarray(ids, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        seeded = mix(np.full(ids.shape, np.uint64(seed % 2**64), dtype=np.uint64))
        key = agent_key(seeded, ids, np.uint64(tick % 2**64))
        return np.asarray(uniform(key[:, None], np.arange(slots, dtype=np.uint64)[None, :]))
