"""Helpers for the steering tests: build a context for a few agents and run one leaf."""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.format.adapters import validate_node
from behaviortk.registry import Registries, default
from behaviortk.sense.sensing import Sense
from behaviortk.steering.act import make_context, weighted
from behaviortk.steering.context import Steering, steer
from behaviortk.steering.debug import DebugBuffer
from behaviortk.steering.requests import Requests
from behaviortk.world.state import Agents, World


def node(data: dict[str, Any], registries: Registries | None = None) -> Any:
    """Validate a leaf from its JSON form, as a definition file would."""
    return validate_node(data, registries or default())


def world(
    width: float = 1000.0, height: float = 1000.0, edges: str = "contain", **kw: Any
) -> World:
    return World(width=width, height=height, edges=edges, **kw)


def run(
    model: Any,
    agents: Agents,
    w: World | None = None,
    *,
    rows: Any = None,
    group: str = "agents",
    dt: float = 0.01,
    rand: Any = None,
    memory: dict[str, np.ndarray] | None = None,
    debug: DebugBuffer | None = None,
    with_weight: bool = False,
    registries: Registries | None = None,
    requests: Requests | None = None,
) -> Steering:
    """Evaluate ``model`` for ``rows`` (default: the whole group), reading random columns from 0.

    ``requests``: what every group asked for this tick (``follow`` reads it).
    """
    w = w or world()
    n = agents.n
    table = np.zeros((n, 8)) if rand is None else np.asarray(rand, dtype=np.float64).reshape(n, -1)
    sense = Sense(w, agents, rand=table, tick=0, time=0.0, registries=registries)
    sl = agents.slices[group]
    rows = np.arange(sl.start, sl.stop) if rows is None else np.asarray(rows)
    ctx = make_context(
        model,
        group=group,
        rows=rows,
        agents=agents,
        world=w,
        sense=sense,
        dt=dt,
        rand_slot=0,
        memory={} if memory is None else memory,
        debug=debug or DebugBuffer(),
        requests=requests,
    )
    return weighted(model, ctx) if with_weight else steer(model, ctx)


def point(x: float, y: float) -> dict[str, Any]:
    return {"kind": "point", "at": [x, y]}
