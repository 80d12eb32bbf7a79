"""Registries: one per kind of definition node, the single source of truth.

A registry maps a tag (the ``"type"`` value in JSON) to the pydantic model that
validates it and to the implementation that runs it. The JSON Schema, the node
unions used for loading and user plugins all come from here (BehaviorTree.CPP's
factory plays the same role for its XML and XSD).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
F = TypeVar("F", bound=Callable[..., Any])


class RegistryError(ValueError):
    """A registration that would make the format ambiguous."""


@dataclass(frozen=True)
class Entry(Generic[M]):
    tag: str
    model: type[M]
    impl: Any


class Registry(Generic[M]):
    """Tag -> (model, implementation). Refuses duplicate tags.

    ``version`` increases on every registration so that cached unions and
    schemas built from the registry know when to rebuild.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[M]] = {}
        self.version = 0
        self._listeners: list[Callable[[], None]] = []

    def register(self, model: type[M], impl: Any = None) -> None:
        tag = tag_of(model)
        if tag in self._entries or any(tag in r for r in _ALL if r is not self):
            raise RegistryError(f"{self.kind} tag {tag!r} is already registered")
        self._entries[tag] = Entry(tag, model, impl)
        self.version += 1
        for listener in self._listeners:
            listener()

    def implements(self, model: type[M]) -> Callable[[F], F]:
        """Decorator: register ``model`` with the decorated function as its implementation."""

        def wrap(fn: F) -> F:
            self.register(model, fn)
            return fn

        return wrap

    def on_change(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def __contains__(self, tag: object) -> bool:
        return tag in self._entries

    def __getitem__(self, tag: str) -> Entry[M]:
        return self._entries[tag]

    def __iter__(self) -> Iterator[Entry[M]]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def tags(self) -> list[str]:
        return list(self._entries)

    def models(self) -> list[type[M]]:
        return [e.model for e in self._entries.values()]

    def impl(self, tag: str) -> Any:
        return self._entries[tag].impl


def tag_of(model: type[BaseModel]) -> str:
    """The literal default of a model's ``type`` field: its JSON tag."""
    field = model.model_fields.get("type")
    if field is None or not isinstance(field.default, str):
        raise RegistryError(f"{model.__name__} needs a `type: Literal[...]` field with a default")
    return field.default


def suggest(word: str, choices: list[str] | tuple[str, ...] | set[str]) -> str:
    """' did you mean X?' for the closest known name, or '' when nothing is close."""
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


# Kinds of node. Tags are unique across all of them because they share one union.
composites: Registry[BaseModel] = Registry("composite")
decorators: Registry[BaseModel] = Registry("decorator")
primitives: Registry[BaseModel] = Registry("steering primitive")
combiners: Registry[BaseModel] = Registry("combiner")
conditions: Registry[BaseModel] = Registry("condition")
actions: Registry[BaseModel] = Registry("action")
predictors: Registry[BaseModel] = Registry("predictor")

_ALL: list[Registry[BaseModel]] = [
    composites,
    decorators,
    primitives,
    combiners,
    conditions,
    actions,
]
