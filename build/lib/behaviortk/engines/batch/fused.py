"""A group's reactive tree as the source of one function, every agent's tick in one loop.

``batch/core.py`` ticks a tree node by node over index arrays of agents: a fixed
number of array passes per node, each over tens of thousands of rows (about
2 ms a tick for evade_or_flock's prey at 50,000). On compiled kernels, a tree
made only of nodes whose tick reads this tick's facts and the tree's own
statuses (selector and sequence, with or without memory; parallel;
``eternal_guard`` on a sensed condition; the status converters; steering
leaves and sensed conditions) is written out here as Python source instead: the very rules of
``batch/core.py``, transcribed for one agent with the tree unrolled (each node's
tick and stop inlined where its parent calls them), in a loop over the
agents. ``jit/generated.py`` compiles it with numba. Agents never
interact in these nodes, so running each agent's whole tick in turn leaves
the same statuses, current children and requests as the node-by-node passes
(``tests/test_fused_decide.py`` checks it tick by tick on random trees).

Anything else (repeat, retry, one_shot, timeout, cooldown, actions,
ticked conditions, plugin nodes, a guard read when ticked) makes :func:`source`
answer None and the group keeps ``batch/core.py``. Only node classes exactly
(not subclasses) are transcribed: a plugin's subclass may change the rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from behaviortk.engines.batch import core as bc
from behaviortk.engines.batch import leaf_nodes as bl
from behaviortk.tree.status import FAILURE, INVALID, RUNNING, SUCCESS

MAX_LINES = 4000
"""Longest source written (stops are inlined at every call site); a bigger tree stays on NumPy."""

Status = int | str
"""A status given to ``stop``: a constant known when writing, or the name of a local variable."""


class Unsupported(Exception):
    """A node this module does not transcribe."""


@dataclass
class FusedTree:
    """The generated source and the fact arrays its function takes, in argument order.

    The function is ``decide(rows, st, cur, emitted, status, *leaf, *cond)``: it ticks
    the agents ``rows`` (every local row, or the ones that think this tick:
    ``sim/think.py``), with ``st`` and ``cur`` the group's ``TreeState`` arrays (statuses and current
    children, one row per node), ``emitted`` the tick's ``GroupFacts.emitted``,
    ``status`` the ``(agents, nodes)`` array it fills with every agent's final
    statuses (``Decision.status``, no transposed copy after), ``leaf`` the
    steering leaves' ``GroupFacts.leaf[k]`` for ``k`` in ``leaf_nodes`` and
    ``cond`` the sensed results ``GroupFacts.cond[k]`` for ``k`` in ``cond_nodes``.
    """

    source: str
    leaf_nodes: list[int] = field(default_factory=list)
    cond_nodes: list[int] = field(default_factory=list)


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.leaf: dict[int, str] = {}
        self.cond: dict[int, str] = {}
        self.tables: dict[tuple[int, ...], str] = {}
        self.nodes: set[int] = set()  # every node's status is the local n{k} of agent i
        self.composites: set[int] = set()  # and a composite's current child c{k}

    # ------------------------------------------------------------ helpers
    def put(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)
        if len(self.lines) > MAX_LINES:
            raise Unsupported(f"more than {MAX_LINES} lines")

    def leaf_arg(self, k: int) -> str:
        return self.leaf.setdefault(k, f"leaf{k}")

    def cond_arg(self, k: int) -> str:
        return self.cond.setdefault(k, f"cond{k}")

    def table(self, values: tuple[int, ...]) -> str:
        return self.tables.setdefault(values, f"TABLE{len(self.tables)}")

    # --------------------------------------------------------------- stop
    def stop(self, node: bc.Node, status: Status, d: int) -> None:
        """``node.stop(rows, status)`` for agent ``i``."""
        k, kind = node.k, type(node)
        if kind is bc.Leaf:  # no terminate hook (checked by tick)
            self.put(d, f"n{k} = {status}")
        elif kind in (bc.SelectorNode, bc.SequenceNode, bc.ParallelNode):  # Composite.stop
            if kind is bc.ParallelNode:  # first every RUNNING child is stopped (INVALID)
                for child in node.children:
                    self.put(d, f"if n{child.k} == {RUNNING}:")
                    self.stop(child, INVALID, d + 1)
            if status == INVALID or isinstance(status, str):
                inner = d
                if isinstance(status, str):
                    self.put(d, f"if {status} == {INVALID}:")
                    inner = d + 1
                self.put(inner, f"c{k} = -1")
                for child in node.children:
                    self.put(inner, f"if n{child.k} != {INVALID}:")
                    self.stop(child, INVALID, inner + 1)
            self.put(d, f"n{k} = {status}")
        elif kind in (bc.MapDecorator, bc.EternalGuardNode):  # Decorator.stop, no terminate
            child = node.children[0]
            if status == INVALID:
                # child.stop(INVALID) leaves it INVALID: the RUNNING check after it never fires
                self.stop(child, INVALID, d)
            elif isinstance(status, str):
                self.put(d, f"if {status} == {INVALID} or n{child.k} == {RUNNING}:")
                self.stop(child, INVALID, d + 1)
            else:
                self.put(d, f"if n{child.k} == {RUNNING}:")
                self.stop(child, INVALID, d + 1)
            self.put(d, f"n{k} = {status}")
        else:
            raise Unsupported(kind.__name__)

    def stop_unless_invalid(self, nodes: list[bc.Node], d: int) -> None:
        """``stop_unless(child, rows, INVALID)`` for each of ``nodes`` in turn."""
        for child in nodes:
            self.put(d, f"if n{child.k} != {INVALID}:")
            self.stop(child, INVALID, d + 1)

    # --------------------------------------------------------------- tick
    def tick(self, node: bc.Node, d: int) -> None:
        """``node.tick(rows)`` for agent ``i``."""
        kind = type(node)
        self.nodes.add(node.k)
        if kind in (bc.SelectorNode, bc.SequenceNode, bc.ParallelNode):
            self.composites.add(node.k)
        if kind is bc.Leaf:
            self.tick_leaf(node, d)
        elif kind is bc.SelectorNode:
            self.tick_selector(node, d)
        elif kind is bc.SequenceNode:
            self.tick_sequence(node, d)
        elif kind is bc.ParallelNode:
            self.tick_parallel(node, d)
        elif isinstance(node, bc.EternalGuardNode) and kind is bc.EternalGuardNode:
            if node.fact is None:
                raise Unsupported("eternal_guard read when ticked")
            self.put(d, f"if not {self.cond_arg(node.fact)}[i]:")
            self.stop(node, FAILURE, d + 1)
            self.put(d, "else:")
            self.tick_decorator(node, d + 1)
        elif kind is bc.MapDecorator:
            self.tick_decorator(node, d)
        else:
            raise Unsupported(kind.__name__)

    def tick_leaf(self, node: bc.Node, d: int) -> None:
        assert isinstance(node, bc.Leaf)
        ops, k = node.ops, node.k
        if node._initialise or node._terminate:
            raise Unsupported("leaf with initialise or terminate")
        if type(ops) is bl.SteeringOps:
            self.put(d, f"v{k} = {self.leaf_arg(ops.k)}[i]")
            self.put(d, f"if v{k} != {FAILURE}:")
            self.put(d + 1, f"emitted[i, {ops.emit}] = True")
            self.put(d, f"n{k} = v{k}")
        elif type(ops) is bl.ConditionOps:
            self.put(d, f"n{k} = {SUCCESS} if {self.cond_arg(ops.k)}[i] else {FAILURE}")
        else:
            raise Unsupported(type(ops).__name__)

    def tick_decorator(self, node: bc.Node, d: int) -> None:
        """``Decorator.tick`` without initialise: tick the child, map, stop when done."""
        child, k = node.children[0], node.k
        self.tick(child, d)
        if isinstance(node, bc.MapDecorator):
            values = tuple(int(v) for v in node.table)
            self.put(d, f"u{k} = {self.table(values)}[n{child.k}]")
        else:
            self.put(d, f"u{k} = n{child.k}")
        self.put(d, f"if u{k} != {RUNNING}:")
        self.stop(node, f"u{k}", d + 1)
        self.put(d, f"n{k} = u{k}")

    def tick_selector(self, node: bc.Node, d: int) -> None:
        """``SelectorNode.tick``: the first child RUNNING or SUCCESS wins, later ones stopped."""
        assert isinstance(node, bc.SelectorNode)
        k, kids = node.k, node.children
        self.put(d, f"if n{k} != {RUNNING}:")
        self.put(d + 1, f"c{k} = {0 if kids else -1}")
        if not kids:
            self.put(d, f"c{k} = -1")
            self.stop(node, FAILURE, d)
            return
        if node.memory:
            self.put(d, f"start{k} = c{k}")
            for p, child in enumerate(kids[:-1]):
                self.put(d, f"if start{k} > {p} and n{child.k} != {INVALID}:")
                self.stop(child, INVALID, d + 1)
        self.put(d, "for _ in range(1):")
        for p, child in enumerate(kids):
            inner = d + 1
            if node.memory:
                self.put(inner, f"if start{k} <= {p}:")
                inner += 1
            self.tick(child, inner)
            self.put(inner, f"s{k} = n{child.k}")
            self.put(inner, f"if s{k} == {RUNNING} or s{k} == {SUCCESS}:")
            self.put(inner + 1, f"if c{k} != {p}:")
            self.put(inner + 2, f"c{k} = {p}")
            self.stop_unless_invalid(kids[p + 1 :], inner + 2)
            self.put(inner + 1, f"if s{k} == {SUCCESS}:")
            self.stop(node, SUCCESS, inner + 2)
            self.put(inner + 1, "else:")
            self.put(inner + 2, f"n{k} = {RUNNING}")
            self.put(inner + 1, "break")
        # still in the loop: no child won
        self.stop(node, FAILURE, d + 1)
        self.put(d + 1, f"c{k} = {len(kids) - 1}")

    def tick_sequence(self, node: bc.Node, d: int) -> None:
        """``SequenceNode.tick``: children in turn while they succeed."""
        assert isinstance(node, bc.SequenceNode)
        k, kids = node.k, node.children
        self.put(d, f"if n{k} != {RUNNING}:")
        self.put(d + 1, f"c{k} = {0 if kids else -1}")
        self.stop_unless_invalid(kids, d + 1)
        if not node.memory:
            self.put(d, "else:")
            self.put(d + 1, f"c{k} = {0 if kids else -1}")
        if not kids:
            self.put(d, f"c{k} = -1")
            self.stop(node, SUCCESS, d)
            return
        if node.memory:
            self.put(d, f"start{k} = c{k}")
        self.put(d, "for _ in range(1):")
        last = len(kids) - 1
        for p, child in enumerate(kids):
            inner = d + 1
            if node.memory:
                self.put(inner, f"if start{k} <= {p}:")
                inner += 1
            self.tick(child, inner)
            self.put(inner, f"s{k} = n{child.k}")
            self.put(inner, f"if s{k} != {SUCCESS}:")
            if not node.memory:
                self.stop_unless_invalid(kids[p + 1 :], inner + 1)
            self.put(inner + 1, f"if s{k} != {RUNNING}:")
            self.stop(node, f"s{k}", inner + 2)
            self.put(inner + 1, "else:")
            self.put(inner + 2, f"n{k} = {RUNNING}")
            self.put(inner + 1, "break")
            if p < last:
                self.put(inner, f"c{k} = {p + 1}")
        # still in the loop: every child succeeded
        self.stop(node, SUCCESS, d + 1)

    def tick_parallel(self, node: bc.Node, d: int) -> None:
        """``ParallelNode.tick``: every child ticked (synchronised: those not yet SUCCESS),
        then the policy; the first failing child fails it."""
        assert isinstance(node, bc.ParallelNode)
        k, kids = node.k, node.children
        self.put(d, f"if n{k} != {RUNNING}:")
        self.stop_unless_invalid(kids, d + 1)
        self.put(d + 1, f"c{k} = -1")
        if not kids:
            self.put(d, f"c{k} = -1")
            self.stop(node, SUCCESS, d)
            return
        if node.policy == node.SELECTED and not node.selected:
            raise Unsupported("success_on_selected without a selection")
        for child in kids:
            if node.synchronise:
                self.put(d, f"if n{child.k} != {SUCCESS}:")
                self.tick(child, d + 1)
            else:
                self.tick(child, d)
        codes = [f"n{child.k}" for child in kids]
        self.put(d, f"new{k} = {RUNNING}")
        self.put(d, f"at{k} = {len(kids) - 1}")
        if node.policy == node.ALL:
            self.put(d, f"if {' and '.join(f'{c} == {SUCCESS}' for c in codes)}:")
            self.put(d + 1, f"new{k} = {SUCCESS}")
        elif node.policy == node.ONE:
            for p, c in enumerate(codes):  # the last succeeding child
                self.put(d, f"if {c} == {SUCCESS}:")
                self.put(d + 1, f"new{k} = {SUCCESS}")
                self.put(d + 1, f"at{k} = {p}")
        else:
            chosen = [codes[p] for p in node.selected]
            self.put(d, f"if {' and '.join(f'{c} == {SUCCESS}' for c in chosen)}:")
            self.put(d + 1, f"new{k} = {SUCCESS}")
            self.put(d + 1, f"at{k} = {node.selected[-1]}")
        for p, c in reversed(list(enumerate(codes))):  # the first failing child wins
            self.put(d, f"if {c} == {FAILURE}:")
            self.put(d + 1, f"new{k} = {FAILURE}")
            self.put(d + 1, f"at{k} = {p}")
        self.put(d, f"c{k} = at{k}")
        self.put(d, f"if new{k} != {RUNNING}:")
        self.stop(node, f"new{k}", d + 1)
        self.put(d, f"n{k} = new{k}")


def source(root: bc.Node) -> FusedTree | None:
    """The tree under ``root`` as the source of ``decide`` (see :class:`FusedTree`), or None
    when it holds a node this module does not transcribe."""
    w = _Writer()
    try:
        w.tick(root, 2)
    except Unsupported:
        return None
    leaf_nodes, cond_nodes = sorted(w.leaf), sorted(w.cond)
    args = ["rows", "st", "cur", "emitted", "status"]
    args += [w.leaf[k] for k in leaf_nodes] + [w.cond[k] for k in cond_nodes]
    head = ['"""Generated by behaviortk.engines.batch.fused: one group\'s tree."""', ""]
    head += ["import numpy as np", ""]
    for values, name in w.tables.items():
        head.append(f"{name} = np.array({list(values)}, dtype=np.int8)")
    head += ["", "", f"def decide({', '.join(args)}):"]
    head += ["    for i in rows:"]  # st and cur may have spare columns
    # statuses and current children live in locals while the agent ticks (registers: the
    # arrays may alias as far as the compiler knows), read before and written back after
    head += [f"        n{k} = st[{k}, i]" for k in sorted(w.nodes)]
    head += [f"        c{k} = cur[{k}, i]" for k in sorted(w.composites)]
    tail = [f"        st[{k}, i] = n{k}" for k in sorted(w.nodes)]
    tail += [f"        cur[{k}, i] = c{k}" for k in sorted(w.composites)]
    tail += [f"        status[i, {k}] = n{k}" for k in sorted(w.nodes)]
    text = "\n".join(head + w.lines + tail) + "\n"
    return FusedTree(text, leaf_nodes, cond_nodes)
