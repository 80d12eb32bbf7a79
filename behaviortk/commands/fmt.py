"""``behaviortk fmt FILE...``: rewrite definitions in the one canonical layout.

The layout is ``format/layout.py``'s (keys in the schema's order, two-space
indent, short number arrays on one line, a final newline); every value is kept
as written. A file is written only when its layout changes, through a temporary
file renamed into place, and never when the file changed on disk since it was
read (an editor's save wins). ``--check`` writes nothing and exits 1 listing the
files that would change (for CI). JSON Schema files are skipped, as ``validate``
skips them. Exit 0 when all are formatted (or were just formatted), 1 when a
file is not strict JSON, could not be written or (``--check``) would change.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from behaviortk.commands.options import definition_files


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "fmt",
        help="rewrite definitions in the canonical layout (--check for CI)",
        description="Rewrite definition files in one canonical layout: keys in the schema's "
        "order (a node's type first), two-space indent, short arrays of numbers on one line, "
        "a final newline. Every value is kept as written. A file that changed on disk since "
        "it was read is left alone. --check writes nothing and exits 1 listing the files "
        "that would change.",
    )
    files = parser.add_argument("files", nargs="+", metavar="FILE", help="definition files (JSON)")
    files.completer = definition_files  # type: ignore[attr-defined]
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if any file would change"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    from behaviortk.commands.diagnostics import print_issues
    from behaviortk.commands.validate import is_json_schema
    from behaviortk.files import OutputError, atomic_output
    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.layout import formatted, parse
    from behaviortk.format.loader import read_text

    changed, failed = [], 0
    for path in dict.fromkeys(args.files):
        try:
            text = read_text(path)
            new = formatted(text, path)
        except DefinitionError as exc:
            print_issues(exc.issues)
            failed += 1
            continue
        if new == text or is_json_schema(parse(text)):
            continue
        changed.append(path)
        if args.check:
            print(f"would reformat {path}")
            continue
        try:
            if read_text(path) != text:
                print(f"behaviortk fmt: {path} changed on disk while formatting; left alone")
                failed += 1
                continue
            with atomic_output(path, "w", what="definition") as out:
                out.write(new)
        except (DefinitionError, OutputError) as exc:
            print(f"behaviortk fmt: error: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(f"reformatted {path}")
    total = len(dict.fromkeys(args.files))
    verb = "would be reformatted" if args.check else "reformatted"
    print(f"{len(changed)} of {total} file(s) {verb}", file=sys.stderr)
    return 1 if failed or (args.check and changed) else 0
