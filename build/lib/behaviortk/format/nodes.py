"""Node base class and the open slots: fields whose value is "one of the registered X".

A slot (``Node``, ``Condition``, ``PrimitiveNode``, ``Predictor``, ``Target``,
``Check``) is validated by looking its ``type`` (``kind``, ``metric``) up in the registries in
force: those passed as ``context={"registries": ...}`` to pydantic, else
``registry.default()``. Nothing is rebuilt when a plugin registers: the next
validation simply sees it. The JSON Schema refers to each slot as a named
``$defs`` entry that ``format.schema`` builds from the same registries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from behaviortk import registry
from behaviortk.format.checks import check_model
from behaviortk.format.fields import Model, ParamValue, doc

DefinitionFinding = tuple[list[str | int], str, str]
"""(path inside a node, message, kind) of :meth:`NodeModel.definition_findings`."""

SLOT_KEY = "x-behaviortk-slot"
"""Placeholder key in generated JSON Schema, replaced by a ``$ref`` to the slot's union."""


class NodeModel(Model):
    """Base of every tree node: a ``type`` tag (declared by each subclass) and a trace name."""

    name: str | None = doc(
        "Name shown in traces and the tree panel; defaults to the node type", None
    )

    @property
    def trace_name(self) -> str:
        return self.name or str(getattr(self, "type", type(self).__name__))

    def definition_findings(self, definition: Any, group: Any) -> list[DefinitionFinding]:
        """Mistakes only the whole definition shows (its world's geometry, the group's spawn),
        as (path inside this node, message, kind); the loader locates them. A flow field's
        goal inside an obstacle or out of reach is one. None by default."""
        return []


class Subtree(NodeModel):
    """Run a named tree of `trees` here, with values for its parameters.

    Loading replaces the node by a copy of that tree, every `"$name"` in it
    replaced by the value `params` gives (or the tree's declared default), so
    engines never see a `subtree`. References may nest but never form a cycle,
    and the depth limit counts the expanded tree. The tree's declared
    blackboard keys join the group's.
    """

    type: Literal["subtree"] = "subtree"
    tree: str = doc("Name of a tree in `trees`", min_length=1)
    params: dict[str, ParamValue] = doc(
        "Values for that tree's parameters (may be `$param` of the enclosing tree)",
        default_factory=dict,
    )


def registries_in(context: Any) -> registry.Registries:
    """The registries a validation runs against: the context's, else the default."""
    if isinstance(context, dict):
        found = context.get("registries")
        if isinstance(found, registry.Registries):
            return found
    return registry.default()


def raw_trees(context: Any) -> bool:
    """Whether this validation reads trees as written (``$param``, ``subtree`` allowed)."""
    return isinstance(context, dict) and bool(context.get("raw"))


@dataclass(frozen=True)
class SlotKind:
    """What one slot accepts: which registries, under which discriminating key."""

    name: str  # the $defs name of its union
    noun: str  # "node type", "condition", ...
    key: str  # "type" | "kind"
    pick: Callable[[registry.Registries], tuple[registry.Registry, ...]]
    subtree: bool = False  # ``subtree`` references allowed (raw trees only)
    wrap: Callable[[type[BaseModel]], type[BaseModel]] | None = None  # model -> slot model


NODE = SlotKind("Node", "node type", "type", lambda r: r.node_kinds(), subtree=True)
CONDITION = SlotKind("Condition", "condition", "type", lambda r: (r.conditions,))
PRIMITIVE = SlotKind("Primitive", "steering primitive", "type", lambda r: (r.primitives,))
PREDICTOR = SlotKind("Predictor", "predictor", "type", lambda r: (r.predictors,))
TARGET = SlotKind("Target", "target kind", "kind", lambda r: (r.targets,))
CHECK = SlotKind("Check", "metric", "metric", lambda r: (r.metrics,), wrap=check_model)
SLOTS = (NODE, CONDITION, PRIMITIVE, PREDICTOR, TARGET, CHECK)


def slot_tags(slot: SlotKind, regs: registry.Registries) -> list[str]:
    tags = [tag for reg in slot.pick(regs) for tag in reg.tags()]
    return [*tags, "subtree"] if slot.subtree else tags


