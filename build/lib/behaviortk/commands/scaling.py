"""Grow (or shrink) a parsed definition to a number of agents at the same density.

``behaviortk bench --scale N`` and the scripts in ``benchmarks/`` measure a
scenario at crowd sizes it was not written for. ``scale_definition`` returns a
copy of the parsed JSON with ``N`` agents in all and the world's sides
multiplied by ``s = sqrt(N / old total)``, so agents per unit area stay as
shipped:

* every group in proportion (the default): group ``i`` of ``c_i`` agents gets
  ``c_i * N / old total``, rounded by largest remainder (Hamilton's method:
  each gets the whole part, the agents left over go one each to the largest
  fractional parts, the earlier group first on a tie), so the counts add up to
  exactly ``N``; then every group that had agents keeps at least one (a group
  rounded to 0 takes one from the largest group, the earlier on a tie);
* ``grow=GROUP``: only that group changes, to ``N`` minus the other groups.

What is a place in the world moves with it (multiplied by ``s``): spawn areas,
rings (centre and radius) and positions, obstacle centres, wall ends, path
points, zones (corners, centres and radii: they are regions, like spawn
areas), point and pointer targets, containment rectangles, blackboard points
(declared defaults, ``blackboard_set`` and ``blackboard_compare`` values) and tree parameters that
reach one of those (group ``params``, a parameter's ``default``, ``subtree``
arguments). Bodies, senses and behaviour lengths do not change: agent and
obstacle radii, view distances, offsets, steering and condition distances, and
checks (their metrics hold no positions). Fields of plugin nodes are not
scaled. A group spawned at explicit positions whose count changes spawns over
the area those positions spanned instead (the whole world if they span none).
"""

from __future__ import annotations

import copy
import difflib
import math
import re
from typing import Any

PARAM = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)$")


class ScaleError(ValueError):
    """A scaling that cannot be done (unknown group, too few agents); a usage error."""


# ------------------------------------------------------------------ counts


