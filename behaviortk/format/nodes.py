"""Node base class and the two open unions (any node, any condition).

The unions are open because plugins add node types at run time. ``Node`` and
``Condition`` are annotations whose pydantic schema is the tagged union of the
*currently registered* models (discriminated on ``type``). When a registry
changes, every model holding a node is put back into pydantic's deferred state
so that its next use rebuilds it against the new union.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import ConfigDict, GetCoreSchemaHandler
from pydantic._internal._mock_val_ser import set_model_mocks
from pydantic_core import core_schema

from behaviortk import registry
from behaviortk.format.fields import Model, doc


class NodeModel(Model):
    """Base of every tree node: a ``type`` tag (declared by each subclass) and a trace name.

    Schemas are built lazily (``defer_build``) because a node's children may be
    of types registered later.
    """

    model_config = ConfigDict(defer_build=True)

    name: str | None = doc(
        "Name shown in traces and the tree panel; defaults to the node type", None
    )

    @property
    def trace_name(self) -> str:
        return self.name or str(getattr(self, "type", type(self).__name__))


def node_registries() -> tuple[registry.Registry[Any], ...]:
    """Registries whose models may appear anywhere a node is expected."""
    return (
        registry.composites,
        registry.decorators,
        registry.primitives,
        registry.combiners,
        registry.conditions,
        registry.actions,
    )


_extra_node_models: list[type[NodeModel]] = []
"""Node models that are format-only (``subtree``): valid in files, expanded before running."""


def add_format_node(model: type[NodeModel]) -> type[NodeModel]:
    """Make a node type part of the file format without being a runnable registry entry."""
    _extra_node_models.append(model)
    invalidate()
    return model


def node_models() -> list[type[Any]]:
    """Every model a ``Node`` may be, built-ins first (imports them on first use)."""
    import behaviortk.builtins  # noqa: F401  (registers the built-in node types)

    models: list[type[Any]] = [m for reg in node_registries() for m in reg.models()]
    return models + list(_extra_node_models)


def condition_models() -> list[type[Any]]:
    import behaviortk.builtins  # noqa: F401

    return registry.conditions.models()


def _tagged_union(
    models: Iterable[type[Any]], handler: GetCoreSchemaHandler
) -> core_schema.CoreSchema:
    choices = {registry.tag_of(m): handler.generate_schema(m) for m in models}
    if not choices:
        return core_schema.no_info_plain_validator_function(
            _nothing_registered,
            metadata={"pydantic_js_functions": [lambda _schema, _handler: {"not": {}}]},
        )
    return core_schema.tagged_union_schema(choices, discriminator="type")


def _nothing_registered(value: Any) -> Any:
    raise ValueError("no node types of this kind are registered")


@dataclass(frozen=True)
class NodeSlot:
    """Annotation metadata: validate as the union of all registered node models."""

    conditions_only: bool = False

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        models = condition_models() if self.conditions_only else node_models()
        return _tagged_union(models, handler)


Node = Annotated[NodeModel, NodeSlot()]
"""Any registered node (composite, decorator, steering leaf, condition, action, subtree)."""

Condition = Annotated[NodeModel, NodeSlot(conditions_only=True)]
"""Any registered condition leaf (used by ``eternal_guard``)."""


_holders: list[type[Model]] = []
"""Models outside the registries that contain nodes (tree definitions, the root)."""


def holds_nodes(cls: type[Model]) -> type[Model]:
    """Class decorator for non-node models that contain ``Node`` fields."""
    _holders.append(cls)
    return cls


def _mentions_slot(annotation: Any) -> bool:
    stack = [annotation]
    while stack:
        item = stack.pop()
        if isinstance(item, NodeSlot):
            return True
        if typing.get_origin(item) is Annotated:
            stack.extend(item.__metadata__)
            stack.append(item.__origin__)
        stack.extend(typing.get_args(item))
    return False


def contains_nodes(model: type[Any]) -> bool:
    """Whether a model has a field typed ``Node`` or ``Condition`` (at any nesting)."""
    fields = getattr(model, "__pydantic_fields__", {})
    return any(
        _mentions_slot(f.annotation) or any(isinstance(m, NodeSlot) for m in f.metadata)
        for f in fields.values()
    )


def invalidate() -> None:
    """Return every node-holding model to pydantic's deferred state (rebuilt on next use)."""
    models = [m for reg in node_registries() for m in reg.models()]
    for model in [*models, *_extra_node_models, *_holders]:
        if model.__pydantic_complete__ and (model in _holders or contains_nodes(model)):
            model.__pydantic_complete__ = False
            set_model_mocks(model)
    global generation
    generation += 1


generation = 0
"""Increases whenever the unions change; caches of adapters and schemas key on it."""

for _reg in node_registries():
    _reg.on_change(invalidate)
