"""The compiled path of a ``Rows`` declaration: one generated numba loop per formula.

:func:`loop_source` writes the loop (``for r in rows: out[r] = weight * formula(row's
scalars)``, with ``steer``'s rules: a missing target gives zero, a non-finite force
zero); ``jit/generated.py`` compiles and caches it under a hash of the loop and of
every formula's source. :func:`run` hands a leaf's rows to it. The maths is the
formula's alone (``steering/formulas.py``), the same function the NumPy path calls.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from behaviortk.jit.compile import inline
from behaviortk.jit.generated import compile_function
from behaviortk.steering.declared import AGENT, OTHER, TARGET, TARGET_HEADING, Rows
from behaviortk.vec import Array, finite_or_zero

_loops: dict[Rows, Callable[..., None]] = {}


@cache
def _agent_columns(rows: Rows) -> list[str]:
    wanted = {AGENT[p][0] for p in rows.params if p in AGENT}
    if any(p in TARGET_HEADING for p in rows.params):
        wanted.add("heading")
    return sorted(wanted)


def _argument(name: str) -> str:
    """The row loop's expression for formula parameter ``name``."""
    if name in AGENT:
        column, k = AGENT[name]
        return f"{column}[i]" if k < 0 else f"{column}[i, {k}]"
    if name in TARGET:
        column, k = TARGET[name]
        return f"t_{column}[g, {k}]"
    if name in TARGET_HEADING:
        return f"th{'xy'[TARGET_HEADING[name]]}"
    if name in OTHER:
        column, k = OTHER[name]
        return f"o_{column}[g, {k}]"
    return f"c_{name}"


def parameters(rows: Rows) -> list[str]:
    """The loop's parameters, in order (:func:`run` passes them so)."""
    names = ["rows", "local", *_agent_columns(rows)]
    if rows.targeted:
        names += ["t_pos", "t_vel", "t_agent", "t_valid"]
    if rows.other:
        names += ["o_pos", "o_vel", "o_valid"]
    return names + [f"c_{c}" for c in rows.constant_names()] + ["weight", "out"]


def loop_source(rows: Rows) -> str:
    fn = rows.formula
    lines = [
        f"from {fn.__module__} import {fn.__name__} as formula",
        "from behaviortk.vec import finite_or_zero, normalize_xy",
        "",
        "",
        f"def loop({', '.join(parameters(rows))}):",
        "    for r in range(rows.shape[0]):",
        "        i = rows[r]",
        "        g = local[r]",
    ]
    valid = [v for v, on in (("t_valid[g]", rows.targeted), ("o_valid[g]", rows.other)) if on]
    if valid:
        lines += [
            f"        if not ({' and '.join(valid)}):",
            "            out[r, 0] = 0.0",
            "            out[r, 1] = 0.0",
            "            continue",
        ]
    if any(p in TARGET_HEADING for p in rows.params):
        lines += [
            "        a = t_agent[g]",
            "        if a >= 0:",
            "            thx, thy = heading[a, 0], heading[a, 1]",
            "        else:",
            "            thx, thy = normalize_xy(t_vel[g, 0], t_vel[g, 1])",
        ]
    lines += [
        f"        fx, fy = formula({', '.join(_argument(p) for p in rows.params)})",
        "        out[r, 0] = finite_or_zero(fx) * weight",
        "        out[r, 1] = finite_or_zero(fy) * weight",
    ]
    return "\n".join(lines) + "\n"


def compiled(rows: Rows) -> Callable[..., None]:
    found = _loops.get(rows)
    if found is None:
        found = _loops[rows] = compile_function(loop_source(rows), "loop")
    return found


def run(
    rows: Rows, model: Any, agents: Any, at: np.ndarray, local: np.ndarray,
    target: Any, other: Any, weight: float, out: Array, world: Any = None,
) -> None:  # fmt: skip
    """Write ``weight * force`` for global rows ``at`` (``local`` within the group) into ``out``;
    ``target``/``other``: the group's facts (contiguous arrays), None when not used."""
    constants = rows.values(model, world)
    args: list[Any] = [at, local]
    args += [getattr(agents, c) for c in _agent_columns(rows)]
    if rows.targeted:
        args += [target.pos, target.vel, target.agent, target.valid]
    if rows.other:
        args += [other.pos, other.vel, other.valid]
    args += [constants[c] for c in rows.constant_names()]
    compiled(rows)(*args, float(weight), out)


@inline
def put(out: Array, r: int, fx: float, fy: float, weight: float) -> None:
    """``steer``'s rule for row ``r`` of a hand-written loop (``flock_loops``, ...): a
    non-finite force is zero; then the leaf's weight."""
    out[r, 0] = finite_or_zero(fx) * weight
    out[r, 1] = finite_or_zero(fy) * weight
