"""The selected agent's side panel: tree with live statuses, blackboard, requests and forces.

Text only (the window draws it with one Text object): the tree is rendered
py_trees-style, one line per node of the compiled FlatTree, each with its
status symbol from the engine's ``node_status`` (py_trees' unicode symbols:
✓ success, ✕ failure, * running, - invalid).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.viewer.agent_notes import blackboard_lines

STATUS_SYMBOLS = ("-", "*", "✓", "✕")  # indexed by INVALID, RUNNING, SUCCESS, FAILURE


def node_symbol(node: Any) -> str:
    """py_trees' node-kind glyph: [o] selector, [-] sequence, {..} with memory, /_/ parallel."""
    tag = str(getattr(node.model, "type", ""))
    if node.kind == "composite":
        memory = bool(getattr(node.model, "memory", False))
        if "parallel" in tag:
            return "/_/"
        if "selector" in tag or "fallback" in tag or "priority" in tag:
            return "{o}" if memory else "[o]"
        return "{-}" if memory else "[-]"
    if node.kind == "decorator":
        return "-^-"
    return "-->"


def tree_lines(tree: Any, status: np.ndarray | None) -> list[str]:
    lines = []
    for node in tree.nodes:
        code = int(status[node.index]) if status is not None and node.index < len(status) else 0
        sym = STATUS_SYMBOLS[code] if 0 <= code < len(STATUS_SYMBOLS) else "?"
        lines.append(f"{'  ' * node.depth}{node_symbol(node)} {node.name} [{sym}]")
    return lines


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, np.ndarray | list | tuple):
        arr = np.asarray(value, dtype=float).ravel()
        return "(" + ", ".join(f"{v:.3g}" for v in arr[:4]) + ")"
    return str(value)


def request_lines(sim: Any, agent: int, group: str) -> list[str]:
    """Steering leaves that emitted this tick, in request order, with the weighted force each gave."""
    tree = sim.trees[group]
    dec = (getattr(sim, "decisions", None) or {}).get(group)
    if dec is None:
        return ["  (no tick yet)"]
    row = agent - sim.agents.slices[group].start
    contrib = (getattr(sim, "contributions", None) or {}).get(group, {})
    lines = []
    for k, node_index in enumerate(tree.steering):
        if not bool(dec.emitted[row, k]):
            continue
        text = f"  {k}. {tree.nodes[node_index].name}"
        found = contrib.get(k)
        if found is not None:
            rows, forces = found
            hit = np.flatnonzero(np.asarray(rows) == agent)
            if hit.size:
                f = np.asarray(forces)[hit[0]]
                size = float(np.hypot(f[0], f[1]))
                if size == 0.0:
                    text += "  (zero force: not counted as active)"
                else:
                    text += f"  F=({f[0]:.1f}, {f[1]:.1f}) |F|={size:.1f}"
        lines.append(text)
    return lines or ["  (none)"]


def panel_text(sim: Any, agent: int) -> str:
    """Everything the panel shows about ``agent``, as lines of text."""
    ag = sim.agents
    group = ag.group_names[int(ag.group[agent])]
    speed = float(np.hypot(*ag.vel[agent]))
    out = [
        f"{ag.names[agent]}  (group {group}, row {agent})",
        f"pos ({ag.pos[agent, 0]:.1f}, {ag.pos[agent, 1]:.1f})  speed {speed:.1f}",
        f"force ({ag.force[agent, 0]:.1f}, {ag.force[agent, 1]:.1f})",
        "",
        "Tree",
    ]
    engine = getattr(sim, "engine", None)
    tree = getattr(sim, "trees", {}).get(group)
    if tree is not None:
        status = None
        if engine is not None and getattr(sim, "tick", 0) > 0:
            status = np.asarray(engine.node_status(agent))
        out += tree_lines(tree, status)
        out += ["", "Requests (weighted force)", *request_lines(sim, agent, group)]
    else:
        out += ["  (none: the game moves this agent)"]
    out += ["", "Blackboard (value, type, age)"]
    board = blackboard_lines(sim, agent) if tree is not None else []
    if not hasattr(engine, "blackboard_view"):
        board = board or ["  (not recorded: traces hold no blackboards)"]
    out += board or ["  (no keys declared: a tree's `blackboard` declares them)"]
    return "\n".join(out)


def scenario_text(sim: Any) -> str:
    """The Info tab before an agent is chosen: the scenario's name and its `description`."""
    scenario = getattr(sim, "scenario", None)
    definition = getattr(scenario, "definition", None)
    name = str(getattr(definition, "name", "") or getattr(sim, "name", "") or "scenario")
    description = str(getattr(definition, "description", "") or "(no description)")
    return f"{name}\n\n{description}"
