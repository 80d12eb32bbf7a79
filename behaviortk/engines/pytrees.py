"""The reference engine: one real ``py_trees.trees.BehaviourTree`` per agent.

Each agent's tree is built from its group's :class:`~behaviortk.tree.flat.FlatTree`
(same node order), so node ``k`` of the flat tree is behaviour ``k`` of every
agent's tree. py_trees' own composites and decorators give the semantics
(memory and non-memory Sequence/Selector, Parallel policies, pre-emption
calling ``stop()``); sim-time decorators come from ``engines.sim_time``.

Speed: leaves never call NumPy. Before the trees are ticked, every steering
leaf status (``leaf_status``) and every sensed condition (``conditions``) is
computed for the whole group and turned into Python lists once; a leaf's
``update`` only indexes ``facts.leaf[node][row]``. Trees are ticked with
``root.tick_once()`` (``BehaviourTree.tick`` walks the whole tree again for
visitors after every tick; nothing here uses visitors), and ``tree.count`` is
kept up to date by hand.

Each agent's blackboard is one py_trees ``Client`` in the namespace
``/sim<k>/agents/<id>`` (``k`` numbers engines in the process, so two
simulations never share keys), registered for every key the group's tree
mentions and released when the engine is garbage collected.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import re
import typing
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import py_trees
from py_trees import behaviour, common
from py_trees.common import Status
from pydantic import BaseModel

from behaviortk import registry
from behaviortk.conditions import compare, evaluate_condition, is_blackboard_condition
from behaviortk.engines.sim_time import SimCooldown, SimTimeout, ticks_for
from behaviortk.sense import Sense
from behaviortk.tree.flat import Decision, FlatNode, FlatTree
from behaviortk.tree.leaf_status import steering_status
from behaviortk.tree.status import FAILURE

STATUSES = (Status.INVALID, Status.RUNNING, Status.SUCCESS, Status.FAILURE)
"""py_trees status of each int8 code (index = code)."""
CODE = {s: i for i, s in enumerate(STATUSES)}
"""int8 code of each py_trees status."""
_CODE_BY_ID = {id(s): i for i, s in enumerate(STATUSES)}
"""The same, keyed by identity: Enum.__hash__ is Python code, id() is not (hot loop)."""

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_serial = itertools.count()


class GroupFacts:
    """What a group's leaves index during one tick (refilled by the engine before ticking)."""

    __slots__ = ("cond", "emitted", "leaf")

    def __init__(self, n_nodes: int) -> None:
        self.leaf: list[list[int]] = [[] for _ in range(n_nodes)]
        self.cond: list[list[bool]] = [[] for _ in range(n_nodes)]
        self.emitted: list[list[bool]] = []


def read_blackboard(client: py_trees.blackboard.Client, key: str) -> Any:
    """The value under ``key``, or None when unset or not registered for this client."""
    try:
        return client.get(key)
    except (KeyError, AttributeError):
        return None


# ------------------------------------------------------------------ leaves


class _AgentLeaf(behaviour.Behaviour):
    """Common setup of leaves: which flat node, which row, the group's facts, the agent's blackboard."""

    def __init__(self, name: str, node: FlatNode) -> None:
        super().__init__(name=name)
        self.index = node.index
        self.model = node.model
        self.row = 0
        self.facts = GroupFacts(0)
        self.clock: Any = None
        self.bb: py_trees.blackboard.Client | None = None

    def setup(self, **kwargs: Any) -> None:
        self.row = int(kwargs["row"])
        self.facts = kwargs["facts"]
        self.clock = kwargs.get("clock")
        self.bb = kwargs.get("blackboard")
        if self.bb is not None and self.bb not in self.blackboards:
            self.blackboards.append(self.bb)

    def update(self) -> Status:  # pragma: no cover - every leaf overrides it
        raise NotImplementedError


_STEER_MESSAGE = ("", "steering", "done (still steering)", "no target")


class SteeringLeaf(_AgentLeaf):
    """Emit this agent's steering request (unless the target is missing) and return the leaf status."""

    def __init__(self, name: str, node: FlatNode) -> None:
        super().__init__(name, node)
        self.emit = node.emit_index

    def update(self) -> Status:
        code = self.facts.leaf[self.index][self.row]
        if code != FAILURE:
            self.facts.emitted[self.row][self.emit] = True
        self.feedback_message = _STEER_MESSAGE[code]
        return STATUSES[code]


class ConditionLeaf(_AgentLeaf):
    """Index this tick's vectorised condition result for this agent."""

    def update(self) -> Status:
        if self.facts.cond[self.index][self.row]:
            self.feedback_message = "true"
            return Status.SUCCESS
        self.feedback_message = "false"
        return Status.FAILURE


