"""Turn pydantic errors into one human line each, with a JSON Pointer into the file.

pydantic's ``loc`` contains union member labels (a tag like ``'seek'`` or a
type like ``'float'``) between the real keys. They are dropped by walking the
location along the raw data: a part that is not a key/index of the current
value is a label.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from behaviortk.format.fields import BLACKBOARD_KEY_PATTERN, EVENT_NAME_PATTERN
from behaviortk.format.issues import pointer_of
from behaviortk.format.nodes import Subtree
from behaviortk.registry import Registries, choices, suggest


def _walk(data: Any, loc: tuple[str | int, ...], missing: bool) -> tuple[list[str | int], Any]:
    """The real path of ``loc`` inside ``data`` and the value found there."""
    path: list[str | int] = []
    node = data
    last = len(loc) - 1
    for i, part in enumerate(loc):
        is_key = isinstance(node, dict) and isinstance(part, str) and part in node
        is_index = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if is_key or is_index:
            path.append(part)
            node = node[part]
        elif missing and i == last:
            path.append(part)
            node = None
        # else: a union member label; skip it
    return path, node


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    return str(value)


def _keys_for(
    container: dict[str, Any], catalogue: dict[str, set[str]], bad: str, root: Any
) -> set[str]:
    """Known keys of the model the object most likely is (for "did you mean")."""
    if container is root and "<Definition>" in catalogue:
        return catalogue["<Definition>"]
    keys = set(container) - {bad}
    tag = container.get("type") or container.get("kind")
    if isinstance(tag, str) and tag in catalogue:
        return catalogue[tag]
    fitting = [fields for fields in catalogue.values() if keys <= fields]
    return set().union(*fitting) if fitting else set().union(*catalogue.values())


def _message(
    err: ErrorDetails, value: Any, parent: Any, catalogue: dict[str, set[str]], root: Any
) -> tuple[str, str]:
    kind = err["type"]
    ctx: dict[str, Any] = dict(err.get("ctx") or {})
    loc = err["loc"]
    if kind == "extra_forbidden":
        key = str(loc[-1])
        known = _keys_for(parent, catalogue, key, root) if isinstance(parent, dict) else set()
        return f"unknown key {key!r}{choices(key, known - {key})}", kind
    if kind == "missing" and isinstance(loc[-1], int):
        return f"array is too short: item {loc[-1]} is missing", "too_short"
    if kind == "missing":
        return f"missing required key {loc[-1]!r}", kind
    if kind in ("unknown_type", "unknown_kind", "missing_tag"):
        return str(err["msg"]), kind
    if kind == "union_tag_invalid":
        tag = ctx.get("tag", "")
        tags = [t.strip().strip("'") for t in str(ctx.get("expected_tags", "")).split(",")]
        what = "node type" if "type" in str(ctx.get("discriminator")) else "kind"
        if len(loc) >= 2 and loc[-2] == "blackboard":  # a declared key (the only such union)
            what = "blackboard type"
        return f"unknown {what} {tag!r}{choices(str(tag), tags)}", (
            "unknown_kind" if what == "kind" else "unknown_type"
        )
    if kind == "union_tag_not_found":
        key = str(ctx.get("discriminator", "")).strip("'")
        return f"missing key {key!r}: it says which kind of object this is", "missing_tag"
    got = f", got {_show(value)}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        op = {
            "greater_than": ">",
            "greater_than_equal": ">=",
            "less_than": "<",
            "less_than_equal": "<=",
        }
        limit = next(iter(ctx.values()), "?")
        return f"must be {op[kind]} {limit}{got}", kind
    if kind == "literal_error":
        expected = str(ctx.get("expected", ""))
        options = [o.strip().strip("'") for o in expected.replace(" or ", ",").split(",")]
        hint = suggest(value, options) if isinstance(value, str) else ""  # the options are listed
        return f"expected {expected}{got}{hint}", kind
    if kind in ("too_short", "too_long"):
        bound = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        word = "at least" if kind == "too_short" else "at most"
        return f"needs {word} {bound} item(s), got {ctx.get('actual_length', '?')}", kind
    if kind == "string_pattern_mismatch" and ctx.get("pattern") == BLACKBOARD_KEY_PATTERN:
        return (
            f"a blackboard key is 1 to 64 letters, digits or _, not starting with a digit{got}",
            "bad_blackboard_key",
        )
    if kind == "string_pattern_mismatch" and ctx.get("pattern") == EVENT_NAME_PATTERN:
        return (
            f"an event name is 1 to 64 letters, digits, _, . or -, starting with a letter or _{got}",
            "bad_event_name",
        )
    if kind == "string_pattern_mismatch" and not str(ctx.get("pattern", "")).startswith("^\\$"):
        return f"does not match the pattern {ctx.get('pattern')}{got}", kind
    if kind == "value_error":
        return str(err["msg"]).removeprefix("Value error, "), kind
    simple = {
        "float_type": "expected a number",
        "int_type": "expected a whole number",
        "bool_type": "expected true or false",
        "string_type": "expected a string",
        "list_type": "expected an array",
        "tuple_type": "expected an array [x, y]",
        "dict_type": "expected an object",
        "model_type": "expected an object",
        "model_attributes_type": "expected an object",
        "none_required": "expected null",
        "finite_number": "expected a finite number",
        "string_pattern_mismatch": "does not match the required form",
        "string_too_short": "must not be empty",
    }
    if kind == "string_pattern_mismatch" and str(ctx.get("pattern", "")).startswith("^\\$"):
        return f"expected a number or a '$param' reference{got}", "type_error"
    if kind in simple:
        return f"{simple[kind]}{got}", kind
    return f"{err['msg']}{got}", kind


def _prefer(errors: list[tuple[ErrorDetails, Any]]) -> list[tuple[ErrorDetails, Any]]:
    """Of several union-member errors at one place, keep those matching the value's JSON type."""
    if len(errors) < 2:
        return errors
    value = errors[0][1]
    stringy = [e for e in errors if e[0]["type"].startswith("string")]
    other = [e for e in errors if not e[0]["type"].startswith("string")]
    if isinstance(value, str):
        return (stringy or other)[:1]
    not_type = [
        e for e in other if not e[0]["type"].endswith("_type") and e[0]["type"] != "literal_error"
    ]
    return (not_type or other or stringy)[:1]


