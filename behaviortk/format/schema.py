"""JSON Schema (Draft 2020-12) of the format, and validation against it (``--schema-only``).

The schema is generated from the models, so registering a node type (plugins
included) adds it here. Post-processing makes it friendlier to editors and
exact for validators: the node unions become named ``$defs`` (``Node``,
``Condition``) and discriminator keys (``type``, ``kind``) are required.

``jsonschema`` is imported only to validate (``_validator``): printing the
schema and the full loader do not need it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from behaviortk.format.errors import Issue, pointer_of
from behaviortk.format.jsonparse import Parsed
from behaviortk.format.nodes import condition_models, node_models
from behaviortk.registry import suggest, tag_of

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError as SchemaError

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "behaviortk.schema.json"


def json_schema() -> dict[str, Any]:
    """The schema of a whole definition file."""
    from behaviortk.format.adapters import definition_adapter

    body = definition_adapter().json_schema(by_alias=True, mode="validation")
    defs: dict[str, Any] = body.pop("$defs", {})
    unions = {
        frozenset(tag_of(m) for m in node_models()): "Node",
        frozenset(tag_of(m) for m in condition_models()): "Condition",
    }

    def factor(value: Any) -> Any:
        if isinstance(value, dict):
            disc = value.get("discriminator")
            if isinstance(disc, dict) and disc.get("propertyName") == "type" and "oneOf" in value:
                name = unions.get(frozenset(disc.get("mapping", {})))
                if name is not None:
                    defs.setdefault(name, _by_tag(disc["mapping"], name))
                    return {"$ref": f"#/$defs/{name}"}
            return {k: factor(v) for k, v in value.items()}
        if isinstance(value, list):
            return [factor(v) for v in value]
        return value

    body = factor(body)
    for def_name in list(defs):
        if def_name not in ("Node", "Condition"):
            defs[def_name] = factor(defs[def_name])
    for d in defs.values():
        props = d.get("properties", {})
        for key in ("type", "kind"):
            if "const" in props.get(key, {}) and key not in d.get("required", []):
                d["required"] = [key, *d.get("required", [])]
    return {"$schema": DRAFT, "$id": SCHEMA_ID, **body, "$defs": dict(sorted(defs.items()))}


def _by_tag(mapping: dict[str, str], name: str) -> dict[str, Any]:
    """A node union as ``if type == X then X's schema``: only the named variant is checked.

    (``oneOf`` would validate every variant, recursing into children each time,
    which is exponential in the depth of the tree.)
    """
    tags = sorted(mapping)
    return {
        "description": f"A {name.lower()}: an object whose `type` names one of the registered kinds.",
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"enum": tags}},
        "allOf": [
            {
                "if": {"properties": {"type": {"const": tag}}, "required": ["type"]},
                "then": {"$ref": mapping[tag]},
            }
            for tag in tags
        ],
    }


def schema_text() -> str:
    """The schema as committed in definitions/behaviortk.schema.json."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


_validators: dict[int, Draft202012Validator] = {}


def _validator() -> Draft202012Validator:
    """One validator per generation of the node unions (building the schema is not free)."""
    from jsonschema import Draft202012Validator

    from behaviortk.format import nodes
    from behaviortk.format.adapters import definition_adapter

    definition_adapter()  # imports the built-ins, so the generation below is current
    hit = _validators.get(nodes.generation)
    if hit is None:
        _validators.clear()
        hit = _validators[nodes.generation] = Draft202012Validator(json_schema())
    return hit


def schema_issues(parsed: Parsed, name: str) -> list[Issue]:
    """Validate parsed data with ``jsonschema`` only; issues formatted like the full loader's."""
    out: list[Issue] = []
    for err in sorted(
        _validator().iter_errors(parsed.data), key=lambda e: list(map(str, e.absolute_path))
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
                f"unknown key {key!r}{suggest(key, known)}",
                "extra_forbidden",
            )
    if err.validator == "enum" and path and path[-1] == "type" and isinstance(inst, str):
        tags = [str(t) for t in err.validator_value]
        return (
            pointer_of(path[:-1]),
            f"unknown node type {inst!r}{suggest(inst, tags)}",
            "unknown_type",
        )
    if err.validator == "required":
        return (
            pointer,
            err.message.replace("is a required property", "is missing").strip(),
            "missing",
        )
    if err.validator in ("oneOf", "anyOf") and isinstance(inst, dict):
        for key in ("type", "kind"):
            if key in inst:
                tags = _tags(err)
                what = "node type" if key == "type" else "kind"
                return (
                    pointer,
                    f"unknown {what} {inst[key]!r}{suggest(str(inst[key]), tags)}",
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
