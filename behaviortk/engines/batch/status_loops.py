"""The held statuses and requests of a group under think-rate LOD, compiled.

With LOD the fused decide writes only the thinkers' rows of ``Decision.status``; every
other row keeps the statuses its last think left in the group's ``TreeState`` (one row
per node). Copying that array transposed with NumPy reads it a byte at a time across
rows (about 1 ms for 100,000 agents of a ten-node tree); this loop reads each node's
row in order.
"""

from __future__ import annotations

import numpy as np

from behaviortk.jit.compile import kernel


@kernel
def transposed(st: np.ndarray, n: int) -> np.ndarray:
    """``st[:, :n].T`` as a new C-ordered ``(n, nodes)`` array (the same bytes)."""
    nodes = st.shape[0]
    out = np.empty((n, nodes), dtype=st.dtype)
    for c in range(nodes):
        for k in range(n):
            out[k, c] = st[c, k]
    return out


@kernel
def held_requests(held: np.ndarray, thinking: np.ndarray) -> np.ndarray:
    """``held`` copied with the rows ``thinking`` cleared (``EngineBase.start_emitted``: they
    ask again when their tree ticks); the others keep the requests of their last think."""
    out = held.copy()
    for r in thinking:
        for c in range(held.shape[1]):
            out[r, c] = False
    return out


@kernel
def copy_rows(into: np.ndarray, source: np.ndarray, rows: np.ndarray) -> None:
    """``into[rows] = source[rows]`` in one pass (a LOD group's hysteresis: the thinkers'
    conditions checked this tick, ``engines/facts.py``)."""
    for r in rows:
        into[r] = source[r]
