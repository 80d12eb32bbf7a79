"""Definition errors as people read them: the one-line form first, then the source line.

Each located issue prints as::

    chase.json:21:16: /groups/0/radus: unknown key 'radus'; did you mean 'radius'? ... [extra_forbidden]
       |
    21 |       "radus": 5,
       |       ^^^^^^^ unknown key 'radus'
       = in: groups[0] (sheep) > radus
       = help: did you mean 'radius'? closest of 22: radius, params, mass, names, heading

after the layout of Rust's and Elm's compiler errors. The first line is exactly
``str(issue)`` (``FILE:LINE:COL: /pointer: message [kind]``), so editors and
CI that parse it keep working; the rest is indented or starts with a digit and
never looks like it. The caret spans the token at the column (a key or string
with its quotes, a number, a word). ``in:`` is the JSON Pointer as a key path
that names the groups and node types it passes through; ``help:`` is the part
of the message after its first ``"; "`` (did you mean, the valid choices,
the fix); ``see:`` points at ``behaviortk explain`` for the node in question.

Colour only on a terminal (``style.use_color``). Source lines are escaped
(tabs expanded, control characters written as ``\\x1b``), so a file cannot
drive the terminal, and long lines (minified JSON) show a window around the
column. ``issues_json`` is the ``--format json`` form for tools.

Stdlib only: command modules import this while the parser is built.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from behaviortk.commands.style import BLUE, BOLD, CYAN, DIM, GREEN, RED, Paint, use_color

WINDOW = 100
"""Columns of a source line shown at most; a longer line shows a window around the column."""
BEFORE = 40
"""Columns kept before the caret when a long line is cut."""
TAB = 4
MAX_SOURCE_BYTES = 10 * 1024 * 1024


class IssueLike(Protocol):
    """``format.errors.Issue`` (not imported: it would load the format package at start-up)."""

    @property
    def file(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def col(self) -> int: ...
    @property
    def pointer(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def kind(self) -> str: ...


# --------------------------------------------------------------------------- source lines


def read_source(file: str) -> str | None:
    """The text of ``file`` as the loader decodes it, or None when it cannot be read."""
    try:
        path = Path(file)
        if not path.is_file() or path.stat().st_size > MAX_SOURCE_BYTES:
            return None
        return path.read_bytes().decode("utf-8-sig", errors="replace")
    except OSError:
        return None


def token_length(line: str, start: int) -> int:
    """Characters of the JSON token that begins at ``start`` (0-based) of ``line``, at least 1."""
    if start >= len(line):
        return 1
    head = line[start]
    if head == '"':
        i = start + 1
        while i < len(line):
            if line[i] == "\\":
                i += 2
                continue
            if line[i] == '"':
                return i - start + 1
            i += 1
        return len(line) - start
    match = re.compile(r"-?[0-9][0-9.eE+-]*|[A-Za-z_][A-Za-z0-9_]*").match(line, start)
    return match.end() - start if match else 1


def _shown(char: str) -> str:
    if char == "\t":
        return " " * TAB
    if char.isprintable():
        return char
    return repr(char)[1:-1]  # '\x1b', '\r'


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


KEY_KINDS = ("extra_forbidden",)
"""Issue kinds about a key itself: the caret goes under the key, not its value."""


def caret_start(line: str, col: int, pointer: str, kind: str) -> int:
    """0-based start of the caret: the column, or the key before it for ``KEY_KINDS``."""
    start = min(max(col - 1, 0), len(line))
    tokens = pointer_tokens(pointer)
    if kind in KEY_KINDS and tokens:
        key = json.dumps(tokens[-1], ensure_ascii=False)
        match = re.search(re.escape(key) + r"\s*:\s*$", line[:start])
        if match:
            return match.start()
    return start


TAG_KINDS = ("unknown_type", "unknown_kind")
"""Issue kinds about an object's ``type``/``kind`` value: the caret goes under that value."""
LOOK_AHEAD = 40
"""Lines after an object's start searched for its ``type``/``kind`` value."""


def tag_line(lines: Sequence[str], issue: IssueLike, data: Any) -> tuple[int, int] | None:
    """``(line, 0-based start)`` of the ``"type": "wiat"`` an unknown-tag issue is about."""
    if issue.kind not in TAG_KINDS or data is None:
        return None
    walked = _walk(data, pointer_tokens(issue.pointer))
    obj = walked[-1][1] if walked else data
    if not isinstance(obj, dict):
        return None
    for key in ("type", "kind"):
        value = obj.get(key)
        if not isinstance(value, str):
            continue
        pattern = re.compile(
            re.escape(json.dumps(key)) + r"\s*:\s*(" + re.escape(json.dumps(value)) + ")"
        )
        first = issue.line - 1
        for index in range(first, min(len(lines), first + LOOK_AHEAD)):
            offset = issue.col - 1 if index == first else 0
            match = pattern.search(lines[index], max(offset, 0))
            if match:
                return index + 1, match.start(1)
    return None


