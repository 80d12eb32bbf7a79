"""Combining forces on compiled kernels: the numba twin of ``combiners.py`` (``blend``,
``prioritized_sum``, ``first_nonzero``, ``prioritized_dither``) and of ``act.py``'s
AccumulateForce over a leaf's rows.

A combiner's children are taken in order, one row at a time, where the NumPy
path takes them in order over all rows at once; each child's term is the same
formula (``formulas.accumulate``, ``longer_than``, ``dither``; ``vec.truncate_xy``
for the final truncation at max_force). ``forces`` holds the children's weighted
forces, ``(children, n, 2)``; ``rows`` are the global rows.
"""

from __future__ import annotations

import numpy as np

from behaviortk.jit.compile import kernel
from behaviortk.steering.formulas import accumulate, dither, longer_than
from behaviortk.steering.row_loops import put
from behaviortk.vec import truncate_xy


@kernel
def blend(forces, rows, max_force, weight, out):
    """Sum of the children's weighted forces in order, truncated at max_force, times ``weight``."""
    for r in range(rows.shape[0]):
        x = y = 0.0
        for c in range(forces.shape[0]):
            x += forces[c, r, 0]
            y += forces[c, r, 1]
        x, y = truncate_xy(x, y, max_force[rows[r]])
        put(out, r, x, y, weight)


@kernel
def prioritized_sum(forces, rows, max_force, weight, out):
    """Buckland's AccumulateForce over the children in order, times ``weight``."""
    for r in range(rows.shape[0]):
        x = y = 0.0
        top = max_force[rows[r]]
        for c in range(forces.shape[0]):
            x, y = accumulate(x, y, forces[c, r, 0], forces[c, r, 1], top)
        put(out, r, x, y, weight)


@kernel
def first_nonzero(forces, rows, max_force, epsilon, weight, out):
    """The first child longer than ``epsilon``, truncated at max_force, times ``weight``."""
    for r in range(rows.shape[0]):
        x = y = 0.0
        for c in range(forces.shape[0]):
            fx, fy = forces[c, r, 0], forces[c, r, 1]
            if longer_than(fx, fy, epsilon):
                x, y = fx, fy
                break
        x, y = truncate_xy(x, y, max_force[rows[r]])
        put(out, r, x, y, weight)


@kernel
def prioritized_dither(forces, rows, max_force, rand, slot, chances, weight, out):
    """Buckland's prioritized dithering: in order, a child applies with its chance (read from
    ``rand[row, slot + child]``); the first that applies and is not zero wins."""
    for r in range(rows.shape[0]):
        i = rows[r]
        x = y = 0.0
        for c in range(forces.shape[0]):
            chance = chances[c]
            if chance <= 0.0:
                continue
            fx, fy, applies = dither(forces[c, r, 0], forces[c, r, 1], rand[i, slot + c], chance)
            if applies and longer_than(fx, fy, 0.0):
                x, y = fx, fy
                break
        x, y = truncate_xy(x, y, max_force[i])
        put(out, r, x, y, weight)


# ------------------------------------------------------------------- act
@kernel
def request_rows(emitted):
    """The rows that asked for each steering leaf (``emitted``: agents x leaves; ``act``'s
    ``np.flatnonzero`` per leaf): leaf ``k``'s ascending rows are
    ``rows[firsts[k]:firsts[k + 1]]``. Branch-free: every row is written, only those that
    asked advance (a later leaf's rows overwrite the rest)."""
    n, leaves = emitted.shape
    firsts = np.zeros(leaves + 1, dtype=np.int64)
    for a in range(n):
        for k in range(leaves):
            firsts[k + 1] += emitted[a, k]
    for k in range(leaves):
        firsts[k + 1] += firsts[k]
    rows = np.empty(firsts[leaves] + 1, dtype=np.int64)
    for k in range(leaves):
        at = firsts[k]
        for a in range(n):
            rows[at] = a
            at += emitted[a, k]
    return firsts, rows[: firsts[leaves]]


@kernel
def accumulate_rows(linear, rows, force, max_force):
    """``act``'s AccumulateForce of one leaf's weighted forces into the running totals, in place."""
    for r in range(rows.shape[0]):
        i = rows[r]
        linear[i, 0], linear[i, 1] = accumulate(
            linear[i, 0], linear[i, 1], force[r, 0], force[r, 1], max_force[i]
        )


@kernel
def accumulate_acted(linear, rows, force, max_force, acted, emit, start):
    """:func:`accumulate_rows`, and ``acted[row - start, emit]``: whether the row's force is not
    zero (``start``: the group's first row)."""
    for r in range(rows.shape[0]):
        i = rows[r]
        fx, fy = force[r, 0], force[r, 1]
        acted[i - start, emit] = fx != 0.0 or fy != 0.0
        linear[i, 0], linear[i, 1] = accumulate(linear[i, 0], linear[i, 1], fx, fy, max_force[i])
