"""Changing values in a definition's text without rewriting the rest of it.

The tuning panel saves what it changed back into the file a person wrote. Dumping
the parsed JSON again would reflow every line; instead each change replaces the
characters of one value (found by JSON Pointer through ``jsonparse``'s offsets),
or adds a missing key after the last member of its object, indented like its
siblings. Key order, spacing, number spelling and everything not changed stay
byte for byte. After the edits the text is parsed again and must equal the old
document with exactly these changes; otherwise ``EditError`` and nothing is
returned, so an edit can never lose data silently.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from behaviortk.format.jsonparse import JsonSyntaxError, parse

_SCALAR = re.compile(
    r'"(?:[^"\\]|\\.)*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null'
)


class EditError(ValueError):
    """A change that cannot be written into the text (the message says why)."""


def tokens(pointer: str) -> list[str]:
    if pointer in ("", "/"):
        return []
    if not pointer.startswith("/"):
        raise EditError(f"a JSON Pointer starts with '/', got {pointer!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def dump(value: Any) -> str:
    """JSON for a value; whole floats are written as integers (``80``, not ``80.0``)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise EditError(f"{value!r} is not a JSON number")
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(dump(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def value_end(text: str, start: int) -> int:
    """The offset just past the JSON value that starts at ``start``."""
    if text[start] in "{[":
        depth, i = 0, start
        while i < len(text):
            ch = text[i]
            if ch == '"':
                m = _SCALAR.match(text, i)
                if m is None:
                    raise EditError(f"unterminated string at offset {i}")
                i = m.end()
                continue
            if ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        raise EditError("unbalanced brackets")
    m = _SCALAR.match(text, start)
    if m is None:
        raise EditError(f"no JSON value at offset {start}")
    return m.end()


def _walk(data: Any, keys: list[str]) -> tuple[Any, int]:
    """The deepest existing container along ``keys`` and how many keys it took."""
    node = data
    for depth, key in enumerate(keys):
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return node, depth
    return node, len(keys)


def _pointer(keys: list[str]) -> str:
    return "".join("/" + k.replace("~", "~0").replace("/", "~1") for k in keys)


def _insert_member(text: str, start: int, key: str, value: Any) -> str:
    """Add ``"key": value`` as the last member of the object starting at ``start``."""
    end = value_end(text, start) - 1  # the closing brace
    inner = text[start + 1 : end]
    member = f"{json.dumps(key, ensure_ascii=False)}: {dump(value)}"
    if not inner.strip():
        return text[: start + 1] + member + text[end:]
    last = start + 1 + len(inner.rstrip())  # just past the last member's value
    first = start + 1 + (len(inner) - len(inner.lstrip()))
    if "\n" in text[start:first]:
        line_start = text.rfind("\n", 0, first) + 1
        indent = text[line_start:first]
        return text[:last] + ",\n" + indent + member + text[last:]
    return text[:last] + ", " + member + text[last:]


def _set_one(text: str, pointer: str, value: Any) -> str:
    parsed = parse(text)
    keys = tokens(pointer)
    node, depth = _walk(parsed.data, keys)
    if depth == len(keys):
        start = parsed.offset_of(pointer)
        return text[:start] + dump(value) + text[value_end(text, start) :]
    if not isinstance(node, dict):
        raise EditError(f"{_pointer(keys[:depth]) or '/'} is not an object: cannot add {pointer}")
    nested: Any = value
    for key in reversed(keys[depth + 1 :]):
        nested = {key: nested}
    start = parsed.offset_of(_pointer(keys[:depth]))
    return _insert_member(text, start, keys[depth], nested)


def _expected(data: Any, changes: dict[str, Any]) -> Any:
    out = copy.deepcopy(data)
    for pointer, value in changes.items():
        keys = tokens(pointer)
        node = out
        for key in keys[:-1]:
            node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
        plain = json.loads(dump(value))
        if isinstance(node, list):
            node[int(keys[-1])] = plain
        else:
            node[keys[-1]] = plain
    return out


def set_values(text: str, changes: dict[str, Any]) -> str:
    """``text`` with each ``{pointer: value}`` written in place (missing keys added).

    Raises ``EditError`` when the text is not strict JSON, a pointer runs through a
    value that is not an object, or the result is not the old document plus the
    changes (a self-check: the edit never loses or reorders anything else).
    """
    try:
        before = parse(text).data
        out = text
        for pointer, value in changes.items():
            out = _set_one(out, pointer, value)
        after = parse(out).data
    except JsonSyntaxError as exc:
        raise EditError(f"not strict JSON: {exc.message}") from None
    expected = _expected(before, changes)
    if json.dumps(after) != json.dumps(expected):  # equal values and the same key order
        raise EditError("the edited text does not hold exactly the changes; nothing written")
    return out
