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

=======================  =====================================================
``px py``                the agent's position      ``vx vy`` its velocity
``hx hy``                its heading                ``top`` its ``max_speed``
``mass``                 its ``mass``               ``max_force``, ``radius``
``tx ty``                the target's position      ``tvx tvy`` its velocity
``thx thy``              the target's heading (an agent's own; else its velocity's direction)
``ox oy ovx ovy``        the ``other`` target's position and velocity (``interpose``)
``ahead``                the look-ahead in seconds of the leaf's predictor (below)
``obstacle_pos``         the world's obstacles, whole arrays ``(M, 2)`` and ``(M,)``
``obstacle_radius``
anything else            a constant of the leaf, from ``Rows.constants(model)``
=======================  =====================================================

The formula returns the unweighted force ``(fx, fy)``, possibly followed by a point
``(x, y)`` (an aim) that the NumPy path records as debug geometry of kind
``Rows.draw`` (``steering/debug.py``; the viewer runs NumPy). Rows whose target (or
``other``) is missing get zero and a non-finite force becomes zero, on both
paths (``steering.context.steer``'s rules).

**Look-ahead.** ``ahead`` is what the predictor ``Rows.predictor(model)`` (by
default the model's ``predictor`` field) answers for the point ``Rows.lead``
returns, ``(x, y, vx, vy)`` from the same vocabulary (None: the target
itself), seen from the agent: ``predictors.look_ahead`` through the registry
on the NumPy path, the predictor's ``LOOK_AHEAD`` formula in the row loop. A
predictor without one (a plugin's) keeps the leaf on the NumPy path
(:meth:`Rows.compiles`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from behaviortk.registry import Registries
from behaviortk.sense.sensing import TargetFacts
from behaviortk.steering.predictors import formula_of, look_ahead
from behaviortk.vec import Array
from behaviortk.world.state import World

AGENT = {
    "px": ("pos", 0), "py": ("pos", 1), "vx": ("vel", 0), "vy": ("vel", 1),
    "hx": ("heading", 0), "hy": ("heading", 1), "top": ("max_speed", -1),
    "mass": ("mass", -1), "max_force": ("max_force", -1), "radius": ("radius", -1),
}  # fmt: skip
"""Formula parameter -> (``Agents`` column, component; -1 for a number per agent)."""

TARGET = {"tx": ("pos", 0), "ty": ("pos", 1), "tvx": ("vel", 0), "tvy": ("vel", 1)}
TARGET_HEADING = {"thx": 0, "thy": 1}
OTHER = {"ox": ("pos", 0), "oy": ("pos", 1), "ovx": ("vel", 0), "ovy": ("vel", 1)}
AHEAD = "ahead"
WORLD = {"obstacle_pos": 2, "obstacle_radius": 1}
"""World arrays a formula may take whole -> their number of dimensions."""
KNOWN = AGENT.keys() | TARGET.keys() | TARGET_HEADING.keys() | OTHER.keys() | WORLD.keys()


def _no_constants(model: Any) -> dict[str, Any]:
    return {}


def _own_predictor(model: Any) -> Any:
    return model.predictor


@dataclass(frozen=True)
class Rows:
    """A formula, the leaf's constants and, for ``ahead``, what is predicted and by which
    predictor; ``draw``: the debug kind of the point the formula returns after the force
    (see the module docstring)."""

    formula: Callable[..., tuple[Any, ...]]
    constants: Callable[[Any], dict[str, Any]] = _no_constants
    lead: Callable[..., tuple[Any, Any, Any, Any]] | None = None
    predictor: Callable[[Any], Any] = _own_predictor
    draw: str | None = None
    params: tuple[str, ...] = field(init=False)
    lead_params: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        params = tuple(inspect.signature(self.formula).parameters)
        object.__setattr__(self, "params", params)
        lead = () if self.lead is None else tuple(inspect.signature(self.lead).parameters)
        object.__setattr__(self, "lead_params", lead)

    @property
    def ahead(self) -> bool:
        return AHEAD in self.params

    @property
    def read(self) -> tuple[str, ...]:
        """Every vocabulary name the formula and its lead read."""
        return self.params + self.lead_params

    @property
    def targeted(self) -> bool:
        return (self.ahead and self.lead is None) or any(
            p in TARGET or p in TARGET_HEADING for p in self.read
        )

    @property
    def other(self) -> bool:
        return any(p in OTHER for p in self.read)

    @property
    def target_heading(self) -> bool:
        return any(p in TARGET_HEADING for p in self.read)

    def constant_names(self) -> tuple[str, ...]:
        names = dict.fromkeys(p for p in self.read if p not in KNOWN and p != AHEAD)
        return tuple(names)

    def values(self, model: Any) -> dict[str, Any]:
        """The leaf's constants, checked against the formula's parameters."""
        found = self.constants(model)
        missing = set(self.constant_names()) - found.keys()
        if missing:
            raise TypeError(f"{self.formula.__name__}: no value for {sorted(missing)}")
        return found

    def compiles(self, model: Any) -> bool:
        """Whether the row loop can run ``model``: its predictor, if any, has a formula."""
        return not self.ahead or formula_of(self.predictor(model)) is not None


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
    world: World | None = None,
    registries: Registries | None = None,
) -> tuple[Array, Array | None]:
    """The formula on the columns of ``rows`` (the NumPy path): forces ``(n, 2)`` (zero where
    ``other`` is missing) and the points ``(n, 2)`` it returns after them (else None).

    ``target`` and ``other`` are the facts of the rows' targets (already restricted
    to them); ``heading_of_target`` is ``sense.target_heading`` of ``target``.
    """
    constants = rows_.values(model)
    n = rows.shape[0]

    def agent(column: str) -> Array:
        return np.asarray(getattr(agents, column)[rows], dtype=np.float64)

    def value(name: str) -> Any:
        if name in AGENT:
            column, k = AGENT[name]
            return _column(agent(column), k)
        if name in TARGET:
            assert target is not None
            column, k = TARGET[name]
            return getattr(target, column)[:, k]
        if name in TARGET_HEADING:
            assert heading_of_target is not None
            return heading_of_target[:, TARGET_HEADING[name]]
        if name in OTHER:
            assert other is not None
            column, k = OTHER[name]
            return getattr(other, column)[:, k]
        if name in WORLD:
            assert world is not None
            return np.asarray(getattr(world, name), dtype=np.float64)
        if name == AHEAD:
            return _ahead(rows_, model, agent, value, target, registries)
        return constants[name]

    found = rows_.formula(*[value(p) for p in rows_.params])
    force = np.stack([np.broadcast_to(found[0], (n,)), np.broadcast_to(found[1], (n,))], axis=1)
    if other is not None:
        force[~other.valid] = 0.0
    point = None
    if len(found) == 4:
        point = np.stack([np.broadcast_to(found[2], (n,)), np.broadcast_to(found[3], (n,))], 1)
    return force, point


def _ahead(
    rows_: Rows,
    model: Any,
    agent: Callable[[str], Array],
    value: Callable[[str], Any],
    target: TargetFacts | None,
    registries: Registries | None,
) -> Array:
    """The predictor's look-ahead for the rows: ``Rows.lead``'s point, or the target."""
    if rows_.lead is None:
        assert target is not None
        x, y, vx, vy = target.pos[:, 0], target.pos[:, 1], target.vel[:, 0], target.vel[:, 1]
    else:
        x, y, vx, vy = rows_.lead(*[value(p) for p in rows_.lead_params])
    pos = agent("pos")
    to = np.stack([x - pos[:, 0], y - pos[:, 1]], axis=1)
    vel = np.stack([vx, vy], axis=1)
    predictor = rows_.predictor(model)
    return look_ahead(predictor, to, agent("vel"), agent("max_speed"), vel, registries)
