"""The reference engine: one real ``py_trees.trees.BehaviourTree`` per agent.

Each agent's tree is built from its group's :class:`~behaviortk.tree.flat.FlatTree`
(same node order), so node ``k`` of the flat tree is behaviour ``k`` of every
agent's tree. py_trees' own composites and decorators give the semantics
(memory and non-memory Sequence/Selector, Parallel policies, pre-emption
calling ``stop()``); sim-time decorators come from ``engines.sim_time``.
Actions, ticked conditions and plugin decorators are the shared ops of
``tree/ops.py``, wrapped in one behaviour per agent that passes its own row.

Speed: steering leaves and sensed conditions never call NumPy. Before the
trees are ticked, the skeleton (``base.py``) computes their results for the
whole group; they are turned into Python lists once and a leaf's ``update``
only indexes ``facts.leaf[node][row]``; a steering leaf that asks for a force
sets its byte of one buffer the Decision reads without a copy. Trees are
ticked through the root's ``tick()`` generator, as ``root.tick_once()`` does
(``BehaviourTree.tick`` walks the whole tree again for visitors after every
tick; nothing here uses visitors), and ``tree.count`` is kept up to date by
hand. Our leaves and guards tick with py_trees' steps minus its debug lines
and per-tick checks (``_AgentLeaf``). Node statuses stay in the behaviours
until somebody asks (``TreeStatuses``): reading them every tick cost a fifth
of the decide phase and only traces, the viewer and watched agents need them.

Each agent's blackboard is one py_trees ``Client`` in the namespace
``/sim<k>/agents/row<r>`` (``k`` numbers engines in the process, so two
simulations never share keys; ``r`` is the agent's row, so no two agents do,
whatever their ids), registered for every key the group's trees declare and
released when the engine is garbage collected. Keys are plain names (the
format refuses ``/`` and ``.``, which py_trees reads as a global namespace
and attribute access).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import operator
import typing
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import py_trees
from py_trees import behaviour, common
from py_trees.common import Status

from behaviortk.engines.base import EngineBase, GroupRuntime, RowChange, SavedGroup, as_point
from behaviortk.engines.builders import Builders, always, decorator_ops, leaf_ops, sensed
from behaviortk.engines.facts import TickFacts, guard_condition, is_sensed
from behaviortk.engines.sim_time import SimCooldown, SimTimeout
from behaviortk.engines.utility import UtilityComposite
from behaviortk.leaves.conditions import compare
from behaviortk.registry import (
    ACTION,
    COMPOSITE,
    CONDITION,
    DECORATOR,
    STEERING,
    Registries,
)
from behaviortk.sense.sensing import Sense
from behaviortk.tree.blackboard import Keys, SavedKey, Stamps, as_number, saved_keys
from behaviortk.tree.clock import Clock
from behaviortk.tree.flat import Decision, FlatNode, FlatTree
from behaviortk.tree.ops import NodeContext, Rows, carry_rows
from behaviortk.tree.status import FAILURE, SUCCESS

STATUSES = (Status.INVALID, Status.RUNNING, Status.SUCCESS, Status.FAILURE)
"""py_trees status of each int8 code (index = code)."""
CODE = {s: i for i, s in enumerate(STATUSES)}
"""int8 code of each py_trees status."""

_serial = itertools.count()


_STATUS_IDS = np.array([id(s) for s in STATUSES], dtype=np.intp)
_ID_ORDER = np.argsort(_STATUS_IDS)
_SORTED_IDS = _STATUS_IDS[_ID_ORDER]
_status_of = operator.attrgetter("status")


def status_codes(behaviours: list[behaviour.Behaviour]) -> np.ndarray:
    """int8 code of each behaviour's status: identities gathered in C, matched in NumPy."""
    ids = np.array(list(map(id, map(_status_of, behaviours))), dtype=np.intp)
    return _ID_ORDER[np.searchsorted(_SORTED_IDS, ids)].astype(np.int8)