def apportion(counts: list[int], total: int) -> list[int]:
    """``counts`` scaled to add up to ``total``: largest remainder, non-empty groups keep 1.

    Exact integer arithmetic: group ``i``'s quota is ``counts[i] * total / sum(counts)``.
    """
    old = sum(counts)
    if old <= 0:
        raise ScaleError("the definition has no agents to scale")
    kept = sum(1 for c in counts if c > 0)
    if total < kept:
        raise ScaleError(
            f"--scale {total} is too few: {kept} groups have agents and each keeps at least 1"
        )
    whole = [c * total // old for c in counts]
    left = total - sum(whole)
    by_remainder = sorted(range(len(counts)), key=lambda i: (-(counts[i] * total % old), i))
    for i in by_remainder[:left]:
        whole[i] += 1
    for i, c in enumerate(counts):
        if c > 0 and whole[i] == 0:
            donor = max(range(len(whole)), key=lambda j: (whole[j], -j))
            whole[donor] -= 1
            whole[i] = 1
    return whole


def grown(counts: list[int], names: list[str], group: str, total: int) -> list[int]:
    """``counts`` with only ``group`` changed so that they add up to ``total``."""
    if group not in names:
        close = difflib.get_close_matches(group, names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ScaleError(f"no group {group!r} to grow{hint}; the groups are: {', '.join(names)}")
    i = names.index(group)
    others = sum(counts) - counts[i]
    if total <= others:
        raise ScaleError(
            f"--scale {total} leaves no agent for {group!r}: the other groups have "
            f"{others:,} agents, so --scale must be at least {others + 1:,}"
        )
    return [total - others if j == i else c for j, c in enumerate(counts)]


def largest_group(raw: dict[str, Any]) -> str:
    """Name of the group with the most agents (the first of those): the one benchmarks grow."""
    groups = raw.get("groups") or []
    if not groups:
        raise ScaleError("the definition has no groups to scale")
    return str(max(groups, key=lambda g: int(g.get("count", 0)))["name"])


# ------------------------------------------------------------------ positions


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_point(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(_is_number(v) for v in value)


def _scale_point(value: Any, s: float) -> Any:
    return [value[0] * s, value[1] * s] if _is_point(value) else value


def _dicts(node: Any) -> list[dict[str, Any]]:
    """Every JSON object inside ``node`` (itself included)."""
    out, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            out.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def _position_slots(item: dict[str, Any], positional: dict[str, set[str]]) -> list[tuple[Any, Any]]:
    """``(container, key)`` of each place in one tree object that holds a position.

    ``positional`` says which parameters of each tree are positions (for ``subtree``).
    """
    slots: list[tuple[Any, Any]] = []
    if item.get("kind") in ("point", "pointer") and "at" in item:
        slots.append((item, "at"))
    kind = item.get("type")
    if kind in ("blackboard_set", "blackboard_compare") and "value" in item:
        slots.append((item, "value"))
    if kind == "containment" and isinstance(item.get("rect"), list):
        slots.extend((item["rect"], i) for i in range(len(item["rect"])))
    if kind == "subtree" and isinstance(item.get("params"), dict):
        wanted = positional.get(str(item.get("tree")), set())
        slots.extend((item["params"], p) for p in item["params"] if p in wanted)
    return slots


def positional_params(trees: dict[str, Any]) -> dict[str, set[str]]:
    """For each tree, the parameters used as a position (``"at": "$mark"``), through subtrees too."""
    positional: dict[str, set[str]] = {name: set() for name in trees}
    changed = True
    while changed:  # a subtree's positional parameter makes its caller's argument one
        changed = False
        for name, tree in trees.items():
            if not isinstance(tree, dict):
                continue
            for item in _dicts(tree.get("root")):
                for container, key in _position_slots(item, positional):
                    value = container[key]
                    ref = PARAM.match(value) if isinstance(value, str) else None
                    if ref and ref.group(1) not in positional[name]:
                        positional[name].add(ref.group(1))
                        changed = True
    return positional


def _scale_trees(trees: Any, s: float) -> dict[str, set[str]]:
    if not isinstance(trees, dict):
        return {}
    positional = positional_params(trees)
    for name, tree in trees.items():
        if not isinstance(tree, dict):
            continue
        for item in _dicts(tree.get("root")):
            for container, key in _position_slots(item, positional):
                container[key] = _scale_point(container[key], s)
        for param, spec in (tree.get("params") or {}).items():
            if param in positional[name] and isinstance(spec, dict) and "default" in spec:
                spec["default"] = _scale_point(spec["default"], s)
        for spec in (tree.get("blackboard") or {}).values():
            if isinstance(spec, dict) and spec.get("type") == "point" and "default" in spec:
                spec["default"] = _scale_point(spec["default"], s)
    return positional


def _scale_spawn(group: dict[str, Any], s: float) -> None:
    spawn = group.get("spawn")
    if not isinstance(spawn, dict):
        return
    for key in ("min", "max", "center"):
        if key in spawn:
            spawn[key] = _scale_point(spawn[key], s)
    if spawn.get("kind") == "ring" and _is_number(spawn.get("radius")):
        spawn["radius"] = spawn["radius"] * s
    if isinstance(spawn.get("points"), list):
        spawn["points"] = [_scale_point(p, s) for p in spawn["points"]]


def _recount(group: dict[str, Any], count: int, world: dict[str, Any]) -> None:
    """Set a group's count; explicit positions of another number become their area."""
    group["count"] = count
    spawn = group.get("spawn")
    if isinstance(spawn, dict) and spawn.get("kind") == "positions":
        pts = [p for p in spawn.get("points", []) if _is_point(p)]
        if len(pts) != count:
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            if pts and max(xs) > min(xs) and max(ys) > min(ys):
                area = {"min": [min(xs), min(ys)], "max": [max(xs), max(ys)]}
            else:
                area = {"min": [0, 0], "max": [world["width"], world["height"]]}
            group["spawn"] = {"kind": "area", **area}
    if isinstance(group.get("names"), list):
        group["names"] = group["names"][:count]


def scale_definition(
    raw: dict[str, Any], agents: int, grow: str | None = None
) -> tuple[dict[str, Any], float]:
    """A copy of the parsed definition with ``agents`` agents in all, at the same density.

    Every group in proportion, or only the group named ``grow``. Returns ``(data, s)``,
    ``s`` the factor applied to the world's width and height and every position.
    Raises :class:`ScaleError` for an unknown group or too few agents.
    """
    data = copy.deepcopy(raw)
    groups = [g for g in data.get("groups") or [] if isinstance(g, dict)]
    if not groups:
        raise ScaleError("the definition has no groups to scale")
    counts = [int(g.get("count", 0)) for g in groups]
    if grow is None:
        new = apportion(counts, agents)
    else:
        new = grown(counts, [str(g.get("name")) for g in groups], grow, agents)
    old_total = sum(counts)
    if old_total <= 0:
        raise ScaleError("the definition has no agents to scale")
    s = math.sqrt(agents / old_total)
    world = data["world"]
    world["width"] = world["width"] * s
    world["height"] = world["height"] * s
    positional = _scale_trees(data.get("trees"), s)
    for group, count in zip(groups, new, strict=True):
        _scale_spawn(group, s)
        _recount(group, count, world)
        wanted = positional.get(str(group.get("tree")), set())
        params = group.get("params")
        if isinstance(params, dict):
            for param in wanted & set(params):
                params[param] = _scale_point(params[param], s)
    for obstacle in data.get("obstacles") or []:
        if isinstance(obstacle, dict) and "at" in obstacle:
            obstacle["at"] = _scale_point(obstacle["at"], s)
    for wall in data.get("walls") or []:
        if isinstance(wall, dict):
            for key in ("from", "to"):
                if key in wall:
                    wall[key] = _scale_point(wall[key], s)
    for path in data.get("paths") or []:
        if isinstance(path, dict) and isinstance(path.get("points"), list):
            path["points"] = [_scale_point(p, s) for p in path["points"]]
    for zone in data.get("zones") or []:
        if isinstance(zone, dict):
            for key in ("at", "min", "max"):
                if key in zone:
                    zone[key] = _scale_point(zone[key], s)
            if _is_number(zone.get("radius")):
                zone["radius"] = zone["radius"] * s
    return data, s
