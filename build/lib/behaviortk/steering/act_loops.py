"""The act phase on kernels: ``steering.act.act`` with each leaf dispatched by ``leaves.run``.

Same loop, same order: per group, per steering leaf in request order, the
rows that asked, the leaf's weighted force (its kernel, or its NumPy
implementation when it has none), recorded in ``sim.contributions`` (and, where
it gave a non-zero force or torque, in the decision's ``acted``) and added
to the running force with Buckland's AccumulateForce (a kernel, in place).
With debug geometry on (the viewer), the NumPy act runs instead: it is the one
that draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.sense.sensing import Sense
from behaviortk.steering import act as numpy_act
from behaviortk.steering.combiner_loops import accumulate_acted, accumulate_rows, request_rows
from behaviortk.steering.combiners import clamp_angular
from behaviortk.steering.context import LeafMemory
from behaviortk.steering.jobs import Job, run
from behaviortk.steering.requests import Requests
from behaviortk.tree.flat import Decision
from behaviortk.vec import Array


def act(sim: Any, sense: Sense, decisions: dict[str, Decision]) -> tuple[Array, Array]:
    """Forces ``(N, 2)`` and angular accelerations ``(N,)``, as ``steering.act.act``."""
    if sim.debug.enabled:
        return numpy_act.act(sim, sense, decisions)
    agents = sim.agents
    sim.debug.clear()
    if sense.blackboard_points is None:
        sense.blackboard_points = getattr(sim.engine, "blackboard_points", None)
    linear = np.zeros((agents.n, 2))
    angular = np.zeros(agents.n)
    turned = False
    contributions: dict[str, dict[int, tuple[np.ndarray, Array]]] = {}
    requests = Requests(sim.trees, decisions, agents.slices)
    for group, decision in decisions.items():
        tree = sim.trees[group]
        start = agents.slices[group].start
        mine: dict[int, tuple[np.ndarray, Array]] = {}
        acted = np.zeros_like(decision.emitted, dtype=bool)
        firsts, flat = request_rows(np.ascontiguousarray(decision.emitted, dtype=np.bool_))
        for emit_index, node_index in enumerate(tree.steering):
            local = flat[firsts[emit_index] : firsts[emit_index + 1]]
            if local.size == 0:
                continue
            node = tree.nodes[node_index]
            job = Job(
                model=node.model,
                group=group,
                rows=local + start,
                local=local,
                agents=agents,
                world=sim.world,
                sense=sense,
                dt=float(sim.dt),
                rand_slot=node.rand_slot,
                memory=sim.memory.setdefault((group, emit_index), LeafMemory()),
                debug=sim.debug,
                requests=requests,
            )
            out = run(job, float(node.model.weight))
            mine[emit_index] = (job.rows, out.linear)
            if out.angular is None:  # acted where the force is not zero, and AccumulateForce
                accumulate_acted(
                    linear, job.rows, out.linear, agents.max_force, acted, emit_index, start
                )
            else:
                force = out.linear  # np.any(force != 0.0, axis=1) without a short-axis reduce
                nonzero = (force[:, 0] != 0.0) | (force[:, 1] != 0.0)
                acted[local, emit_index] = nonzero | (out.angular != 0.0)
                accumulate_rows(linear, job.rows, out.linear, agents.max_force)
                angular[job.rows] += out.angular
                turned = True
        contributions[group] = mine
        decision.acted = acted
    sim.contributions = contributions
    if not turned:  # all zero: the clamp would change nothing
        return linear, angular
    return linear, clamp_angular(angular, agents.max_angular_accel)
