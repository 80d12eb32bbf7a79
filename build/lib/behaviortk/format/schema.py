"""JSON Schema (Draft 2020-12) of the format, and validation against it (``--schema-only``).

The schema is generated from the registries, so registering a node type,
predictor or target kind (plugins included) adds it here. Each open slot is a
named ``$defs`` union (``Node``, ``Condition``, ``Primitive``, ``Predictor``,
``Target``) written as ``if type == X then X`` (linear time to check), and
discriminator keys (``type``, ``kind``) are required.

``jsonschema`` is imported only to validate (``_validator``): printing the
schema and the full loader do not need it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from behaviortk.format.definition import Definition
from behaviortk.format.issues import Issue, pointer_of
from behaviortk.format.jsonparse import Parsed
from behaviortk.format.nodes import SLOT_KEY, SLOTS, Subtree, slot_models
from behaviortk.registry import Registries, choices, default

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError as SchemaError

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "behaviortk.schema.json"


def json_schema(registries: Registries | None = None) -> dict[str, Any]:
    """The schema of a whole definition file, for the given registries (default: the default's)."""
    regs = default() if registries is None else registries
    models: list[type[BaseModel]] = [Definition, Subtree]
    for reg in regs.all().values():
        models.extend(m for m in reg.models() if m not in models)
    for slot in SLOTS:  # models a slot wraps (a metric's check model) appear only there
        models.extend(m for m in slot_models(slot, regs).values() if m not in models)
    refs, top = models_json_schema(
        [(m, "validation") for m in models], by_alias=True, ref_template="#/$defs/{model}"
    )
    defs: dict[str, Any] = top.get("$defs", {})
    root_name = refs[(Definition, "validation")]["$ref"].rsplit("/", 1)[1]
    body = defs.pop(root_name)
    for slot in SLOTS:
        mapping = {
            tag: refs[(model, "validation")]["$ref"]
            for tag, model in slot_models(slot, regs).items()
        }
        defs[slot.name] = _by_tag(mapping, slot.name, slot.key)

    def link(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                ("$ref" if k == SLOT_KEY else k): (f"#/$defs/{v}" if k == SLOT_KEY else link(v))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [link(v) for v in value]
        return value

    body = link(body)
    defs = {name: link(d) for name, d in defs.items()}
    for d in defs.values():
        props = d.get("properties", {})
        for key in ("type", "kind", "metric"):
            if "const" in props.get(key, {}) and key not in d.get("required", []):
                d["required"] = [key, *d.get("required", [])]
    return {"$schema": DRAFT, "$id": SCHEMA_ID, **body, "$defs": dict(sorted(defs.items()))}


def _by_tag(mapping: dict[str, str], name: str, key: str) -> dict[str, Any]:
    """A node union as ``if type == X then X's schema``: only the named variant is checked.

    (``oneOf`` would validate every variant, recursing into children each time,
    which is exponential in the depth of the tree.)
    """
    tags = sorted(mapping)
    return {
        "description": f"A {name.lower()}: an object whose `{key}` names one of the registered kinds.",
        "type": "object",
        "required": [key],
        "properties": {key: {"enum": tags}},
        "allOf": [
            {
                "if": {"properties": {key: {"const": tag}}, "required": [key]},
                "then": {"$ref": mapping[tag]},
            }
            for tag in tags
        ],
    }


def schema_text() -> str:
    """The schema as committed in definitions/behaviortk.schema.json."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


_validators: dict[tuple[int, int], Any] = {}


def _validator(regs: Registries) -> Any:
    """One validator per state of the registries (building the schema is not free)."""
    from jsonschema import Draft202012Validator

    key = (id(regs), regs.version)
    hit = _validators.get(key)
    if hit is None:
        hit = _validators[key] = Draft202012Validator(json_schema(regs))
    return hit


def schema_issues(parsed: Parsed, name: str, registries: Registries | None = None) -> list[Issue]:
    """Validate parsed data with ``jsonschema`` only; issues formatted like the full loader's."""
    regs = default() if registries is None else registries
    out: list[Issue] = []
    for err in sorted(
        _validator(regs).iter_errors(parsed.data), key=lambda e: list(map(str, e.absolute_path))
    ):
        for leaf in _leaves(err):
            pointer, message, kind = _describe(leaf)
            line, col = parsed.position(pointer)
            out.append(Issue(name, line, col, pointer, message, kind))
    return sorted(dict.fromkeys(out), key=lambda i: (i.line, i.col))


def _branch_errors(err: SchemaError) -> dict[int, list[SchemaError]]:
    branches: dict[int, list[SchemaError]] = {}
    for sub in err.context or []:
        branches.setdefault(int(sub.schema_path[0]), []).append(sub)
    return branches


def _leaves(err: SchemaError) -> list[SchemaError]:
    """Descend into oneOf/anyOf failures, keeping only the branch the value was meant for."""
    if err.validator not in ("oneOf", "anyOf") or not err.context:
        return [err]
    branches = _branch_errors(err)
    depth = len(err.absolute_path)

    def wrong_variant(errors: list[SchemaError]) -> bool:
        for e in errors:
            rel = list(e.absolute_path)[depth:]
            if not rel and e.validator == "type":
                return True
            if rel in (["type"], ["kind"]) and e.validator in ("const", "enum"):
                return True
        return False

    fitting = [errs for _, errs in sorted(branches.items()) if not wrong_variant(errs)]
    if len(fitting) >= 1:
        out: list[SchemaError] = []
        for e in fitting[0]:
            out.extend(_leaves(e))
        return out
    return [err]


def _describe(err: SchemaError) -> tuple[str, str, str]:
    path = list(err.absolute_path)
    pointer = pointer_of(path)
    inst = err.instance
    if err.validator == "additionalProperties":
        known = list(err.schema.get("properties", {}))
        extra = [k for k in inst if k not in known] if isinstance(inst, dict) else []
        if extra:
            key = extra[0]
            return (
                pointer_of([*path, key]),
                f"unknown key {key!r}{choices(key, known)}",
                "extra_forbidden",
            )
    if err.validator == "enum" and path and path[-1] == "type" and isinstance(inst, str):
        tags = [str(t) for t in err.validator_value]
        return (
            pointer_of(path[:-1]),
            f"unknown node type {inst!r}{choices(inst, tags)}",
            "unknown_type",
        )
    if err.validator == "required":
        return (
            pointer,
            err.message.replace("is a required property", "is missing").strip(),
            "missing",
        )
    if err.validator in ("oneOf", "anyOf") and isinstance(inst, dict):
        for key in ("type", "kind", "metric"):
            if key in inst:
                tags = _tags(err)
                what = "node type" if key == "type" else "kind"
                if len(path) >= 2 and path[-2] == "blackboard":  # a tree's declared key
                    what = "blackboard type"
                return (
                    pointer,
                    f"unknown {what} {inst[key]!r}{choices(str(inst[key]), tags)}",
                    ("unknown_type" if key == "type" else "unknown_kind"),
                )
        return pointer, f"missing key 'type' or 'kind': {err.message}", "missing_tag"
    return pointer, f"{err.message}", str(err.validator)


def _tags(err: SchemaError) -> list[str]:
    tags: list[str] = []
    for sub in err.context or []:
        if sub.validator == "const" and isinstance(sub.validator_value, str):
            tags.append(sub.validator_value)
    return tags
