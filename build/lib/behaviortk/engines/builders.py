"""Per-engine builders: how one engine makes its object for a node, keyed by tag, then by kind.

Every engine has one ``Builders`` (a module default a test or plugin can
extend, or replace with a fresh instance). A builder for a tag wins; else a
builder for the node's kind that accepts its registry entry (steering leaves,
sensed conditions, leaf ops, decorator ops). A node neither finds cannot run
on that engine, and the Simulation refuses it when it is made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from behaviortk.registry import Entry, Registries, RegistryError
from behaviortk.tree.flat import FlatNode, FlatTree
from behaviortk.tree.ops import is_decorator_ops, is_leaf_ops

Builder = Callable[..., Any]
Accepts = Callable[[Entry, Registries], bool]


def always(entry: Entry, registries: Registries) -> bool:
    """Every entry of the kind (steering leaves: one leaf class reads the shared facts)."""
    return True


def sensed(entry: Entry, registries: Registries) -> bool:
    """Conditions computed for whole groups each tick (a vectorised function)."""
    return not is_leaf_ops(entry.impl)


def leaf_ops(entry: Entry, registries: Registries) -> bool:
    """Actions and ticked conditions written as ``LeafOps``."""
    return is_leaf_ops(entry.impl)


def decorator_ops(entry: Entry, registries: Registries) -> bool:
    """Decorators written as ``DecoratorOps``."""
    return is_decorator_ops(entry.impl)


class Builders:
    """Tag -> builder, and kind -> [(accepts, builder)], for one engine."""

    def __init__(self, engine: str) -> None:
        self.engine = engine
        self._by_tag: dict[str, Builder] = {}
        self._by_kind: dict[str, list[tuple[Accepts, Builder]]] = {}

    def register(self, tag: str, builder: Builder) -> None:
        """Build ``tag`` with ``builder``; registering the same builder again changes nothing."""
        if self._by_tag.get(tag, builder) is not builder:
            raise RegistryError(f"the {self.engine} engine already has a builder for {tag!r}")
        self._by_tag[tag] = builder

    def builds(self, *tags: str) -> Callable[[Builder], Builder]:
        """Decorator: ``builder`` builds nodes of these tags."""

        def wrap(fn: Builder) -> Builder:
            for tag in tags:
                self.register(tag, fn)
            return fn

        return wrap

    def builds_kind(self, kind: str, accepts: Accepts) -> Callable[[Builder], Builder]:
        """Decorator: ``builder`` builds any node of ``kind`` whose entry ``accepts``."""

        def wrap(fn: Builder) -> Builder:
            self._by_kind.setdefault(kind, []).append((accepts, fn))
            return fn

        return wrap

    def find(self, node: FlatNode, registries: Registries) -> Builder | None:
        tag = str(node.model.type)
        if tag in self._by_tag:
            return self._by_tag[tag]
        entry = registries.node(tag)
        for accepts, fn in self._by_kind.get(node.kind, []):
            if accepts(entry, registries):
                return fn
        return None

    def tags(self) -> list[str]:
        return sorted(self._by_tag)

    def unbuildable(self, tree: FlatTree, registries: Registries) -> list[FlatNode]:
        """Nodes of ``tree`` this engine has no builder for."""
        return [node for node in tree.nodes if self.find(node, registries) is None]
