"""What the tuning panel offers for a group, read from the JSON Schema, and its edits of the file.

Knobs come from the schema the file is validated against (``format/schema.py``):

- physics: every numeric property of ``Group`` (``max_speed``, ``max_force``,
  ``view_distance``, ``fov``, ...) with the schema's description, unit (the
  ``Unit:`` sentence of the description), bounds (``minimum``,
  ``exclusiveMinimum``, ``maximum``, ...) and default; ``count``, ``speed``
  and ``heading`` are left out: they only set the starting state, so changing
  them live would mean nothing until a restart;
- tree parameters: each parameter the group's tree declares, with its own
  description; its unit and bounds are those of the node fields it is written
  into (``"radius": "$scare"`` gives ``in_range.radius``'s ``>= 0`` and world
  units; through ``subtree`` parameters too; several uses: the tightest bounds).

``Tuner`` holds the file's text as loaded and as edited. ``propose`` writes one
value into the text (``format/textedit.set_values``: only that value's
characters change) and validates the whole definition; an invalid value is
refused with the loader's message, and nothing changes. ``save`` writes the
edited text back atomically, and refuses if the file changed on disk since it
was loaded (someone else's edit is never overwritten).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from behaviortk.format.textedit import EditError, set_values

START_ONLY = ("count", "speed", "heading")
"""Group fields that only set the starting state (not offered live)."""
_UNIT = re.compile(r"\s*Unit: (.*?)\.(?=\s|$)")
_DEFAULT = re.compile(r"\s*Default: .*?\.(?=\s|$)")
_MAX_DEPTH = 16  # subtree parameter chains followed


@dataclass(frozen=True)
class Knob:
    """One tunable value of a group, and where it lives in the file."""

    pointer: str  # JSON Pointer in the definition: /groups/0/max_speed, /groups/0/params/scare
    name: str
    kind: str  # "number" | "integer" | "bool" | "fixed" (shown, not editable here)
    source: str  # "physics" | "param"
    description: str
    unit: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False  # exclusive bound: the value must be above ``low``
    high_open: bool = False
    default: Any = None
    nullable: bool = False  # null has a meaning (max_turn_rate: unlimited)

    def check(self, value: Any) -> str | None:
        """Why ``value`` is outside the schema's bounds, or None."""
        if value is None:
            return None if self.nullable else f"{self.name} needs a value"
        if self.kind == "bool":
            return None if isinstance(value, bool) else f"{self.name} is true or false"
        v = float(value)
        if self.low is not None and (v < self.low or (self.low_open and v == self.low)):
            return f"{self.name} must be {'>' if self.low_open else '>='} {self.low:g}"
        if self.high is not None and (v > self.high or (self.high_open and v == self.high)):
            return f"{self.name} must be {'<' if self.high_open else '<='} {self.high:g}"
        return None


def split_description(text: str) -> tuple[str, str]:
    """``(description without the Unit/Default sentences, unit)``."""
    m = _UNIT.search(text or "")
    unit = m.group(1) if m else ""
    plain = _DEFAULT.sub("", _UNIT.sub("", text or "")).strip()
    return plain, unit


