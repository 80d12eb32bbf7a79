"""``behaviortk validate FILE...``: check definitions, one line per mistake."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from behaviortk.commands.options import (
    positive_int,
)
from behaviortk.format.limits import MAX_AGENTS


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "validate",
        help="check definition files",
        description="Check definition files. Prints FILE:LINE:COL: /json/pointer: message [kind] "
        "for every mistake. Exit 0 if all are valid, 1 if any is not, 2 for usage errors.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="definition files (JSON)")
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
    return parser


SKIPPED = "skipped (a JSON Schema, not a definition)"


def check(path: str, *, schema_only: bool, max_agents: int) -> list[str]:
    """Error lines for one file (empty when valid)."""
    from behaviortk.format.errors import DefinitionError
    from behaviortk.format.loader import load_text, parse_text, read_text

    try:
        parsed = parse_text(read_text(path), path)
        if is_json_schema(parsed.data):
            return [SKIPPED]
        if schema_only:
            from behaviortk.format.schema import schema_issues  # jsonschema: only here

            return [str(i) for i in schema_issues(parsed, path)]
        scenario = load_text(parsed.text, path, path=Path(path), max_agents=max_agents)
    except DefinitionError as exc:
        return [str(i) for i in exc.issues]
    from behaviortk.format.budget import warnings  # memory and time of a tick, estimated

    for line in warnings(path, scenario.definition, scenario.trees):
        print(line, file=sys.stderr)
    return []


def is_json_schema(data: dict[str, Any]) -> bool:
    """The committed schema sits next to the definitions, so `validate definitions/*.json` skips it."""
    return str(data.get("$schema", "")).startswith("https://json-schema.org/")


def run(args: argparse.Namespace) -> int:
    failed = 0
    for path in args.files:
        lines = check(path, schema_only=args.schema_only, max_agents=args.max_agents)
        if lines == [SKIPPED]:
            print(f"{path}: {SKIPPED}", file=sys.stderr)
        elif lines:
            failed += 1
            print("\n".join(lines))
        else:
            print(f"{path}: ok", file=sys.stderr)
    return 1 if failed else 0
