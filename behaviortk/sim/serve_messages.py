"""What ``sim.serve`` tells a viewer besides the tick's state, as plain values msgpack carries.

``about`` (what a trace header holds), and the parts of a frame that are not a
``TickState``: the step's events, the selected agents' blackboards and facts
(``sim/agent_facts.py``), the breakpoint hit, and the viewers' breakpoints as ``breaks``
lists them. ``frame_extras`` assembles them for ``sim/serve.py``; nothing here touches a
socket.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

from behaviortk.errors import SimulationError
from behaviortk.sim.agent_facts import facts


def about(sim: Any) -> dict[str, Any]:
    """What a viewer needs before frames: the fields a trace header holds."""
    w = sim.world
    return {
        "op": "about",
        "scenario": sim.name,
        "seed": int(sim.seed),
        "dt": float(sim.dt),
        "engine": str(sim.engine.name),
        "world": {"width": float(w.width), "height": float(w.height), "edges": str(w.edges)},
        "trees": {g: [node.path for node in tree.nodes] for g, tree in sim.trees.items()},
        "definition": sim.scenario.raw,
    }


def frame_extras(sim: Any, selected: list[int], again: bool) -> dict[str, Any]:
    """A frame's keys beside its ``TickState`` (``again``: a tick already sent, no events);
    ``paused`` and ``dropped`` are the server's to add."""
    hit = sim.hit
    return {
        "events": [] if again else [event(e) for e in sim.events],
        "boards": {i: board(sim, i) for i in selected},
        "facts": {i: facts(sim, i) for i in selected},
        "hit": None if hit is None else hit_values(hit),
        "again": again,
    }


def event(e: Any) -> dict[str, Any]:
    """An ``Event`` (``sim/embed.py``) as a map of its fields that are set."""
    return {k: v for k, v in dataclasses.asdict(e).items() if v is not None}


def hit_values(hit: Any) -> dict[str, Any]:
    """A breakpoint hit: its line, its reason and where (the viewer selects the agent and
    shows the node)."""
    where = {"agent": hit.agent, "group": hit.group, "node": hit.node}
    return {"text": str(hit), "reason": hit.reason(), **where}


def point_values(point: Any) -> dict[str, Any]:
    """A viewer's breakpoint: its text, and for a node breakpoint the group, node path and
    status it waits for (the tree panel marks the node)."""
    out = {"text": repr(point), "kind": point.kind, "group": point.group}
    if point.kind == "node":
        out.update(node=point.target[0], status=point.target[1])
    return out


def board(sim: Any, agent: int) -> dict[str, Any]:
    """The agent's blackboard as plain values (an agent despawned since: empty)."""
    with contextlib.suppress(SimulationError):
        return {str(k): plain(v) for k, v in dict(sim.blackboard(agent)).items()}
    return {}


def plain(value: Any) -> Any:
    """A blackboard value msgpack can carry (vectors as lists; anything else as its text)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return str(value)
