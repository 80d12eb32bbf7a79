"""Checks pydantic cannot do, and the expansion of subtrees and parameters.

Runs on a definition that already passed model validation. Names are checked
against what the file declares, subtree references form an acyclic graph, each
group's tree is expanded (subtrees inlined, ``$param`` strings replaced) and
validated again, and size limits are enforced. Blackboard keys of the expanded
tree (fields marked ``BlackboardRef``) must be declared by a tree it is built
from, with values (fields marked ``BlackboardValue``) of the declared type.
Every finding is a ``(pointer, message, kind)`` so the loader can add line and
column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from behaviortk.format.adapters import validate_node
from behaviortk.format.blackboard_keys import NOUNS, KeySpec, fits, same_declaration, wrong_type
from behaviortk.format.definition import Definition
from behaviortk.format.fields import BlackboardRef, BlackboardValue, NameRef
from behaviortk.format.issues import pointer_of
from behaviortk.format.limits import MAX_AGENTS, MAX_DEPTH, MAX_EXPANDED_NODES
from behaviortk.format.messages import key_catalogue, pydantic_issues
from behaviortk.format.nodes import NodeModel
from behaviortk.registry import Registries, choices, suggest

PARAM = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)$")

Finding = tuple[str, str, str]


@dataclass
class Expansion:
    """Result of the semantic pass: findings, and each group's expanded, validated root."""

    findings: list[Finding] = field(default_factory=list)
    trees: dict[str, NodeModel] = field(default_factory=dict)
    blackboards: dict[str, dict[str, KeySpec]] = field(default_factory=dict)
    """Each group's blackboard keys: those declared by the trees its tree is built from."""


class _Stop(Exception):
    def __init__(self, finding: Finding) -> None:
        self.finding = finding


