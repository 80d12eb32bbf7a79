"""The held statuses of a group under think-rate LOD, compiled (``batch/engine.py``).

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