class BlackboardCompareLeaf(_AgentLeaf):
    """``blackboard[key] <op> value`` on this agent's blackboard, read when ticked."""

    def update(self) -> Status:
        assert self.bb is not None
        m = self.model
        current = read_blackboard(self.bb, m.key)
        ok = compare(m.op, current, m.value)
        self.feedback_message = f"{m.key}={current!r} {m.op} {m.value!r}: {ok}"
        return Status.SUCCESS if ok else Status.FAILURE


class BlackboardSetLeaf(_AgentLeaf):
    """Write the constant to this agent's blackboard; SUCCESS."""

    def __init__(self, name: str, node: FlatNode) -> None:
        super().__init__(name, node)
        from behaviortk.actions import stored_value

        self.value = stored_value(node.model)

    def update(self) -> Status:
        assert self.bb is not None
        self.bb.set(self.model.key, self.value, overwrite=True)
        self.feedback_message = f"{self.model.key} = {self.value!r}"
        return Status.SUCCESS


class WaitLeaf(_AgentLeaf):
    """RUNNING for ``duration`` seconds of simulated time from the tick it starts, then SUCCESS."""

    def __init__(self, name: str, node: FlatNode) -> None:
        super().__init__(name, node)
        self.start = 0
        self.limit = 0

    def setup(self, **kwargs: Any) -> None:
        super().setup(**kwargs)
        self.limit = ticks_for(float(self.model.duration), float(self.clock.dt))

    def initialise(self) -> None:
        self.start = int(self.clock.tick)

    def update(self) -> Status:
        elapsed = int(self.clock.tick) - self.start
        if elapsed >= self.limit:
            self.feedback_message = "done"
            return Status.SUCCESS
        self.feedback_message = f"{(self.limit - elapsed) * self.clock.dt:.3g}s left"
        return Status.RUNNING


class Guard(py_trees.decorators.EternalGuard):
    """py_trees' EternalGuard whose condition is the flat tree's guard condition for this agent."""

    def __init__(self, name: str, child: behaviour.Behaviour, node: FlatNode) -> None:
        self.index = node.index
        self.guard_model = node.model.condition
        self.row = 0
        self.facts = GroupFacts(0)
        self.bb: py_trees.blackboard.Client | None = None
        super().__init__(name=name, child=child, condition=self.check)

    def setup(self, **kwargs: Any) -> None:
        self.row = int(kwargs["row"])
        self.facts = kwargs["facts"]
        self.bb = kwargs.get("blackboard")

    def check(self) -> bool:
        if is_blackboard_condition(self.guard_model):
            assert self.bb is not None
            m = self.guard_model
            return compare(m.op, read_blackboard(self.bb, m.key), m.value)
        return bool(self.facts.cond[self.index][self.row])


# -------------------------------------------------------------- building

_CONVERTERS: dict[str, Callable[..., behaviour.Behaviour]] = {
    "inverter": py_trees.decorators.Inverter,
    "success_is_failure": py_trees.decorators.SuccessIsFailure,
    "failure_is_success": py_trees.decorators.FailureIsSuccess,
    "failure_is_running": py_trees.decorators.FailureIsRunning,
    "running_is_failure": py_trees.decorators.RunningIsFailure,
    "running_is_success": py_trees.decorators.RunningIsSuccess,
    "success_is_running": py_trees.decorators.SuccessIsRunning,
}

_ONE_SHOT = {
    "on_completion": common.OneShotPolicy.ON_COMPLETION,
    "on_successful_completion": common.OneShotPolicy.ON_SUCCESSFUL_COMPLETION,
}


def _composite(node: FlatNode, kids: list[behaviour.Behaviour]) -> behaviour.Behaviour:
    m, name = node.model, node.name
    if m.type == "sequence":
        return py_trees.composites.Sequence(name=name, memory=bool(m.memory), children=kids)
    if m.type == "selector":
        return py_trees.composites.Selector(name=name, memory=bool(m.memory), children=kids)
    if m.type == "parallel":
        policy: common.ParallelPolicy.Base
        if m.policy == "success_on_all":
            policy = common.ParallelPolicy.SuccessOnAll(synchronise=bool(m.synchronise))
        elif m.policy == "success_on_one":
            policy = common.ParallelPolicy.SuccessOnOne()
        else:
            chosen = [kids[i] for i in m.selected]
            policy = common.ParallelPolicy.SuccessOnSelected(
                children=chosen, synchronise=bool(m.synchronise)
            )
        return py_trees.composites.Parallel(name=name, policy=policy, children=kids)
    raise ValueError(f"the py_trees engine cannot build composite {m.type!r}")


