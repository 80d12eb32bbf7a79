"""The compiled path of a ``Rows`` declaration: one generated numba loop per formula.

:func:`loop_source` writes the loop (``for r in rows: out[r] = weight * formula(row's
scalars)``, with ``steer``'s rules: a missing target gives zero, a non-finite force
zero); ``jit/generated.py`` compiles and caches it under a hash of the loop and of
every formula's source. A formula that takes ``ahead`` gets a loop per predictor
formula: the row's look-ahead is that formula's answer for the lead point (the
``predictors.look_ahead`` rules). :func:`run` hands a leaf's rows to it. The maths
is the formulas' alone (``steering/formulas.py``), the same functions the NumPy
path calls.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.jit.compile import inline
from behaviortk.jit.generated import compile_function
from behaviortk.steering.declared import (
    AGENT,
    AHEAD,
    LEAD,
    OTHER,
    TARGET,
    TARGET_HEADING,
    WORLD,
    WORLD_FLAGS,
    Rows,
)
from behaviortk.steering.predictors import ARGUMENTS, fields_of, formula_of, parameters
from behaviortk.vec import Array, finite_or_zero

Predict = Callable[..., Any] | None
Literals = tuple[tuple[str, bool], ...]
"""The bool parameters of a loop, written into it as literals (``declared``'s docstring)."""
_loops: dict[tuple[Rows, Predict, Literals], Loop] = {}
_models: dict[int, tuple[Any, Predict, Literals, list[Any], Any]] = {}

PREDICTOR_ARGUMENT = {
    "tox": "qx - pos[i, 0]", "toy": "qy - pos[i, 1]", "vx": "vel[i, 0]", "vy": "vel[i, 1]",
    "top": "max_speed[i]", "tvx": "qvx", "tvy": "qvy",
}  # fmt: skip
"""A ``LOOK_AHEAD`` formula's arguments in the loop (``qx, qy, qvx, qvy``: the lead point)."""
assert PREDICTOR_ARGUMENT.keys() == set(ARGUMENTS)


def _agent_columns(rows: Rows) -> list[str]:
    wanted = {AGENT[p][0] for p in rows.read if p in AGENT}
    if rows.target_heading:
        wanted.add("heading")
    if rows.ahead:
        wanted |= {"pos", "vel", "max_speed"}
    return sorted(wanted)


def _argument(name: str, fixed: dict[str, bool]) -> str:
    """The row loop's expression for formula parameter ``name`` (``fixed``: the literals)."""
    if name in fixed:
        return repr(fixed[name])
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
    if name in WORLD:
        return f"w_{name}"
    if name == AHEAD or name in LEAD:
        return name
    return f"c_{name}"


def _predictor_fields(predict: Predict) -> list[str]:
    return [] if predict is None else [n for n in parameters(predict) if n not in ARGUMENTS]


def parameters_of(rows: Rows, predict: Predict, fixed: dict[str, bool]) -> list[str]:
    """The loop's parameters, in order (:func:`run` passes them so)."""
    names = ["rows", "local", *_agent_columns(rows)]
    if rows.targeted:
        names += [*(f"t_{c}" for c in rows.target_columns), "t_valid"]
    if rows.other:
        names += ["o_pos", "o_vel", "o_valid"]
    names += [f"w_{w}" for w in WORLD if w in rows.read]
    names += [f"c_{c}" for c in rows.constant_names if c not in fixed]
    names += [f"a_{a}" for a in _predictor_fields(predict)]
    return [*names, "weight", "out"]


def _call(
    fn: Callable[..., Any], alias: str, names: tuple[str, ...], fixed: dict[str, bool]
) -> tuple[str, str]:
    """(import line, call expression) of formula ``fn`` under ``alias``."""
    found = f"from {fn.__module__} import {fn.__name__} as {alias}"
    return found, f"{alias}({', '.join(_argument(p, fixed) for p in names)})"


def loop_source(rows: Rows, predict: Predict = None, literals: Literals = ()) -> str:
    fixed = dict(literals)
    head, call = _call(rows.formula, "formula", rows.params, fixed)
    imports = [head, "from behaviortk.vec import finite_or_zero, normalize_xy"]
    body = [
        f"def loop({', '.join(parameters_of(rows, predict, fixed))}):",
        "    for r in range(rows.shape[0]):",
        "        i = rows[r]",
        "        g = local[r]",
    ]
    valid = [v for v, on in (("t_valid[g]", rows.targeted), ("o_valid[g]", rows.other)) if on]
    if valid:
        body += [
            f"        if not ({' and '.join(valid)}):",
            "            out[r, 0] = 0.0",
            "            out[r, 1] = 0.0",
            "            continue",
        ]
    if rows.target_heading:
        body += [
            "        a = t_agent[g]",
            "        if a >= 0:",
            "            thx, thy = heading[a, 0], heading[a, 1]",
            "        else:",
            "            thx, thy = normalize_xy(t_vel[g, 0], t_vel[g, 1])",
        ]
    if rows.leads:
        if rows.lead is None:
            lead = "t_pos[g, 0], t_pos[g, 1], t_vel[g, 0], t_vel[g, 1]"
        else:
            line, lead = _call(rows.lead, "lead", rows.lead_params, fixed)
            imports.append(line)
        body.append(f"        {', '.join(LEAD)} = {lead}")
    if rows.ahead:
        assert predict is not None
        imports.append(f"from {predict.__module__} import {predict.__name__} as predict")
        imports.append("from behaviortk.steering.formulas import usable_time")
        given = {**PREDICTOR_ARGUMENT, **{a: f"a_{a}" for a in _predictor_fields(predict)}}
        body.append(
            f"        {AHEAD} = usable_time(predict({', '.join(given[p] for p in parameters(predict))}))"
        )
    body += [
        f"        found = {call}",
        "        out[r, 0] = finite_or_zero(found[0]) * weight",
        "        out[r, 1] = finite_or_zero(found[1]) * weight",
    ]
    stamp = f"# formulas: {_sources_hash(rows.formula, rows.lead, predict)}"
    return "\n".join([stamp, *imports, "", "", *body]) + "\n"


def _sources_hash(*fns: Callable[..., Any] | None) -> str:
    """A hash of the formulas' own source, in the loop's text: the disk cache (keyed by that
    text, in a folder keyed by the package's sources) also sees a plugin's formula change."""
    digest = hashlib.sha256()
    for fn in fns:
        if fn is not None:
            try:
                digest.update(inspect.getsource(fn).encode())
            except (OSError, TypeError):
                digest.update(fn.__qualname__.encode())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Loop:
    """A compiled row loop and what :func:`run` hands it besides the rows."""

    fn: Callable[..., None]
    agent_columns: tuple[str, ...]
    world: tuple[tuple[str, int], ...]


def compiled(rows: Rows, predict: Predict = None, literals: Literals = ()) -> Loop:
    key = (rows, predict, literals)
    found = _loops.get(key)
    if found is None:
        fn = compile_function(loop_source(rows, predict, literals), "loop")
        world = tuple((w, d) for w, d in WORLD.items() if w in rows.read)
        found = _loops[key] = Loop(fn, tuple(_agent_columns(rows)), world)
    return found


def _whole(values: Array, dims: int) -> Array:
    shape = (-1, 2) if dims == 2 else (-1,)
    return np.ascontiguousarray(values, dtype=np.float64).reshape(shape)


def _prepared(rows: Rows, model: Any, world: Any) -> tuple[Predict, Literals, list[Any]]:
    """``model``'s predictor formula, its bool constants (literals) and its other constants
    (the predictor's fields last), read once per model (models are not changed in place:
    an edit loads new ones)."""
    found = _models.get(id(model))
    if found is not None and found[0] is model and (found[4] is world or not rows.reads_world):
        return found[1], found[2], found[3]
    predictor = model.predictor if rows.ahead else None
    predict = None if predictor is None else formula_of(predictor)
    constants = rows.values(model, world)
    literals = tuple((c, constants[c]) for c in rows.constant_names if _is_bool(constants[c]))
    tail = [constants[c] for c in rows.constant_names if not _is_bool(constants[c])]
    if predictor is not None:
        tail += fields_of(predictor).values()
    _models[id(model)] = (model, predict, literals, tail, world)
    return predict, literals, tail


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool | np.bool_)


