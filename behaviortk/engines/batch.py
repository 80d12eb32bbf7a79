"""The batch engine: every group's tree compiled once into masked NumPy over all its agents.

Same FlatTree, same facts, same meaning as the py_trees engine: the tree's
control flow is ``batch_core`` (py_trees' tick/stop rules, transcribed), its
leaves and sim-time decorators are ``batch_leaves``. Per tick a group costs a
fixed number of array operations per node, whatever its size, so tens of
thousands of agents decide in a few milliseconds. Requests and statuses equal
the py_trees engine's bit for bit (tests/test_equivalence.py proves it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import py_trees
from py_trees.common import Status

from behaviortk import registry
from behaviortk.conditions import evaluate_condition, is_blackboard_condition
from behaviortk.engines import batch_core as bc
from behaviortk.engines import batch_leaves as bl
from behaviortk.engines.pytrees import _as_point, build_behaviours
from behaviortk.engines.sim_time import ticks_for
from behaviortk.sense import Sense
from behaviortk.tree.flat import Decision, FlatNode, FlatTree
from behaviortk.tree.leaf_status import steering_status
from behaviortk.tree.status import FAILURE, SUCCESS

STATUSES = (Status.INVALID, Status.RUNNING, Status.SUCCESS, Status.FAILURE)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ONE_SHOT = {"on_completion": (SUCCESS, FAILURE), "on_successful_completion": (SUCCESS,)}


@dataclass
class GroupProgram:
    """One group's compiled tree, its per-agent state and this tick's facts."""

    name: str
    rows: slice  # global rows of the group
    flat: FlatTree
    state: bc.TreeState
    root: bc.Node
    facts: bl.GroupFacts
    board: bl.Blackboard
    sensed: list[FlatNode]  # sensed conditions and guards, evaluated for every agent every tick
    prev: dict[int, np.ndarray]  # last tick's result per sensed node (hysteresis)
    every: np.ndarray  # all local rows

    @property
    def n(self) -> int:
        return self.rows.stop - self.rows.start


class Compiler:
    """FlatTree -> ``batch_core`` nodes for one group."""

    def __init__(self, tree: FlatTree, n_agents: int, clock: bl.Clock, dt: float) -> None:
        self.tree, self.n, self.clock, self.dt = tree, n_agents, clock, dt
        self.state = bc.TreeState(len(tree), n_agents)
        self.facts = bl.GroupFacts(n_agents, len(tree), len(tree.steering))
        self.board = bl.Blackboard(n_agents)
        self.compares: list[bl.BlackboardCompareOps] = []

    def compile(self) -> bc.Node:
        built: list[bc.Node | None] = [None] * len(self.tree)
        for node in reversed(self.tree.nodes):  # children have larger indices: built first
            kids = [built[c] for c in node.children]
            assert all(k is not None for k in kids)
            built[node.index] = self.node(node, [k for k in kids if k is not None])
        for cmp in self.compares:  # every value a key can hold is known now
            cmp.finish()
        root = built[0]
        assert root is not None
        return root

    def node(self, node: FlatNode, kids: list[bc.Node]) -> bc.Node:
        if node.kind == registry.COMPOSITE:
            return self.composite(node, kids)
        if node.kind == registry.DECORATOR:
            return self.decorator(node, kids[0])
        return bc.Leaf(node.index, self.state, self.leaf(node))

    def composite(self, node: FlatNode, kids: list[bc.Node]) -> bc.Node:
        m, k, s = node.model, node.index, self.state
        if m.type == "sequence":
            return bc.SequenceNode(k, s, kids, bool(m.memory))
        if m.type == "selector":
            return bc.SelectorNode(k, s, kids, bool(m.memory))
        if m.type == "parallel":
            selected = list(getattr(m, "selected", []) or [])
            return bc.ParallelNode(k, s, kids, str(m.policy), bool(m.synchronise), selected)
        raise ValueError(f"the batch engine cannot compile composite {m.type!r}")

    def decorator(self, node: FlatNode, child: bc.Node) -> bc.Node:
        m, k, s = node.model, node.index, self.state
        tag = m.type
        if tag in bc.CONVERTERS:
            return bc.MapDecorator(k, s, child, bc.CONVERTERS[tag])
        if tag == "timeout":
            limit = ticks_for(float(m.duration), self.dt)
            return bl.TimeoutNode(k, s, child, limit, self.clock)
        if tag == "cooldown":
            limit = ticks_for(float(m.duration), self.dt)
            return bl.CooldownNode(k, s, child, limit, self.clock)
        if tag == "repeat":
            return bc.RepeatNode(k, s, child, int(m.num_success))
        if tag == "retry":
            return bc.RetryNode(k, s, child, int(m.num_failures))
        if tag == "one_shot":
            return bc.OneShotNode(k, s, child, _ONE_SHOT[m.policy])
        if tag == "eternal_guard":
            guard = m.condition
            if is_blackboard_condition(guard):
                cmp = self.blackboard_compare(guard)
                return bc.EternalGuardNode(k, s, child, cmp.passes)
            facts = self.facts
            return bc.EternalGuardNode(k, s, child, lambda rows: facts.cond[k][rows])
        raise ValueError(f"the batch engine cannot compile decorator {tag!r}")

    def blackboard_compare(self, model: Any) -> bl.BlackboardCompareOps:
        cmp = bl.BlackboardCompareOps(self.board, str(model.key), str(model.op), model.value)
        self.compares.append(cmp)
        return cmp

    def leaf(self, node: FlatNode) -> bc.LeafOps:
        m = node.model
        if node.kind == registry.STEERING:
            return bl.SteeringOps(self.facts, node.index, node.emit_index)
        if node.kind == registry.CONDITION:
            if is_blackboard_condition(m):
                return self.blackboard_compare(m)
            return bl.ConditionOps(self.facts, node.index)
        if m.type == "blackboard_set":
            from behaviortk.actions import stored_value

            return bl.BlackboardSetOps(self.board, str(m.key), stored_value(m))
        if m.type == "wait":
            return bl.WaitOps(self.n, ticks_for(float(m.duration), self.dt), self.clock)
        raise ValueError(f"the batch engine cannot compile action {m.type!r}")


def sensed_nodes(tree: FlatTree) -> list[FlatNode]:
    """Condition leaves and guards whose result comes from sense (not the blackboard)."""

    def from_sense(node: FlatNode) -> bool:
        if node.kind == registry.CONDITION:
            return not is_blackboard_condition(node.model)
        if node.model.type == "eternal_guard":
            return not is_blackboard_condition(node.model.condition)
        return False

    return [node for node in tree.nodes if from_sense(node)]


class BatchEngine:
    """Decide for whole groups at once with masked NumPy. See the module docstring."""

    name = "batch"

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.groups: dict[str, GroupProgram] = {}
        self._prepared: Sense | None = None
        self._skeletons: dict[str, list[py_trees.behaviour.Behaviour]] = {}
        dt = float(sim.dt)
        for group, rows in sim.agents.slices.items():
            tree = sim.trees[group]
            n = rows.stop - rows.start
            compiler = Compiler(tree, n, self._now, dt)
            root = compiler.compile()
            sensed = sensed_nodes(tree)
            self.groups[group] = GroupProgram(
                name=group,
                rows=rows,
                flat=tree,
                state=compiler.state,
                root=root,
                facts=compiler.facts,
                board=compiler.board,
                sensed=sensed,
                prev={node.index: np.zeros(n, dtype=bool) for node in sensed},
                every=np.arange(n, dtype=np.int64),
            )

    def _now(self) -> int:
        return int(self.sim.tick)

    # --------------------------------------------------------------- decide
    def _prepare(self, g: GroupProgram, sense: Sense) -> None:
        facts = g.facts
        memory = getattr(self.sim, "memory", {})
        for index in g.flat.steering:
            node = g.flat.nodes[index]
            mem = memory.get((g.name, node.emit_index))
            facts.leaf[index] = steering_status(node.model, sense, g.name, mem)
        for node in g.sensed:
            model = node.model.condition if node.model.type == "eternal_guard" else node.model
            result = evaluate_condition(model, sense, g.name, g.prev[node.index], node.rand_slot)
            g.prev[node.index] = result
            facts.cond[node.index] = result
        facts.emitted = np.zeros((g.n, len(g.flat.steering)), dtype=bool)

    def prepare(self, sim: Any, sense: Sense) -> None:
        """Compute this tick's group-wide facts (the simulation times this as *sense*)."""
        for g in self.groups.values():
            self._prepare(g, sense)
        self._prepared = sense

    def decide(self, sim: Any, sense: Sense) -> dict[str, Decision]:
        """Tick every group's compiled tree once for all its agents."""
        if self._prepared is not sense:
            self.prepare(sim, sense)
        self._prepared = None
        out: dict[str, Decision] = {}
        for g in self.groups.values():
            g.root.tick(g.every)
            out[g.name] = Decision(
                emitted=g.facts.emitted, status=np.ascontiguousarray(g.state.status.T)
            )
        return out

    # ----------------------------------------------------------- inspection
    def _locate(self, agent: int) -> tuple[GroupProgram, int]:
        for g in self.groups.values():
            if g.rows.start <= agent < g.rows.stop:
                return g, agent - g.rows.start
        raise IndexError(f"agent {agent} out of range (0..{self.sim.agents.n - 1})")

    def node_status(self, agent: int) -> np.ndarray:
        g, local = self._locate(agent)
        return g.state.status[:, local].copy()

    def snapshot(self, agent: int) -> str:
        """py_trees' unicode rendering of the agent's tree with statuses (no colour codes).

        A display-only py_trees tree of the group (built once) takes the agent's
        statuses and current children, then py_trees draws it.
        """
        g, local = self._locate(agent)
        nodes = self._skeletons.get(g.name)
        if nodes is None:
            nodes = self._skeletons[g.name] = build_behaviours(g.flat)
        for k, b in enumerate(nodes):
            b.status = STATUSES[int(g.state.status[k, local])]
            b.feedback_message = ""
            if isinstance(b, py_trees.composites.Composite):
                cur = int(g.state.current[k, local])
                b.current_child = b.children[cur] if cur >= 0 else None
        text = py_trees.display.unicode_tree(nodes[0], show_status=True)
        return _ANSI.sub("", text)

    def blackboard(self, agent: int) -> dict[str, Any]:
        """The agent's blackboard as ``{key: value}`` (unset keys left out)."""
        g, local = self._locate(agent)
        out: dict[str, Any] = {}
        for key in sorted(g.board.ids):
            value = g.board.get(key, local)
            if value is not None:
                out[key] = value
        return out

    def blackboard_points(self, group: str, key: str, rows: np.ndarray) -> np.ndarray:
        """``(n, 2)`` points stored under ``key`` for global ``rows``; NaN where unset or not a point."""
        g = self.groups[group]
        rows = np.asarray(rows, dtype=np.int64)
        ids = g.board.ids.get(key)
        if ids is None:
            return np.full((rows.size, 2), np.nan)
        table = np.full((len(g.board.values[key]) + 1, 2), np.nan)
        for i, value in enumerate(g.board.values[key]):
            point = _as_point(value)
            if point is not None:
                table[i + 1] = point
        return table[ids[rows - g.rows.start] + 1]
