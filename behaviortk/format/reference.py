"""The node reference for designers (``docs/nodes.md``), generated from the registries.

One section per registered tag (node types, predictors, target kinds), grouped
by category in registry order: the model's docstring as written, then a table
of its fields. Types, bounds, defaults and requiredness are read from the
model's JSON Schema (the same pydantic schema ``format.schema`` publishes), so
the reference says what validation enforces; units and descriptions come from
the field descriptions written with ``doc(...)``. Registering a plugin adds its
section like a built-in's.

``python -m behaviortk.format.reference > docs/nodes.md`` (``make reference``)
regenerates the committed copy; a test fails when it is stale. ``tag_docs``
gives the same content as data (``TagDoc``, ``FieldDoc``): ``behaviortk
explain`` prints it for a terminal.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema
from pydantic_core import PydanticUndefined, to_jsonable_python

from behaviortk.format.fields import PARAM_PATTERN, shown
from behaviortk.format.nodes import SLOT_KEY, Subtree
from behaviortk.registry import Registries, Registry, default

TITLES = {
    "composites": "Composites",
    "decorators": "Decorators",
    "primitives": "Steering primitives",
    "combiners": "Combiners",
    "conditions": "Conditions",
    "actions": "Actions",
    "predictors": "Predictors",
    "targets": "Target kinds",
    "metrics": "Metrics",
}
"""Section title of each registry (by ``Registries.all()`` name)."""

FILE_ONLY = "file_only"
"""The pseudo-registry of node types that only files hold: ``subtree`` is replaced by the
tree it names when loading, so no engine registers it, yet designers write and look it up."""
FILE_ONLY_TITLE = "Written in files"


@dataclass(frozen=True)
class _FileTag:
    """A file-only tag where the reference's sections list registry entries."""

    tag: str


SLOT_NOUNS = {
    "Node": ("a node", "nodes"),
    "Condition": ("a condition", "conditions"),
    "Primitive": ("a steering primitive", "steering primitives"),
    "Predictor": ("a predictor", "predictors"),
    "Target": ("a target", "targets"),
    "Check": ("a check", "checks"),
}
"""Plain words for each open slot (``format.nodes.SLOTS``): singular, plural."""

PARAM = "$param"
NO_VALUE = "—"

INTRO = """\
# Node reference

Every node type, predictor and target kind that a definition file may use,
with its fields: JSON key, type, unit, default, bounds and whether it is
required. Generated from the registries by `make reference`
(`python -m behaviortk.format.reference`); do not edit by hand. The same
models give `definitions/behaviortk.schema.json`, so editors show the same
units, defaults and ranges.

How to read the tables:

- A node is a JSON object whose `type` names it (`{"type": "seek", ...}`); a
  target is an object whose `kind` names it (`{"kind": "nearest", ...}`). That
  key is the section heading and is not repeated in the table.
- **number or $param**: inside a tree, the value may also be a parameter
  reference `"$name"`, replaced by the value the group or subtree reference
  passes (see the README, "Parameters").
- **Bounds** are checked when loading: `>= 0` means zero is allowed, `> 0`
  means it is not; `length >= 1` means at least one item (or character).
- **Default** is the value used when the key is left out (JSON notation:
  `null`, `true`, `[]`); a required field has none. `null` may also be
  written explicitly wherever the type says "or null".
- The text under each heading is the model's docstring: what the node does,
  its formula and where the formula comes from.
- A **metric** is used in a top-level check: one object with the metric's keys
  and the check's own, `name`, `over` (`min`, `max`, `mean`, `final`; default
  `final`), `from_tick` (default 0), `to_tick` (default: the last tick run),
  `op` (`>=`, `>`, `<=`, `<`, `==`) and `value`. `behaviortk check` runs it.
"""


@dataclass(frozen=True)
class FieldDoc:
    """One field of a model as the reference shows it (plain text; None = no value)."""

    key: str
    type: str
    unit: str | None
    default: str | None
    """The default in JSON notation (``null``, ``true``, ``[]``); None when there is none."""
    bounds: str | None
    required: bool
    description: str


@dataclass(frozen=True)
class TagDoc:
    """One registered tag: where it is registered, its docstring and its fields."""

    registry: str
    """The ``Registries.all()`` name: ``primitives``, ``targets``..."""
    title: str
    """The category title: ``Steering primitives``, ``Target kinds``..."""
    kind: str
    """The registry's kind: ``steering primitive``, ``target kind``..."""
    key: str
    """``type`` or ``kind``."""
    tag: str
    text: str
    """The model's docstring: what it does, its formula and its source."""
    fields: tuple[FieldDoc, ...]

    @property
    def usage(self) -> str:
        return f'{{"{self.key}": "{self.tag}", ...}}'