class TreeStatuses:
    """A group's node statuses as its agents' behaviours hold them (a ``Decision``'s source).

    Read only when somebody asks (``Decision.status``, ``status_of``): walking
    every behaviour of every agent each tick was a fifth of the decide phase.
    The engine makes sure this is read before the trees tick again when the
    Decision is still held (``PyTreesEngine.decide``).
    """

    __slots__ = ("nodes", "width")

    def __init__(self, nodes: list[list[behaviour.Behaviour]], width: int) -> None:
        self.nodes = list(nodes)  # this tick's rows, even if the group's list changes later
        self.width = width

    def all(self) -> np.ndarray:
        flat = [b for behaviours in self.nodes for b in behaviours]
        return status_codes(flat).reshape(len(self.nodes), self.width)

    def rows(self, local: np.ndarray) -> np.ndarray:
        nodes = self.nodes
        flat = [b for row in local.tolist() for b in nodes[row]]
        return status_codes(flat).reshape(len(local), self.width)

    def columns(self, nodes: np.ndarray) -> np.ndarray:
        """``(n, len(nodes))`` codes of those nodes for every row: only their behaviours read
        (breakpoints watch a few nodes of big groups)."""
        if 2 * len(nodes) > self.width:  # most of them: every behaviour, flattened, is faster
            return self.all()[:, nodes]
        ks = nodes.tolist()
        picked = [row[k] for row in self.nodes for k in ks]
        return status_codes(picked).reshape(len(self.nodes), len(nodes))


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The garbage collector off within (as it was after)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class RowFacts:
    """What a group's leaves index during one tick, as Python lists (refilled before ticking).

    ``emitted`` is one byte per (row, steering leaf), row-major: a steering leaf
    sets its own byte and the engine hands the buffer to NumPy without a copy.
    """

    __slots__ = ("cond", "emitted", "leaf", "width")

    def __init__(self, n_nodes: int, width: int = 0) -> None:
        self.leaf: list[list[int]] = [[] for _ in range(n_nodes)]
        self.cond: list[list[bool]] = [[] for _ in range(n_nodes)]
        self.width = width  # steering leaves of the tree
        self.emitted = bytearray()


def read_blackboard(client: py_trees.blackboard.Client, key: str) -> Any:
    """The value under ``key``, or None when unset or not registered for this client."""
    try:
        return client.get(key)
    except (KeyError, AttributeError):
        return None


