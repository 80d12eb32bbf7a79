"""A strict JSON parser that remembers where every value starts.

Why not ``json``: error messages need ``line:col`` for any JSON Pointer, and a
definition must be rejected for duplicate keys, ``NaN``/``Infinity``, comments,
trailing commas and strings that are not Unicode text (a lone surrogate escape
such as ``"\ud800"``, which ``json`` accepts and no UTF-8 output can encode). The parser is iterative (an explicit stack), so deeply
nested input cannot raise ``RecursionError``; nesting beyond ``max_nesting``
is reported as an error instead.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from behaviortk.format.issues import escape_token

MAX_NESTING = 256

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\n\r]+)
  | (?P<str>"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")
  | (?P<num>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)(?![0-9A-Za-z.+-])
  | (?P<punct>[{}\[\]:,])
  | (?P<lit>(?:true|false|null)(?![0-9A-Za-z_]))
    """,
    re.VERBOSE,
)


class JsonSyntaxError(Exception):
    """Text that is not strict JSON; ``offset`` is the character where it goes wrong and
    ``pointer`` the value it belongs to, when known (a string that is not Unicode text)."""

    def __init__(
        self, message: str, offset: int, kind: str = "json_syntax", pointer: str = ""
    ) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.kind = kind
        self.pointer = pointer


_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)")
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(token: str) -> tuple[int, str] | None:
    """``(index in token, escape)`` of the first ``\\uD800``-``\\uDFFF`` escape of a JSON string
    token that is not half of a high-low pair, or None: what ``json`` decodes to a lone
    surrogate, a code point that is not Unicode text (RFC 8259 section 8.2)."""
    escapes = list(_ESCAPE.finditer(token))
    k = 0
    while k < len(escapes):
        code = int(escapes[k].group(1) or "0", 16)
        if 0xD800 <= code <= 0xDBFF and k + 1 < len(escapes):
            after = escapes[k + 1]
            low = int(after.group(1) or "0", 16)
            if after.start() == escapes[k].end() and 0xDC00 <= low <= 0xDFFF:
                k += 2  # a pair: one character beyond U+FFFF
                continue
        if 0xD800 <= code <= 0xDFFF:
            return escapes[k].start(), escapes[k].group()
        k += 1
    return None


@dataclass
class Parsed:
    """Parsed data plus the start offset of every value, found by JSON Pointer."""

    text: str
    data: Any
    duplicates: list[tuple[str, int, str]] = field(default_factory=list)
    """(pointer of the object, offset of the repeated key, key)"""
    _root_offset: int = 0
    _offsets: dict[int, Any] = field(default_factory=dict)
    """id(container) -> {key: offset} for objects, [offset, ...] for arrays."""
    _newlines: list[int] | None = None

    def offset_of(self, pointer: str) -> int:
        """Start of the deepest existing value along ``pointer`` (the root if none)."""
        node, offset = self.data, self._root_offset
        for token in pointer.split("/")[1:] if pointer else []:
            key = token.replace("~1", "/").replace("~0", "~")
            table = self._offsets.get(id(node))
            if isinstance(node, dict) and table is not None and key in table and key in node:
                offset, node = table[key], node[key]
            elif (
                isinstance(node, list)
                and key.isdigit()
                and int(key) < len(node)
                and table is not None
            ):
                offset, node = table[int(key)], node[int(key)]
            else:
                break
        return offset

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        line = bisect.bisect_left(self._newlines, offset)
        start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, offset - start + 1

    def position(self, pointer: str) -> tuple[int, int]:
        return self.line_col(self.offset_of(pointer))


def _describe(text: str, pos: int) -> tuple[str, str]:
    """A human message and kind for the character(s) at ``pos`` that no token matches."""
    rest = text[pos : pos + 12]
    if rest.startswith(("//", "/*", "#")):
        return "comments are not allowed in JSON", "json_comment"
    for word in ("NaN", "Infinity", "-Infinity", "+Infinity", "-NaN"):
        if rest.startswith(word):
            return f"{word} is not a JSON number; use a finite number", "json_nan"
    if rest.startswith('"'):
        end = text.find("\n", pos)
        line = text[pos : end if end >= 0 else len(text)]
        if line.count('"') < 2:
            return "unterminated string", "json_syntax"
        return "invalid string: control character or bad escape inside quotes", "json_syntax"
    if rest.startswith("'"):
        return "strings must use double quotes", "json_syntax"
    if re.match(r"[-+0-9.]", rest):
        return f"invalid number {re.match(r'[-+0-9.eE]*', rest).group()!r}", "json_syntax"  # type: ignore[union-attr]
    bare = re.match(r"[A-Za-z_]+", rest)
    if bare:
        return f"unexpected word {bare.group()!r} (strings need double quotes)", "json_syntax"
    return f"unexpected character {rest[0]!r}", "json_syntax"


MAX_INT_DIGITS = 4300
"""Python's own limit on converting digit strings (``sys.int_info.default_max_str_digits``);
no field of the format needs a whole number anywhere near that long."""