def _number_branch(prop: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """The numeric schema of a property (a branch of ``anyOf``), and whether null is allowed."""
    branches = prop.get("anyOf", [prop])
    number = next((b for b in branches if b.get("type") in ("number", "integer")), None)
    nullable = any(b.get("type") == "null" for b in branches)
    return number, nullable


def _bounds(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "minimum" in schema:
        out.update(low=float(schema["minimum"]), low_open=False)
    if "exclusiveMinimum" in schema:
        out.update(low=float(schema["exclusiveMinimum"]), low_open=True)
    if "maximum" in schema:
        out.update(high=float(schema["maximum"]), high_open=False)
    if "exclusiveMaximum" in schema:
        out.update(high=float(schema["exclusiveMaximum"]), high_open=True)
    return out


def physics_knobs(schema: dict[str, Any], index: int) -> list[Knob]:
    """The numeric ``Group`` properties, in the schema's order."""
    props = schema["$defs"]["Group"]["properties"]
    out = []
    for name, prop in props.items():
        if name in START_ONLY:
            continue
        number, nullable = _number_branch(prop)
        if number is None:
            continue
        text, unit = split_description(prop.get("description", ""))
        out.append(
            Knob(
                pointer=f"/groups/{index}/{name}",
                name=name,
                kind="integer" if number.get("type") == "integer" else "number",
                source="physics",
                description=text,
                unit=unit,
                default=prop.get("default"),
                nullable=nullable,
                **_bounds(number),
            )
        )
    return out


def _defs_by_tag(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Node types and target kinds -> their schema (``type`` or ``kind`` constant)."""
    out = {}
    for d in schema["$defs"].values():
        props = d.get("properties", {})
        for key in ("type", "kind"):
            const = props.get(key, {}).get("const")
            if isinstance(const, str) and const not in out:
                out[const] = d
    return out


def param_uses(
    data: dict[str, Any], tree: str, param: str, depth: int = 0
) -> list[tuple[str, str]]:
    """``(node type or target kind, field)`` of every place ``"$param"`` is written in tree
    ``tree``, following it into the subtrees it is passed to."""
    trees = data.get("trees", {})
    root = trees.get(tree, {}).get("root") if isinstance(trees.get(tree), dict) else None
    ref = f"${param}"
    found: list[tuple[str, str]] = []
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        tag = node.get("type", node.get("kind"))
        if tag == "subtree" and isinstance(node.get("params"), dict) and depth < _MAX_DEPTH:
            for inner, value in node["params"].items():
                if value == ref:
                    found += param_uses(data, str(node.get("tree")), inner, depth + 1)
        for key, value in node.items():
            if value == ref and isinstance(tag, str) and key != "params":
                found.append((tag, key))
            elif isinstance(value, dict | list):
                stack.append(value)
    return found


def param_knobs(schema: dict[str, Any], data: dict[str, Any], index: int) -> list[Knob]:
    """The parameters the group's tree declares, bounded and with units by where they are used."""
    group = data["groups"][index]
    tree = group.get("tree")
    declared = data.get("trees", {}).get(tree, {}).get("params", {}) if tree else {}
    defs = _defs_by_tag(schema)
    out = []
    for name, spec in declared.items():
        default = spec.get("default") if isinstance(spec, dict) else None
        value = group.get("params", {}).get(name, default)
        bounds: dict[str, Any] = {}
        unit = ""
        field_text = ""
        integer = False
        for tag, key in param_uses(data, str(tree), name):
            prop = defs.get(tag, {}).get("properties", {}).get(key)
            number, _ = _number_branch(prop or {})
            if number is None:
                continue
            integer = integer or number.get("type") == "integer"
            text, u = split_description(prop.get("description", "") if prop else "")
            unit = unit or u
            field_text = field_text or f"used as {tag}.{key}: {text}"
            b = _bounds(number)
            if "low" in b and ("low" not in bounds or b["low"] >= bounds["low"]):
                bounds.update(low=b["low"], low_open=b["low_open"])
            if "high" in b and ("high" not in bounds or b["high"] <= bounds["high"]):
                bounds.update(high=b["high"], high_open=b["high_open"])
        own = spec.get("description", "") if isinstance(spec, dict) else ""
        if isinstance(value, bool):
            kind = "bool"
        elif isinstance(value, int | float):
            kind = "integer" if integer else "number"
        else:
            kind = "fixed"
        out.append(
            Knob(
                pointer=f"/groups/{index}/params/{name}",
                name=name,
                kind=kind,
                source="param",
                description=own or field_text,
                unit=unit,
                default=default,
                **bounds,
            )
        )
    return out


@dataclass(frozen=True)
class Proposal:
    """The outcome of trying one value: the new text and scenario, or why it was refused."""

    knob: Knob
    value: Any
    text: str | None = None
    scenario: Any = None
    refused: str | None = None


class Tuner:
    """A definition file's text, as loaded and as edited by the tuning panel."""

    def __init__(self, path: str | Path, text: str, registries: Any = None) -> None:
        from behaviortk.format.schema import json_schema

        self.path = Path(path)
        self.loaded = text  # what the file held when the viewer loaded it
        self.text = text  # with the panel's accepted changes
        self.registries = registries
        self.schema = json_schema(registries)
        self._parsed: tuple[str, dict[str, Any]] | None = None
        self._knobs: dict[int, list[Knob]] = {}

    @property
    def data(self) -> dict[str, Any]:
        """The edited text parsed (once per text: the panel reads it every frame)."""
        from behaviortk.format.jsonparse import parse

        if self._parsed is None or self._parsed[0] is not self.text:
            data = parse(self.text).data
            self._parsed = (self.text, data if isinstance(data, dict) else {})
            self._knobs = {}
        return self._parsed[1]

    @property
    def dirty(self) -> bool:
        return self.text != self.loaded

    def groups(self) -> list[str]:
        return [str(g.get("name")) for g in self.data.get("groups", [])]

    def knobs(self, index: int) -> list[Knob]:
        data = self.data
        if not 0 <= index < len(data.get("groups", [])):
            return []
        if index not in self._knobs:
            # the scenario's own knobs (its tree parameters) first, then the physics fields
            knobs = []
            if data["groups"][index].get("tree"):
                knobs = param_knobs(self.schema, data, index)
            self._knobs[index] = knobs + physics_knobs(self.schema, index)
        return self._knobs[index]

    def value(self, knob: Knob) -> Any:
        node: Any = self.data
        for key in knob.pointer.split("/")[1:]:
            if isinstance(node, list):
                node = node[int(key)]
            elif isinstance(node, dict) and key in node:
                node = node[key]
            else:
                return knob.default
        return node

    def propose(self, knob: Knob, value: Any) -> Proposal:
        """Write ``value`` into the text and validate the whole definition (nothing kept yet)."""
        from behaviortk.format.issues import DefinitionError
        from behaviortk.format.loader import load_text

        if knob.kind == "fixed":
            return Proposal(knob, value, refused=f"{knob.name} is not a number: edit the file")
        if knob.kind == "integer" and value is not None:
            value = round(float(value))
        why = knob.check(value)
        if why is not None:
            return Proposal(knob, value, refused=why)
        try:
            text = set_values(self.text, {knob.pointer: value})
            scenario = load_text(text, str(self.path), path=self.path, registries=self.registries)
        except EditError as exc:
            return Proposal(knob, value, refused=str(exc))
        except DefinitionError as exc:
            first = exc.issues[0] if exc.issues else None
            message = f"{first.pointer}: {first.message}" if first else "invalid"
            return Proposal(knob, value, refused=message)
        return Proposal(knob, value, text=text, scenario=scenario)

    def accept(self, proposal: Proposal) -> None:
        if proposal.text is not None:
            self.text = proposal.text

    def _formatted(self, text: str) -> str:
        from behaviortk.format.layout import formatted

        return formatted(text, str(self.path), self.registries)

    def save(self) -> str:
        """Write the edited text back atomically; returns what happened, one line.

        Refuses (nothing written) when the file on disk is no longer what the viewer
        loaded: a newer edit is never overwritten.
        """
        from behaviortk.files import OutputError, atomic_output

        if not self.dirty:
            return f"{self.path.name}: nothing to save"
        try:
            on_disk = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            return f"not saved: cannot read {self.path.name}: {exc.strerror or exc}"
        if on_disk != self.loaded:
            return f"not saved: {self.path.name} changed on disk since it was loaded"
        text = self.text
        if self._formatted(self.loaded) == self.loaded:  # keep the layout `fmt` gives
            text = self._formatted(text)
        try:
            with atomic_output(self.path, "w", what="definition") as out:
                out.write(text)
        except OutputError as exc:
            return f"not saved: {exc}"
        self.text = self.loaded = text
        return f"saved {self.path.name}"
