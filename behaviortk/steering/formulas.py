"""Every steering primitive's per-row maths, written once over components.

A formula takes plain numbers or NumPy columns (``px, py`` the agent's position,
``tx, ty`` the target's, ...; the names are ``steering/declared.py``'s vocabulary) and
uses ``select`` where a row-by-row program would branch, so the NumPy path runs
it over whole columns and the compiled path calls the same function inside a
numba row loop (``behaviortk.jit`` registers every ``@formula``). Divisions are
guarded as ``vec.normalize_xy`` guards them: both sides of a ``select`` are
computed.

Sources as in ``steering/kernels.py``: Reynolds (1999), Buckland ch. 3,
Millington ch. 3.
"""

from __future__ import annotations

from typing import Any

from behaviortk.vec import formula, normalize_xy


@formula
def seek(px: Any, py: Any, vx: Any, vy: Any, tx: Any, ty: Any, top: Any) -> tuple[Any, Any]:
    """Reynolds/Buckland seek: ``normalize(target - pos) * max_speed - vel``."""
    ux, uy = normalize_xy(tx - px, ty - py)
    return ux * top - vx, uy * top - vy