def excerpt(line: str, start: int) -> tuple[str, int, int]:
    """``(shown line, caret start, caret width)`` in display columns, for a 0-based ``start``."""
    length = token_length(line, start)
    first, last = 0, len(line)
    if len(line) > WINDOW:
        first = max(0, start - BEFORE)
        last = min(len(line), first + WINDOW)
        if last - first < WINDOW:
            first = max(0, last - WINDOW)
    before = "".join(_shown(c) for c in line[first:start])
    token = "".join(_shown(c) for c in line[start : min(start + length, last)])
    after = "".join(_shown(c) for c in line[min(start + length, last) : last])
    lead = "..." if first > 0 else ""
    tail = "..." if last < len(line) else ""
    shown = (lead + before + token + after + tail).rstrip()
    return shown, _width(lead + before), max(1, _width(token))


# --------------------------------------------------------------------------- key paths


def pointer_tokens(pointer: str) -> list[str]:
    """RFC 6901 reference tokens of ``pointer`` (``~1`` is ``/``, ``~0`` is ``~``)."""
    if not pointer or pointer == "/":
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def _walk(data: Any, tokens: Sequence[str]) -> list[tuple[str, Any]]:
    """``(token, value)`` along the pointer for as far as ``data`` has it (value None after)."""
    out: list[tuple[str, Any]] = []
    here: Any = data
    for token in tokens:
        if isinstance(here, dict) and token in here:
            here = here[token]
        elif isinstance(here, list) and token.isdigit() and int(token) < len(here):
            here = here[int(token)]
        else:
            here = None
        out.append((token, here))
    return out


def _label_of(value: Any) -> str:
    """What names an item of a list: a node's type and name, a group's or path's name."""
    if not isinstance(value, dict):
        return ""
    from behaviortk.format.issues import printable  # a lone surrogate prints escaped

    name, tag = value.get("name"), value.get("type")
    words = [printable(w) for w in (tag, name) if isinstance(w, str) and w]
    if len(words) == 2:
        return f" ({words[0]} {words[1]!r})"
    return f" ({words[0]})" if words else ""


def key_path(data: Any, pointer: str) -> str:
    """``groups[0] (sheep) > tree``: the pointer as keys, naming what its items are."""
    parts: list[str] = []
    for token, value in _walk(data, pointer_tokens(pointer)):
        if token.isdigit() and parts:
            parts[-1] += f"[{token}]{_label_of(value)}"
        else:
            parts.append(token if token.isprintable() else repr(token))
    return " > ".join(parts)


EXPLAINED_UNKNOWNS = ("unknown node type", "unknown target kind", "unknown predictor")
"""Messages of unknown tags that ``behaviortk explain`` (alone) lists."""


def explain_hint(data: Any, pointer: str, message: str) -> str:
    """``behaviortk explain TYPE`` for the innermost node or target around the pointer."""
    if message.startswith(EXPLAINED_UNKNOWNS):
        return "behaviortk explain (lists every node type and target kind)"
    tag = ""
    parent = ""
    for token, value in [("", data), *_walk(data, pointer_tokens(pointer))]:
        if isinstance(value, dict):
            if isinstance(value.get("type"), str):
                tag = value["type"]
            elif parent in ("target", "threat") and isinstance(value.get("kind"), str):
                tag = value["kind"]
        parent = token
    if not tag or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", tag):
        return ""
    return f"behaviortk explain {tag}"


# --------------------------------------------------------------------------- rendering


def split_message(message: str) -> tuple[str, str]:
    """``(what, help)``: the message up to its first ``"; "``, and the rest (the fix)."""
    what, sep, rest = message.partition("; ")
    return (what, rest) if sep else (message, "")


def first_line(issue: IssueLike, paint: Paint) -> str:
    """``str(issue)``, with its parts coloured when ``paint`` is on."""
    text = str(issue)
    if not paint.enabled:
        return text
    location = f"{issue.file}:{issue.line}:{issue.col}:"
    rest = text[len(location) :]
    pointer, sep, message = rest.partition(": ")
    kind = f" [{issue.kind}]"
    body = message[: -len(kind)] if message.endswith(kind) else message
    tail = kind if message.endswith(kind) else ""
    return paint(location, BOLD) + paint(pointer, CYAN) + sep + paint(body, BOLD) + paint(tail, DIM)


