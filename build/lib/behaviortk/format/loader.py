"""Load a definition file: bytes -> strict JSON -> models -> semantic checks -> Scenario.

Every stage reports all the mistakes it can find as ``Issue``s; a later stage
runs only when the earlier ones found nothing (its errors would be noise).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from behaviortk import registry
from behaviortk.format.adapters import validate_definition
from behaviortk.format.blackboard_keys import KeySpec
from behaviortk.format.definition import Definition
from behaviortk.format.issues import DefinitionError, Issue
from behaviortk.format.jsonparse import JsonSyntaxError, Parsed, parse
from behaviortk.format.limits import MAX_AGENTS, MAX_BYTES, MAX_DEPTH
from behaviortk.format.messages import key_catalogue, pydantic_issues
from behaviortk.format.nodes import NodeModel
from behaviortk.format.semantic import check, check_names


@dataclass(frozen=True)
class Scenario:
    """A loaded definition, ready to simulate."""

    path: Path | None
    definition: Definition
    trees: dict[str, NodeModel]
    """Each group's root node: subtrees expanded, parameters substituted, validated again."""
    raw: dict[str, Any]
    """The parsed JSON (for tools that want to show or rewrite the source)."""
    registries: registry.Registries
    """The node types, predictors and target kinds the file was validated against (engines run it with them)."""
    blackboards: dict[str, dict[str, KeySpec]] = field(default_factory=dict)
    """Each group's blackboard keys: declared by its tree and the subtrees inlined into it."""


def read_text(path: str | Path, *, max_bytes: int = MAX_BYTES) -> str:
    """The file's text, or ``DefinitionError`` with one file-level issue."""
    name = str(path)
    p = Path(path)

    def fail(message: str, kind: str) -> DefinitionError:
        return DefinitionError([Issue(name, 1, 1, "", message, kind)])

    if not p.exists():
        raise fail("no such file", "file_not_found")
    if p.is_dir():
        raise fail("is a directory, not a definition file", "is_a_directory")
    try:
        size = p.stat().st_size
        if size > max_bytes:
            raise fail(f"file is {size:,} bytes; the limit is {max_bytes:,}", "file_too_large")
        with p.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise fail(f"cannot read: {exc.strerror or exc}", "unreadable") from exc
    if len(data) > max_bytes:
        raise fail(f"file is larger than the limit of {max_bytes:,} bytes", "file_too_large")
    return decode(data, name)


def decode(data: bytes, name: str) -> str:
    """UTF-8 text (a BOM is tolerated); binary or invalid bytes are an issue with their position."""
    if not data.strip():
        raise DefinitionError([Issue(name, 1, 1, "", "file is empty", "empty")])
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise DefinitionError(
            [Issue(name, line, 1, "", "binary data (NUL bytes), not a JSON text file", "not_text")]
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise DefinitionError(
            [Issue(name, line, col, "", f"invalid UTF-8 byte 0x{data[exc.start]:02x}", "not_utf8")]
        ) from None


def parse_text(text: str, name: str, *, duplicates_ok: bool = False) -> Parsed:
    """Strict JSON with positions; the top level must be an object; no duplicate keys
    (unless ``duplicates_ok``: then the caller reports ``duplicate_issues`` with the rest)."""
    try:
        parsed = parse(text)
    except JsonSyntaxError as exc:
        probe = Parsed(text=text, data=None)
        line, col = probe.line_col(exc.offset)
        raise DefinitionError(
            [Issue(name, line, col, exc.pointer, exc.message, exc.kind)]
        ) from None
    if parsed.duplicates and not duplicates_ok:
        raise DefinitionError(duplicate_issues(parsed, name))
    if not isinstance(parsed.data, dict):
        kind = {
            list: "an array",
            str: "a string",
            bool: "a boolean",
            int: "a number",
            float: "a number",
            type(None): "null",
        }[type(parsed.data)]
        raise DefinitionError(
            [
                Issue(
                    name,
                    1,
                    1,
                    "",
                    f"the top level must be a JSON object, not {kind}",
                    "not_an_object",
                )
            ]
        )
    return parsed


def duplicate_issues(parsed: Parsed, name: str) -> list[Issue]:
    out = []
    for pointer, offset, key in parsed.duplicates:
        line, col = parsed.line_col(offset)
        out.append(Issue(name, line, col, pointer, f"duplicate key {key!r}", "duplicate_key"))
    return out


def _in_order(issues: list[Issue]) -> list[Issue]:
    """Each distinct issue once, in file order."""
    return sorted(dict.fromkeys(issues), key=lambda i: (i.line, i.col))


def _issues(parsed: Parsed, name: str, findings: list[tuple[str, str, str]]) -> list[Issue]:
    out = []
    for pointer, message, kind in findings:
        line, col = parsed.position(pointer)
        out.append(Issue(name, line, col, pointer, message, kind))
    return sorted(out, key=lambda i: (i.line, i.col))


def load_text(
    text: str,
    name: str = "<text>",
    *,
    path: Path | None = None,
    max_agents: int = MAX_AGENTS,
    max_depth: int = MAX_DEPTH,
    registries: registry.Registries | None = None,
) -> Scenario:
    """Validate a definition given as text (the viewer's hot reload uses this)."""
    regs = registry.default() if registries is None else registries
    parsed = parse_text(text, name, duplicates_ok=True)
    issues = duplicate_issues(parsed, name)
    try:
        definition = validate_definition(parsed.data, regs)
    except ValidationError as exc:
        # report the name checks too: every mistake of the file in one pass
        known = key_catalogue(Definition, regs)
        findings = pydantic_issues(exc, parsed.data, known) + check_names(
            parsed.data, max_agents=max_agents
        )
        raise DefinitionError(_in_order(issues + _issues(parsed, name, findings))) from None
    result = check(definition, parsed.data, regs, max_agents=max_agents, max_depth=max_depth)
    if issues or result.findings:
        raise DefinitionError(_in_order(issues + _issues(parsed, name, result.findings)))
    return Scenario(
        path=path,
        definition=definition,
        trees=result.trees,
        raw=parsed.data,
        registries=regs,
        blackboards=result.blackboards,
    )


def load(
    path: str | Path,
    *,
    max_agents: int = MAX_AGENTS,
    max_depth: int = MAX_DEPTH,
    max_bytes: int = MAX_BYTES,
    registries: registry.Registries | None = None,
) -> Scenario:
    """Load and fully validate a definition file; raise ``DefinitionError`` listing every issue."""
    text = read_text(path, max_bytes=max_bytes)
    return load_text(
        text,
        str(path),
        path=Path(path),
        max_agents=max_agents,
        max_depth=max_depth,
        registries=registries,
    )
