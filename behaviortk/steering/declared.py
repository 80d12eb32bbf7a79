"""``Rows``: which columns reach a steering formula, declared once beside the node's model.

A built-in primitive's maths is one formula in ``steering/formulas.py``: plain
NumPy over components (``px, py, vx, vy, tx, ty, ...``). Its model carries a
``ROWS`` declaration; from it

- the NumPy path (the reference) calls the formula once on the columns of the
  rows that asked (:func:`columns`), and
- the compiled path (``steering/row_loops.py``) generates one numba loop that
  calls the same formula on each row's scalars,

so the formula is written once and a new primitive with a compiled path is its
model (with ``ROWS``) and its formula: two files.

The formula's parameter names say where each value comes from:

=================  =====================================================
``px py``          the agent's position      ``vx vy`` its velocity
``hx hy``          its heading                ``top`` its ``max_speed``
``mass``           its ``mass``               ``max_force``, ``radius``
``tx ty``          the target's position      ``tvx tvy`` its velocity
``thx thy``        the target's heading (an agent's own; else its velocity's direction)
``ox oy ovx ovy``  the ``other`` target's position and velocity (``interpose``)
anything else      a constant of the leaf, from ``Rows.constants(model)``
=================  =====================================================

``constants`` takes the model, or the model and the ``World`` when a constant
comes from the world (``containment``'s area is the whole world by default).

The formula returns the unweighted force ``(fx, fy)``. Rows whose target (or
``other``) is missing get zero and a non-finite force becomes zero, on both
paths (``steering.context.steer``'s rules).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from behaviortk.sense.sensing import TargetFacts
from behaviortk.vec import Array

AGENT = {
    "px": ("pos", 0), "py": ("pos", 1), "vx": ("vel", 0), "vy": ("vel", 1),
    "hx": ("heading", 0), "hy": ("heading", 1), "top": ("max_speed", -1),
    "mass": ("mass", -1), "max_force": ("max_force", -1), "radius": ("radius", -1),
}  # fmt: skip
"""Formula parameter -> (``Agents`` column, component; -1 for a number per agent)."""

TARGET = {"tx": ("pos", 0), "ty": ("pos", 1), "tvx": ("vel", 0), "tvy": ("vel", 1)}
TARGET_HEADING = {"thx": 0, "thy": 1}
OTHER = {"ox": ("pos", 0), "oy": ("pos", 1), "ovx": ("vel", 0), "ovy": ("vel", 1)}


def _no_constants(model: Any) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Rows:
    """A formula and the leaf's constants (see the module docstring)."""

    formula: Callable[..., tuple[Any, Any]]
    constants: Callable[..., dict[str, Any]] = _no_constants
    params: tuple[str, ...] = field(init=False)
    reads_world: bool = field(init=False)

    def __post_init__(self) -> None:
        params = tuple(inspect.signature(self.formula).parameters)
        object.__setattr__(self, "params", params)
        takes = len(inspect.signature(self.constants).parameters)
        object.__setattr__(self, "reads_world", takes == 2)

    # read on every call of the leaf: worked out once
    @cached_property
    def targeted(self) -> bool:
        return any(p in TARGET or p in TARGET_HEADING for p in self.params)

    @cached_property
    def other(self) -> bool:
        return any(p in OTHER for p in self.params)

    @cached_property
    def _constant_names(self) -> tuple[str, ...]:
        known = AGENT.keys() | TARGET.keys() | TARGET_HEADING.keys() | OTHER.keys()
        return tuple(p for p in self.params if p not in known)

    def constant_names(self) -> tuple[str, ...]:
        return self._constant_names

    def values(self, model: Any, world: Any = None) -> dict[str, Any]:
        """The leaf's constants, checked against the formula's parameters."""
        found = self.constants(model, world) if self.reads_world else self.constants(model)
        missing = set(self._constant_names) - found.keys()
        if missing:
            raise TypeError(f"{self.formula.__name__}: no value for {sorted(missing)}")
        return found


def _column(values: Array, k: int) -> Array:
    return values if k < 0 else values[:, k]


def columns(
    rows_: Rows,
    model: Any,
    agents: Any,
    rows: np.ndarray,
    target: TargetFacts | None = None,
    heading_of_target: Array | None = None,
    other: TargetFacts | None = None,
    world: Any = None,
) -> Array:
    """The formula on the columns of ``rows`` (the NumPy path): forces ``(n, 2)``.

    ``target`` and ``other`` are the facts of the rows' targets (already restricted
    to them); ``heading_of_target`` is ``sense.target_heading`` of ``target``.
    """
    constants = rows_.values(model, world)
    args: list[Any] = []
    for name in rows_.params:
        if name in AGENT:
            column, k = AGENT[name]
            args.append(_column(np.asarray(getattr(agents, column)[rows], dtype=np.float64), k))
        elif name in TARGET:
            assert target is not None
            column, k = TARGET[name]
            args.append(getattr(target, column)[:, k])
        elif name in TARGET_HEADING:
            assert heading_of_target is not None
            args.append(heading_of_target[:, TARGET_HEADING[name]])
        elif name in OTHER:
            assert other is not None
            column, k = OTHER[name]
            args.append(getattr(other, column)[:, k])
        else:
            args.append(constants[name])
    fx, fy = rows_.formula(*args)
    n = rows.shape[0]
    return np.stack([np.broadcast_to(fx, (n,)), np.broadcast_to(fy, (n,))], axis=1)