def render_issue(issue: IssueLike, text: str | None, data: Any, paint: Paint) -> str:
    """The one-line form, then (when the file has that line) the source with a caret."""
    from behaviortk.format.issues import printable

    out = [first_line(issue, paint)]
    lines = text.split("\n") if text is not None else []
    what, fix = split_message(printable(issue.message))
    gutter = " " * len(str(issue.line))
    bar = paint("|", BLUE, BOLD)
    if 1 <= issue.line <= len(lines):
        number = issue.line
        line = lines[number - 1].rstrip("\r")
        at = caret_start(line, issue.col, issue.pointer, issue.kind)
        tagged = tag_line(lines, issue, data)
        if tagged is not None:
            number, at = tagged
            line = lines[number - 1].rstrip("\r")
        gutter = " " * len(str(number))
        shown, start, width = excerpt(line, at)
        caret = paint("^" * width + " " + what, RED, BOLD)
        out += [
            f"{gutter} {bar}",
            f"{paint(str(number), BLUE, BOLD)} {bar} {shown}",
            f"{gutter} {bar} {' ' * start}{caret}",
        ]
    notes: list[tuple[str, str]] = []
    where = key_path(data, issue.pointer) if len(pointer_tokens(issue.pointer)) > 1 else ""
    if where:
        notes.append(("in", where))
    if fix:
        notes.append(("help", fix))
    hint = explain_hint(data, issue.pointer, issue.message) if data is not None else ""
    if hint:
        notes.append(("see", hint))
    for label, note in notes:
        out.append(f"{gutter} {paint('=', BLUE, BOLD)} {paint(label + ':', GREEN, BOLD)} {note}")
    return "\n".join(out)


def _parsed(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def render_issues(
    issues: Iterable[IssueLike], *, color: bool = False, sources: Mapping[str, str] | None = None
) -> str:
    """Every issue with its source line, a blank line between them (files read once each).

    ``print_issues`` ends the last one with a blank line too, so issues of several
    files stay apart."""
    paint = Paint(color)
    texts: dict[str, tuple[str | None, Any]] = {}
    blocks = []
    for issue in issues:
        if issue.file not in texts:
            given = (sources or {}).get(issue.file)
            text = given if given is not None else read_source(issue.file)
            texts[issue.file] = (text, _parsed(text))
        text, data = texts[issue.file]
        blocks.append(render_issue(issue, text, data, paint))
    return "\n\n".join(blocks)


def print_issues(
    issues: Sequence[IssueLike],
    stream: IO[str] | None = None,
    *,
    sources: Mapping[str, str] | None = None,
) -> None:
    """Render ``issues`` to ``stream`` (stderr by default), coloured if it is a terminal."""
    out = sys.stderr if stream is None else stream
    if issues:
        out.write(render_issues(issues, color=use_color(out), sources=sources) + "\n\n")
        out.flush()


def issue_dict(issue: IssueLike, text: str | None = None) -> dict[str, Any]:
    """One issue for ``--format json``: its fields, and the 1-based columns the caret spans
    (``start_col`` inclusive, ``end_col`` exclusive) when the file has the line."""
    item: dict[str, Any] = {
        "file": issue.file,
        "line": issue.line,
        "col": issue.col,
        "pointer": issue.pointer,
        "message": issue.message,
        "kind": issue.kind,
    }
    lines = text.split("\n") if text is not None else []
    if 1 <= issue.line <= len(lines):
        line = lines[issue.line - 1].rstrip("\r")
        at = caret_start(line, issue.col, issue.pointer, issue.kind)
        item["start_col"] = at + 1
        item["end_col"] = at + 1 + token_length(line, at)
    return item


def issues_json(results: Sequence[tuple[str, str, Sequence[IssueLike]]]) -> str:
    """``{"valid": bool, "files": [{"file", "status", "issues": [...]}]}`` on one line.

    ``results`` holds ``(file, status, issues)`` with status ``ok``, ``invalid`` or
    ``skipped``."""
    files = []
    for file, status, issues in results:
        text = read_source(file) if issues else None
        files.append(
            {"file": file, "status": status, "issues": [issue_dict(i, text) for i in issues]}
        )
    valid = all(status != "invalid" for _, status, _ in results)
    return json.dumps({"valid": valid, "files": files}, ensure_ascii=False)
