"""The batch engine: every group's tree compiled once into masked NumPy over all its agents.

Same FlatTree, same facts, same meaning as the py_trees engine: the tree's
control flow is ``batch/core.py`` (py_trees' tick/stop rules, transcribed), its
leaves and sim-time decorators are ``batch/leaf_nodes.py``, and actions, ticked
conditions and plugin decorators are the shared ops of ``tree/ops.py``. Per
tick a group costs a fixed number of array operations per node, whatever its
size, so tens of thousands of agents decide in a few milliseconds. Requests
and statuses equal the py_trees engine's bit for bit
(tests/test_equivalence.py proves it).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import py_trees
from py_trees.common import Status

from behaviortk.engines.base import EngineBase, GroupRuntime, RowChange, SavedGroup
from behaviortk.engines.batch import core as bc
from behaviortk.engines.batch import fused as batch_fused
from behaviortk.engines.batch import leaf_nodes as bl
from behaviortk.engines.batch import status_loops
from behaviortk.engines.batch.utility import UtilityNode
from behaviortk.engines.builders import Builders, always, decorator_ops, leaf_ops, sensed
from behaviortk.engines.facts import TickFacts, guard_condition, is_sensed
from behaviortk.engines.pytrees import display_tree
from behaviortk.registry import ACTION, CONDITION, DECORATOR, STEERING, Registries
from behaviortk.tree.clock import ticks_for
from behaviortk.tree.flat import Decision, FlatNode, FlatTree
from behaviortk.tree.ops import NodeContext, carry_rows
from behaviortk.tree.status import FAILURE, SUCCESS
from behaviortk.world.rows import carry, lengthened, move_local

_fuse_failed = False


def _fuse_failure(exc: Exception) -> None:
    """One warning line for the first tree that fails to compile; batch_core decides after."""
    global _fuse_failed
    _fuse_failed = True
    reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    print(
        f"behaviortk: warning: compiled decide unavailable, using NumPy ({reason})", file=sys.stderr
    )


STATUSES = (Status.INVALID, Status.RUNNING, Status.SUCCESS, Status.FAILURE)
_ONE_SHOT = {"on_completion": (SUCCESS, FAILURE), "on_successful_completion": (SUCCESS,)}


@dataclass
class Compiler:
    """What builders of one group need: its tree state, facts, context and shared ops."""

    registries: Registries
    state: bc.TreeState
    facts: bl.GroupFacts
    context: NodeContext
    ops: dict[int, Any] = field(default_factory=dict)

    def ops_for(self, index: int, model: Any) -> Any:
        if index not in self.ops:
            self.ops[index] = self.registries.node(model.type).impl(model, self.context)
        return self.ops[index]

    def limit(self, seconds: float) -> int:
        return ticks_for(seconds, self.context.clock.dt)


BUILDERS = Builders("batch")
"""The batch engine's builders; a plugin composite or decorator may add its own."""

Kids = list[bc.Node]


