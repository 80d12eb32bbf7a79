"""Why each condition of ONE agent's tree holds or not (``leaves/why.py``), asked of a Simulation.

Measured on the state as it stands between ticks, with the node's hysteresis state
and the agent's blackboard: what the next tick's sense would find, so the verdict is
the result that tick gives the condition (``tests/test_why.py`` checks it on both
engines). Costs nothing until asked; the viewer asks for the selected agent only.
"""

from __future__ import annotations

from typing import Any

from behaviortk.engines.facts import guard_condition
from behaviortk.leaves.why import At, Why, explain
from behaviortk.registry import CONDITION


def condition_of(node: Any) -> Any:
    """The condition a node checks: itself for a condition leaf, a guard's condition, or None."""
    return node.model if node.kind == CONDITION else guard_condition(node.model)


def explain_agent(sim: Any, agent: int) -> dict[int, Why | None]:
    """``{flat node index: Why}`` for every condition (and guard) of agent ``agent`` (an id);
    None for a plugin's condition without an explainer."""
    row = sim.row_of(agent)
    engine = sim.engine
    g, local = engine.locate(row)
    sense = sim.sense()
    board = engine.blackboard_view(row)
    out: dict[int, Why | None] = {}
    for node in g.flat.nodes:
        model = condition_of(node)
        if model is None:
            continue
        width = int(getattr(model, "random_numbers", 0) or 0)
        rand = sense.rand[row, node.rand_slot : node.rand_slot + width] if width else None
        prev = g.prev.get(node.index)
        was = bool(prev[local]) if prev is not None else False
        at = At(sense, g.name, local, was, board, rand, float(sim.dt))
        out[node.index] = explain(model, at)
    return out
