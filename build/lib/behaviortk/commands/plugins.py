"""``--plugin MODULE`` on every command, and the installed plugins every command loads.

``behaviortk.cli`` adds ``--plugin`` to each command's parser and, before the
command runs, calls :func:`load_plugins`: first the entry points of the group
``behaviortk.plugins`` that installed distributions declare, in name order,
then each ``--plugin`` module in the order given, all into the default
registries, so validation, the schema, the engines, the viewer (and its hot
reload, which reuses them) and ``explain`` see plugin nodes like built-ins.

A module named with ``--plugin`` is imported by name, from the Python path or
the current directory (appended to the path, so it never shadows an installed
module; the ``behaviortk`` script, unlike ``python -m``, does not put it there).
Definition files never name a module: only the command line and code you run
load plugins.

Failures are :class:`PluginLoadError`, one line naming the module and why (the
CLI prints ``behaviortk: error: ...``): exit 2 for a ``--plugin`` module (the
command line named something unusable), 1 for a broken installed entry point.

Stdlib only at the top: command modules import this while the parser is built.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

GROUP = "behaviortk.plugins"
"""The entry point group (``registry.ENTRY_POINT_GROUP``; kept here to stay import-free)."""


class PluginLoadError(Exception):
    """A plugin that could not be loaded: ``str(exc)`` is one line, ``exc.code`` the exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def add_plugin_option(parser: argparse.ArgumentParser) -> None:
    """``--plugin MODULE`` (repeatable), unless the command already defines it."""
    if any("--plugin" in action.option_strings for action in parser._actions):
        return
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="load this plugin module first (repeatable; installed plugins load anyway)",
    )


def installed() -> list[object]:
    """The installed entry points of the plugin group (stdlib ``importlib.metadata``)."""
    from importlib.metadata import entry_points

    return list(entry_points(group=GROUP))


def load_plugins(modules: Sequence[str] = (), *, entry_points: bool = True) -> list[str]:
    """Load the installed plugins, then ``modules``, into the default registries.

    Returns the plugins loaded, in order. Nothing to load imports nothing (the
    registries, and pydantic with them, stay unloaded). Worker processes of a
    command call this again with the same ``modules``.
    """
    modules = list(dict.fromkeys(modules))
    for module in modules:
        _check_name(module)
    if not modules and not (entry_points and installed()):
        return []
    from behaviortk import registry

    regs = registry.default()
    loaded: list[str] = []
    if entry_points:
        try:
            loaded += registry.load_entry_points(regs)
        except registry.PluginError as exc:
            raise PluginLoadError(str(exc), 1) from None
    if modules:
        _put_cwd_on_path()
    for module in modules:
        before, known = regs.version, module in regs.plugins
        try:
            registry.load_plugin(module, regs)
        except registry.PluginError as exc:
            raise PluginLoadError(str(exc), 2) from None
        if not known and regs.version == before:
            raise PluginLoadError(
                f"plugin {module!r} registered nothing: a plugin module defines "
                "register(registries) (see behaviortk.plugin)",
                2,
            )
        loaded.append(module)
    return loaded


def _check_name(module: str) -> None:
    """A dotted module name, not a file path (with a hint at the name to write)."""
    looks_like_path = module.endswith(".py") or "/" in module or os.sep in module
    if not looks_like_path and all(part.isidentifier() for part in module.split(".")):
        return
    stem = module[:-3] if module.endswith(".py") else module
    guess = stem.replace(os.sep, ".").replace("/", ".").strip(".")
    hint = f"; did you mean --plugin {guess}?" if looks_like_path and guess else ""
    raise PluginLoadError(
        f"--plugin takes a Python module name (a.b.c), not {module!r}{hint}",
        2,
    )


def _put_cwd_on_path() -> None:
    cwd = os.getcwd()
    if "" not in sys.path and cwd not in sys.path:
        sys.path.append(cwd)