class ClientBoard:
    """A group's blackboards as py_trees ``Client``s, one per agent (``tree/ops.Board``).

    Every client is registered for the group's declared keys, and those with a
    default hold it from the start. The tick each value was stored on is kept
    beside the clients (``tree/blackboard.Stamps``), stamped from ``clock``.
    """

    def __init__(
        self,
        clients: list[py_trees.blackboard.Client],
        declared: Keys,
        fresh: list[int] | None = None,
        clock: Clock | None = None,
    ) -> None:
        """``clients[r]`` for ``r`` in ``fresh`` (default: all) are new agents: they get the
        declared defaults."""
        self.clients = clients
        self.declared = declared
        self.clock = clock
        self._keys: set[str] = set(declared)
        new = clients if fresh is None else [clients[r] for r in fresh]
        for key in declared:
            for client in new:
                client.register_key(key=key, access=common.Access.WRITE)
        for key, value in declared.defaults().items():
            for client in new:
                client.set(key, value, overwrite=True)
        self.stamps = Stamps(declared, len(clients), self._tick())

    def _tick(self) -> int:
        return 0 if self.clock is None else int(self.clock.tick)

    def get(self, key: str, row: int) -> Any:
        return read_blackboard(self.clients[row], key) if key in self._keys else None

    def set(self, key: str, rows: Rows, value: Any) -> None:
        stored = self.declared.coerce(key, value)
        for row in rows.tolist():
            self.clients[row].set(key, stored, overwrite=True)
        self.stamps.mark(key, rows, self._tick())

    def set_points(self, key: str, rows: Rows, points: np.ndarray) -> None:
        stored = self.declared.coerce_points(key, points, len(rows)).tolist()
        for row, (x, y) in zip(rows.tolist(), stored, strict=True):
            self.clients[row].set(key, (x, y), overwrite=True)
        self.stamps.mark(key, rows, self._tick())

    def unset(self, key: str, rows: Rows) -> None:
        self.declared.spec(key)
        for row in rows.tolist():
            self.clients[row].unset(key)
        self.stamps.clear(key, rows)

    def saved(self) -> dict[str, SavedKey]:
        """Every declared key's rows, values and stamps, engine-neutral (a snapshot's)."""
        return saved_keys(self.declared, self.stamps, len(self.clients), self.get)

    def load_saved(self, saved: dict[str, SavedKey]) -> None:
        """Hold what :meth:`saved` gave (checked by the snapshot reader), for every agent."""
        for key, s in saved.items():
            self.stamps.ticks[key][:] = s.ticks
            if s.xy is not None:
                stored: list[Any] = [None if x != x else (x, y) for x, y in s.xy.tolist()]
            else:
                assert s.ids is not None
                stored = [None if i < 0 else s.values[i] for i in s.ids.tolist()]
            for client, value in zip(self.clients, stored, strict=True):
                if value is None:
                    client.unset(key)
                else:
                    client.set(key, value, overwrite=True)

    def passes(self, key: str, op: str, rhs: Any, rows: Rows) -> np.ndarray:
        return np.array([compare(op, self.get(key, r), rhs) for r in rows.tolist()], dtype=bool)

    def numbers(self, key: str, rows: Rows) -> np.ndarray:
        return np.array([as_number(self.get(key, r)) for r in rows.tolist()], dtype=np.float64)

    def stored_keys(self) -> list[str]:
        return sorted(self._keys)

    def stored_ticks(self, key: str, rows: Rows) -> np.ndarray:
        return self.stamps.of(key, rows)

    def points(self, key: str, rows: Rows) -> np.ndarray:
        out = np.full((len(rows), 2), np.nan)
        for k, row in enumerate(np.asarray(rows).tolist()):
            point = as_point(self.get(key, row))
            if point is not None:
                out[k] = point
        return out


# ------------------------------------------------------------------ leaves


_RUNNING, _INVALID, _FAILURE = Status.RUNNING, Status.INVALID, Status.FAILURE


class _AgentLeaf(behaviour.Behaviour):
    """Common setup of leaves: which flat node, which row, the group's facts.

    ``tick`` and ``stop`` take py_trees' own steps (``Behaviour.tick``:
    initialise unless RUNNING, update, stop unless RUNNING, set the status;
    ``Behaviour.stop``: terminate, set the status) and leave out what costs
    time and does nothing here: the debug log lines, whose text is formatted
    even with logging off, the check that update returned a member of
    ``list(Status)`` (a list built every tick; ours return a Status by
    construction), and the fresh generator ``stop`` stores in ``iterator``,
    which py_trees never reads. ``tests/test_pytrees_lifecycle.py`` runs random
    trees with these and with py_trees' own methods: the same statuses.
    """

    def __init__(self, name: str, node: FlatNode) -> None:
        super().__init__(name=name)
        self.index = node.index
        self.model = node.model
        self.row = 0
        self.facts = RowFacts(0)

    def setup(self, **kwargs: Any) -> None:
        self.row = int(kwargs["row"])
        self.facts = kwargs["facts"]

    def tick(self) -> Iterator[behaviour.Behaviour]:
        if self.status is not _RUNNING:
            self.initialise()
        new_status = self.update()
        if new_status is not _RUNNING:
            self.stop(new_status)
        self.status = new_status
        yield self

    def stop(self, new_status: Status) -> None:
        self.terminate(new_status)
        self.status = new_status


_STEER_MESSAGE = ("", "steering", "done (still steering)", "no target")


