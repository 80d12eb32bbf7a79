"""The one canonical layout of a definition file (``behaviortk fmt``).

Keys follow the schema: each object's keys in the order its model declares
them, except that ``$schema``, the key naming a node's ``type`` (or a target's
``kind``), ``name`` and a check's ``metric`` come first, in that order, which
is how people read a node; keys the
schema does not know (and the names of ``trees``, ``params``, ``blackboard``)
keep the file's order. Two-space indent, a final newline. A container goes on
one line when it fits in ``WIDTH`` columns and holds no object: short number
arrays (points, lists of points) and objects of plain values
(``{"kind": "positions", "points": [[60, 80]]}``). Numbers keep their spelling
(``1e3`` stays ``1e3``) and strings their characters, so formatting changes no
value: the text parses to the same document, key order apart.
"""

from __future__ import annotations

import json
from typing import Any

WIDTH = 100
"""Columns a one-line container may take, indent, key and a following comma included."""

FIRST_KEYS = ("$schema", "type", "kind", "name", "metric")
"""Keys written first, in this order, wherever the schema has them: the file's schema, the
tag naming a node or target, its name, a check's metric."""


class Number(str):
    """A JSON number as written, so formatting never changes its spelling."""


def parse(text: str) -> Any:
    """The document with numbers kept as written (the text must be strict JSON already)."""
    return json.loads(text, parse_float=Number, parse_int=Number)


def formatted(text: str, name: str, registries: Any = None) -> str:
    """``text`` in the canonical layout for the registries' schema (plugins' nodes too);
    ``DefinitionError`` with its location when it is not strict JSON."""
    from behaviortk.format.loader import parse_text
    from behaviortk.format.schema import json_schema

    parse_text(text, name)  # strict JSON, an object, no duplicate keys
    return canonical(text, json_schema(registries))


def canonical(text: str, schema: dict[str, Any]) -> str:
    """``text`` (strict JSON) in the canonical layout for ``schema`` (a definition's)."""
    defs: dict[str, Any] = schema.get("$defs", {})
    ordered = _order(parse(text), schema, defs)
    return _render(ordered, 0, 0) + "\n"


# ------------------------------------------------------------------ key order
def _resolve(schema: Any, value: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """The branch of ``schema`` that describes ``value``: references followed, the variant
    of a ``oneOf``/``anyOf`` chosen, the ``then`` of an ``if`` on the node's tag merged."""
    seen = 0
    while isinstance(schema, dict) and seen < 64:  # a guard against a reference cycle
        seen += 1
        if "$ref" in schema:
            schema = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
            continue
        branches = schema.get("oneOf") or schema.get("anyOf")
        if branches:
            schema = next((b for b in branches if _fits(_resolve(b, value, defs), value)), {})
            continue
        for rule in schema.get("allOf", []):
            if "if" in rule and _fits(rule["if"], value):
                then = _resolve(rule.get("then", {}), value, defs)
                return {**then, "properties": {**then.get("properties", {})}}
        return schema
    return {}


_JSON_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def _fits(schema: dict[str, Any], value: Any) -> bool:
    """Whether ``value`` has ``schema``'s JSON type and the constants of its tag keys."""
    kind = schema.get("type")
    if kind in ("number", "integer"):
        if not isinstance(value, Number):
            return False
    elif kind in _JSON_TYPES and (
        not isinstance(value, _JSON_TYPES[kind]) or (kind == "string" and isinstance(value, Number))
    ):
        return False
    if isinstance(value, dict):
        for key, prop in schema.get("properties", {}).items():
            if isinstance(prop, dict) and "const" in prop and value.get(key) != prop["const"]:
                return False
    return True


def _order(value: Any, schema: Any, defs: dict[str, Any]) -> Any:
    """``value`` with every object's keys in the canonical order."""
    here = _resolve(schema, value, defs)
    if isinstance(value, list):
        items = here.get("items", {})
        prefix = here.get("prefixItems", [])
        return [
            _order(item, prefix[i] if i < len(prefix) else items, defs)
            for i, item in enumerate(value)
        ]
    if not isinstance(value, dict):
        return value
    props: dict[str, Any] = here.get("properties", {})
    extra = here.get("additionalProperties", {})
    known = [k for k in FIRST_KEYS if k in props and k in value]
    known += [k for k in props if k in value and k not in known]
    rest = [k for k in value if k not in props]
    return {
        k: _order(
            value[k], props[k] if k in props else extra if isinstance(extra, dict) else {}, defs
        )
        for k in [*known, *rest]
    }


# ------------------------------------------------------------------ layout
def _scalar(value: Any) -> str:
    if isinstance(value, Number):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def _one_line(value: Any) -> str | None:
    """``value`` on one line, or None when it holds an object inside a container."""
    if isinstance(value, list):
        parts = [_one_line(v) for v in value]
        if any(p is None or isinstance(v, dict) for p, v in zip(parts, value, strict=True)):
            return None
        return "[" + ", ".join(p for p in parts if p is not None) + "]"
    if isinstance(value, dict):
        inner = []
        for key, item in value.items():
            if isinstance(item, dict):
                return None
            line = _one_line(item)
            if line is None:
                return None
            inner.append(f"{_scalar(key)}: {line}")
        return "{" + ", ".join(inner) + "}"
    return _scalar(value)


def _render(value: Any, depth: int, lead: int) -> str:
    """``value`` at ``depth`` levels of indent, ``lead`` columns already on its first line."""
    if not isinstance(value, (list, dict)) or not value:
        return _scalar(value) if not isinstance(value, (list, dict)) else json.dumps(value)
    line = _one_line(value)
    if line is not None and lead + len(line) < WIDTH:  # room for a comma after it
        return line
    pad = "  " * (depth + 1)
    if isinstance(value, list):
        rows = [pad + _render(v, depth + 1, len(pad)) for v in value]
        return "[\n" + ",\n".join(rows) + "\n" + "  " * depth + "]"
    rows = []
    for key, item in value.items():
        head = f"{pad}{_scalar(key)}: "
        rows.append(head + _render(item, depth + 1, len(head)))
    return "{\n" + ",\n".join(rows) + "\n" + "  " * depth + "}"