def _decorator(node: FlatNode, child: behaviour.Behaviour) -> behaviour.Behaviour:
    m, name = node.model, node.name
    tag = m.type
    if tag in _CONVERTERS:
        return _CONVERTERS[tag](name=name, child=child)
    if tag == "timeout":
        return SimTimeout(name, child, float(m.duration))
    if tag == "cooldown":
        return SimCooldown(name, child, float(m.duration))
    if tag == "repeat":
        return py_trees.decorators.Repeat(name=name, child=child, num_success=int(m.num_success))
    if tag == "retry":
        return py_trees.decorators.Retry(name=name, child=child, num_failures=int(m.num_failures))
    if tag == "one_shot":
        return py_trees.decorators.OneShot(name=name, child=child, policy=_ONE_SHOT[m.policy])
    if tag == "eternal_guard":
        return Guard(name, child, node)
    raise ValueError(f"the py_trees engine cannot build decorator {tag!r}")


def _leaf(node: FlatNode) -> behaviour.Behaviour:
    if node.kind == registry.STEERING:
        return SteeringLeaf(node.name, node)
    if node.kind == registry.CONDITION:
        if is_blackboard_condition(node.model):
            return BlackboardCompareLeaf(node.name, node)
        return ConditionLeaf(node.name, node)
    if node.model.type == "blackboard_set":
        return BlackboardSetLeaf(node.name, node)
    if node.model.type == "wait":
        return WaitLeaf(node.name, node)
    raise ValueError(f"the py_trees engine cannot build action {node.model.type!r}")


def build_behaviours(tree: FlatTree) -> list[behaviour.Behaviour]:
    """One agent's behaviours in flat order (index k = flat node k); element 0 is the root."""
    built: list[behaviour.Behaviour | None] = [None] * len(tree)
    for node in reversed(tree.nodes):  # children have larger indices: built first
        kids = [typing.cast(behaviour.Behaviour, built[c]) for c in node.children]
        if node.kind == registry.COMPOSITE:
            built[node.index] = _composite(node, kids)
        elif node.kind == registry.DECORATOR:
            built[node.index] = _decorator(node, kids[0])
        else:
            built[node.index] = _leaf(node)
    return typing.cast(list[behaviour.Behaviour], built)


def blackboard_keys(tree: FlatTree) -> list[str]:
    """Every blackboard key the tree reads or writes (leaves, guards, blackboard targets)."""
    keys: list[str] = []
    stack: list[Any] = [node.model for node in tree.nodes]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseModel):
            tag = getattr(item, "type", None) or getattr(item, "kind", None)
            key = getattr(item, "key", None)
            if tag in ("blackboard_set", "blackboard_compare", "blackboard") and key:
                keys.append(str(key))
            for name in type(item).model_fields:
                if name not in ("children", "child"):
                    stack.append(getattr(item, name))
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return sorted(set(keys))


def _safe_id(agent_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_\-]", "_", agent_id)


@dataclass
class GroupTrees:
    """All agents' trees of one group, and what their leaves read this tick."""

    name: str
    rows: slice
    flat: FlatTree
    trees: list[py_trees.trees.BehaviourTree]
    nodes: list[list[behaviour.Behaviour]]  # per local row, flat order
    clients: list[py_trees.blackboard.Client]
    facts: GroupFacts
    sensed: list[FlatNode]  # condition leaves and guards evaluated from sense
    prev: dict[int, np.ndarray]  # last tick's result per sensed node (hysteresis)


def _release(clients: list[py_trees.blackboard.Client]) -> None:
    for client in clients:
        with contextlib.suppress(KeyError):
            client.unregister(clear=True)


