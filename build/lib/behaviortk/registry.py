"""Registries: one per kind of pluggable thing, the single source of truth of the format.

A ``Registry`` maps a tag (the ``"type"`` of a node or predictor, the ``"kind"``
of a target) to the pydantic model that validates it and the implementation
that runs it. ``Registries`` bundles one of each kind; every "one of the
registered X" field of the format validates against the bundle in force, the
JSON Schema is generated from it, and engines look implementations up in it.

Built-ins enter through the same door as plugins (BehaviorTree.CPP's factory
registers ``Sequence`` with the ``registerNodeType`` a user calls; pytest loads
its own plugins by module name like external ones): :func:`default` makes a
bundle and loads the module named in ``BUILTINS`` with :func:`load_plugin`,
which imports it and calls its ``register(registries)``. A test can make a
fresh bundle with ``Registries.with_builtins()``.

Installed packages offer plugins through the entry point group
``behaviortk.plugins`` (``ENTRY_POINT_GROUP``); :func:`load_entry_points` loads
them (the command line does, for every command). A plugin that cannot be
imported or registered is a :class:`PluginError` naming the module and why.
Nothing here is reachable from a definition file: only code you run loads
plugins.
"""

from __future__ import annotations

import difflib
import importlib
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=type[BaseModel])

BUILTINS = "behaviortk.builtins"
"""The plugin module that registers every built-in node type, predictor and target kind."""

ENTRY_POINT_GROUP = "behaviortk.plugins"
"""Entry point group of installed plugins: ``name = module`` (a plugin module with
``register``) or ``name = module:attr`` (a ``Plugin`` or a ``register(registries)``)."""

COMPOSITE, DECORATOR, STEERING, CONDITION, ACTION = (
    "composite",
    "decorator",
    "steering",
    "condition",
    "action",
)


class RegistryError(ValueError):
    """A registration that would make the format ambiguous, or a lookup of an unknown tag."""


class PluginError(ImportError):
    """A plugin module that could not be imported or registered.

    ``str(exc)`` is one line naming the module and the reason:
    ``plugin 'my_plugins' failed to load: No module named 'my_plugins'``.
    """

    def __init__(self, module: str, reason: str, source: str = "") -> None:
        self.module = module
        self.reason = reason
        self.source = source
        """Where the name came from (``entry point 'x' of my-dist 1.0``), or ''."""
        origin = f" ({source})" if source else ""
        super().__init__(f"plugin {module!r}{origin} failed to load: {reason}", name=module)


@dataclass(frozen=True)
class Entry:
    """One registered tag: its model, its implementation and where it was registered."""

    tag: str
    model: type[BaseModel]
    impl: Any
    origin: str
    """``module.Model`` registered at ``file:line``: named when a duplicate is refused."""
    done: Any = None
    """Steering leaves only: ``fn(model, sense, group, memory) -> bool (n,)``, where the leaf
    reports SUCCESS (it still steers that tick); None = never done."""


class Registry:
    """Tag -> :class:`Entry` for one kind. Refuses duplicates, naming the first registration."""

    def __init__(self, kind: str, node_kind: str | None = None, key: str = "type") -> None:
        self.kind = kind
        """Human name of the kind ("steering primitive", "target kind", ...)."""
        self.node_kind = node_kind
        """The tree role of its entries (``steering``, ``condition``...), None for non-nodes."""
        self.key = key
        """The discriminating field of its models: ``type`` or ``kind``."""
        self.peers: list[Registry] = []
        """Registries whose tags share one namespace with this one (all node kinds)."""
        self._entries: dict[str, Entry] = {}
        self.version = 0

    def register(
        self, model: type[BaseModel], impl: Any = None, *, done: Any = None, depth: int = 1
    ) -> None:
        """Add ``model`` (its tag is the default of its ``type``/``kind`` field) with ``impl``."""
        tag = tag_of(model, self.key)
        caller = sys._getframe(depth)
        origin = (
            f"{model.__module__}.{model.__qualname__} "
            f"(registered at {caller.f_code.co_filename}:{caller.f_lineno})"
        )
        for reg in (self, *self.peers):
            if tag in reg._entries:
                first = reg._entries[tag]
                raise RegistryError(
                    f"{self.kind} tag {tag!r} is already registered as a {reg.kind}: "
                    f"first {first.origin}; again {origin}"
                )
        self._entries[tag] = Entry(tag, model, impl, origin, done)
        self.version += 1

    def implements(self, model: type[BaseModel]) -> Callable[[F], F]:
        """Decorator: register ``model`` with the decorated function as its implementation."""

        def wrap(fn: F) -> F:
            self.register(model, fn, depth=2)
            return fn

        return wrap

    def __contains__(self, tag: object) -> bool:
        return tag in self._entries

    def __getitem__(self, tag: str) -> Entry:
        try:
            return self._entries[tag]
        except KeyError:
            raise RegistryError(f"unknown {self.kind} {tag!r}{choices(tag, self.tags())}") from None

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def tags(self) -> list[str]:
        return list(self._entries)

    def models(self) -> list[type[BaseModel]]:
        return [e.model for e in self._entries.values()]

    def impl(self, tag: str) -> Any:
        return self[tag].impl