def tag_docs(tag: str | None = None, registries: Registries | None = None) -> list[TagDoc]:
    """Every registered tag's reference (or only ``tag``'s: one per registry that has it)."""
    regs = default() if registries is None else registries
    chosen = [
        (name, reg, entry)
        for name, reg in regs.all().items()
        for entry in reg
        if tag is None or entry.tag == tag
    ]
    schemas = _model_schemas(m for _, reg, _ in chosen for m in reg.models())
    return [*_registered(chosen, schemas), *_file_only(tag)]


def _file_only(tag: str | None) -> list[TagDoc]:
    """``subtree``'s reference: a node type only files hold (it is inlined when loading)."""
    if tag not in (None, "subtree"):
        return []
    schema = _model_schemas([Subtree])[Subtree]
    return [
        TagDoc(
            registry=FILE_ONLY,
            title=FILE_ONLY_TITLE,
            kind="node type",
            key="type",
            tag="subtree",
            text=_docstring(Subtree, schema),
            fields=tuple(_fields(Subtree, "type", schema)),
        )
    ]


def _registered(
    chosen: list[tuple[str, Registry, Any]], schemas: dict[type[BaseModel], dict[str, Any]]
) -> list[TagDoc]:
    return [
        TagDoc(
            registry=name,
            title=TITLES.get(name, _plural_title(reg)),
            kind=reg.kind,
            key=reg.key,
            tag=entry.tag,
            text=_docstring(entry.model, schemas[entry.model]),
            fields=tuple(_fields(entry.model, reg.key, schemas[entry.model])),
        )
        for name, reg, entry in chosen
    ]


def reference_markdown(registries: Registries | None = None) -> str:
    """The Markdown reference of every tag registered in ``registries`` (default: the default's)."""
    regs = default() if registries is None else registries
    sections: list[tuple[str, str, Any]] = [
        (name, TITLES.get(name, _plural_title(reg)), reg) for name, reg in regs.all().items()
    ]
    sections.append((FILE_ONLY, FILE_ONLY_TITLE, [_FileTag("subtree")]))
    docs = {(d.registry, d.tag): d for d in tag_docs(registries=regs)}
    anchors = _Anchors()
    anchors.take("Node reference")
    anchors.take("Contents")
    # Headings in document order, so duplicate slugs get GitHub's -1, -2 suffixes in that order.
    section_anchor: dict[str, str] = {}
    tag_anchor: dict[tuple[str, str], str] = {}
    for name, title, reg in sections:
        section_anchor[name] = anchors.take(title)
        for entry in reg:
            tag_anchor[(name, entry.tag)] = anchors.take(entry.tag)

    out = [INTRO, "## Contents\n"]
    for name, title, reg in sections:
        links = ", ".join(f"[{e.tag}](#{tag_anchor[(name, e.tag)]})" for e in reg)
        out.append(f"- [{title}](#{section_anchor[name]}): {links or 'none registered'}")
    out.append("")
    for name, title, reg in sections:
        out.append(f"## {title}\n")
        if not len(reg):
            out.append(f"No {reg.kind} is registered.\n")
        for entry in reg:
            out.append(section_markdown(docs[(name, entry.tag)]))
    return "\n".join(out).rstrip("\n") + "\n"


def _plural_title(reg: Registry) -> str:
    return reg.kind[:1].upper() + reg.kind[1:] + "s"


def _model_schemas(given: Iterable[type[BaseModel]]) -> dict[type[BaseModel], dict[str, Any]]:
    """Each model's JSON Schema (validation mode, by alias), with ``$defs`` to resolve."""
    models = list(dict.fromkeys(given))
    if not models:
        return {}
    refs, top = models_json_schema(
        [(m, "validation") for m in models], by_alias=True, ref_template="#/$defs/{model}"
    )
    defs: dict[str, Any] = top.get("$defs", {})
    out: dict[type[BaseModel], dict[str, Any]] = {}
    for model in models:
        name = refs[(model, "validation")]["$ref"].rsplit("/", 1)[1]
        out[model] = {**defs[name], "$defs": defs}
    return out


def section_markdown(doc: TagDoc) -> str:
    """One tag's section of docs/nodes.md: heading, usage, docstring, table of fields."""
    lines = [f"### {doc.tag}\n"]
    lines.append(f"*{doc.kind[:1].upper() + doc.kind[1:]}*: `{doc.usage}`\n")
    if doc.text:
        lines.append(doc.text + "\n")
    if not doc.fields:
        lines.append(f"No fields besides `{doc.key}`.\n")
        return "\n".join(lines)
    lines.append("| Key | Type | Unit | Default | Bounds | Required | Description |")
    lines.append("|---|---|---|---|---|---|---|")
    for row in map(_markdown_row, doc.fields):
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    lines.append("")
    return "\n".join(lines)


