"""The one import a plugin needs: registration, base models, field types, contexts.

A plugin is one module that makes a :class:`Plugin`, declares models and
implementations with its decorators, and exposes ``register``::

    from behaviortk.plugin import Plugin, Steering, SteeringContext, TargetedModel, doc

    plugin = Plugin(__name__)

    class Orbit(TargetedModel):
        type: Literal["orbit"] = "orbit"

    @plugin.primitive(Orbit)
    def orbit(p: Orbit, ctx: SteeringContext) -> Steering: ...

    register = plugin.register

Nothing is registered on import. ``behaviortk.load_plugin("my_module")`` (or
``plugin.install()`` from a script) registers it into the default registries,
where validation, the JSON Schema and both engines find it like a built-in;
``registry.load_plugin(name, registries)`` does the same for a fresh bundle.

What each kind provides (both engines run all of them with no code of their own):

* primitive / combiner: ``fn(model, SteeringContext) -> Steering``, vectorised
  over the agents that asked this tick; optional ``done(model, sense, group,
  memory) -> bool array`` for where the leaf reports SUCCESS.
* condition: ``fn(model, sense, group, prev, rand) -> bool array`` computed
  for the whole group each tick, or a :class:`LeafOps` class read when ticked.
* action: a :class:`LeafOps` class (``initialise`` / ``update`` / ``terminate``
  over the rows that tick it), built once per group as ``cls(model, NodeContext)``;
  ``prepare(sense)`` is called once per tick before any tree ticks, to keep
  what it needs of the tick's sensed facts (``memory.RememberOps`` reads its
  target there).
* decorator: a :class:`DecoratorOps` class mapping the child's status.
* predictor: ``fn(model, to_target, own_vel, max_speed, target_vel) -> seconds``.
* target kind: ``fn(spec, sense, group) -> TargetFacts`` for the group's rows.
* metric: ``fn(spec, sim, memory) -> float``, one number per tick from the
  simulation state (``memory`` persists over one run); checks and sweeps use it.
* composite: a builder per engine (see ``engines/builders.py``), since a
  composite's control flow is the engine's own.

A field typed ``BlackboardKey`` (or ``BlackboardPointKey``) names a blackboard
key: the loader checks the tree declares it (with type point), as for the
built-in blackboard nodes; ``Annotated[ParamValue, BlackboardValue()]`` marks a
value that must be of the type of the sibling ``key``. Ops write with
``ctx.board.set`` (one value for the rows) or ``ctx.board.set_points`` (a point
per row), which refuse undeclared keys and values of the wrong type and stamp
the tick; ``ctx.board.stored_ticks`` reads the stamps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from behaviortk.format.checks import MetricModel
from behaviortk.format.fields import (
    AgentRef,
    BlackboardKey,
    BlackboardPointKey,
    BlackboardValue,
    Degrees,
    Finite,
    GroupRef,
    Model,
    NonNeg,
    ParamValue,
    PathRef,
    PDegrees,
    PFinite,
    PNonNeg,
    Point,
    Positive,
    PPoint,
    PPositive,
    PProbability,
    Probability,
    doc,
)
from behaviortk.format.nodes import Condition, Node, NodeModel, Predictor, PrimitiveNode, Target
from behaviortk.registry import Registries, default
from behaviortk.sense.sensing import Sense, TargetFacts
from behaviortk.steering.context import Steering, SteeringContext
from behaviortk.steering.primitives import SteeringModel, TargetedModel
from behaviortk.tree.ops import Codes, DecoratorOps, LeafOps, NodeContext, Rows
from behaviortk.tree.status import FAILURE, INVALID, RUNNING, SUCCESS
from behaviortk.vec import dot, length, normalize, perp, truncate
from behaviortk.world.spatial import displacement

T = TypeVar("T")
Step = Callable[[Registries], None]


class Plugin:
    """Collects a module's registrations; ``register(registries)`` applies them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._steps: list[Step] = []

    def _add(self, kind: str, model: type[BaseModel], **extra: Any) -> Callable[[T], T]:
        def wrap(impl: T) -> T:
            def step(regs: Registries) -> None:
                getattr(regs, kind).register(model, impl, **extra)

            self._steps.append(step)
            return impl

        return wrap

    def primitive(self, model: type[BaseModel], *, done: Any = None) -> Callable[[T], T]:
        """Decorate ``fn(model, ctx) -> Steering``: a steering primitive."""
        return self._add("primitives", model, done=done)

    def combiner(self, model: type[BaseModel]) -> Callable[[T], T]:
        """Decorate ``fn(model, ctx) -> Steering`` of a model whose children are primitives."""
        return self._add("combiners", model)

    def condition(self, model: type[BaseModel]) -> Callable[[T], T]:
        """Decorate a vectorised condition function, or a ``LeafOps`` class read when ticked."""
        return self._add("conditions", model)

    def action(self, model: type[BaseModel]) -> Callable[[T], T]:
        """Decorate a ``LeafOps`` class."""
        return self._add("actions", model)

    def decorator(self, model: type[BaseModel]) -> Callable[[T], T]:
        """Decorate a ``DecoratorOps`` class (the model has a ``child: Node`` field)."""
        return self._add("decorators", model)

    def predictor(self, model: type[BaseModel]) -> Callable[[T], T]:
        """Decorate ``fn(model, to_target, own_vel, max_speed, target_vel) -> (n,) seconds``."""
        return self._add("predictors", model)

    def target_kind(self, model: type[BaseModel]) -> Callable[[T], T]:
        """Decorate ``fn(spec, sense, group) -> TargetFacts`` (the model has a ``kind`` field)."""
        return self._add("targets", model)

    def metric(self, model: type[BaseModel]) -> Callable[[T], T]:
        """Decorate ``fn(spec, sim, memory) -> float`` (the model subclasses ``MetricModel``)."""
        return self._add("metrics", model)

    def composite(
        self, model: type[BaseModel], *, py_trees: Callable[..., Any], batch: Callable[..., Any]
    ) -> None:
        """Register a composite with one builder per engine (``engines/builders.py`` signatures)."""

        def step(regs: Registries) -> None:
            from behaviortk.engines.batch.engine import BUILDERS as BATCH
            from behaviortk.engines.pytrees import BUILDERS as PY_TREES

            regs.composites.register(model)
            tag = str(model.model_fields["type"].default)
            PY_TREES.register(tag, py_trees)
            BATCH.register(tag, batch)

        self._steps.append(step)

    def register(self, registries: Registries) -> None:
        """Apply every registration to ``registries`` (what ``load_plugin`` calls)."""
        for step in self._steps:
            step(registries)

    def install(self, registries: Registries | None = None) -> Registries:
        """Register into the default registries (or ``registries``), once; returns them."""
        regs = default() if registries is None else registries
        if self.name not in regs.plugins:
            regs.plugins.append(self.name)
            self.register(regs)
        return regs


__all__ = [
    "FAILURE",
    "INVALID",
    "RUNNING",
    "SUCCESS",
    "AgentRef",
    "BlackboardKey",
    "BlackboardPointKey",
    "BlackboardValue",
    "Codes",
    "Condition",
    "DecoratorOps",
    "Degrees",
    "Finite",
    "GroupRef",
    "LeafOps",
    "MetricModel",
    "Model",
    "Node",
    "NodeContext",
    "NodeModel",
    "NonNeg",
    "PDegrees",
    "PFinite",
    "PNonNeg",
    "PPoint",
    "PPositive",
    "PProbability",
    "ParamValue",
    "PathRef",
    "Plugin",
    "Point",
    "Positive",
    "Predictor",
    "PrimitiveNode",
    "Probability",
    "Rows",
    "Sense",
    "Steering",
    "SteeringContext",
    "SteeringModel",
    "Target",
    "TargetFacts",
    "TargetedModel",
    "displacement",
    "doc",
    "dot",
    "length",
    "normalize",
    "perp",
    "truncate",
]
