"""``behaviortk new NAME [--template T]``: start a definition from a valid, explained template.

The templates (``behaviortk/templates/*.json``) run as they are and show
something moving: ``chase`` (pursuit and evade), ``flock`` (boids round
obstacles), ``guard`` (a patrol path, line of sight, a zone) and ``crowd``
(2,000 walkers, where ``auto`` picks the batch engine). JSON has no comments,
so each explains itself with the fields the format has for words: the
top-level ``description`` says what it shows, what to try and where its
formulas come from, every tunable number is a tree parameter with a
``description``, and every node has a ``name`` (shown in traces and the
viewer's tree panel). ``behaviortk explain NODE`` teaches the rest.

The file gets ``"$schema": "behaviortk.schema.json"`` so editors complete and
check it; when that file is not next to it, ``new`` writes it there (the
schema of the loaded registries, plugins included). Nothing existing is ever
overwritten (``output.write_new``): an existing NAME.json stops with exit 2.
The written file is validated before ``new`` says it is done.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any

from behaviortk.errors import shown

TEMPLATES = {
    "chase": "hunters pursue the nearest prey; prey evade a near hunter, else wander",
    "flock": "boids: separation, alignment, cohesion and obstacle avoidance",
    "guard": "guards patrol a path and chase an intruder they can see; the intruder seeks a zone",
    "crowd": "2,000 walkers cross a plaza in two lanes (auto picks the batch engine)",
}
"""Template name -> what it shows (``behaviortk/templates/NAME.json``)."""
DEFAULT_TEMPLATE = "chase"
SCHEMA_FILE = "behaviortk.schema.json"

PLAIN_NAME = re.compile(r"[^\W_][\w.-]*")
"""A file name ``new`` writes: letters, digits, ``_``, ``-`` and ``.``, starting with a letter
or digit (not hidden, not an option, not ``.`` or ``..``)."""
MAX_NAME_BYTES = 250
"""Longest name in UTF-8 bytes: with ``.json`` it fits the usual 255-byte file name limit."""
NAME_RULE = (
    "NAME must be a plain name (letters, digits, _, - and ., starting with a letter or digit) "
    "or a path to one in an existing folder"
)

FIRST_NODE = {"chase": "pursuit", "flock": "separation", "guard": "can_see", "crowd": "arrive"}
"""A node of each template worth explaining first (printed as a next step)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "new",
        help="start a new definition from a template",
        description="Write NAME.json, a valid starter definition that runs as it is, from a "
        "template; its description and parameter descriptions say what each part does. "
        f"Also writes {SCHEMA_FILE} next to it (for editors) when it is missing. "
        "Never overwrites a file.",
    )
    parser.add_argument(
        "name",
        metavar="NAME",
        help="the file to write (.json added if missing): a plain name (letters, digits, _, - "
        "and .) or a path to one in an existing folder",
    )
    parser.add_argument(
        "--template",
        choices=tuple(TEMPLATES),
        default=DEFAULT_TEMPLATE,
        help="; ".join(f"{k}: {v}" for k, v in TEMPLATES.items())
        + f" (default {DEFAULT_TEMPLATE})",
    )
    return parser


def template_text(template: str) -> str:
    """The template file as written (its layout kept)."""
    from importlib.resources import files

    return (files("behaviortk") / "templates" / f"{template}.json").read_text(encoding="utf-8")


def starter(template: str, name: str) -> str:
    """The template's text with its top-level ``"name"`` set to ``name``.

    Only that one value changes (the template's hand layout stays); the result is
    parsed back to prove it."""
    text = template_text(template)
    old = f'"name": {json.dumps(template)}'
    if text.count(old) < 1:
        raise ValueError(f"template {template!r} has no top-level name")
    new_text = text.replace(old, f'"name": {json.dumps(name, ensure_ascii=False)}', 1)
    if json.loads(new_text)["name"] != name:
        raise ValueError(f"template {template!r}: its first name is not the top-level one")
    return new_text


def target_path(name: str) -> str:
    return name if name.lower().endswith(".json") else name + ".json"


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a file ``new`` may write, or None: its last part must be a plain
    name (``PLAIN_NAME``) and its folder must exist (nothing else is created)."""
    folder, last = os.path.split(name)
    if "\0" in name or PLAIN_NAME.fullmatch(last) is None:
        return f"{NAME_RULE}, got {shown(name)}"
    if len(last.encode("utf-8")) > MAX_NAME_BYTES:
        return f"NAME is at most {MAX_NAME_BYTES} bytes, got {len(last.encode('utf-8')):,}"
    if folder and not os.path.isdir(folder):
        return f"folder {shown(folder)} does not exist (new creates no folder)"
    return None


def typed_as(argv0: str | None = None, on_path: str | None = None) -> str:
    """How to type this command in this shell: ``behaviortk`` when the shell finds this very
    script, else its path (``.venv/bin/behaviortk`` after ``make demo``, not activated), or
    ``python -m behaviortk`` when it was started that way."""
    import shutil

    argv0 = sys.argv[0] if argv0 is None else argv0
    on_path = shutil.which("behaviortk") if on_path is None else on_path
    if os.path.basename(argv0) != "behaviortk":
        return f"{shorter_path(sys.executable)} -m behaviortk"
    if on_path and os.path.realpath(on_path) == os.path.realpath(argv0):
        return "behaviortk"
    return shorter_path(argv0)


def shorter_path(path: str) -> str:
    """``path`` relative to here when that is shorter (``.venv/bin/behaviortk``)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    if relative.startswith(".."):
        return path
    return relative if "/" in relative or os.sep in relative else f".{os.sep}{relative}"


def run(args: argparse.Namespace) -> int:
    from behaviortk.files import write_new

    problem = name_problem(args.name)
    if problem is not None:
        print(f"behaviortk new: error: {problem}; nothing was written", file=sys.stderr)
        return 2
    path = target_path(args.name)
    stem = os.path.splitext(os.path.basename(path))[0]
    write_new(path, starter(args.template, stem), what="definition")
    notes = [f"wrote {path} (template {args.template}: {TEMPLATES[args.template]})"]
    schema = os.path.join(os.path.dirname(path), SCHEMA_FILE)
    if not os.path.lexists(schema):
        from behaviortk.format.schema import schema_text

        write_new(schema, schema_text(), what="schema")
        notes.append(f'wrote {schema} (the JSON Schema its "$schema" names, for editors)')
    from behaviortk.commands.diagnostics import print_issues
    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.loader import load

    try:
        load(path)
    except DefinitionError as exc:  # a template the loaded plugins or limits refuse
        print("\n".join(notes))
        print_issues(exc.issues)
        return 1
    node = FIRST_NODE[args.template]
    print("\n".join(notes))
    me = typed_as()
    steps = [
        (f"{me} run {path}", "open it in the viewer (saving the file reloads it)"),
        (f"{me} run {path} --headless", "run it without a window, with a summary"),
        (f"{me} explain {node}", "what a node does: fields, units, formula, source"),
        (f"{me} explain", "every node type, by category"),
    ]
    width = max(len(command) for command, _ in steps)
    print("next:")
    for command, what in steps:
        print(f"  {command:<{width}}  {what}")
    return 0
