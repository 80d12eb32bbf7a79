"""``behaviortk explain [NODE]``: what a node type or target kind does, from the registries.

``explain NODE`` prints the tag's reference: its category and usage, the
model's docstring (what it does, the formula and its public source) and each
field with its type, unit, default, bounds and description, the same content
as docs/nodes.md (``format.reference.tag_docs``; ``--markdown`` prints that
section as it is there). ``explain`` alone lists every tag by category with
the first sentence of its docstring. Plugins loaded with ``--plugin`` or
installed as entry points explain themselves like built-ins, and say which
module registered them.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import textwrap
from contextlib import suppress
from typing import Any

from behaviortk.commands.style import BOLD, CYAN, DIM, Paint, use_color

BUILTIN_PREFIX = "behaviortk."


def node_names(prefix: str, parsed_args: Any = None, **_: Any) -> list[str]:
    """Shell completion of NODE: every registered tag (plugins of the command line too)."""
    from behaviortk import registry
    from behaviortk.commands.plugins import PluginLoadError, load_plugins

    with suppress(PluginLoadError):  # complete the built-ins; running the command reports it
        load_plugins(getattr(parsed_args, "plugin", None) or [])
    regs = registry.default()
    tags = {entry.tag for reg in regs.all().values() for entry in reg}
    return sorted(tag for tag in tags if tag.startswith(prefix))


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "explain",
        help="what a node type or target kind does: fields, units, formula, source",
        description="Print the reference of a node type, predictor or target kind: what it "
        "does, its formula and source, and every field with type, unit, default and bounds "
        "(the same as docs/nodes.md, plugins included). Without NODE, list them all by "
        "category.",
    )
    node = parser.add_argument("node", nargs="?", metavar="NODE", help="e.g. pursuit, nearest")
    node.completer = node_names  # type: ignore[attr-defined]
    parser.add_argument(
        "--markdown", action="store_true", help="print the Markdown section of docs/nodes.md"
    )
    return parser


def width() -> int:
    """Columns to wrap descriptions to: the terminal's, within 60..100."""
    return max(60, min(100, shutil.get_terminal_size((100, 24)).columns))


def first_sentence(text: str) -> str:
    """The docstring's first sentence, on one line: up to a period followed by a capital
    or the end (so "Buckland ch. 3" does not end it)."""
    flat = " ".join(text.split("\n\n", 1)[0].split())
    match = re.match(r"(.+?\.)(?=\s+[A-Z]|$)", flat)
    return match.group(1) if match else flat


def field_summary(field: Any) -> str:
    """``number or $param, world units; default 1.0; >= 0``."""
    parts = [field.type + (f", {field.unit}" if field.unit else "")]
    parts.append("required" if field.required else f"default {field.default or 'none'}")
    if field.bounds:
        parts.append(field.bounds)
    return "; ".join(parts)


def origin(regs: Any, doc: Any) -> str:
    """The module that registered a plugin's tag ('' for built-ins and file-only tags)."""
    if doc.registry not in regs.all():
        return ""
    model = getattr(regs, doc.registry)[doc.tag].model
    module = str(model.__module__)
    return "" if module.startswith(BUILTIN_PREFIX) else module


def explain_text(doc: Any, paint: Paint, regs: Any, columns: int) -> str:
    lines = [f"{paint(doc.tag, BOLD)}: {doc.kind}   {doc.usage}"]
    source = origin(regs, doc)
    if source:
        lines.append(paint(f"registered by the plugin {source}", DIM))
    lines.append("")
    if doc.text:
        for paragraph in doc.text.split("\n\n"):
            lines.extend(
                textwrap.fill(
                    " ".join(paragraph.split()),
                    columns,
                    initial_indent="  ",
                    subsequent_indent="  ",
                    break_on_hyphens=False,  # "look-ahead" stays one word
                ).splitlines()
            )
            lines.append("")
    if not doc.fields:
        lines.append(f"No fields besides {doc.key!r}.")
        return "\n".join(lines)
    lines.append(paint("Fields", BOLD))
    key_width = max(len(f.key) for f in doc.fields)
    indent = " " * (key_width + 4)
    for field in doc.fields:
        lines.append(f"  {paint(field.key.ljust(key_width), CYAN)}  {field_summary(field)}")
        if field.description:
            lines.extend(
                textwrap.fill(
                    field.description,
                    columns,
                    initial_indent=indent,
                    subsequent_indent=indent,
                    break_on_hyphens=False,
                ).splitlines()
            )
    return "\n".join(lines)


def listing(docs: list[Any], paint: Paint, regs: Any, columns: int) -> str:
    out = [
        "Every node type, predictor and target kind, by category "
        "(behaviortk explain NAME for one):",
    ]
    tag_width = max(len(d.tag) for d in docs)
    title = None
    for doc in docs:
        if doc.title != title:
            title = doc.title
            out += ["", paint(title, BOLD)]
        summary = first_sentence(doc.text)
        source = origin(regs, doc)
        if source:
            summary = f"{summary} [plugin {source}]"
        room = max(20, columns - tag_width - 4)
        if len(summary) > room:
            summary = summary[: room - 3].rstrip() + "..."
        out.append(f"  {paint(doc.tag.ljust(tag_width), CYAN)}  {summary}")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    from behaviortk import registry
    from behaviortk.format.reference import section_markdown, tag_docs

    regs = registry.default()
    paint = Paint(use_color(sys.stdout))
    columns = width()
    if args.node is None:
        docs = tag_docs(registries=regs)
        if args.markdown:
            sys.stdout.write("\n".join(section_markdown(d) for d in docs))
        else:
            print(listing(docs, paint, regs, columns))
        return 0
    docs = tag_docs(args.node, regs)
    if not docs:
        known = sorted({d.tag for d in tag_docs(registries=regs)})
        print(
            f"behaviortk explain: error: unknown node type or target kind {args.node!r}"
            f"{registry.choices(args.node, known)} (behaviortk explain lists them all)",
            file=sys.stderr,
        )
        return 2
    if args.markdown:
        sys.stdout.write("\n".join(section_markdown(d) for d in docs))
    else:
        print("\n\n".join(explain_text(d, paint, regs, columns) for d in docs))
    return 0
