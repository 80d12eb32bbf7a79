"""``behaviortk tree FILE``: show a group's tree as py_trees draws it, or write graphviz dot."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from behaviortk.commands.options import add_file_argument

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "tree",
        help="print a group's behaviour tree (py_trees unicode) or write graphviz dot",
        description="Print each group's expanded behaviour tree as py_trees displays it, "
        "or write it as graphviz dot (no graphviz binary needed).",
    )
    add_file_argument(parser)
    parser.add_argument("--group", metavar="G", help="only this group (default: every group)")
    parser.add_argument("--dot", metavar="OUT.dot", help="write graphviz dot instead of printing")
    return parser


def root_behaviour(scenario: Any, group: str) -> Any:
    """The py_trees root of ``group``'s tree, built exactly as the engine builds it."""
    from behaviortk.engines.pytrees import display_tree
    from behaviortk.tree.flat import flatten

    regs = scenario.registries
    return display_tree(flatten(scenario.trees[group], regs), regs)[0]


def unicode_text(root: Any) -> str:
    import py_trees

    return _ANSI.sub("", py_trees.display.unicode_tree(root))


def dot_text(root: Any) -> str:
    import py_trees

    return str(py_trees.display.dot_tree(root).to_string())


def run(args: argparse.Namespace) -> int:
    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.loader import load
    from behaviortk.registry import choices

    try:
        scenario = load(args.file)
    except DefinitionError as exc:
        from behaviortk.commands.diagnostics import print_issues

        print_issues(exc.issues)
        return 1
    groups = list(scenario.trees)  # groups a tree controls (external groups have none)
    if args.group is not None and args.group not in groups:
        print(
            f"behaviortk tree: unknown group {args.group!r}{choices(args.group, groups)} "
            f"(groups: {', '.join(groups)})",
            file=sys.stderr,
        )
        return 1
    chosen = [args.group] if args.group else groups
    if args.dot:
        if len(chosen) > 1:
            print(
                f"behaviortk tree: --dot writes one tree; choose one with --group "
                f"({', '.join(groups)})",
                file=sys.stderr,
            )
            return 2
        from behaviortk.files import atomic_output

        text = dot_text(root_behaviour(scenario, chosen[0]))
        with atomic_output(args.dot, "w", inputs=[args.file], what="dot file") as out:
            out.write(text)
        print(f"wrote {args.dot} (group {chosen[0]})")
        return 0
    for index, group in enumerate(chosen):
        if len(chosen) > 1:
            if index:
                print()
            print(f"group {group}:")
        sys.stdout.write(unicode_text(root_behaviour(scenario, group)))
    return 0