def _markdown_row(f: FieldDoc) -> list[str]:
    return [
        f"`{f.key}`",
        f.type,
        f.unit or NO_VALUE,
        NO_VALUE if f.default is None else f"`{f.default}`",
        f.bounds or NO_VALUE,
        "yes" if f.required else "no",
        f.description,
    ]


def _docstring(model: type[BaseModel], schema: dict[str, Any]) -> str:
    """The model's docstring, dedented, as written (pydantic copies it to the schema)."""
    described = schema.get("description")
    if isinstance(described, str) and described.strip():
        return inspect.cleandoc(described)
    own = model.__dict__.get("__doc__")
    return inspect.cleandoc(own) if isinstance(own, str) else ""


def _fields(model: type[BaseModel], key: str, schema: dict[str, Any]) -> list[FieldDoc]:
    defs: dict[str, Any] = schema.get("$defs", {})
    required = set(schema.get("required", []))
    fields = {(f.alias or name): f for name, f in model.model_fields.items()}
    rows: list[FieldDoc] = []
    for json_key, prop in schema.get("properties", {}).items():
        if json_key == key:
            continue
        description, unit = _split_description(prop.get("description", ""))
        is_required = json_key in required
        rows.append(
            FieldDoc(
                key=json_key,
                type=_type_text(prop, defs),
                unit=unit or None,
                default=None if is_required else _default_text(prop, fields.get(json_key)),
                bounds=_bounds_text(prop, defs) or None,
                required=is_required,
                description=description,
            )
        )
    return rows


_SUFFIX = re.compile(
    r"^(?P<text>.*?)(?:\s*\bUnit: (?P<unit>.+?)\.)?(?:\s*\bDefault: .+\.)?\s*$", re.S
)


def _split_description(description: str) -> tuple[str, str]:
    """(text, unit): ``doc(...)``'s trailing "Unit: ..." and "Default: ..." go to their columns."""
    match = _SUFFIX.match(description)
    if match is None:  # pragma: no cover - the pattern matches any string
        return description.strip(), ""
    return match["text"].strip(), (match["unit"] or "").strip()


def _default_text(prop: dict[str, Any], field: Any) -> str | None:
    """The default in JSON notation, or None when the field has no single default."""
    if "default" in prop:
        return _json(prop["default"])
    if field is None or field.is_required():
        return None
    try:
        value = field.get_default(call_default_factory=True)
    except TypeError:  # a factory that needs the validated data: no single default
        return None
    return None if value is PydanticUndefined else _json(to_jsonable_python(value))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --- Types in plain words -------------------------------------------------------------------