def loop_of(rows: Rows, model: Any, world: Any) -> tuple[Loop, list[Any]]:
    """The loop that runs ``model`` in ``world`` (one per formula, predictor and literals:
    leaves that share it share one compile) and the constants it is handed."""
    predict, literals, tail = _prepared(rows, model, world)
    if rows.flags:
        literals += tuple((f, WORLD_FLAGS[f](world)) for f in rows.flags)
    return compiled(rows, predict, literals), tail


def run(
    rows: Rows, model: Any, agents: Any, world: Any, at: np.ndarray, local: np.ndarray,
    target: Any, other: Any, weight: float, out: Array,
) -> None:  # fmt: skip
    """Write ``weight * force`` for global rows ``at`` (``local`` within the group) into ``out``;
    ``target``/``other``: the group's facts (contiguous arrays), None when not used."""
    loop, tail = loop_of(rows, model, world)
    args: list[Any] = [at, local]
    args += [getattr(agents, c) for c in loop.agent_columns]
    if rows.targeted:
        args += [getattr(target, c) for c in rows.target_columns]
        args.append(target.valid)
    if rows.other:
        args += [other.pos, other.vel, other.valid]
    args += [_whole(getattr(world, w), d) for w, d in loop.world]
    loop.fn(*args, *tail, float(weight), out)


@inline
def put(out: Array, r: int, fx: float, fy: float, weight: float) -> None:
    """``steer``'s rule for row ``r`` of a hand-written loop (``flock_loops``, ...): a
    non-finite force is zero; then the leaf's weight."""
    out[r, 0] = finite_or_zero(fx) * weight
    out[r, 1] = finite_or_zero(fy) * weight
