"""How many cells a uniform grid over the world gets, in closed form (no NumPy).

The neighbour grids (``world.grid``, and the estimate of ``format.budget``) want
cells at least ``radius`` wide and at most ``max_cells`` of them. They used to
start from ``width // side`` by ``height // side`` and take one cell off the
longer axis until the product fitted: on a long thin world (a side of 2^64
beside one of 600) that loop ran about 10^10 times, and 10^148 times for a side
of 1e300. :func:`fit_cells` gives the loop's result directly.
"""

from __future__ import annotations

import math


def fit_cells(nx: int, ny: int, max_cells: int) -> tuple[int, int]:
    """The shape the loop "while nx * ny > max_cells: take one off the larger (nx on a tie)"
    ends with, in constant time. ``nx``, ``ny`` and ``max_cells`` are at least 1.

    Taking cells off the larger axis, the loop first shortens it toward the other:
    if it fits before they meet, the longer axis ends at ``max_cells // shorter``.
    Otherwise they meet at a square ``k x k`` that does not fit, and shrink
    alternately through ``(k - 1, k)``, ``(k - 1, k - 1)``, ... : the first that fits
    is ``(s, s + 1)`` or ``(s, s)``, with ``s = isqrt(max_cells)``.
    """
    if nx * ny <= max_cells:
        return nx, ny
    if nx >= ny:
        longest = max_cells // ny
        if longest >= ny:
            return longest, ny
    else:
        longest = max_cells // nx
        if longest >= nx:
            return nx, longest
    s = math.isqrt(max_cells)
    return (s, s + 1) if s * (s + 1) <= max_cells else (s, s)


def grid_cells(width: float, height: float, radius: float, max_cells: int) -> tuple[int, int]:
    """Cells per axis ``(nx, ny)``: cells at least ``radius`` wide where that many fit
    (``world.grid.grid_shape``), ``1 <= nx * ny <= max_cells`` always, in constant time
    whatever the sides (even ones the format refuses, such as 1e300 or 1e-300)."""
    max_cells = max(1, int(max_cells))
    side = math.sqrt(width * height / max_cells)
    if not 0.0 < side < math.inf:  # the area overflowed or underflowed: the same side, in steps
        side = math.sqrt(width) * math.sqrt(height) / math.sqrt(max_cells)
    cell = max(radius, side)
    return fit_cells(
        _per_axis(width, cell, max_cells), _per_axis(height, cell, max_cells), max_cells
    )


def _per_axis(length: float, cell: float, max_cells: int) -> int:
    """``max(1, length // cell)``, at most ``max_cells`` (more never fits: the other axis
    has at least one cell), so the count is a small integer even for a cell of 0."""
    if not cell > 0.0:
        return max_cells
    count = length // cell
    if not count < max_cells:  # also inf and nan
        return max_cells
    return max(1, int(count))
