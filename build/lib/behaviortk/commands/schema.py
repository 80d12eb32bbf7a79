"""``behaviortk schema [--out FILE]``: the JSON Schema (Draft 2020-12) of the definition format.

Printed on stdout, or with ``--out`` written atomically (``behaviortk/files.py``):
``make schema`` regenerates the committed copy that way, so a failure never
leaves it empty.
"""

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
    parser.add_argument(
        "--out", metavar="FILE", help="write the schema to FILE instead of printing it"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    from behaviortk.format.schema import schema_text

    text = schema_text()
    if args.out is None:
        sys.stdout.write(text)
        return 0
    from behaviortk.files import atomic_output

    with atomic_output(args.out, "w", what="schema") as out:
        out.write(text)
    print(f"wrote {args.out}")
    return 0