class SteeringLeaf(_AgentLeaf):
    """Emit this agent's steering request (unless the target is missing) and return the leaf status."""

    def __init__(self, name: str, node: FlatNode) -> None:
        super().__init__(name, node)
        self.emit = node.emit_index
        self.slot = 0

    def setup(self, **kwargs: Any) -> None:
        super().setup(**kwargs)
        self.slot = self.row * self.facts.width + self.emit  # its byte of ``facts.emitted``

    def update(self) -> Status:
        code = self.facts.leaf[self.index][self.row]
        if code != FAILURE:
            self.facts.emitted[self.slot] = 1
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


class OpsLeaf(_AgentLeaf):
    """A shared leaf ops object (``tree/ops.py``) driven by this agent's own lifecycle calls."""

    def __init__(self, name: str, node: FlatNode, ops: Any) -> None:
        super().__init__(name, node)
        self.ops = ops
        self.rows = np.zeros(1, dtype=np.int64)

    def setup(self, **kwargs: Any) -> None:
        super().setup(**kwargs)
        self.rows = np.array([self.row], dtype=np.int64)

    def initialise(self) -> None:
        self.ops.initialise(self.rows)

    def update(self) -> Status:
        return STATUSES[int(self.ops.update(self.rows)[0])]

    def terminate(self, new_status: Status) -> None:
        if self.ops is not None:
            self.ops.terminate(self.rows, CODE[new_status])


class OpsDecorator(py_trees.decorators.Decorator):
    """A plugin decorator's shared ops, driven by py_trees' ``Decorator`` for one agent."""

    def __init__(self, name: str, child: behaviour.Behaviour, node: FlatNode, ops: Any) -> None:
        super().__init__(name=name, child=child)
        self.index = node.index
        self.ops = ops
        self.rows = np.zeros(1, dtype=np.int64)

    def setup(self, **kwargs: Any) -> None:
        self.rows = np.array([int(kwargs["row"])], dtype=np.int64)

    def initialise(self) -> None:
        self.ops.initialise(self.rows)

    def update(self) -> Status:
        child = np.array([CODE[self.decorated.status]], dtype=np.int8)
        return STATUSES[int(self.ops.update(self.rows, child)[0])]

    def terminate(self, new_status: Status) -> None:
        if self.ops is not None:
            self.ops.terminate(self.rows, CODE[new_status])


class Guard(py_trees.decorators.EternalGuard):
    """py_trees' EternalGuard whose condition is the flat tree's guard condition for this agent."""

    def __init__(self, name: str, child: behaviour.Behaviour, node: FlatNode, ops: Any) -> None:
        self.index = node.index
        self.ops = ops  # None: a sensed condition, read from facts
        self.row = 0
        self.rows = np.zeros(1, dtype=np.int64)
        self.facts = RowFacts(0)
        super().__init__(name=name, child=child, condition=self.check)

    def setup(self, **kwargs: Any) -> None:
        self.row = int(kwargs["row"])
        self.rows = np.array([self.row], dtype=np.int64)
        self.facts = kwargs["facts"]

    def check(self) -> bool:
        if self.ops is not None:
            return bool(self.ops.update(self.rows)[0] == SUCCESS)
        return bool(self.facts.cond[self.index][self.row])

    def tick(self) -> Iterator[behaviour.Behaviour]:
        """py_trees' ``EternalGuard.tick`` and ``Decorator.tick``, step for step, without
        the debug lines and the ``list(Status)`` check (see ``_AgentLeaf``)."""
        if not self.check():
            self.stop(_FAILURE)
            yield self
            return
        if self.status is not _RUNNING:
            self.initialise()
        yield from self.decorated.tick()
        new_status = self.update()
        if new_status is not _RUNNING:
            self.stop(new_status)
        self.status = new_status
        yield self

    def stop(self, new_status: Status) -> None:
        """py_trees' ``Decorator.stop`` without its debug line."""
        self.terminate(new_status)
        if new_status is _INVALID:
            self.decorated.stop(new_status)
        if self.decorated.status is _RUNNING:
            self.decorated.stop(_INVALID)
        self.status = new_status