def _walk_raw(node: Any, base: str) -> list[tuple[str, Any]]:
    """(pointer, value) for every value under ``node``, iteratively."""
    out: list[tuple[str, Any]] = []
    stack = [(base, node)]
    while stack:
        pointer, value = stack.pop()
        out.append((pointer, value))
        if isinstance(value, dict):
            stack.extend((f"{pointer}/{pointer_of([k])[1:]}", v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{pointer}/{i}", v) for i, v in enumerate(value))
    return out


RESERVED_GROUP_NAMES = {
    "same": "neighbour filters use it to mean 'my own group'",
    "any": "neighbour filters use it to mean 'every group'",
    "neighbours": "a centroid target uses it to mean 'my visible neighbours'",
}
"""Words the format gives a meaning of their own, so no group may be called so (and why)."""


@dataclass
class Outline:
    """What the name checks read, taken from the parsed JSON defensively, so that they run
    (and report) even when model validation found mistakes elsewhere in the file."""

    groups: list[tuple[int, Any, int, Any, Any]]  # (index, name, count, tree, params)
    paths: list[Any]  # names
    zones: list[Any]  # names
    trees: dict[str, dict[str, bool]]  # tree -> parameter -> required
    roots: dict[str, Any]  # tree -> its root as written
    checks: list[Any] = field(default_factory=list)  # names

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Outline:
        def items(key: str) -> list[Any]:
            value = raw.get(key)
            return value if isinstance(value, list) else []

        def get(item: Any, key: str, default: Any = None) -> Any:
            return item.get(key, default) if isinstance(item, dict) else default

        groups = []
        for i, g in enumerate(items("groups")):
            count = get(g, "count", 0)
            count = count if isinstance(count, int) and not isinstance(count, bool) else 0
            groups.append((i, get(g, "name"), count, get(g, "tree"), get(g, "params", {})))
        trees, roots = {}, {}
        raw_trees = raw.get("trees")
        for name, tdef in (raw_trees if isinstance(raw_trees, dict) else {}).items():
            params = get(tdef, "params", {})
            params = params if isinstance(params, dict) else {}
            trees[name] = {k: get(v, "default") is None for k, v in params.items()}
            roots[name] = get(tdef, "root")
        names = {key: [get(x, "name") for x in items(key)] for key in ("paths", "zones", "checks")}
        return cls(groups, names["paths"], names["zones"], trees, roots, names["checks"])


def check_names(raw: dict[str, Any], *, max_agents: int = MAX_AGENTS) -> list[Finding]:
    """Names, totals, parameters and subtree references (cycles included), on the raw JSON."""
    o = Outline.of(raw)
    out: list[Finding] = []
    group_names = [g[1] for g in o.groups]
    named = (
        ("group", group_names, "groups"),
        ("path", o.paths, "paths"),
        ("zone", o.zones, "zones"),
        ("check", o.checks, "checks"),
    )
    for label, names, key in named:
        seen: set[str] = set()
        for i, name in enumerate(names):
            if not isinstance(name, str):
                continue
            if name in seen:
                out.append(
                    (f"/{key}/{i}/name", f"{label} name {name!r} is used twice", "duplicate_name")
                )
            if label == "group" and name in RESERVED_GROUP_NAMES:
                out.append(
                    (
                        f"/{key}/{i}/name",
                        f"group name {name!r} is reserved ({RESERVED_GROUP_NAMES[name]}); "
                        "rename the group",
                        "reserved_name",
                    )
                )
            seen.add(name)

    total = sum(g[2] for g in o.groups)
    if total > max_agents:
        out.append(
            (
                "/groups",
                f"{total:,} agents in total exceeds the limit of {max_agents:,} (raise it with --max-agents)",
                "too_many_agents",
            )
        )

    # declared parameters and subtree references, tree by tree
    trees = o.trees
    edges: dict[str, list[tuple[str, str]]] = {name: [] for name in trees}
    for tname, declared in trees.items():
        root_ptr = f"/trees/{pointer_of([tname])[1:]}/root"
        for pointer, value in _walk_raw(o.roots[tname], root_ptr):
            if isinstance(value, str) and (m := PARAM.match(value)) and m.group(1) not in declared:
                out.append(
                    (
                        pointer,
                        f"unknown parameter {value!r} in tree {tname!r}"
                        f"{choices(m.group(1), list(declared)) if declared else ''} "
                        "(declare it in the tree's params)",
                        "unknown_param",
                    )
                )
            if isinstance(value, dict) and value.get("type") == "subtree":
                target = value.get("tree")
                if not isinstance(target, str) or target not in trees:
                    out.append(
                        (
                            f"{pointer}/tree",
                            f"unknown tree {target!r}{choices(str(target), list(trees))}",
                            "unknown_tree",
                        )
                    )
                    continue
                edges[tname].append((target, pointer))
                out.extend(
                    _param_findings(
                        value.get("params", {}),
                        trees[target],
                        target,
                        f"{pointer}/params",
                        pointer,
                    )
                )

    out.extend(_cycles(edges))

    for i, _name, _count, tree, params in o.groups:
        if not isinstance(tree, str):
            continue
        if tree not in trees:
            out.append(
                (
                    f"/groups/{i}/tree",
                    f"unknown tree {tree!r}{choices(tree, list(trees))}",
                    "unknown_tree",
                )
            )
            continue
        out.extend(
            _param_findings(params, trees[tree], tree, f"/groups/{i}/params", f"/groups/{i}")
        )
    return out


def check(
    definition: Definition,
    raw: dict[str, Any],
    registries: Registries,
    *,
    max_agents: int = MAX_AGENTS,
    max_depth: int = MAX_DEPTH,
) -> Expansion:
    """The name checks, then (when they pass) each group's tree expanded and validated again."""
    result = Expansion()
    out = result.findings
    out.extend(check_names(raw, max_agents=max_agents))
    if out:
        return result

    known_keys = key_catalogue(NodeModel, registries)
    known = _Names(definition)
    for i, group in enumerate(definition.groups):
        if group.tree is None:  # external control: the game moves these agents
            continue
        origins: dict[int, str] = {}
        expander = _Expander(raw, definition, origins, max_depth)
        try:
            expanded = expander.expand_group(group.tree, group.params)
        except _Stop as stop:
            _where, message, kind = stop.finding
            out.append((f"/groups/{i}/tree", f"group {group.name!r}: {message}", kind))
            continue
        declared, clashes = _declared_keys(definition, expander.used)
        out.extend((p, f"group {group.name!r}: {m}", k) for p, m, k in clashes)
        try:
            node = validate_node(expanded, registries)
        except ValidationError as exc:
            for pointer, message, kind in pydantic_issues(exc, expanded, known_keys):
                out.append(
                    (_origin(expanded, pointer, origins), f"group {group.name!r}: {message}", kind)
                )
            continue
        for path, kind, value, also in _name_refs(node):
            problem = known.problem(kind, value, also)
            if problem:
                out.append(
                    (
                        _origin(expanded, pointer_of(path), origins),
                        f"group {group.name!r}: {problem}",
                        f"unknown_{kind}",
                    )
                )
        for path, message, kind in _blackboard_findings(node, expanded, declared):
            out.append(
                (
                    _origin(expanded, pointer_of(path), origins),
                    f"group {group.name!r}: {message}",
                    kind,
                )
            )
        for path, message, kind in _definition_findings(node, definition, group):
            out.append(
                (
                    _origin(expanded, pointer_of(path), origins),
                    f"group {group.name!r}: {message}",
                    kind,
                )
            )
        result.trees[group.name] = node
        result.blackboards[group.name] = declared
    out.extend(_group_findings(definition, known))
    out.extend(_check_findings(definition, result.trees, known))
    # one line per distinct finding (groups sharing a tree repeat the same mistake)
    result.findings = list(dict.fromkeys(out))
    return result


def _group_findings(definition: Definition, known: _Names) -> list[Finding]:
    """Names in groups' own fields (an LOD's focus group)."""
    out: list[Finding] = []
    for i, group in enumerate(definition.groups):
        for path, kind, value, also in _name_refs(group):
            problem = known.problem(kind, value, also)
            if problem:
                where = f"/groups/{i}{pointer_of(path)}"
                out.append((where, f"group {group.name!r}: {problem}", f"unknown_{kind}"))
    return out


def _check_findings(
    definition: Definition, trees: Mapping[str, BaseModel], known: _Names
) -> list[Finding]:
    """Names in checks: groups, zones and (``NameRef("node")``) node names of the group's tree."""
    out: list[Finding] = []
    for i, check in enumerate(definition.checks):
        refs = [(path, kind, value) for path, kind, value, _ in _name_refs(check) if kind != "node"]
        groups = getattr(check, "groups", None)
        if isinstance(groups, list | tuple):
            refs.extend((["groups", j], "group", g) for j, g in enumerate(groups))
        for path, kind, value in refs:
            problem = known.problem(kind, value)
            if problem:
                out.append((f"/checks/{i}{pointer_of(path)}", problem, f"unknown_{kind}"))
        group = getattr(check, "group", None)
        for path, kind, value, _also in _name_refs(check):
            tree = trees.get(group) if kind == "node" and isinstance(group, str) else None
            if tree is None:
                continue
            names = sorted({n for _p, n in _node_names(tree)})
            if value not in names:
                out.append(
                    (
                        f"/checks/{i}{pointer_of(path)}",
                        f"group {group!r} has no node named {value!r}{choices(value, names)}",
                        "unknown_node",
                    )
                )
    return out


def _node_names(root: BaseModel) -> list[tuple[Path, str]]:
    """(path, trace name) of every node of an expanded tree."""
    found: list[tuple[Path, str]] = []
    stack: list[tuple[Path, Any]] = [([], root)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, NodeModel):
            found.append((path, node.trace_name))
            for key in ("children", "child"):
                kids = getattr(node, key, None)
                if isinstance(kids, list):
                    stack.extend(([*path, key, j], k) for j, k in enumerate(kids))
                elif kids is not None:
                    stack.append(([*path, key], kids))
    return found


def _definition_findings(
    root: BaseModel, definition: Definition, group: Any
) -> list[tuple[Path, str, str]]:
    """What each node of an expanded tree finds wrong with it in this definition and group
    (``NodeModel.definition_findings``: world geometry, spawn areas), with the node's path."""
    out: list[tuple[Path, str, str]] = []
    stack: list[tuple[Path, Any]] = [([], root)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, NodeModel):
            for sub, message, kind in value.definition_findings(definition, group):
                out.append(([*path, *sub], message, kind))
        if isinstance(value, BaseModel):
            for fname, info in reversed(type(value).model_fields.items()):
                stack.append(([*path, info.alias or fname], getattr(value, fname)))
        elif isinstance(value, list | tuple):
            stack.extend(reversed([([*path, i], v) for i, v in enumerate(value)]))
    return out


def _param_findings(
    given: Any, declared: dict[str, bool], tree: str, params_ptr: str, owner_ptr: str
) -> list[Finding]:
    """Parameters passed that the tree does not declare, and required ones not passed."""
    out: list[Finding] = []
    given = given if isinstance(given, dict) else {}
    for key in given:
        if key not in declared:
            out.append(
                (
                    f"{params_ptr}/{pointer_of([key])[1:]}",
                    f"tree {tree!r} has no parameter {key!r}{choices(key, list(declared))}",
                    "unknown_param",
                )
            )
    for key, required in declared.items():
        if required and key not in given:
            out.append(
                (owner_ptr, f"missing parameter {key!r} required by tree {tree!r}", "missing_param")
            )
    return out


def _cycles(edges: dict[str, list[tuple[str, str]]]) -> list[Finding]:
    """One finding per back edge of an iterative DFS over the subtree graph."""
    out: list[Finding] = []
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    for start in edges:
        if start in state:
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        chain = [start]
        state[start] = 1
        while stack:
            node, i = stack[-1]
            if i < len(edges[node]):
                stack[-1] = (node, i + 1)
                target, pointer = edges[node][i]
                if state.get(target) == 1:
                    loop = [*chain[chain.index(target) :], target]
                    out.append((pointer, "subtree cycle: " + " -> ".join(loop), "subtree_cycle"))
                elif target not in state:
                    state[target] = 1
                    chain.append(target)
                    stack.append((target, 0))
            else:
                state[node] = 2
                chain.pop()
                stack.pop()
    return out


class _Expander:
    """Inline subtrees and substitute parameters, remembering where each node came from."""

    def __init__(
        self, raw: dict[str, Any], definition: Definition, origins: dict[int, str], max_depth: int
    ) -> None:
        self.raw, self.definition, self.origins, self.max_depth = (
            raw,
            definition,
            origins,
            max_depth,
        )
        self.count = 0
        self.used: list[str] = []  # the trees inlined so far, in order of first use

    def expand_group(self, tree: str, params: dict[str, Any]) -> Any:
        return self._tree(tree, dict(params), 0)

    def _tree(self, tree: str, given: dict[str, Any], depth: int) -> Any:
        if tree not in self.used:
            self.used.append(tree)
        env = {
            k: s.default
            for k, s in self.definition.trees[tree].params.items()
            if s.default is not None
        }
        env.update(given)
        root_ptr = f"/trees/{pointer_of([tree])[1:]}/root"
        return self._node(self.raw["trees"][tree]["root"], env, root_ptr, depth)

    def _node(self, value: Any, env: dict[str, Any], pointer: str, depth: int) -> Any:
        if isinstance(value, str):
            m = PARAM.match(value)
            if m and m.group(1) in env:
                v = env[m.group(1)]
                return list(v) if isinstance(v, tuple) else v
            return value
        if isinstance(value, list):
            return [self._node(v, env, f"{pointer}/{i}", depth) for i, v in enumerate(value)]
        if not isinstance(value, dict):
            return value
        is_node = "type" in value
        if is_node:
            depth += 1
            self.count += 1
            if depth > self.max_depth:
                raise _Stop(
                    (
                        "",
                        f"the tree is deeper than {self.max_depth} levels after expanding subtrees",
                        "too_deep",
                    )
                )
            if self.count > MAX_EXPANDED_NODES:
                raise _Stop(
                    (
                        "",
                        f"the expanded tree has more than {MAX_EXPANDED_NODES:,} nodes",
                        "too_large",
                    )
                )
            if value.get("type") == "subtree":
                params = self._node(value.get("params", {}), env, f"{pointer}/params", depth)
                return self._tree(str(value["tree"]), params, depth - 1)
        out = {
            k: self._node(v, env, f"{pointer}/{pointer_of([k])[1:]}", depth)
            for k, v in value.items()
        }
        self.origins[id(out)] = pointer
        return out


def _origin(expanded: Any, pointer: str, origins: dict[int, str]) -> str:
    """Map a pointer inside an expanded tree back to the file: nearest origin + the rest."""
    best, rest = origins.get(id(expanded), ""), []
    node = expanded
    tokens = pointer.split("/")[1:] if pointer else []
    for token in tokens:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            rest.append(token)
            continue
        rest.append(token)
        if id(node) in origins and isinstance(node, dict):
            best, rest = origins[id(node)], []
    return best + "".join("/" + t for t in rest)


Path = list[str | int]
MARKERS = (NameRef, BlackboardRef, BlackboardValue)


def _marked(root: BaseModel) -> list[tuple[Path, BaseModel, Any, Any]]:
    """(path, owning model, marker, value) of every field marked with one of ``MARKERS``
    in a model tree, in document order (marked fields are not walked into)."""
    found: list[tuple[Path, BaseModel, Any, Any]] = []
    stack: list[tuple[Path, Any]] = [([], root)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, BaseModel):
            later: list[tuple[Path, Any]] = []
            for fname, info in type(value).model_fields.items():
                child = getattr(value, fname)
                key = info.alias or fname
                marker = next((m for m in info.metadata if isinstance(m, MARKERS)), None)
                if marker is not None and (isinstance(child, str) or type(marker) is not NameRef):
                    found.append(([*path, key], value, marker, child))
                else:
                    later.append(([*path, key], child))
            stack.extend(reversed(later))
        elif isinstance(value, (list, tuple)):
            stack.extend(reversed([([*path, i], v) for i, v in enumerate(value)]))
        elif isinstance(value, dict):
            stack.extend(reversed([([*path, k], v) for k, v in value.items()]))
    return found


def _name_refs(root: BaseModel) -> list[tuple[Path, str, str, tuple[str, ...]]]:
    """(path, kind, value, words also accepted) of every string field marked with ``NameRef``
    in a model tree."""
    return [(p, m.kind, v, m.also) for p, _owner, m, v in _marked(root) if isinstance(m, NameRef)]


# ------------------------------------------------------------------ blackboards

ORDERING = frozenset({"<", "<=", ">", ">="})


def _declared_keys(
    definition: Definition, trees: list[str]
) -> tuple[dict[str, KeySpec], list[Finding]]:
    """The keys declared by ``trees`` (a group's tree and its subtrees), and a finding for
    every key two of them declare differently (at the later declaration)."""
    declared: dict[str, KeySpec] = {}
    first: dict[str, str] = {}
    clashes: list[Finding] = []
    for tree in trees:
        for key, spec in definition.trees[tree].blackboard.items():
            if key not in declared:
                declared[key], first[key] = spec, tree
            elif not same_declaration(declared[key], spec):
                clashes.append(
                    (
                        f"/trees/{pointer_of([tree, 'blackboard', key])[1:]}",
                        f"blackboard key {key!r} is declared as {_declaration(spec)} here but "
                        f"as {_declaration(declared[key])} in tree {first[key]!r}; the trees "
                        "inlined into one group must declare a key alike",
                        "blackboard_conflict",
                    )
                )
    return declared, clashes


def _declaration(spec: KeySpec) -> str:
    noun = NOUNS[spec.type]
    return noun if spec.default is None else f"{noun} with default {show_value(spec.default)}"


def show_value(value: Any) -> str:
    """A value as a file would write it: true, 3, 'on', [1, 2]."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(show_value(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def _at(data: Any, path: Path) -> Any:
    """The value at ``path`` in the expanded JSON (as written), or None."""
    for part in path:
        found = (isinstance(data, dict) and part in data) or (
            isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)
        )
        if not found:
            return None
        data = data[part]
    return data


def _undeclared(key: str, declared: Mapping[str, KeySpec]) -> str:
    if not declared:
        return (
            f"undeclared blackboard key {key!r}; the tree declares no blackboard keys "
            f'(add "blackboard": {{"{key}": {{"type": ...}}}} to the tree)'
        )
    return f"undeclared blackboard key {key!r}{choices(key, list(declared))}"


def _keys_of_type(type_: str, declared: Mapping[str, KeySpec]) -> str:
    """The fix for a key of the wrong type: the declared keys of ``type_``, or how to add one."""
    fitting = [key for key, spec in declared.items() if spec.type == type_]
    if fitting:
        return f"; {type_} keys: {', '.join(fitting)}"
    return f'; declare a key with "type": "{type_}" for it'


def _blackboard_findings(
    root: BaseModel, expanded: Any, declared: Mapping[str, KeySpec]
) -> list[tuple[Path, str, str]]:
    """Undeclared keys, keys of the wrong type for their use, and values of the wrong type."""
    out: list[tuple[Path, str, str]] = []
    for path, owner, marker, value in _marked(root):
        if isinstance(marker, BlackboardRef):
            spec = declared.get(value)
            if spec is None:
                out.append((path, _undeclared(value, declared), "undeclared_blackboard_key"))
            elif marker.type is not None and spec.type != marker.type:
                out.append(
                    (
                        path,
                        f"blackboard key {value!r} is {NOUNS[spec.type]}, but {marker.needs} "
                        f"needs {NOUNS.get(marker.type, marker.type)}"
                        + _keys_of_type(marker.type, declared),
                        "blackboard_type",
                    )
                )
        elif isinstance(marker, BlackboardValue):
            key = getattr(owner, marker.key, None)
            spec = declared.get(key) if isinstance(key, str) else None
            if spec is None or not isinstance(key, str):
                continue  # the key itself is reported
            op = getattr(owner, marker.op, None) if marker.op else None
            if op in ORDERING and spec.type != "number":
                out.append(
                    (
                        [*path[:-1], marker.op or "op"],
                        f"blackboard key {key!r} is {NOUNS[spec.type]}; {op!r} compares "
                        "numbers only (use == or !=)",
                        "blackboard_type",
                    )
                )
            elif not fits(spec.type, value):
                raw = _at(expanded, path)
                shown = show_value(value if raw is None else raw)
                out.append((path, wrong_type(key, spec.type, shown), "blackboard_type"))
    return out


class _Names:
    """What names the definition declares, answering without listing every agent id."""

    def __init__(self, definition: Definition) -> None:
        self.groups = {g.name: g for g in definition.groups}
        self.paths = [p.name for p in definition.paths]
        self.zones = [z.name for z in definition.zones]
        self.explicit = {n for g in definition.groups for n in (g.names or [])}

    def problem(self, kind: str, value: str, also: tuple[str, ...] = ()) -> str:
        if value in also:
            return ""
        if kind == "group" and value not in self.groups:
            return f"unknown group {value!r}{choices(value, [*also, *self.groups])}"
        if kind == "path" and value not in self.paths:
            return f"unknown path {value!r}{choices(value, self.paths)}"
        if kind == "zone" and value not in self.zones:
            return f"unknown zone {value!r}{choices(value, self.zones)}"
        if kind == "agent" and not self._is_agent(value):
            hint = suggest(value, sorted(self.explicit) + [f"{g}-0" for g in self.groups])
            return f"unknown agent {value!r}{hint}"
        return ""

    def _is_agent(self, value: str) -> bool:
        if value in self.explicit:
            return True
        group, _, index = value.rpartition("-")
        g = self.groups.get(group)
        return g is not None and index.isdigit() and len(g.names or []) <= int(index) < g.count