class Registries:
    """One registry per kind. Node tags are unique across the node kinds (one ``type`` union)."""

    def __init__(self) -> None:
        self.composites = Registry("composite", COMPOSITE)
        self.decorators = Registry("decorator", DECORATOR)
        self.primitives = Registry("steering primitive", STEERING)
        self.combiners = Registry("combiner", STEERING)
        self.conditions = Registry("condition", CONDITION)
        self.actions = Registry("action", ACTION)
        self.predictors = Registry("predictor")
        self.targets = Registry("target kind", key="kind")
        self.metrics = Registry("metric", key="metric")
        nodes = self.node_kinds()
        for reg in nodes:
            reg.peers = [r for r in nodes if r is not reg]
        self.plugins: list[str] = []
        """Modules loaded into this bundle with :func:`load_plugin`, in order."""

    @classmethod
    def with_builtins(cls) -> Registries:
        """A fresh bundle holding the built-ins only."""
        regs = cls()
        load_plugin(BUILTINS, regs)
        return regs

    def node_kinds(self) -> tuple[Registry, ...]:
        """Registries whose models may stand wherever a tree node is expected."""
        return (
            self.composites,
            self.decorators,
            self.primitives,
            self.combiners,
            self.conditions,
            self.actions,
        )

    def all(self) -> dict[str, Registry]:
        """Every registry by attribute name, node kinds first."""
        return {
            "composites": self.composites,
            "decorators": self.decorators,
            "primitives": self.primitives,
            "combiners": self.combiners,
            "conditions": self.conditions,
            "actions": self.actions,
            "predictors": self.predictors,
            "targets": self.targets,
            "metrics": self.metrics,
        }

    @property
    def version(self) -> int:
        """Changes whenever anything is registered (caches of schemas key on it)."""
        return sum(r.version for r in self.all().values())

    def node(self, tag: str) -> Entry:
        """The entry of a node tag, whichever node kind registered it."""
        for reg in self.node_kinds():
            if tag in reg:
                return reg[tag]
        raise RegistryError(f"unknown node type {tag!r}{choices(tag, self.node_tags())}")

    def node_tags(self) -> list[str]:
        return [tag for reg in self.node_kinds() for tag in reg.tags()]

    def kind_of(self, tag: str) -> str:
        """The tree role of a node tag: composite, decorator, steering, condition or action."""
        for reg in self.node_kinds():
            if tag in reg:
                return str(reg.node_kind)
        raise RegistryError(
            f"node type {tag!r} is not registered (subtrees must be expanded first)"
        )


_default: Registries | None = None


def default() -> Registries:
    """The process-wide bundle that plugins register into (built-ins loaded on first use)."""
    global _default
    if _default is None:
        _default = Registries()
        load_plugin(BUILTINS, _default)
    return _default


def load_plugin(module: str, registries: Registries | None = None) -> None:
    """Import ``module`` and call its ``register(registries)``, if it has one, once per bundle.

    A module without ``register`` registers itself on import through decorators
    on the default bundle (``behaviortk.plugin``). Any failure, of the import or
    of ``register``, is a :class:`PluginError` naming the module and the reason,
    and leaves the module unrecorded (loading it again tries again).
    """
    regs = default() if registries is None else registries
    if module in regs.plugins:
        return
    regs.plugins.append(module)
    try:
        loaded = _import(module)
        hook = getattr(loaded, "register", None)
        if callable(hook):
            _call_register(module, hook, regs)
    except BaseException:
        regs.plugins.remove(module)
        raise


def _import(module: str) -> Any:
    """Import a plugin; whatever it raises (``sys.exit`` and other ``BaseException`` kinds
    included, ^C excepted) is a PluginError: a plugin never ends the process."""
    try:
        return importlib.import_module(module)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise PluginError(module, import_failure(module, exc)) from exc


def _call_register(module: str, hook: Callable[[Registries], Any], regs: Registries) -> None:
    try:
        hook(regs)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise PluginError(module, f"its register() failed: {_reason(exc)}") from exc