class PyTreesEngine:
    """Decide with real py_trees trees, one per agent. See the module docstring."""

    name = "py_trees"

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.namespace = f"/sim{next(_serial)}/agents"
        self.groups: dict[str, GroupTrees] = {}
        self._agent_group: list[tuple[GroupTrees, int]] = []
        self._prepared: Sense | None = None
        self._all_clients: list[py_trees.blackboard.Client] = []
        for group, rows in sim.agents.slices.items():
            g = self._build_group(group, rows, sim.trees[group])
            self.groups[group] = g
            self._all_clients.extend(g.clients)
            self._agent_group.extend((g, r) for r in range(len(g.trees)))
        weakref.finalize(self, _release, self._all_clients)

    def _build_group(self, group: str, rows: slice, tree: FlatTree) -> GroupTrees:
        facts = GroupFacts(len(tree))
        keys = blackboard_keys(tree)
        sensed = [
            node
            for node in tree.nodes
            if (node.kind == registry.CONDITION and not is_blackboard_condition(node.model))
            or (
                node.model.type == "eternal_guard"
                and not is_blackboard_condition(node.model.condition)
            )
        ]
        trees, nodes, clients = [], [], []
        ids = self.sim.agents.ids
        for local in range(rows.stop - rows.start):
            agent_id = ids[rows.start + local]
            client = py_trees.blackboard.Client(
                name=agent_id, namespace=f"{self.namespace}/{_safe_id(agent_id)}"
            )
            for key in keys:
                client.register_key(key=key, access=common.Access.WRITE)
            behaviours = build_behaviours(tree)
            bt = py_trees.trees.BehaviourTree(root=behaviours[0])
            bt.setup(row=local, facts=facts, clock=self.sim, blackboard=client)
            trees.append(bt)
            nodes.append(behaviours)
            clients.append(client)
            self._all_clients.extend(
                c for b in behaviours for c in b.blackboards if c is not client
            )
        n = rows.stop - rows.start
        prev = {node.index: np.zeros(n, dtype=bool) for node in sensed}
        return GroupTrees(group, rows, tree, trees, nodes, clients, facts, sensed, prev)

    # --------------------------------------------------------------- decide
    def _prepare(self, g: GroupTrees, sense: Sense) -> None:
        """Fill the group's per-tick facts: leaf statuses and sensed conditions, as Python lists."""
        facts = g.facts
        n = g.rows.stop - g.rows.start
        for index in g.flat.steering:
            node = g.flat.nodes[index]
            memory = getattr(self.sim, "memory", {}).get((g.name, node.emit_index))
            facts.leaf[index] = steering_status(node.model, sense, g.name, memory).tolist()
        for node in g.sensed:
            model = node.model.condition if node.model.type == "eternal_guard" else node.model
            result = evaluate_condition(model, sense, g.name, g.prev[node.index], node.rand_slot)
            g.prev[node.index] = result
            facts.cond[node.index] = result.tolist()
        width = len(g.flat.steering)
        facts.emitted = [[False] * width for _ in range(n)]

    def prepare(self, sim: Any, sense: Sense) -> None:
        """Compute this tick's group-wide facts (the simulation times this as *sense*)."""
        for g in self.groups.values():
            self._prepare(g, sense)
        self._prepared = sense

    def decide(self, sim: Any, sense: Sense) -> dict[str, Decision]:
        """Tick every agent's tree once; statuses and emissions per group (flat order)."""
        if self._prepared is not sense:
            self.prepare(sim, sense)
        self._prepared = None
        out: dict[str, Decision] = {}
        for g in self.groups.values():
            for bt in g.trees:
                bt.root.tick_once()
                bt.count += 1
            n, k = len(g.trees), len(g.flat)
            by_id = _CODE_BY_ID
            codes = [by_id[id(b.status)] for behaviours in g.nodes for b in behaviours]
            status = np.array(codes, dtype=np.int8).reshape(n, k)
            emitted = np.array(g.facts.emitted, dtype=bool).reshape(n, len(g.flat.steering))
            out[g.name] = Decision(emitted=emitted, status=status)
        return out

    # ----------------------------------------------------------- inspection
    def _locate(self, agent: int) -> tuple[GroupTrees, int]:
        if not 0 <= agent < len(self._agent_group):
            raise IndexError(f"agent {agent} out of range (0..{len(self._agent_group) - 1})")
        return self._agent_group[agent]

    def tree(self, agent: int) -> py_trees.trees.BehaviourTree:
        g, local = self._locate(agent)
        return g.trees[local]

    def snapshot(self, agent: int) -> str:
        """py_trees' unicode rendering of the agent's tree with statuses (no colour codes)."""
        root = self.tree(agent).root
        text = py_trees.display.unicode_tree(root, show_status=True)
        return _ANSI.sub("", text)

    def node_status(self, agent: int) -> np.ndarray:
        g, local = self._locate(agent)
        return np.array([CODE[b.status] for b in g.nodes[local]], dtype=np.int8)

    def blackboard(self, agent: int) -> dict[str, Any]:
        """The agent's blackboard as ``{key: value}`` (unset keys left out)."""
        g, local = self._locate(agent)
        client = g.clients[local]
        out: dict[str, Any] = {}
        for key in blackboard_keys(g.flat):
            value = read_blackboard(client, key)
            if value is not None:
                out[key] = value
        return out

    def blackboard_points(self, group: str, key: str, rows: np.ndarray) -> np.ndarray:
        """``(n, 2)`` points stored under ``key`` for global ``rows``; NaN where unset or not a point."""
        g = self.groups[group]
        out = np.full((len(rows), 2), np.nan)
        for k, row in enumerate(np.asarray(rows).tolist()):
            value = read_blackboard(g.clients[row - g.rows.start], key)
            point = _as_point(value)
            if point is not None:
                out[k] = point
        return out

    def iter_trees(self) -> Iterator[tuple[str, int, py_trees.trees.BehaviourTree]]:
        for g in self.groups.values():
            for local, bt in enumerate(g.trees):
                yield g.name, g.rows.start + local, bt


def _as_point(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list | tuple | np.ndarray) and len(value) == 2:
        x, y = value[0], value[1]
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y)):
            fx, fy = float(x), float(y)
            if math.isfinite(fx) and math.isfinite(fy):
                return (fx, fy)
    return None