# -------------------------------------------------------------- building


@dataclass
class BuildEnv:
    """What builders of one group need: the registries and the group's shared ops objects."""

    registries: Registries
    context: NodeContext | None  # None: a display-only tree (no ops run)
    ops: dict[int, Any] = field(default_factory=dict)

    def ops_for(self, index: int, model: Any) -> Any:
        """The group's one ops object of node ``index`` (made on first use)."""
        if self.context is None:
            return None
        if index not in self.ops:
            self.ops[index] = self.registries.node(model.type).impl(model, self.context)
        return self.ops[index]


BUILDERS = Builders("py_trees")
"""The py_trees engine's builders; a plugin composite or decorator may add its own."""

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

Kids = list[behaviour.Behaviour]


@BUILDERS.builds("sequence")
def _sequence(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    return py_trees.composites.Sequence(name=node.name, memory=node.model.memory, children=kids)


@BUILDERS.builds("selector")
def _selector(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    return py_trees.composites.Selector(name=node.name, memory=node.model.memory, children=kids)


@BUILDERS.builds("utility")
def _utility(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    return UtilityComposite(node, kids, env.ops_for(node.index, node.model))


@BUILDERS.builds("parallel")
def _parallel(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    m = node.model
    policy: common.ParallelPolicy.Base
    if m.policy == "success_on_all":
        policy = common.ParallelPolicy.SuccessOnAll(synchronise=m.synchronise)
    elif m.policy == "success_on_one":
        policy = common.ParallelPolicy.SuccessOnOne()
    else:
        chosen = [kids[i] for i in m.selected]
        policy = common.ParallelPolicy.SuccessOnSelected(children=chosen, synchronise=m.synchronise)
    return py_trees.composites.Parallel(name=node.name, policy=policy, children=kids)


@BUILDERS.builds(*_CONVERTERS)
def _converter(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    return _CONVERTERS[node.model.type](name=node.name, child=kids[0])


@BUILDERS.builds("timeout")
def _timeout(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    return SimTimeout(node.name, kids[0], node.model.duration)


@BUILDERS.builds("cooldown")
def _cooldown(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    return SimCooldown(node.name, kids[0], node.model.duration)


@BUILDERS.builds("repeat")
def _repeat(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    return py_trees.decorators.Repeat(
        name=node.name, child=kids[0], num_success=node.model.num_success
    )


@BUILDERS.builds("retry")
def _retry(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    return py_trees.decorators.Retry(
        name=node.name, child=kids[0], num_failures=node.model.num_failures
    )


@BUILDERS.builds("one_shot")
def _one_shot(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    policy = _ONE_SHOT[node.model.policy]
    return py_trees.decorators.OneShot(name=node.name, child=kids[0], policy=policy)


@BUILDERS.builds("eternal_guard")
def _eternal_guard(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    guard = guard_condition(node.model)
    ops = None if is_sensed(guard, env.registries) else env.ops_for(node.index, guard)
    return Guard(node.name, kids[0], node, ops)


@BUILDERS.builds_kind(STEERING, always)
def _steering(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    return SteeringLeaf(node.name, node)


@BUILDERS.builds_kind(CONDITION, sensed)
def _condition(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    return ConditionLeaf(node.name, node)


@BUILDERS.builds_kind(CONDITION, leaf_ops)
@BUILDERS.builds_kind(ACTION, leaf_ops)
def _ops_leaf(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    return OpsLeaf(node.name, node, env.ops_for(node.index, node.model))


@BUILDERS.builds_kind(DECORATOR, decorator_ops)
def _ops_decorator(node: FlatNode, kids: Kids, env: BuildEnv) -> behaviour.Behaviour:
    return OpsDecorator(node.name, kids[0], node, env.ops_for(node.index, node.model))


def build_behaviours(
    tree: FlatTree, env: BuildEnv, builders: Builders = BUILDERS
) -> list[behaviour.Behaviour]:
    """One agent's behaviours in flat order (index k = flat node k); element 0 is the root."""
    built: list[behaviour.Behaviour | None] = [None] * len(tree)
    for node in reversed(tree.nodes):  # children have larger indices: built first
        kids = [typing.cast(behaviour.Behaviour, built[c]) for c in node.children]
        builder = builders.find(node, env.registries)
        assert builder is not None, "EngineBase refuses unbuildable trees before building"
        built[node.index] = builder(node, kids, env)
    return typing.cast(list[behaviour.Behaviour], built)


def display_tree(tree: FlatTree, registries: Registries) -> list[behaviour.Behaviour]:
    """Behaviours for showing a tree's structure and statuses only (nothing runs)."""
    return build_behaviours(tree, BuildEnv(registries, None))


class SavedField(NamedTuple):
    """A py_trees decorator's own per-agent state under its batch node's ``per_agent`` name
    (``engines/base.SavedGroup``), so snapshots move between engines."""

    name: str
    dtype: Any
    read: Callable[[Any], int]
    write: Callable[[Any, int], None]


def _set(attr: str) -> Callable[[Any, int], None]:
    return lambda b, value: setattr(b, attr, value)


SAVED_FIELDS: dict[type, SavedField] = {
    SimTimeout: SavedField("start", np.int64, operator.attrgetter("start"), _set("start")),
    SimCooldown: SavedField(
        "ready_at", np.int64, operator.attrgetter("ready_at"), _set("ready_at")
    ),
    py_trees.decorators.Repeat: SavedField(
        "count", np.int64, operator.attrgetter("success"), _set("success")
    ),
    py_trees.decorators.Retry: SavedField(
        "count", np.int64, operator.attrgetter("failures"), _set("failures")
    ),
    py_trees.decorators.OneShot: SavedField(
        "final",
        np.int8,
        lambda b: 0 if b.final_status is None else CODE[b.final_status],
        lambda b, code: setattr(b, "final_status", STATUSES[code] if code else None),
    ),
}
"""Decorators that keep per-agent state besides their status, and how it is saved."""


@dataclass
class GroupTrees(GroupRuntime):
    """All agents' trees of one group, and what their leaves read this tick."""

    trees: list[py_trees.trees.BehaviourTree] = field(default_factory=list)
    nodes: list[list[behaviour.Behaviour]] = field(default_factory=list)  # per row, flat order
    clients: list[py_trees.blackboard.Client] = field(default_factory=list)
    facts: RowFacts = field(default_factory=lambda: RowFacts(0))
    env: BuildEnv | None = None  # the group's shared ops


def _release(clients: list[py_trees.blackboard.Client]) -> None:
    for client in clients:
        with contextlib.suppress(KeyError):
            client.unregister(clear=True)


def _composites(tree: FlatTree) -> list[int]:
    return [node.index for node in tree.nodes if node.kind == COMPOSITE]


def _saved_fields(behaviours: list[behaviour.Behaviour]) -> list[tuple[int, SavedField]]:
    """The nodes of one agent's tree whose behaviours keep per-agent state, with its field."""
    found = ((k, SAVED_FIELDS.get(type(b))) for k, b in enumerate(behaviours))
    return [(k, f) for k, f in found if f is not None]


class PyTreesEngine(EngineBase[GroupTrees]):
    """Decide with real py_trees trees, one per agent. See the module docstring."""

    name = "py_trees"
    default_builders = BUILDERS

    def __init__(self, sim: Any, builders: Builders | None = None) -> None:
        self.namespace = f"/sim{next(_serial)}/agents"
        self._all_clients: list[py_trees.blackboard.Client] = []
        weakref.finalize(self, _release, self._all_clients)
        self._pending: list[weakref.ref[Decision]] = []  # last tick's decisions (``decide``)
        super().__init__(sim, builders)
        self._skeletons: dict[str, list[behaviour.Behaviour]] = {}

    def _client(self, row: int) -> py_trees.blackboard.Client:
        """A new agent's blackboard client, in a namespace of its own id (never reused)."""
        agents = self.sim.agents
        client = py_trees.blackboard.Client(
            name=agents.names[row], namespace=f"{self.namespace}/id{int(agents.ids[row])}"
        )
        self._all_clients.append(client)
        return client

    def build_group(self, name: str, rows: slice, tree: FlatTree) -> GroupTrees:
        clients = [self._client(row) for row in range(rows.start, rows.stop)]
        board = ClientBoard(clients, self.declared(name), clock=self.sim)
        env = BuildEnv(self.registries, self.context(name, len(clients), board))
        g = GroupTrees(**self.group_record(name, rows, tree), board=board, clients=clients)
        g.env = env
        self._grow(g, len(clients))
        return g

    def _grow(self, g: GroupTrees, n: int) -> None:
        """Build fresh trees for the local rows that have none (None, or past the end of
        ``g.trees``; up to ``n``), then set every tree up; the collector paused meanwhile
        (thousands of small objects made at once set off full collections that walk every
        tree already built: a restore at 1,000 agents took 2.8 times as long)."""
        with collector_paused():
            self._build(g, n)

    def _build(self, g: GroupTrees, n: int) -> None:
        assert g.env is not None
        trees: list[Any] = g.trees
        nodes: list[Any] = g.nodes
        trees += [None] * (n - len(trees))
        nodes += [None] * (n - len(nodes))
        for local in range(n):
            if trees[local] is None:
                behaviours = build_behaviours(g.flat, g.env, self.builders)
                trees[local] = py_trees.trees.BehaviourTree(root=behaviours[0])
                nodes[local] = behaviours
                self._all_clients.extend(c for b in behaviours for c in b.blackboards)
        g.facts = RowFacts(len(g.flat), len(g.flat.steering))
        for local, bt in enumerate(g.trees):
            bt.setup(row=local, facts=g.facts, clock=self.sim, blackboard=g.clients[local])

    def resize_group(self, g: GroupTrees, change: RowChange) -> GroupTrees:
        """Survivors keep their own py_trees trees; new agents get fresh ones."""
        assert g.env is not None
        source = change.source.tolist()
        kept = set(source)
        _release([c for i, c in enumerate(g.clients) if i not in kept])
        start = change.rows.start
        clients = [
            g.clients[s] if s >= 0 else self._client(start + r) for r, s in enumerate(source)
        ]
        fresh = [r for r, s in enumerate(source) if s < 0]
        assert isinstance(g.board, ClientBoard)
        board = ClientBoard(clients, g.board.declared, fresh=fresh, clock=self.sim)
        board.stamps.carry(g.board.stamps, change.source)
        env = BuildEnv(self.registries, self.context(g.name, change.n, board))
        for index, ops in g.env.ops.items():
            model = g.flat.nodes[index].model
            carry_rows(ops, env.ops_for(index, guard_condition(model) or model), change.source)
        new = GroupTrees(**self.group_record(g.name, change.rows, g.flat), board=board)
        new.clients, new.env = clients, env
        trees: list[Any] = [g.trees[s] if s >= 0 else None for s in source]
        nodes: list[Any] = [g.nodes[s] if s >= 0 else None for s in source]
        new.trees, new.nodes = trees, nodes
        for behaviours in nodes:
            for b in behaviours or ():
                if getattr(b, "ops", None) is not None:
                    b.ops = env.ops[b.index]
        self._grow(new, change.n)
        return new

    def store_facts(self, g: GroupTrees, facts: TickFacts) -> None:
        """As Python lists: a leaf's update indexes them without touching NumPy."""
        for index, codes in facts.leaf.items():
            g.facts.leaf[index] = codes.tolist()
        for index, result in facts.cond.items():
            g.facts.cond[index] = result.tolist()
        # a fresh buffer: last tick's is in use; with LOD it starts as the held requests
        if g.thinking is None:
            g.facts.emitted = bytearray(g.n * g.facts.width)
        else:
            g.facts.emitted = bytearray(self.start_emitted(g).tobytes())

    def decide(self, sim: Any, sense: Sense) -> dict[str, Decision]:
        """Tick every tree; a Decision of the last tick still held elsewhere is read first.

        Statuses are left in the trees (``TreeStatuses``) until somebody asks. The
        Simulation drops its own ``decisions`` before deciding, so a last-tick
        Decision alive now is held by a reader (a test, a game): its statuses are
        read before the trees change. Nobody holding it: nothing is read.
        """
        pending, self._pending = self._pending, []
        for ref in pending:
            decision = ref()
            if decision is not None and not decision.collected:
                decision.status  # noqa: B018 (reading it keeps it)
        decisions = super().decide(sim, sense)
        self._pending = [weakref.ref(d) for d in decisions.values()]
        return decisions

    def tick_group(self, g: GroupTrees) -> Decision:
        trees = g.trees if g.thinking is None else [g.trees[r] for r in g.thinking.tolist()]
        for bt in trees:
            for _ in bt.root.tick():  # py_trees' tick_once, without one call per agent
                pass
            bt.count += 1
        emitted = np.frombuffer(g.facts.emitted, dtype=bool).reshape(g.n, g.facts.width)
        return Decision(emitted=emitted, status=TreeStatuses(g.nodes, len(g.flat)))

    def _saved_fields(self, g: GroupTrees) -> list[tuple[int, SavedField]]:
        """``g``'s nodes that keep per-agent state (read off a display-only tree: a group
        may have no agents)."""
        nodes = self._skeletons.get(g.name)
        if nodes is None:
            nodes = self._skeletons[g.name] = display_tree(g.flat, self.registries)
        return _saved_fields(nodes)

    def node_ops(self, g: GroupTrees) -> dict[int, Any]:
        return {} if g.env is None else g.env.ops

    def export_tree(self, g: GroupTrees) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        n, width = g.n, len(g.flat)
        flat = [b for behaviours in g.nodes for b in behaviours]
        status = np.ascontiguousarray(status_codes(flat).reshape(n, width).T)
        current = np.full((width, n), -1, dtype=np.int16)
        for k in _composites(g.flat):
            for r, behaviours in enumerate(g.nodes):
                b = typing.cast(py_trees.composites.Composite, behaviours[k])
                if b.current_child is not None:
                    current[k, r] = b.children.index(b.current_child)
        arrays = {
            f"node{k}.{f.name}": np.array([f.read(row[k]) for row in g.nodes], dtype=f.dtype)
            for k, f in self._saved_fields(g)
        }
        return status, current, arrays

    def import_tree(self, g: GroupTrees, saved: SavedGroup) -> None:
        composites = _composites(g.flat)
        codes, current = saved.status.T.tolist(), saved.current.T.tolist()
        for behaviours, row, cur in zip(g.nodes, codes, current, strict=True):
            for b, code in zip(behaviours, row, strict=True):
                b.status = STATUSES[code]
            for k in composites:
                c = typing.cast(py_trees.composites.Composite, behaviours[k])
                c.current_child = c.children[cur[k]] if cur[k] >= 0 else None
        for k, f in self._saved_fields(g):
            values = saved.arrays[f"node{k}.{f.name}"].tolist()
            for behaviours, value in zip(g.nodes, values, strict=True):
                f.write(behaviours[k], value)

    def display(self, g: GroupTrees, local: int) -> behaviour.Behaviour:
        return g.trees[local].root

    def tree(self, agent: int) -> py_trees.trees.BehaviourTree:
        g, local = self.locate(agent)
        return g.trees[local]

    def node_status(self, agent: int) -> np.ndarray:
        g, local = self.locate(agent)
        return status_codes(g.nodes[local])
