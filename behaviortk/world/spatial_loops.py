"""The minimum image inside compiled loops: ``spatial.minimum_image`` behind the branches that
let a loop skip its division.

``minimum_image`` is the one formula (``displacement`` runs it on columns); these
helpers decide per offset whether to call it. A compiled ``select`` computes both
of its values, and the division per neighbour pair costs a third of the neighbour
query, so here the branch is real.
"""

from __future__ import annotations

from behaviortk.jit.compile import inline
from behaviortk.world.spatial import minimum_image


@inline
def shortest(d: float, size: float, wrap: bool) -> float:
    """``d`` as ``displacement`` measures it: its minimum image on wrapped worlds, else ``d``."""
    if wrap:
        return minimum_image(d, size)
    return d


@inline
def shortest_near(d: float, size: float, wrap: bool) -> float:
    """:func:`shortest` for offsets that are nearly always within half the world.

    There ``d / size`` lies within ``[-0.5, 0.5]``, which rounds (halves to even) to a
    zero of ``d``'s sign, so the minimum image is ``d + 0.0`` (``-0.0`` becomes ``0.0`` as
    in the subtraction): the same bits without the division.
    """
    if not wrap:
        return d
    if abs(d) < 0.5 * size:
        return d + 0.0
    return minimum_image(d, size)
