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
``qx qy qvx qvy``        the point ``ahead`` is for and its velocity (below)
``obstacle_pos``         the world's obstacles, whole arrays ``(M, 2)`` and ``(M,)``
``obstacle_radius``
``no_obstacles``         whether the world has none (a bool)
anything else            a constant of the leaf, from ``Rows.constants(model)``
=======================  =====================================================

``constants`` takes the model, or the model and the ``World`` when a constant
comes from the world (``containment``'s area is the whole world by default).

The formula returns the unweighted force ``(fx, fy)``, possibly followed by a point
``(x, y)`` (an aim) that the NumPy path records as debug geometry of kind
``Rows.draw`` (``steering/debug.py``; the viewer runs NumPy). Rows whose target (or
``other``) is missing get zero and a non-finite force becomes zero, on both
paths (``steering.context.steer``'s rules).

**Bools are literals.** A parameter whose value is a bool (a constant of the
leaf, ``no_obstacles``) is written into the compiled loop as ``True`` or
``False``: one loop per combination of values. So a formula may branch on it
with ``if`` (on the NumPy path it is a plain bool too), and the compiled loop
holds only the branch taken; ``if`` on row data stays ``select``.

**Look-ahead.** ``ahead`` is what the leaf's ``predictor`` answers for the
point ``qx, qy`` moving at ``qvx, qvy``, seen from the agent: what
``Rows.lead`` returns from the same vocabulary (None: the target itself),
computed once per row. The NumPy path asks ``predictors.look_ahead`` (the
registry), the row loop calls the predictor's ``LOOK_AHEAD`` formula; a
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
LEAD = ("qx", "qy", "qvx", "qvy")
WORLD = {"obstacle_pos": 2, "obstacle_radius": 1}
"""World arrays a formula may take whole -> their number of dimensions."""


def _no_obstacles(world: World) -> bool:
    return bool(world.obstacle_pos.shape[0] == 0)


WORLD_FLAGS: dict[str, Callable[[World], bool]] = {"no_obstacles": _no_obstacles}
"""Facts of the world a formula may branch on (bools, literals in the compiled loop)."""
KNOWN = (
    AGENT.keys() | TARGET.keys() | TARGET_HEADING.keys() | OTHER.keys() | WORLD.keys()
    | WORLD_FLAGS.keys() | {AHEAD, *LEAD}
)  # fmt: skip


def _no_constants(model: Any) -> dict[str, Any]:
    return {}


@dataclass(frozen=True, eq=False)
class Rows:
    """A formula, the leaf's constants, for ``ahead`` what is predicted (``lead``) and the
    debug kind of the point the formula returns after the force (``draw``); see the module
    docstring. The rest is read off the formulas' signatures, once."""

    formula: Callable[..., tuple[Any, ...]]
    constants: Callable[..., dict[str, Any]] = _no_constants
    lead: Callable[..., tuple[Any, Any, Any, Any]] | None = None
    draw: str | None = None
    params: tuple[str, ...] = field(init=False)
    lead_params: tuple[str, ...] = field(init=False)
    read: tuple[str, ...] = field(init=False)
    """Every vocabulary name the formula and its lead read."""
    ahead: bool = field(init=False)
    leads: bool = field(init=False)
    """The formula reads the lead point (``ahead`` or ``qx qy qvx qvy``)."""
    targeted: bool = field(init=False)
    target_columns: tuple[str, ...] = field(init=False)
    """The target facts the loop reads besides ``valid``: of ``pos``, ``vel``, ``agent``."""
    other: bool = field(init=False)
    target_heading: bool = field(init=False)
    flags: tuple[str, ...] = field(init=False)
    """The world flags (``WORLD_FLAGS``) the formulas read."""
    constant_names: tuple[str, ...] = field(init=False)
    reads_world: bool = field(init=False)
    """``constants`` takes ``(model, world)``: a constant comes from the world."""

    def __post_init__(self) -> None:
        params = tuple(inspect.signature(self.formula).parameters)
        lead = () if self.lead is None else tuple(inspect.signature(self.lead).parameters)
        read = params + lead
        ahead = AHEAD in params
        leads = any(p == AHEAD or p in LEAD for p in params)
        own = leads and self.lead is None  # the lead point is the target
        heading = any(p in TARGET_HEADING for p in read)
        columns = {
            "pos": own or any(TARGET.get(p, ("",))[0] == "pos" for p in read),
            "vel": own or heading or any(TARGET.get(p, ("",))[0] == "vel" for p in read),
            "agent": heading,
        }
        found = {
            "params": params,
            "lead_params": lead,
            "read": read,
            "ahead": ahead,
            "leads": leads,
            "targeted": any(columns.values()),
            "target_columns": tuple(c for c, on in columns.items() if on),
            "other": any(p in OTHER for p in read),
            "target_heading": heading,
            "flags": tuple(dict.fromkeys(p for p in read if p in WORLD_FLAGS)),
            "constant_names": tuple(dict.fromkeys(p for p in read if p not in KNOWN)),
            "reads_world": len(inspect.signature(self.constants).parameters) == 2,
        }
        for name, value in found.items():
            object.__setattr__(self, name, value)

    def values(self, model: Any, world: Any = None) -> dict[str, Any]:
        """The leaf's constants, checked against the formula's parameters."""
        found = self.constants(model, world) if self.reads_world else self.constants(model)
        missing = set(self.constant_names) - found.keys()
        if missing:
            raise TypeError(f"{self.formula.__name__}: no value for {sorted(missing)}")
        return found

    def compiles(self, model: Any) -> bool:
        """Whether the row loop can run ``model``: its predictor, if any, has a formula."""
        return not self.ahead or formula_of(model.predictor) is not None


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
    constants = rows_.values(model, world)
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
        if name in WORLD_FLAGS:
            assert world is not None
            return WORLD_FLAGS[name](world)
        if name == AHEAD:
            x, y, vx, vy = lead_point()
            return _ahead(model.predictor, agent, x, y, vx, vy, registries)
        if name in LEAD:
            return lead_point()[LEAD.index(name)]
        return constants[name]

    def lead_point() -> tuple[Any, Any, Any, Any]:
        if not found_lead:
            if rows_.lead is None:
                assert target is not None
                pos, vel = target.pos, target.vel
                found_lead.extend([pos[:, 0], pos[:, 1], vel[:, 0], vel[:, 1]])
            else:
                found_lead.extend(rows_.lead(*[value(p) for p in rows_.lead_params]))
        return found_lead[0], found_lead[1], found_lead[2], found_lead[3]

    found_lead: list[Any] = []

    found = rows_.formula(*[value(p) for p in rows_.params])
    force = np.stack([np.broadcast_to(found[0], (n,)), np.broadcast_to(found[1], (n,))], axis=1)
    if other is not None:
        force[~other.valid] = 0.0
    point = None
    if len(found) == 4:
        point = np.stack([np.broadcast_to(found[2], (n,)), np.broadcast_to(found[3], (n,))], 1)
    return force, point


def _ahead(
    predictor: Any,
    agent: Callable[[str], Array],
    x: Any,
    y: Any,
    vx: Any,
    vy: Any,
    registries: Registries | None,
) -> Array:
    """``predictor``'s look-ahead for the rows, toward point ``(x, y)`` moving at ``(vx, vy)``."""
    pos = agent("pos")
    to = np.stack([x - pos[:, 0], y - pos[:, 1]], axis=1)
    vel = np.stack([vx, vy], axis=1)
    return look_ahead(predictor, to, agent("vel"), agent("max_speed"), vel, registries)
