"""``behaviortk validate FILE...``: check definitions; every mistake with its source line.

Each issue prints its one-line form ``FILE:LINE:COL: /pointer: message [kind]``
first, then the line of the file with a caret under the column and the fix
(``commands/diagnostics.py``), coloured on a terminal. ``--format json`` prints
one JSON object for tools instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from behaviortk.commands.options import (
    definition_files,
    positive_int,
)
from behaviortk.format.limits import MAX_AGENTS

FORMATS = ("text", "json")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "validate",
        help="check definition files",
        description="Check definition files. Prints FILE:LINE:COL: /json/pointer: message [kind] "
        "for every mistake, then the line of the file with a caret under the column and the "
        "fix. Exit 0 if all are valid, 1 if any is not, 2 for usage errors.",
    )
    files = parser.add_argument("files", nargs="+", metavar="FILE", help="definition files (JSON)")
    files.completer = definition_files  # type: ignore[attr-defined]
    parser.add_argument(
        "--schema-only",
        action="store_true",
        help="check against the JSON Schema with jsonschema only (no semantic checks)",
    )
    parser.add_argument(
        "--max-agents",
        type=positive_int,
        default=MAX_AGENTS,
        metavar="N",
        help=f"limit on the total number of agents (default {MAX_AGENTS:,})",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text: each issue with its source line (default); json: one JSON object for tools",
    )
    return parser


SKIPPED = "skipped (a JSON Schema, not a definition)"


def check(path: str, *, schema_only: bool, max_agents: int) -> list[str]:
    """Error lines for one file (empty when valid), in the one-line form."""
    status, issues = check_file(path, schema_only=schema_only, max_agents=max_agents)
    return [SKIPPED] if status == "skipped" else [str(i) for i in issues]


def check_file(path: str, *, schema_only: bool, max_agents: int) -> tuple[str, list[Any]]:
    """``(status, issues)`` of one file: ``ok``, ``invalid`` or ``skipped`` (a JSON Schema)."""
    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.loader import load_text, parse_text, read_text

    try:
        parsed = parse_text(read_text(path), path)
        if is_json_schema(parsed.data):
            return "skipped", []
        if schema_only:
            from behaviortk.format.schema import schema_issues  # jsonschema: only here

            issues = schema_issues(parsed, path)
            return ("invalid" if issues else "ok"), list(issues)
        scenario = load_text(parsed.text, path, path=Path(path), max_agents=max_agents)
    except DefinitionError as exc:
        return "invalid", list(exc.issues)
    from behaviortk.format.budget import warnings  # memory and time of a tick, estimated

    for line in warnings(path, scenario.definition, scenario.trees):
        print(line, file=sys.stderr)
    return "ok", []


def is_json_schema(data: dict[str, Any]) -> bool:
    """The committed schema sits next to the definitions, so `validate definitions/*.json` skips it."""
    return str(data.get("$schema", "")).startswith("https://json-schema.org/")


def run(args: argparse.Namespace) -> int:
    from behaviortk.commands.diagnostics import issues_json, print_issues

    results = []
    for path in args.files:
        status, issues = check_file(path, schema_only=args.schema_only, max_agents=args.max_agents)
        results.append((path, status, issues))
        if args.format == "json":
            continue
        if status == "skipped":
            print(f"{path}: {SKIPPED}", file=sys.stderr)
        elif issues:
            print_issues(issues, sys.stdout)
        else:
            print(f"{path}: ok", file=sys.stderr)
    if args.format == "json":
        print(issues_json(results))
    return 1 if any(status == "invalid" for _, status, _ in results) else 0