def import_failure(module: str, exc: BaseException) -> str:
    """Why importing ``module`` failed, in one line for a person.

    The module itself missing, a module it imports missing, a syntax error (file
    and line), or any other exception with the line of the plugin that raised it.
    """
    if isinstance(exc, ModuleNotFoundError) and exc.name is not None:
        parts = module.split(".")
        own = {".".join(parts[: i + 1]) for i in range(len(parts))}
        if exc.name in own:
            return (
                f"no module named {exc.name!r} (is it installed, or is the folder that "
                "holds it the current directory?)"
            )
        return f"it imports {exc.name!r}, which is not installed"
    if isinstance(exc, SyntaxError):
        where = f" ({exc.filename}, line {exc.lineno})" if exc.filename else ""
        return f"syntax error: {exc.msg}{where}"
    return _reason(exc)


def _reason(exc: BaseException) -> str:
    """``Type: message (at file:line)`` of the innermost frame, on one line (``sys.exit(3)``
    reads ``it called sys.exit(3)``)."""
    if isinstance(exc, SystemExit):
        text = f"it called sys.exit({exc.code!r})"
    elif str(exc):
        text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    else:
        text = type(exc).__name__
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        text += f" (at {last.filename}:{last.lineno})"
    return text


def load_entry_points(registries: Registries | None = None) -> list[str]:
    """Load every installed plugin of the ``behaviortk.plugins`` entry point group.

    In name order, each once (a distribution seen twice on the path counts once).
    Returns the entry point values loaded. A broken one is a :class:`PluginError`
    naming the entry point and its distribution.
    """
    from importlib.metadata import entry_points

    regs = default() if registries is None else registries
    loaded: list[str] = []
    found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.value))
    for ep in found:
        if ep.value in loaded:
            continue
        dist = getattr(ep, "dist", None)
        source = f"entry point {ep.name!r}" + (
            f" of {dist.name} {dist.version}" if dist is not None else ""
        )
        try:
            if ep.attr is None:
                load_plugin(ep.module, regs)
            elif ep.value not in regs.plugins:
                _load_attr(ep.value, ep.module, ep.attr, regs)
        except PluginError as exc:
            raise PluginError(exc.module, exc.reason, source) from exc
        loaded.append(ep.value)
    return loaded


def _load_attr(value: str, module: str, attr: str, regs: Registries) -> None:
    """``module:attr``: a ``Plugin`` (anything with ``register``) or a register function.

    When it is the module's own ``register``, the module counts as loaded too, so
    ``--plugin module`` does not register it a second time."""
    loaded: Any = _import(module)
    obj = loaded
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise PluginError(value, f"module {module!r} has no attribute {part!r}")
        obj = getattr(obj, part)
    hook = getattr(obj, "register", obj)
    if not callable(hook):
        raise PluginError(value, "it is neither a Plugin nor a register(registries) function")
    if hook == getattr(loaded, "register", None):
        if module in regs.plugins:
            return
        names = [value, module]
    else:
        names = [value]
    regs.plugins.extend(names)
    try:
        _call_register(value, hook, regs)
    except BaseException:
        for name in names:
            regs.plugins.remove(name)
        raise


def tag_of(model: type[BaseModel], key: str = "type") -> str:
    """The literal default of a model's ``type`` (or ``kind``) field: its JSON tag."""
    field = model.model_fields.get(key)
    if field is None or not isinstance(field.default, str):
        raise RegistryError(f"{model.__name__} needs a `{key}: Literal[...]` field with a default")
    return field.default


def suggest(word: str, options: list[str] | tuple[str, ...] | set[str]) -> str:
    """'; did you mean X?' for the closest known name, or '' when nothing is close."""
    close = difflib.get_close_matches(word, sorted(options), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def choices(word: str, options: list[str] | tuple[str, ...] | set[str]) -> str:
    """What to write after "unknown X": the closest name, then the valid ones.

    All of them when there are at most 12, else the closest five: ``; did you
    mean 'wait'? valid: arrive, wait, wander`` or ``; closest of 47: ...``.
    """
    ranked = sorted(set(options))
    if not ranked:
        return "; none are defined"
    close = suggest(word, ranked)
    if len(ranked) <= 12:
        return f"{close} valid: {', '.join(ranked)}" if close else f"; valid: {', '.join(ranked)}"
    near = difflib.get_close_matches(word, ranked, n=5, cutoff=0.0)
    listed = f"closest of {len(ranked)}: {', '.join(near)}"
    return f"{close} {listed}" if close else f"; {listed}"