def parse(text: str, *, max_nesting: int = MAX_NESTING) -> Parsed:
    """Parse strict JSON; raise ``JsonSyntaxError`` at the first syntax error.

    Duplicate keys do not stop parsing: they are collected in ``duplicates``
    (the last value wins in ``data``) so that all of them can be reported.
    """
    parsed = Parsed(text=text, data=None)
    offsets = parsed._offsets
    n = len(text)
    pos = 0
    # stack entries: [container, pointer, expecting, pending_key, pending_key_offset]
    stack: list[list[Any]] = []
    root_done = False

    def next_token() -> tuple[str, str, int]:
        nonlocal pos
        while True:
            if pos >= n:
                return "eof", "", pos
            m = _TOKEN.match(text, pos)
            if m is None:
                message, kind = _describe(text, pos)
                raise JsonSyntaxError(message, pos, kind)
            start, pos = pos, m.end()
            group = m.lastgroup or ""
            if group != "ws":
                return group, m.group(), start

    def string(tok: str, start: int, pointer: str, what: str) -> str:
        value: str = json.loads(tok)
        if "\\u" in tok and _SURROGATE.search(value):
            found = lone_surrogate(tok)
            index, escape = found if found else (0, "\\u")
            raise JsonSyntaxError(
                f"{what} holds {escape}, a lone surrogate: not Unicode text (RFC 8259 "
                "section 8.2); write the character itself, or a high and low surrogate pair",
                start + index,
                "json_unicode",
                pointer,
            )
        return value

    def here() -> str:
        """Pointer of the value about to be attached (the root when the stack is empty)."""
        if not stack:
            return ""
        top = stack[-1]
        token = top[3] if isinstance(top[0], dict) else len(top[0])
        return top[1] + "/" + escape_token(token)

    def scalar(group: str, tok: str, start: int) -> Any:
        if group == "str":
            return string(tok, start, here(), "string")
        if group == "lit":
            return {"true": True, "false": False, "null": None}[tok]
        if "." in tok or "e" in tok or "E" in tok:
            value = float(tok)
            if math.isinf(value):
                shown = tok if len(tok) <= 40 else f"{tok[:20]}...{tok[-10:]}"
                raise JsonSyntaxError(f"number {shown} is too large", start, "json_number")
            return value
        digits = len(tok.lstrip("-"))
        if digits > MAX_INT_DIGITS:
            raise JsonSyntaxError(
                f"number literal has {digits:,} digits; at most {MAX_INT_DIGITS:,} are read",
                start,
                "json_number",
            )
        return int(tok)

    def attach(value: Any, start: int) -> None:
        nonlocal root_done
        if not stack:
            parsed.data, parsed._root_offset = value, start
            root_done = not isinstance(value, (dict, list))
            return
        top = stack[-1]
        container = top[0]
        if isinstance(container, dict):
            key = top[3]
            if key in container:
                parsed.duplicates.append((top[1], top[4], key))
            container[key] = value
            offsets[id(container)][key] = start
            top[2] = "comma_or_end"
        else:
            container.append(value)
            offsets[id(container)].append(start)
            top[2] = "comma_or_end"

    def close() -> None:
        nonlocal root_done
        stack.pop()
        root_done = not stack

    def open_container(tok: str, start: int) -> None:
        if len(stack) >= max_nesting:
            raise JsonSyntaxError(
                f"nesting is deeper than {max_nesting} levels", start, "json_too_deep"
            )
        if stack:
            top = stack[-1]
            child_token = top[3] if isinstance(top[0], dict) else len(top[0])
            pointer = top[1] + "/" + escape_token(child_token)
        else:
            pointer = ""
        container: Any = {} if tok == "{" else []
        offsets[id(container)] = {} if tok == "{" else []
        attach(container, start)
        stack.append([container, pointer, "key_or_end" if tok == "{" else "value_or_end", None, 0])

    while True:
        group, tok, start = next_token()
        if root_done:
            if group == "eof":
                return parsed
            raise JsonSyntaxError("unexpected data after the end of the document", start)
        if group == "eof":
            if not stack:
                raise JsonSyntaxError("no JSON value (the file is empty or blank)", start, "empty")
            closer = "}" if isinstance(stack[-1][0], dict) else "]"
            raise JsonSyntaxError(
                f"unexpected end of file: missing {closer!r} (truncated JSON?)",
                start,
                "json_truncated",
            )
        if not stack:
            if tok in ("{", "["):
                open_container(tok, start)
            elif group in ("str", "num", "lit"):
                attach(scalar(group, tok, start), start)
            else:
                raise JsonSyntaxError(f"unexpected {tok!r} at the start of the document", start)
            continue
        top = stack[-1]
        state = top[2]
        is_obj = isinstance(top[0], dict)
        if state in ("key_or_end", "key"):
            if group == "str":
                key = string(tok, start, top[1], "key")
                top[3], top[4], top[2] = key, start, "colon"
            elif tok == "}" and state == "key_or_end":
                close()
            elif tok == "}":
                raise JsonSyntaxError("trailing comma before '}'", start, "json_trailing_comma")
            else:
                raise JsonSyntaxError(f'expected a "key" in double quotes, found {tok!r}', start)
        elif state == "colon":
            if tok != ":":
                raise JsonSyntaxError(f"expected ':' after key {top[3]!r}, found {tok!r}", start)
            top[2] = "value"
        elif state in ("value", "value_or_end"):
            if tok in ("{", "["):
                open_container(tok, start)
            elif group in ("str", "num", "lit"):
                attach(scalar(group, tok, start), start)
            elif tok == "]" and state == "value_or_end":
                close()
            elif tok == "]" and not is_obj:
                raise JsonSyntaxError("trailing comma before ']'", start, "json_trailing_comma")
            else:
                raise JsonSyntaxError(f"expected a value, found {tok!r}", start)
        else:  # comma_or_end
            closer = "}" if is_obj else "]"
            if tok == ",":
                top[2] = "key" if is_obj else "value"
            elif tok == closer:
                close()
            else:
                raise JsonSyntaxError(f"expected ',' or {closer!r}, found {tok!r}", start)
