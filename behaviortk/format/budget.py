"""Memory of the neighbour query: the cap's default and the working-set accounting.

Imports nothing, so ``format`` stays free of NumPy and the command line can
show the defaults.
"""

from __future__ import annotations

DEFAULT_MAX_NEIGHBOURS = 64
"""Default ``max_neighbours`` of a group: above every shipped group's size minus one
(the largest shipped group has 60 agents), so it never binds there, and small
enough that 200,000 agents keep at most 12.8 million pairs (about 0.5 GiB)."""

NEIGHBOUR_WORKING_SET = 256 * 1024 * 1024
"""Bytes of candidate pairs the neighbour query holds at once (``sense.NEIGHBOUR_BUDGET``)."""

BYTES_PER_CANDIDATE = 96
"""Peak bytes per candidate pair inside one chunk (indices, offsets, distances, masks)."""

BYTES_PER_OBSERVER = 9 * 48
"""Bytes per observer inside one chunk: its 9 stencil cells' ids, counts, starts, shifts."""
