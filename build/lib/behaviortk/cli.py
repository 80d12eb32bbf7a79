# PYTHON_ARGCOMPLETE_OK  (argcomplete's marker: this entry point answers tab completion)
"""The ``behaviortk`` command line: one subcommand per module in ``behaviortk/commands``.

A command module has ``add_parser(subparsers) -> argparse.ArgumentParser`` and
``run(args) -> int``; list it in ``COMMANDS``. Every command module is imported
to build the parser, so its top level imports only the stdlib and import-free
modules; heavy ones (pydantic, numpy, scipy, arcade, py_trees, jsonschema, the
engines) go inside ``run`` (tests/test_imports.py checks it).
Every command takes ``--plugin MODULE`` (added here) and loads the installed
plugins before it runs (``commands/plugins.py``). When the shell asks for tab
completion (``_ARGCOMPLETE`` set; ``commands/completion.py`` prints the shell
code), argcomplete answers from the parser and the process ends there.
Users never see a traceback: errors become ``behaviortk: error: ...``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from behaviortk.commands.plugins import PluginLoadError, add_plugin_option, load_plugins
from behaviortk.extras import missing_message
from behaviortk.files import OutputError

COMMANDS = (
    "new",
    "validate",
    "schema",
    "run",
    "replay",
    "tree",
    "render",
    "demo",
    "bench",
    "check",
    "sweep",
    "tune",
    "explain",
    "completion",
)
"""Modules of ``behaviortk.commands``, in help order (missing ones are skipped)."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so ``main`` returns the code."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: error: {message}")


class UsageError(Exception):
    """Bad command line: exit code 2."""


def _command_modules() -> list[ModuleType]:
    modules = []
    for name in COMMANDS:
        qualified = f"behaviortk.commands.{name}"
        try:
            modules.append(importlib.import_module(qualified))
        except ModuleNotFoundError as exc:
            if exc.name != qualified:
                raise
    return modules


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="behaviortk",
        description="Declarative game AI: steering behaviours and behaviour trees authored in JSON.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in _command_modules():
        command = module.add_parser(sub)
        add_plugin_option(command)
        command.set_defaults(handler=module.run)
    return parser


def complete(parser: argparse.ArgumentParser) -> None:
    """Answer the shell's completion request and exit (argcomplete, imported only here)."""
    import argcomplete

    argcomplete.autocomplete(parser)


def watch_compiles() -> None:
    """A long compile of kernels shows a progress bar on a terminal (``commands/progress.py``)."""
    from behaviortk.commands.progress import compile_bar
    from behaviortk.sim import compile_notice

    compile_notice.watch_compiles(compile_bar)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code (0 ok, 1 failure, 2 usage error, 130 ^C).

    Writing an output over one of the command's inputs is a usage error (2); an
    output that could not be written is a failure (1); see ``behaviortk/files.py``.
    """
    command: str | None = None
    try:
        parser = build_parser()
        if "_ARGCOMPLETE" in os.environ:
            complete(parser)
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        command = getattr(args, "command", None)
        if getattr(args, "handler", None) is None:
            parser.print_help(sys.stderr)
            return 2
        load_plugins(getattr(args, "plugin", None) or [])
        watch_compiles()
        return int(args.handler(args))
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except (OutputError, PluginLoadError) as exc:  # refused (2) or failed (1)
        print(f"behaviortk: error: {exc}", file=sys.stderr)
        return exc.code
    except SystemExit as exc:  # --help and --version exit through argparse
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        print("behaviortk: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except ModuleNotFoundError as exc:  # an optional library this install left out
        who = f"behaviortk {command}" if command else "behaviortk"
        message = missing_message(exc.name, who, command) or f"{type(exc).__name__}: {exc}"
        print(f"behaviortk: error: {message}", file=sys.stderr)
        return 1
    except Exception as exc:  # the last line of defence: one line, never a traceback
        print(f"behaviortk: error: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
