"""Why each condition of ONE agent's tree holds or not (``leaves/why.py``), asked of a Simulation,
and the scores its `utility` nodes gave their options.

What a designer asks is why the status on screen is what it is, so :func:`why_shown`
answers for the tick just run: an agent asked about is watched (:class:`WhyWatch`), and
each tick measures its conditions on the very sense that tick's trees read, with the
hysteresis state and blackboard they started from, before they tick. Until a tick has
run since it was first asked (selected while paused, or just stepped back to),
:func:`explain_agent` measures the state as it stands between ticks, what the *next* tick
will find, and :func:`why_shown` marks it ``(next tick)``. ``tests/test_why.py`` checks
both verdicts against the statuses on both engines. Costs nothing until asked; the viewer
asks for the selected agent only.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Any

from behaviortk.engines.facts import guard_condition
from behaviortk.errors import SimulationError
from behaviortk.leaves.utility import UtilityOps
from behaviortk.leaves.why import At, Why, explain
from behaviortk.registry import CONDITION


def condition_of(node: Any) -> Any:
    """The condition a node checks: itself for a condition leaf, a guard's condition, or None."""
    return node.model if node.kind == CONDITION else guard_condition(node.model)


NEXT_TICK = " (next tick)"
"""Marks a why measured between ticks (what the next tick will find), not the one shown."""


class WhyWatch:
    """The agents asked about since the last tick, whose whys the next tick records as its
    trees see them (``Simulation.step`` calls :meth:`record` with the tick's sense)."""

    def __init__(self) -> None:
        self.asked: set[int] = set()
        self.tick = -1  # the tick recorded
        self.whys: dict[int, dict[int, Why | None]] = {}

    def record(self, sim: Any, sense: Any) -> None:
        """Measure the asked agents' conditions on ``sense``, before the trees tick."""
        asked, self.asked = self.asked, set()
        self.whys = {}
        for agent in sorted(asked):
            with contextlib.suppress(SimulationError):
                self.whys[agent] = explain_agent(sim, agent, sense)
        self.tick = sim.tick


def why_shown(sim: Any, agent: int) -> dict[int, Why | None]:
    """Why each condition of agent ``agent`` (an id) has the status the last tick gave it;
    until a tick has run since it was first asked, what the next tick will find (each text
    ending ``(next tick)``). The agent stays watched while it is asked about every tick."""
    watch: WhyWatch = sim.why_watch
    watch.asked.add(agent)
    found = watch.whys.get(agent)
    if found is not None and watch.tick == sim.tick - 1:
        return found
    ahead = explain_agent(sim, agent)
    return {k: None if w is None else replace(w, text=w.text + NEXT_TICK) for k, w in ahead.items()}


def explain_agent(sim: Any, agent: int, sense: Any = None) -> dict[int, Why | None]:
    """``{flat node index: Why}`` for every condition (and guard) of agent ``agent`` (an id),
    measured on ``sense`` (default: the state as it stands, what the next tick will find);
    None for a plugin's condition without an explainer."""
    row = sim.row_of(agent)
    engine = sim.engine
    g, local = engine.locate(row)
    sense = sim.sense() if sense is None else sense
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


def option_scores(sim: Any, agent: int) -> dict[int, float]:
    """``{flat node index: score}`` of every `utility` option of agent ``agent`` (an id): the
    score (inertia included) each child had on the agent's last tick of its utility node
    (``leaves/utility.UtilityOps.scores``), keyed by the child's node."""
    g, local = sim.engine.locate(sim.row_of(agent))
    out: dict[int, float] = {}
    for k, ops in sim.engine.node_ops(g).items():
        if isinstance(ops, UtilityOps):
            for i, child in enumerate(g.flat.nodes[k].children):
                out[child] = float(ops.scores[local, i])
    return out