def slot_models(slot: SlotKind, regs: registry.Registries) -> dict[str, type[BaseModel]]:
    wrap = slot.wrap or (lambda model: model)
    models = {e.tag: wrap(e.model) for reg in slot.pick(regs) for e in reg}
    if slot.subtree:
        models["subtree"] = Subtree
    return models


def _where_allowed(slot: SlotKind, tag: str, regs: registry.Registries) -> str:
    """For a tag registered elsewhere: which kinds this position takes instead."""
    for reg in regs.all().values():
        if tag in reg:
            return f"{tag!r} is a {reg.kind}, but only a {slot.noun} is allowed here"
    return ""


def _unknown(slot: SlotKind, tag: str, regs: registry.Registries) -> PydanticCustomError:
    tags = slot_tags(slot, regs)
    elsewhere = _where_allowed(slot, tag, regs)
    if elsewhere:
        message = f"{elsewhere}{registry.choices(tag, tags)}"
    else:
        message = f"unknown {slot.noun} {tag!r}{registry.choices(tag, tags)}"
    kind = "unknown_kind" if slot.key == "kind" else "unknown_type"
    return PydanticCustomError(kind, message)


def _dispatch(slot: SlotKind, value: Any, info: ValidationInfo) -> Any:
    regs = registries_in(info.context)
    models = slot_models(slot, regs)
    if not (slot.subtree and raw_trees(info.context)):
        models.pop("subtree", None)
    if isinstance(value, BaseModel):
        tag = getattr(value, slot.key, None)
        if isinstance(tag, str) and models.get(tag) is type(value):
            return value
        raise _unknown(slot, str(tag), regs)
    if not isinstance(value, dict):
        raise PydanticCustomError("model_type", "expected an object")
    if slot.key not in value:
        raise PydanticCustomError(
            "missing_tag", f"missing key {slot.key!r}: it says which kind of object this is"
        )
    tag = value[slot.key]
    if not isinstance(tag, str):
        what = "null" if tag is None else type(tag).__name__
        raise PydanticCustomError(
            "unknown_kind" if slot.key == "kind" else "unknown_type",
            f"{slot.key!r} must be a string naming a {slot.noun}, got {what}"
            + registry.choices("", slot_tags(slot, regs)),
        )
    model = models.get(tag)
    if model is None:
        raise _unknown(slot, tag, regs)
    return model.model_validate(value, context=info.context)


@dataclass(frozen=True)
class Slot:
    """Annotation metadata: validate as one of the models registered for ``kind``."""

    kind: SlotKind

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        slot = self.kind
        return core_schema.with_info_plain_validator_function(
            lambda value, info: _dispatch(slot, value, info),
            serialization=core_schema.plain_serializer_function_ser_schema(_dump),
        )

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {SLOT_KEY: self.kind.name}


def _dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True) if isinstance(value, BaseModel) else value


Node = Annotated[NodeModel, Slot(NODE)]
"""Any registered node (composite, decorator, steering leaf, condition, action; subtree in files)."""

Condition = Annotated[NodeModel, Slot(CONDITION)]
"""Any registered condition leaf (used by ``eternal_guard``)."""

PrimitiveNode = Annotated[NodeModel, Slot(PRIMITIVE)]
"""Any registered steering primitive (the children of combiners)."""

Predictor = Annotated[Model, Slot(PREDICTOR)]
"""Any registered look-ahead predictor (pursuit, evade, interpose, offset pursuit)."""

Target = Annotated[Model, Slot(TARGET)]
"""Any registered target kind, chosen by `kind`."""

Check = Annotated[Model, Slot(CHECK)]
"""A check on any registered metric, chosen by `metric` (``format/checks.py``)."""


@cache
def _target_names(cls: type[BaseModel]) -> tuple[str, ...]:
    """Names of ``cls``'s ``Target`` fields, in field order (asked every tick: kept per class)."""
    return tuple(
        name
        for name, info in cls.model_fields.items()
        if any(isinstance(m, Slot) and m.kind is TARGET for m in info.metadata)
    )


def target_fields(model: BaseModel) -> list[Any]:
    """The targets a node names in its ``Target`` fields (``target``, interpose's ``other``...),
    in field order; a field left null is skipped."""
    found = []
    for name in _target_names(type(model)):
        value = getattr(model, name)
        if value is not None:
            found.append(value)
    return found