def pydantic_issues(
    exc: ValidationError,
    data: Any,
    catalogue: dict[str, set[str]],
    base: tuple[str | int, ...] = (),
) -> list[tuple[str, str, str]]:
    """(pointer, message, kind) for every error, one per place, in document order."""
    by_pointer: dict[str, list[tuple[ErrorDetails, Any]]] = {}
    parents: dict[str, Any] = {}
    for err in exc.errors(include_url=False):
        missing_item = err["type"] == "missing" and isinstance(err["loc"][-1], int)
        path, value = _walk(data, err["loc"], missing=err["type"] in ("missing", "extra_forbidden"))
        if missing_item:
            path = path[:-1]
        pointer = pointer_of([*base, *path])
        by_pointer.setdefault(pointer, []).append((err, value))
        parents[pointer] = _walk(data, tuple(path[:-1]), missing=False)[1] if path else None
    out: list[tuple[str, str, str]] = []
    for pointer, errors in by_pointer.items():
        for err, value in _prefer(errors):
            message, kind = _message(err, value, parents[pointer], catalogue, data)
            out.append((pointer, message, kind))
    return out


def key_catalogue(root: type[BaseModel], registries: Registries) -> dict[str, set[str]]:
    """Known keys of ``root``, every registered model and the models they hold."""
    models = [e.model for reg in registries.all().values() for e in reg]
    return field_catalogue([root, Subtree, *models])


def field_catalogue(models: Iterable[type[BaseModel]]) -> dict[str, set[str]]:
    """Known keys per model: keyed by its tag (``type``/``kind`` default) or its name."""
    catalogue: dict[str, set[str]] = {}
    seen: set[type[BaseModel]] = set()
    stack = list(models)
    while stack:
        model = stack.pop()
        if model in seen:
            continue
        seen.add(model)
        fields = model.model_fields
        keys = {f.alias or name for name, f in fields.items()}
        tag_field = fields.get("type") or fields.get("kind")
        tag = (
            tag_field.default
            if tag_field is not None and isinstance(tag_field.default, str)
            else None
        )
        catalogue[tag or f"<{model.__name__}>"] = keys
        for f in fields.values():
            stack.extend(_models_in(f.annotation))
    return catalogue


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    import typing

    found: list[type[BaseModel]] = []
    todo = [annotation]
    while todo:
        item = todo.pop()
        if isinstance(item, type) and issubclass(item, BaseModel):
            found.append(item)
            continue
        todo.extend(typing.get_args(item))
    return found
