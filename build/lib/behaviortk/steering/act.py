"""Act phase: turn this tick's steering requests into one force per agent.

The tick's requests of every group are gathered first (``requests.py``: a
leaf may depend on what other agents asked for). Then for each group and each
steering leaf in request order, the leaf is computed
once, vectorised over the rows that emitted it, weighted, and added to those
rows' running force with Buckland's AccumulateForce (running sum truncated at
max_force). Angular accelerations add and are clamped at max_angular_accel.
The loops run over groups and leaves, never over agents.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.sense.sensing import Sense
from behaviortk.steering.combiners import accumulate, clamp_angular
from behaviortk.steering.context import (
    LeafMemory,
    Steering,
    SteeringContext,
    facts_for,
    random_numbers,
    steer,
)
from behaviortk.steering.debug import DebugBuffer
from behaviortk.steering.requests import Requests
from behaviortk.tree.flat import Decision
from behaviortk.vec import Array
from behaviortk.world.state import Agents, World


def make_context(
    model: Any,
    *,
    group: str,
    rows: np.ndarray,
    agents: Agents,
    world: World,
    sense: Sense,
    dt: float,
    rand_slot: int,
    memory: dict[str, np.ndarray],
    debug: DebugBuffer,
    requests: Requests | None = None,
) -> SteeringContext:
    """The context of ``model`` for global ``rows`` of ``group`` (targets resolved through ``sense``).

    ``requests``: every group's requests this tick (``act`` passes them; without
    them a leaf such as ``follow`` takes it that no agent asked for anything).
    """
    rows = np.asarray(rows, dtype=np.int64)
    local = rows - agents.slices[group].start

    def resolve(spec: Any) -> Any:
        return facts_for(sense.target(spec, group), local)

    width = random_numbers(model)
    if rand_slot >= 0 and width:
        rand = np.asarray(sense.rand[rows, rand_slot : rand_slot + width], dtype=np.float64)
    else:
        rand = np.zeros((rows.shape[0], 0))
    spec = getattr(model, "target", None)
    return SteeringContext(
        rows=rows,
        group=group,
        agents=agents,
        world=world,
        sense=sense,
        dt=float(dt),
        target=None if spec is None else resolve(spec),
        rand=rand,
        memory=memory,
        debug=debug,
        resolve=resolve,
        requests=requests,
    )


def act(sim: Any, sense: Sense, decisions: dict[str, Decision]) -> tuple[Array, Array]:
    """Forces ``(N, 2)`` and angular accelerations ``(N,)`` for this tick's requests.

    Reads ``sim.trees``, ``sim.agents``, ``sim.world``, ``sim.memory``,
    ``sim.debug`` (cleared here), ``sim.dt`` and ``sim.engine.blackboard_points``
    (for blackboard targets, when ``sense`` has none); fills
    ``sim.contributions[group][emit_index] = (rows, weighted force)`` and each decision's
    ``acted`` (the requests that gave a non-zero force or torque).
    """
    agents: Agents = sim.agents
    debug: DebugBuffer = sim.debug
    debug.clear()
    if sense.blackboard_points is None:
        sense.blackboard_points = getattr(sim.engine, "blackboard_points", None)
    linear = np.zeros((agents.n, 2))
    angular = np.zeros(agents.n)
    contributions: dict[str, dict[int, tuple[np.ndarray, Array]]] = {}
    requests = Requests(sim.trees, decisions, agents.slices)
    for group, decision in decisions.items():
        tree = sim.trees[group]
        start = agents.slices[group].start
        mine: dict[int, tuple[np.ndarray, Array]] = {}
        acted = np.zeros_like(decision.emitted, dtype=bool)
        for emit_index, node_index in enumerate(tree.steering):
            local = np.flatnonzero(decision.emitted[:, emit_index])
            if local.size == 0:
                continue
            rows = start + local
            node = tree.nodes[node_index]
            ctx = make_context(
                node.model,
                group=group,
                rows=rows,
                agents=agents,
                world=sim.world,
                sense=sense,
                dt=sim.dt,
                rand_slot=node.rand_slot,
                memory=sim.memory.setdefault((group, emit_index), LeafMemory()),
                debug=debug,
                requests=requests,
            )
            out = weighted(node.model, ctx)
            mine[emit_index] = (rows, out.linear)
            nonzero = np.any(out.linear != 0.0, axis=1)
            if out.angular is not None:
                nonzero |= out.angular != 0.0
            acted[local, emit_index] = nonzero
            # the whole group asked: a slice avoids three fancy-index copies
            at: slice | np.ndarray = rows
            if local.size == decision.emitted.shape[0]:
                at = slice(start, start + local.size)
            linear[at] = accumulate(linear[at], out.linear, agents.max_force[at])
            if out.angular is not None:
                angular[at] += out.angular
        contributions[group] = mine
        decision.acted = acted
    sim.contributions = contributions
    return linear, clamp_angular(angular, agents.max_angular_accel)


def weighted(model: Any, ctx: SteeringContext) -> Steering:
    """A leaf's steering times its ``weight``."""
    out = steer(model, ctx)
    w = model.weight
    return Steering(out.linear * w, None if out.angular is None else out.angular * w)