@BUILDERS.builds("sequence")
def _sequence(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    return bc.SequenceNode(node.index, c.state, kids, node.model.memory)


@BUILDERS.builds("selector")
def _selector(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    return bc.SelectorNode(node.index, c.state, kids, node.model.memory)


@BUILDERS.builds("utility")
def _utility(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    return UtilityNode(node.index, c.state, kids, c.ops_for(node.index, node.model))


@BUILDERS.builds("parallel")
def _parallel(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    m = node.model
    return bc.ParallelNode(node.index, c.state, kids, m.policy, m.synchronise, m.selected)


@BUILDERS.builds(*(tag for tag in bc.CONVERTERS if tag != "passthrough"))
def _converter(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    return bc.MapDecorator(node.index, c.state, kids[0], bc.CONVERTERS[node.model.type])


@BUILDERS.builds("timeout")
def _timeout(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    limit = c.limit(node.model.duration)
    return bl.TimeoutNode(node.index, c.state, kids[0], limit, c.context.clock)


@BUILDERS.builds("cooldown")
def _cooldown(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    limit = c.limit(node.model.duration)
    return bl.CooldownNode(node.index, c.state, kids[0], limit, c.context.clock)


@BUILDERS.builds("repeat")
def _repeat(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    return bc.RepeatNode(node.index, c.state, kids[0], node.model.num_success)


@BUILDERS.builds("retry")
def _retry(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    return bc.RetryNode(node.index, c.state, kids[0], node.model.num_failures)


@BUILDERS.builds("one_shot")
def _one_shot(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    return bc.OneShotNode(node.index, c.state, kids[0], _ONE_SHOT[node.model.policy])


@BUILDERS.builds("eternal_guard")
def _eternal_guard(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    guard, k = guard_condition(node.model), node.index
    if is_sensed(guard, c.registries):
        facts = c.facts
        return bc.EternalGuardNode(k, c.state, kids[0], lambda rows: facts.cond[k][rows], k)
    ops = c.ops_for(k, guard)
    return bc.EternalGuardNode(k, c.state, kids[0], lambda rows: ops.update(rows) == SUCCESS)


@BUILDERS.builds_kind(STEERING, always)
def _steering(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    return bc.Leaf(node.index, c.state, bl.SteeringOps(c.facts, node.index, node.emit_index))


@BUILDERS.builds_kind(CONDITION, sensed)
def _condition(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    return bc.Leaf(node.index, c.state, bl.ConditionOps(c.facts, node.index))


@BUILDERS.builds_kind(CONDITION, leaf_ops)
@BUILDERS.builds_kind(ACTION, leaf_ops)
def _ops_leaf(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    return bc.Leaf(node.index, c.state, c.ops_for(node.index, node.model))


@BUILDERS.builds_kind(DECORATOR, decorator_ops)
def _ops_decorator(node: FlatNode, kids: Kids, c: Compiler) -> bc.Node:
    return bl.OpsDecoratorNode(node.index, c.state, kids[0], c.ops_for(node.index, node.model))


def compile_tree(tree: FlatTree, c: Compiler, builders: Builders) -> bc.Node:
    """FlatTree -> ``batch/core.py`` nodes for one group; returns the root."""
    built: list[bc.Node | None] = [None] * len(tree)
    for node in reversed(tree.nodes):  # children have larger indices: built first
        kids = [built[i] for i in node.children]
        builder = builders.find(node, c.registries)
        assert builder is not None, "EngineBase refuses unbuildable trees before building"
        built[node.index] = builder(node, [k for k in kids if k is not None], c)
    root = built[0]
    assert root is not None
    return root


@dataclass
class GroupProgram(GroupRuntime):
    """One group's compiled tree, its per-agent state and this tick's facts."""

    state: bc.TreeState = field(default_factory=lambda: bc.TreeState(0, 0))
    root: bc.Node | None = None
    facts: bl.GroupFacts = field(default_factory=lambda: bl.GroupFacts(0, 0, 0))
    every: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    ops: dict[int, Any] = field(default_factory=dict)  # shared ops by node index
    fused: Any = None  # the tree as one compiled function (batch_fused), or None: batch_core
    fused_tree: batch_fused.FusedTree | None = None
    holders: list[tuple[Any, tuple[str, ...]]] | None = None  # per-agent arrays (_holders)
    in_place: bool = True  # rows move in place on spawn / despawn (set by _holders)
    held_status: np.ndarray | None = None
    """Think-rate LOD: the last ``Decision.status`` (the rows that do not think keep theirs),
    while the rows and the tree state are those it was made from."""


def _nodes(g: GroupProgram) -> list[bc.Node]:
    """The group's compiled nodes, depth first."""
    nodes: list[bc.Node] = []
    stack: list[Any] = [g.root]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(reversed(node.children))
    return nodes


def _holders(g: GroupProgram) -> list[tuple[Any, tuple[str, ...]]]:
    """The group's nodes (depth first) and ops that name ``per_agent`` arrays, with those
    names; worked out once per group (its tree does not change)."""
    if g.holders is None:
        found = [*_nodes(g), *(g.ops[k] for k in sorted(g.ops))]
        # behaviortk's own nodes and ops keep all per-agent state in ``per_agent`` arrays, so
        # rows move in place; a plugin's may size other arrays by the group
        # (``NodeContext.n_agents``): its group is rebuilt instead
        g.in_place = all(type(obj).__module__.startswith("behaviortk.") for obj in found)
        g.holders = [(obj, type(obj).per_agent) for obj in found if type(obj).per_agent]
    return g.holders


class BatchEngine(EngineBase[GroupProgram]):
    """Decide for whole groups at once with masked NumPy. See the module docstring."""

    name = "batch"
    default_builders = BUILDERS

    def __init__(self, sim: Any, builders: Builders | None = None) -> None:
        self._fuse = False  # before the groups are built
        self._templates: dict[str, GroupProgram] = {}  # one-agent builds (_fresh_rows)
        super().__init__(sim, builders)
        self._skeletons: dict[str, list[py_trees.behaviour.Behaviour]] = {}

    def compile_trees(self) -> float:
        """Tick every group whose tree ``batch_fused`` transcribes as one compiled function
        from now on (the Simulation calls this when it runs on compiled kernels); returns
        the seconds spent compiling them or loading them from the disk cache."""
        start = time.perf_counter()
        self._fuse = True
        for g in self.groups.values():
            self._attach(g)
        return time.perf_counter() - start

    def _attach(self, g: GroupProgram) -> None:
        assert g.root is not None
        tree = batch_fused.source(g.root)
        if tree is None or _fuse_failed:
            return
        try:
            from behaviortk.jit.generated import compile_function

            fn = compile_function(tree.source, "decide")
            nodes, steering = g.state.status.shape[0], len(g.flat.steering)
            fn(
                np.zeros(0, dtype=np.int64),
                np.zeros((nodes, 0), dtype=np.int8),
                np.zeros((nodes, 0), dtype=np.int16),
                np.zeros((0, steering), dtype=bool),
                np.zeros((0, nodes), dtype=np.int8),
                *(np.zeros(0, dtype=np.int8) for _ in tree.leaf_nodes),
                *(np.zeros(0, dtype=bool) for _ in tree.cond_nodes),
            )  # compiled (or loaded) now, not on the first tick
        except Exception as exc:  # a compile failure: batch_core decides, one warning line
            _fuse_failure(exc)
            return
        g.fused, g.fused_tree = fn, tree

    def build_group(self, name: str, rows: slice, tree: FlatTree) -> GroupProgram:
        n = rows.stop - rows.start
        board = bl.ArrayBoard(n, self.declared(name), clock=self.sim)
        c = Compiler(
            registries=self.registries,
            state=bc.TreeState(len(tree), n),
            facts=bl.GroupFacts(n, len(tree), len(tree.steering)),
            context=self.context(name, n, board),
        )
        program = GroupProgram(
            **self.group_record(name, rows, tree),
            board=board,
            state=c.state,
            root=compile_tree(tree, c, self.builders),
            facts=c.facts,
            every=np.arange(n, dtype=np.int64),
            ops=c.ops,
        )
        if self._fuse:
            self._attach(program)
        return program

    def resize_group(self, g: GroupProgram, change: RowChange) -> GroupProgram:
        """A spawn or despawn (``change.move``) moves rows in place; a re-sort of every row,
        or a group holding a plugin's nodes, is rebuilt (:meth:`_rebuilt`)."""
        m = change.move
        holders = _holders(g)
        if m is None or not g.in_place:
            return self._rebuilt(g, change)
        assert g.root is not None
        g.held_status = None
        g.state.move(m, g.root)
        if holders:
            templates = _holders(self._fresh_rows(g))
            for (obj, names), (template, _) in zip(holders, templates, strict=True):
                for name in names:
                    value = getattr(template, name)[0]
                    setattr(obj, name, move_local(getattr(obj, name), m, value))
        assert isinstance(g.board, bl.ArrayBoard)
        g.board.move(m)
        prev = g.prev
        for index, rows in prev.items():
            prev[index] = move_local(rows, m, False)
        if m.n_new != m.old_n:  # every local row, in order
            kept = min(m.old_n, m.n_new)
            g.every = lengthened(g.every[:kept], m.n_new, np.arange(kept, m.n_new))
        g.rows = change.rows
        return g

    def _fresh_rows(self, g: GroupProgram) -> GroupProgram:
        """A one-agent build of ``g``'s tree: what a new agent's per-agent arrays start with."""
        found = self._templates.get(g.name)
        if found is None:
            fuse, self._fuse = self._fuse, False
            try:
                found = self.build_group(g.name, slice(0, 1), g.flat)
            finally:
                self._fuse = fuse
            self._templates[g.name] = found
        return found

    def _rebuilt(self, g: GroupProgram, change: RowChange) -> GroupProgram:
        """A fresh compile for the new size, then the survivors' rows of every state array."""
        new = self.build_group(g.name, change.rows, g.flat)
        source = change.source
        carry(new.state.status, g.state.status, source, axis=1)
        carry(new.state.current, g.state.current, source, axis=1)
        assert isinstance(new.board, bl.ArrayBoard) and isinstance(g.board, bl.ArrayBoard)
        new.board.carry(g.board, source)
        for index, ops in g.ops.items():
            carry_rows(ops, new.ops[index], source)
        old_nodes, new_nodes = [g.root], [new.root]
        while old_nodes:
            old, fresh = old_nodes.pop(), new_nodes.pop()
            carry_rows(old, fresh, source)
            old_nodes.extend(old.children if old is not None else [])
            new_nodes.extend(fresh.children if fresh is not None else [])
        return new

    def store_facts(self, g: GroupProgram, facts: TickFacts) -> None:
        for index, codes in facts.leaf.items():
            g.facts.leaf[index] = codes
        for index, result in facts.cond.items():
            g.facts.cond[index] = result
        g.facts.emitted = self.start_emitted(g)

    def tick_group(self, g: GroupProgram) -> Decision:
        """Tick the tree for every row, or with LOD for the thinkers alone (``g.thinking``):
        the others' statuses and requests stay as their last think left them."""
        assert g.root is not None
        facts, fused = g.facts, g.fused_tree
        rows = g.every if g.thinking is None else g.thinking
        kept, g.held_status = g.held_status, None
        if g.fused is None or fused is None:
            g.root.tick(rows)
            status = np.ascontiguousarray(g.state.status[:, : g.n].T)
            return Decision(emitted=facts.emitted, status=status)
        if g.thinking is None:
            status = np.empty((g.n, g.state.status.shape[0]), dtype=np.int8)
        elif kept is not None and kept.shape == (g.n, g.state.status.shape[0]):
            status = kept.copy()  # the fused loop writes the thinkers' rows; the others keep theirs
        else:  # from the tree state (after a change of rows or a restore)
            status = status_loops.transposed(g.state.status, g.n)
        g.fused(
            rows,
            g.state.status,
            g.state.current,
            facts.emitted,
            status,
            *(np.ascontiguousarray(facts.leaf[k], dtype=np.int8) for k in fused.leaf_nodes),
            *(np.ascontiguousarray(facts.cond[k], dtype=bool) for k in fused.cond_nodes),
        )
        if g.thinking is not None:
            g.held_status = status  # never written again: the next tick copies it
        return Decision(emitted=facts.emitted, status=status)

    def node_ops(self, g: GroupProgram) -> dict[int, Any]:
        return g.ops

    def export_tree(self, g: GroupProgram) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        n = g.n
        arrays = {
            f"node{node.k}.{name}": getattr(node, name)[:n].copy()
            for node in _nodes(g)
            for name in type(node).per_agent
        }
        return g.state.status[:, :n].copy(), g.state.current[:, :n].copy(), arrays

    def import_tree(self, g: GroupProgram, saved: SavedGroup) -> None:
        n = g.n
        g.held_status = None
        g.state.status[:, :n] = saved.status
        g.state.current[:, :n] = saved.current
        for node in _nodes(g):
            for name in type(node).per_agent:
                getattr(node, name)[:n] = saved.arrays[f"node{node.k}.{name}"]

    def node_status(self, agent: int) -> np.ndarray:
        g, local = self.locate(agent)
        return g.state.status[:, local].copy()

    def display(self, g: GroupProgram, local: int) -> py_trees.behaviour.Behaviour:
        """A display-only py_trees tree of the group (built once) with the agent's statuses
        and current children (no feedback messages: nothing of py_trees ran)."""
        nodes = self._skeletons.get(g.name)
        if nodes is None:
            nodes = self._skeletons[g.name] = display_tree(g.flat, self.registries)
        for k, b in enumerate(nodes):
            b.status = STATUSES[int(g.state.status[k, local])]
            b.feedback_message = ""
            if isinstance(b, py_trees.composites.Composite):
                cur = int(g.state.current[k, local])
                b.current_child = b.children[cur] if cur >= 0 else None
        return nodes[0]
