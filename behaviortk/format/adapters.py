"""The node union and the cached ``TypeAdapter``s that validate files.

Built from the registries: a model registered anywhere (built-in or plugin)
is part of the union, the schema and validation. Adapters are rebuilt when a
registry changes (``nodes.generation``).
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from behaviortk.format import nodes
from behaviortk.format.definition import Definition
from behaviortk.format.nodes import Node, NodeModel

_cache: dict[str, tuple[int, Any]] = {}


def _ensure_builtins() -> None:
    import behaviortk.builtins  # noqa: F401


def _cached(key: str, build: Any) -> Any:
    _ensure_builtins()
    hit = _cache.get(key)
    if hit is not None and hit[0] == nodes.generation:
        return hit[1]
    value = build()
    _cache[key] = (nodes.generation, value)
    return value


def definition_adapter() -> TypeAdapter[Definition]:
    """Validates a whole parsed file (the root object)."""
    adapter: TypeAdapter[Definition] = _cached("definition", lambda: TypeAdapter(Definition))
    return adapter


def node_adapter() -> TypeAdapter[NodeModel]:
    """Validates one node (used again on trees after subtree expansion)."""
    adapter: TypeAdapter[NodeModel] = _cached("node", lambda: TypeAdapter(Node))
    return adapter


def node_tags() -> list[str]:
    """Every tag a node may have, for "did you mean" suggestions."""
    _ensure_builtins()
    from behaviortk import registry

    return [registry.tag_of(m) for m in nodes.node_models()]
