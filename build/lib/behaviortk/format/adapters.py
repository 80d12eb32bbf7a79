"""Validation entry points: a whole file, or one node, against a bundle of registries.

The node slots look their models up in ``context["registries"]``; ``raw``
marks a file as written (``$param`` references and ``subtree`` nodes allowed),
as opposed to a tree expanded for a group, which must hold plain values.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from behaviortk.format.definition import Definition
from behaviortk.format.nodes import Node, NodeModel
from behaviortk.registry import Registries

_definition: TypeAdapter[Definition] = TypeAdapter(Definition)
_node: TypeAdapter[NodeModel] = TypeAdapter(Node)


def validate_definition(data: Any, registries: Registries) -> Definition:
    """A whole parsed file, trees as written."""
    return _definition.validate_python(data, context={"registries": registries, "raw": True})


def validate_node(data: Any, registries: Registries) -> NodeModel:
    """One expanded tree: every parameter substituted, no subtree left."""
    return _node.validate_python(data, context={"registries": registries})
