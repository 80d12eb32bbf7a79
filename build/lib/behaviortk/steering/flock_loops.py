"""Flocking on compiled kernels: the numba twin of ``kernels.separation_force``,
``alignment_force`` and ``cohesion_force``.

Both paths sum each neighbour pair's term in pair order (``(i, j)``): the NumPy
path with ``np.bincount``, these loops one pair after another. The terms and the
forces made from the sums are formulas (``vec.separation_term``/``coincident_push``,
``formulas.alignment``, ``cohesion``); only the
loops are written twice.

Pairs come in CSR form (``sense.Neighbours``): an agent's pairs are one
contiguous run, so separation, alignment and cohesion of one ``blend`` share a
single pass (:func:`flock`). The compiled neighbour query (``sense/query_loops.py``)
adds ``separation_pair`` and the other sums while it finds the pairs;
:func:`flock_sums` and :func:`flock_blend` start from those sums.
"""

from __future__ import annotations

from behaviortk.jit.compile import inline, kernel
from behaviortk.sense.query_loops import separation_pair
from behaviortk.steering.formulas import alignment, cohesion
from behaviortk.steering.row_loops import put
from behaviortk.vec import finite_or_zero, truncate_xy


@inline
def _forces(count, sx, sy, ax, ay, cx, cy, px, py, vx, vy, top):  # fmt: skip
    """Separation, alignment and cohesion of one agent from its pair sums, each with
    ``steer``'s non-finite clean-up (a child of a blend is cleaned before it is weighted)."""
    fax, fay = alignment(count, ax, ay, vx, vy)
    fcx, fcy = cohesion(count, cx, cy, px, py, vx, vy, top)
    return (
        finite_or_zero(sx), finite_or_zero(sy), finite_or_zero(fax),
        finite_or_zero(fay), finite_or_zero(fcx), finite_or_zero(fcy),
    )  # fmt: skip


@inline
def _out(
    r, i, count, sx, sy, ax, ay, cx, cy, pos, vel, max_speed,
    w_sep, w_ali, w_coh, out_sep, out_ali, out_coh,
):  # fmt: skip
    """The three flocking forces of row ``r`` (:func:`_forces`), each weighted into its
    ``out``; a negative weight skips one."""
    fsx, fsy, fax, fay, fcx, fcy = _forces(
        count, sx, sy, ax, ay, cx, cy, pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1], max_speed[i]
    )
    if w_sep >= 0.0:
        put(out_sep, r, fsx, fsy, w_sep)
    if w_ali >= 0.0:
        put(out_ali, r, fax, fay, w_ali)
    if w_coh >= 0.0:
        put(out_coh, r, fcx, fcy, w_coh)


@kernel
def flock(
    rows, local, offsets, nb_j, nb_d, pos, vel, max_speed,
    w_sep, w_ali, w_coh, out_sep, out_ali, out_coh,
):  # fmt: skip
    """Separation, alignment and cohesion in one pass over each row's neighbour pairs
    (``rows`` global, ``local`` within the group); a weight below zero skips that force
    (its ``out`` is not written)."""
    sep, ali, coh = w_sep >= 0.0, w_ali >= 0.0, w_coh >= 0.0
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        sx = sy = ax = ay = cx = cy = 0.0
        lo, hi = offsets[g], offsets[g + 1]
        for p in range(lo, hi):
            dx, dy = nb_d[p, 0], nb_d[p, 1]
            j = nb_j[p]
            if sep:
                tx, ty = separation_pair(i, j, dx, dy)
                sx += tx
                sy += ty
            if ali:
                ax += vel[j, 0]
                ay += vel[j, 1]
            if coh:
                cx += dx
                cy += dy
        _out(
            r, i, hi - lo, sx, sy, ax, ay, cx, cy, pos, vel, max_speed,
            w_sep, w_ali, w_coh, out_sep, out_ali, out_coh,
        )  # fmt: skip


@kernel
def flock_sums(
    rows, local, offsets, sums, pos, vel, max_speed,
    w_sep, w_ali, w_coh, out_sep, out_ali, out_coh,
):  # fmt: skip
    """:func:`flock` from the per-observer sums the neighbour query already made."""
    for r in range(rows.shape[0]):
        g = local[r]
        _out(
            r, rows[r], offsets[g + 1] - offsets[g], sums[g, 0], sums[g, 1], sums[g, 2],
            sums[g, 3], sums[g, 4], sums[g, 5], pos, vel, max_speed,
            w_sep, w_ali, w_coh, out_sep, out_ali, out_coh,
        )  # fmt: skip


@kernel
def flock_blend(
    rows, local, offsets, sums, pos, vel, max_speed, max_force, kinds, weights, weight, out,
):  # fmt: skip
    """A ``blend`` whose children are all flocking leaves of one ``of``, in one pass:
    each child's weighted force (``kinds``: 0 separation, 1 alignment, 2 cohesion,
    in child order) from the query's sums, summed in child order, truncated at
    max_force (``combiners.blend``), times the blend's ``weight``."""
    for r in range(rows.shape[0]):
        i, g = rows[r], local[r]
        fsx, fsy, fax, fay, fcx, fcy = _forces(
            offsets[g + 1] - offsets[g], sums[g, 0], sums[g, 1], sums[g, 2], sums[g, 3],
            sums[g, 4], sums[g, 5], pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1], max_speed[i],
        )  # fmt: skip
        x = y = 0.0
        for c in range(kinds.shape[0]):
            k = kinds[c]
            if k == 0:
                x += fsx * weights[c]
                y += fsy * weights[c]
            elif k == 1:
                x += fax * weights[c]
                y += fay * weights[c]
            else:
                x += fcx * weights[c]
                y += fcy * weights[c]
        x, y = truncate_xy(x, y, max_force[i])
        put(out, r, x, y, weight)
