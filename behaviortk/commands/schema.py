"""``behaviortk schema``: print the JSON Schema (Draft 2020-12) of the definition format."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "schema",
        help="print the JSON Schema of definition files",
        description="Print the JSON Schema (Draft 2020-12) of definition files, built from the "
        "registered node types (plugins included). The committed copy is "
        "definitions/behaviortk.schema.json (make schema).",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    from behaviortk.format.schema import schema_text

    sys.stdout.write(schema_text())
    return 0