def _is_param(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "string" and schema.get("pattern") == PARAM_PATTERN


def _is_null(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "null"


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """Follow a local ``$ref`` (or a lone ``allOf`` wrapper); the name of the definition, if any."""
    seen: set[str] = set()
    name = None
    while True:
        if SLOT_KEY in schema:
            return schema, name
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "properties" not in schema:
            schema = {**{k: v for k, v in schema.items() if k != "allOf"}, **all_of[0]}
            continue
        ref = schema.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            return schema, name
        name = ref.rsplit("/", 1)[1]
        if name in SLOT_NOUNS:
            return {SLOT_KEY: name}, name
        if name in seen or name not in defs:
            return {"title": name, "type": "object"}, name
        seen.add(name)
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**defs[name], **rest}


def _alternatives(schema: dict[str, Any]) -> list[dict[str, Any]] | None:
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            return [b for b in branches if isinstance(b, dict)]
    types = schema.get("type")
    if isinstance(types, list):
        return [{**schema, "type": t} for t in types]
    return None


def _type_text(schema: dict[str, Any], defs: dict[str, Any], plural: bool = False) -> str:
    """A field's type in plain words: "number or $param", "list of nodes", "a target"..."""
    schema, name = _resolve(schema, defs)
    branches = _alternatives(schema)
    if branches is not None:
        kinds = [b for b in branches if not _is_param(b) and not _is_null(b)]
        several = len(kinds) + any(_is_param(b) or _is_null(b) for b in branches) > 1
        # "list of (number or $param)": in a plural position, alternatives stay singular.
        words = list(dict.fromkeys(_type_text(b, defs, plural and not several) for b in kinds))
        if any(_is_param(b) for b in branches):
            words.append(PARAM)
        if any(_is_null(b) for b in branches):
            words.append("null")
        text = _join_or(words) if words else "any value"
        return f"({text})" if plural and len(words) > 1 else text
    slot = schema.get(SLOT_KEY)
    if isinstance(slot, str):
        one, many = SLOT_NOUNS.get(slot, (f"a {slot.lower()}", f"{slot.lower()}s"))
        return many if plural else one
    if "const" in schema:
        return _literal(schema["const"])
    if isinstance(schema.get("enum"), list):
        return "one of " + " | ".join(_literal(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return _array_text(schema, defs, plural)
    if kind == "object" or "properties" in schema:
        title = schema.get("title") or name
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and "properties" not in schema:
            word = f"object (name → {_type_text(extra, defs)})"
        else:
            word = f"{title} object" if title else "object"
        return word + ("s" if plural else "")
    plain = {
        "number": ("number", "numbers"),
        "integer": ("whole number", "whole numbers"),
        "boolean": ("true/false", "true/false values"),
        "string": ("string", "strings"),
        "null": ("null", "nulls"),
    }
    if isinstance(kind, str) and kind in plain:
        return plain[kind][1 if plural else 0]
    return "any values" if plural else "any value"


def _array_text(schema: dict[str, Any], defs: dict[str, Any], plural: bool) -> str:
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and prefix and "items" not in schema:
        items = [_resolve(p, defs)[0] for p in prefix]
        if len(items) == 2 and all(i.get("type") == "number" for i in items):
            return "points [x, y]" if plural else "point [x, y]"
        words = [_type_text(i, defs) for i in items]
        if len(set(words)) == 1:
            count = {2: "pair", 3: "triple"}.get(len(words))
            many = _type_text(items[0], defs, plural=True)
            if count:
                return f"{count}s of {many}" if plural else f"{count} of {many}"
            return f"lists of {len(words)} {many}" if plural else f"list of {len(words)} {many}"
        text = "[" + ", ".join(words) + "]"
        return f"lists {text}" if plural else f"list {text}"
    each = schema.get("items")
    inner = _type_text(each, defs, plural=True) if isinstance(each, dict) else "any values"
    return f"lists of {inner}" if plural else f"list of {inner}"


def _literal(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else json.dumps(value)


def _join_or(words: list[str]) -> str:
    if len(words) <= 2:
        return " or ".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


# --- Bounds -----------------------------------------------------------------------------------

_BOUNDS = (
    ("minimum", ">="),
    ("exclusiveMinimum", ">"),
    ("maximum", "<="),
    ("exclusiveMaximum", "<"),
    ("multipleOf", "multiple of"),
)


def _bounds_text(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    """The constraints of a field from its JSON Schema: ">= 0", "> 0, <= 360", "length >= 1"."""
    parts = list(dict.fromkeys(_bounds(schema, defs)))
    return ", ".join(parts)


def _bounds(schema: dict[str, Any], defs: dict[str, Any]) -> list[str]:
    schema, _ = _resolve(schema, defs)
    if SLOT_KEY in schema or _is_param(schema):
        return []
    branches = _alternatives(schema)
    if branches is not None:
        per_branch = [b for b in (_bounds_text(b, defs) for b in branches) if b]
        return [" or ".join(dict.fromkeys(per_branch))] if per_branch else []
    out = [f"{op} {_number(schema[key])}" for key, op in _BOUNDS if key in schema]
    kind = schema.get("type")
    if kind == "string":
        out.extend(_length(schema, "minLength", "maxLength"))
        if isinstance(schema.get("pattern"), str):
            out.append(f"matches `{schema['pattern']}`")
    if kind == "array":
        prefix = schema.get("prefixItems")
        fixed = isinstance(prefix, list) and schema.get("minItems") == schema.get("maxItems")
        if not fixed:
            out.extend(_length(schema, "minItems", "maxItems"))
        items = schema.get("items")
        if isinstance(items, dict):
            each = _bounds_text(items, defs)
            if each:
                out.append(f"each {each}")
    return out


def _length(schema: dict[str, Any], low: str, high: str) -> list[str]:
    out = []
    if low in schema and schema[low] == schema.get(high):
        return [f"length {_number(schema[low])}"]
    if low in schema and schema[low] != 0:
        out.append(f"length >= {_number(schema[low])}")
    if high in schema:
        out.append(f"length <= {_number(schema[high])}")
    return out


def _number(value: Any) -> str:
    """A bound as written by hand: ``1e9``, ``1e-6``, ``360`` (whole numbers as they are)."""
    return shown(value) if isinstance(value, float) else json.dumps(value)


# --- Markdown details ---------------------------------------------------------------------------


def _cell(text: str) -> str:
    """Table-safe text: one line, pipes escaped (GFM splits cells on them, even in code)."""
    return " ".join(text.split()).replace("|", "\\|")


class _Anchors:
    """GitHub's heading anchors: lowercase, punctuation dropped, spaces to ``-``, ``-N`` for repeats."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def take(self, heading: str) -> str:
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = self.seen.get(slug, 0)
        self.seen[slug] = count + 1
        return slug if count == 0 else f"{slug}-{count}"


def main() -> None:
    """Print the reference of the default registries (``make reference`` writes docs/nodes.md)."""
    sys.stdout.write(reference_markdown())


if __name__ == "__main__":
    main()
