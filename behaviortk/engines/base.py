"""What every engine is (``Engine``) and the group-runtime skeleton both engines share.

An engine turns this tick's sensed facts into each group's ``Decision``. The
skeleton here owns everything that does not depend on how trees are ticked:
checking at construction that every node can be built, the per-group record
(rows, flat tree, blackboards, sensed nodes), the prepare step (leaf statuses
and sensed conditions for whole groups, ``engines/facts.py``), the decide loop,
locating an agent, the snapshot text and blackboard access (each group's
declared keys, a plain snapshot, a live view for the game). An engine supplies
only its builders (``builders.py``) and its hooks: ``build_group``,
``store_facts``, ``tick_group``, ``display``, ``node_ops`` (the group's shared
ops objects by node, whose ``prepare(sense)`` the skeleton calls each tick
before any tree ticks, ``tree/ops.py``, and ``observe(decision, rows)``, where an ops
object has one, after the group's trees ticked: a `utility` remembers there which
watched nodes ended the tick in SUCCESS), ``resize_group``, and ``export_tree`` /
``import_tree`` (a snapshot's tree state, :class:`SavedGroup`).

Think-rate LOD (``sim/think.py``): when ``sense.thinking`` names a group's thinkers,
``GroupRuntime.thinking`` holds them and ``tick_group`` ticks only those rows; every
other agent keeps its last decision: its tree's statuses (nothing touches them) and its
requests (``emitted`` starts as the last tick's, ``start_emitted``, and only the
thinkers' rows are cleared and asked again). ``Decision.thought`` says who thought.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np
import py_trees

from behaviortk.engines.builders import Builders
from behaviortk.engines.facts import TickFacts, compute_facts, sensed_nodes
from behaviortk.errors import SimulationError
from behaviortk.registry import Registries
from behaviortk.sense.sensing import Sense
from behaviortk.tree.blackboard import BlackboardView, Keys, SavedKey
from behaviortk.tree.flat import Decision, FlatNode, FlatTree
from behaviortk.tree.ops import NULL_SINK, Board, NodeContext
from behaviortk.world.rows import GroupMove, moved_copy

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class EngineError(ValueError):
    """A definition an engine cannot run; raised when the Simulation is made."""


class RowChange:
    """How one group's rows change when agents spawn or despawn (or are re-sorted).

    ``source`` gives each new local row the old local row it takes, -1 for a new
    agent, who starts as a fresh build would; the group's new size is
    ``rows.stop - rows.start``. A spawn or despawn also gives ``move``
    (``world/rows.GroupMove``): the same change as a few rows moved in place, and
    ``source`` is then worked out only when asked.
    """

    __slots__ = ("_source", "move", "rows")

    def __init__(
        self, rows: slice, source: np.ndarray | None = None, move: GroupMove | None = None
    ) -> None:
        if source is None and move is None:
            raise ValueError("a RowChange needs source or move")
        self.rows, self._source, self.move = rows, source, move

    @property
    def source(self) -> np.ndarray:  # int64 old local rows, -1 for new agents
        if self._source is None:
            assert self.move is not None
            self._source = self.move.source()
        return self._source

    @property
    def n(self) -> int:
        return self.rows.stop - self.rows.start

    def keeps_all(self, n_old: int) -> bool:
        """Whether every one of ``n_old`` agents stays, in place, and nobody joins."""
        if self.move is not None:
            return not self.move.changed
        src = self.source
        return src.size == self.n == n_old and bool((src == np.arange(src.size)).all())


@dataclass
class SavedGroup:
    """One group's decide state, the same whichever engine held it (a snapshot's,
    ``sim/snapshot.py``), so a py_trees snapshot restores on batch and back.

    ``status`` and ``current`` are ``(nodes, n)``: each node's status code and, for a
    composite, the position of py_trees' ``current_child`` (-1: None). ``arrays`` hold the
    rest, each ``(n, ...)``: ``node<k>.<name>`` a decorator's own counters and clocks (the
    batch nodes' ``per_agent`` names: ``repeat`` and ``retry`` ``count``, ``one_shot``
    ``final``, a status code, ``timeout`` ``start``, ``cooldown`` ``ready_at``, in ticks),
    ``ops<k>.<name>`` the ``per_agent`` arrays of node ``k``'s ops (``wait``'s ``start``),
    ``prev<k>`` a sensed node's last result (hysteresis), ``held`` (think-rate LOD, when
    some agents did not think) the requests they keep. ``board``: the blackboards.
    """

    status: np.ndarray
    current: np.ndarray
    arrays: dict[str, np.ndarray]
    board: dict[str, SavedKey]


class Engine(Protocol):
    """What a Simulation needs of an engine."""

    @property
    def name(self) -> str: ...

    def prepare(self, sim: Any, sense: Sense) -> None:
        """Compute this tick's group-wide facts (timed as the *sense* phase)."""
        ...

    def decide(self, sim: Any, sense: Sense) -> dict[str, Decision]:
        """Tick every tree once; works without ``prepare`` too."""
        ...

    def snapshot(self, agent: int) -> str: ...
    def node_status(self, agent: int) -> np.ndarray: ...
    def blackboard(self, agent: int) -> dict[str, Any]: ...
    def blackboard_view(self, agent: int) -> BlackboardView: ...
    def blackboard_points(self, group: str, key: str, rows: np.ndarray) -> np.ndarray: ...
    def blackboard_passes(
        self, group: str, key: str, op: str, rhs: Any, rows: np.ndarray
    ) -> np.ndarray: ...

    def regroup(self, changes: dict[str, RowChange]) -> None:
        """Agents spawned or despawned: the groups' new rows (``sim.agents`` already has them)."""
        ...

    def export_state(self) -> dict[str, SavedGroup]:
        """Every group's decide state, engine-neutral (a snapshot's)."""
        ...

    def import_state(self, saved: dict[str, SavedGroup]) -> None:
        """Hold what ``export_state`` of an engine of either kind gave."""
        ...


@dataclass
class GroupRuntime:
    """One group's tree as an engine runs it; engines subclass it with their own state."""

    name: str
    rows: slice  # global rows of the group
    flat: FlatTree
    board: Board
    sensed: list[FlatNode]  # sensed conditions and guards, evaluated for every agent every tick
    prev: dict[int, np.ndarray]  # last tick's result per sensed node (hysteresis)
    thinking: np.ndarray | None = None
    """This tick's local rows that tick their tree (``sim/think.py``); None: every row."""
    held: np.ndarray | None = None
    """The last Decision's ``emitted`` (rows follow spawns), kept while some rows do not
    think: their requests are held (module docstring)."""

    @property
    def n(self) -> int:
        return self.rows.stop - self.rows.start

    def every_row(self) -> np.ndarray:
        """Every local row, int64."""
        return np.arange(self.n, dtype=np.int64)


G = TypeVar("G", bound=GroupRuntime)


class EngineBase(ABC, Generic[G]):
    """The shared skeleton. See the module docstring."""

    name: ClassVar[str]
    default_builders: ClassVar[Builders]

    def __init__(self, sim: Any, builders: Builders | None = None) -> None:
        self.sim = sim
        self.registries: Registries = sim.registries
        self.builders = type(self).default_builders if builders is None else builders
        self._refuse_unbuildable()
        self.groups: dict[str, G] = {}
        for group, tree in sim.trees.items():
            self.groups[group] = self.build_group(group, sim.agents.slices[group], tree)
        self._prepared: Sense | None = None

    def _refuse_unbuildable(self) -> None:
        problems = []
        for group, tree in self.sim.trees.items():
            for node in self.builders.unbuildable(tree, self.registries):
                problems.append(
                    f"group {group!r}, node {node.path!r}: the {self.name} engine cannot build "
                    f"{node.kind} {node.model.type!r} (it builds {', '.join(self.builders.tags())}, "
                    "steering leaves, conditions, and actions and decorators written as ops)"
                )
        if problems:
            raise EngineError("; ".join(problems))

    # ------------------------------------------------------------ hooks
    @abstractmethod
    def build_group(self, name: str, rows: slice, tree: FlatTree) -> G:
        """Build the group's trees (or compiled program) and its blackboards."""

    @abstractmethod
    def store_facts(self, g: G, facts: TickFacts) -> None:
        """Hand this tick's facts to the group's leaves in the engine's own shape."""

    @abstractmethod
    def tick_group(self, g: G) -> Decision:
        """Tick the group's trees once for every agent."""

    @abstractmethod
    def node_ops(self, g: G) -> dict[int, Any]:
        """The group's shared ops objects (``tree/ops.py``) by flat node index."""

    def group_ops(self, g: G) -> Iterable[Any]:
        """The group's shared ops objects, each once."""
        return self.node_ops(g).values()

    @abstractmethod
    def export_tree(self, g: G) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """``(status, current, node arrays)`` of ``g``'s agents as :class:`SavedGroup` has them
        (copies)."""

    @abstractmethod
    def import_tree(self, g: G, saved: SavedGroup) -> None:
        """Set ``g``'s trees to ``saved``'s statuses, current children and node arrays."""

    @abstractmethod
    def display(self, g: G, local: int) -> py_trees.behaviour.Behaviour:
        """A py_trees tree showing ``local``'s statuses (for :meth:`snapshot`)."""

    @abstractmethod
    def node_status(self, agent: int) -> np.ndarray:
        """int8 status of every node of the agent's tree, flat order."""

    @abstractmethod
    def resize_group(self, g: G, change: RowChange) -> G:
        """The group after ``change``: survivors keep every bit of tree state, new agents
        start as a fresh build would (``sim.agents`` already has the new rows). An engine
        may change ``g`` in place and return it (then it carries ``prev`` itself)."""

    def regroup(self, changes: dict[str, RowChange]) -> None:
        """Apply spawns and despawns: every group's new rows (see :class:`RowChange`)."""
        for name, change in changes.items():
            old = self.groups.get(name)
            if old is None:  # an external group: no tree
                continue
            if change.keeps_all(old.n):
                old.rows = change.rows
                continue
            held = old.held
            new = self.resize_group(old, change)
            if new is not old:  # rebuilt: carry the survivors' hysteresis
                src = change.source
                kept = src >= 0
                for index, prev in old.prev.items():
                    new.prev[index][kept] = prev[src[kept]]
            new.held = None if held is None else carried(held, change)
            self.groups[name] = new
        self._prepared = None

    # ----------------------------------------------------------- snapshots
    def export_state(self) -> dict[str, SavedGroup]:
        """Every group's decide state, engine-neutral (:class:`SavedGroup`; copies)."""
        out = {}
        for name, g in self.groups.items():
            status, current, arrays = self.export_tree(g)
            for k, ops in sorted(self.node_ops(g).items()):
                for field in type(ops).per_agent:
                    arrays[f"ops{k}.{field}"] = getattr(ops, field)[: g.n].copy()
            for k, prev in g.prev.items():
                arrays[f"prev{k}"] = prev[: g.n].copy()
            if g.held is not None:  # think-rate LOD: the requests that agents not thinking keep
                arrays["held"] = g.held[: g.n].copy()
            out[name] = SavedGroup(status, current, arrays, g.board.saved())
        return out

    def import_state(self, saved: dict[str, SavedGroup]) -> None:
        """Hold ``saved``: :meth:`export_state` of an engine of either kind with the same trees
        and rows (the snapshot reader has checked its names, shapes and values)."""
        for name, g in self.groups.items():
            s = saved[name]
            self.import_tree(g, s)
            for k, ops in self.node_ops(g).items():
                for field in type(ops).per_agent:
                    getattr(ops, field)[: g.n] = s.arrays[f"ops{k}.{field}"]
            for k, prev in g.prev.items():
                prev[: g.n] = s.arrays[f"prev{k}"]
            g.held = s.arrays.get("held")
            g.board.load_saved(s.board)
        self._prepared = None

    # ----------------------------------------------------------- shared
    def declared(self, group: str) -> Keys:
        """The blackboard keys ``group``'s trees declare (``Scenario.blackboards``)."""
        specs = getattr(self.sim.scenario, "blackboards", {}).get(group, {})
        return Keys(specs, group)

    def context(self, group: str, n_agents: int, board: Board) -> NodeContext:
        """The group's ``NodeContext``; events go to ``sim.event_log`` (dropped without one)."""
        events = getattr(self.sim, "event_log", NULL_SINK)
        return NodeContext(
            group=group,
            n_agents=n_agents,
            clock=self.sim,
            board=board,
            events=events,
            tree=self.sim.trees.get(group),
            registries=self.registries,
        )

    def group_record(self, name: str, rows: slice, tree: FlatTree) -> dict[str, Any]:
        """The fields every ``GroupRuntime`` has, apart from the board."""
        sensed = sensed_nodes(tree, self.registries)
        n = rows.stop - rows.start
        return dict(
            name=name,
            rows=rows,
            flat=tree,
            sensed=sensed,
            prev={node.index: np.zeros(n, dtype=bool) for node in sensed},
        )

    def prepare(self, sim: Any, sense: Sense) -> None:
        memory = getattr(self.sim, "memory", {})
        thinking = sense.thinking
        sense.deciding = True  # only the thinkers' rows of these facts are read
        try:
            for g in self.groups.values():
                g.thinking = None if thinking is None else thinking.rows.get(g.name)
                if g.thinking is None:
                    g.held = None
                facts = compute_facts(g.flat, g.name, g.sensed, g.prev, sense, memory, g.thinking)
                self.store_facts(g, facts)
                for ops in self.group_ops(g):
                    ops.prepare(sense)
        finally:
            sense.deciding = False
        self._prepared = sense

    def decide(self, sim: Any, sense: Sense) -> dict[str, Decision]:
        if self._prepared is not sense:
            self.prepare(sim, sense)
        self._prepared = None
        decisions = {}
        for g in self.groups.values():
            decision = decisions[g.name] = self.tick_group(g)
            for ops in self.group_ops(g):
                observe = getattr(ops, "observe", None)
                if observe is not None:  # ops that remember how the tick ended (`utility`)
                    observe(decision, g.every_row() if g.thinking is None else g.thinking)
            if g.thinking is not None:
                thought = np.zeros(g.n, dtype=bool)
                thought[g.thinking] = True
                decision.thought = thought
                g.held = decision.emitted
        return decisions

    def start_emitted(self, g: G) -> np.ndarray:
        """This tick's requests before any tree ticks: none, or with LOD the last tick's,
        the thinkers' rows cleared (they ask again when their tree ticks)."""
        width = len(g.flat.steering)
        if g.thinking is None or g.held is None or g.held.shape != (g.n, width):
            return np.zeros((g.n, width), dtype=bool)
        kernels = getattr(self.sim, "kernels", None)
        if kernels is not None:
            found: np.ndarray = kernels.held_requests(g.held, g.thinking)
            return found
        emitted = g.held.copy()
        if width:  # each row as one value: a quarter of the time of clearing rows of bools
            row = np.dtype((np.void, width))
            emitted.view(row).reshape(-1)[g.thinking] = np.zeros((), dtype=row)
        return emitted

    def locate(self, agent: int) -> tuple[G, int]:
        """The group runtime of global row ``agent`` and its row within the group."""
        agents = self.sim.agents
        if not 0 <= agent < agents.n:
            raise SimulationError(f"agent row {agent} out of range (0..{agents.n - 1})")
        group = agents.group_names[int(agents.group[agent])]
        g = self.groups.get(group)
        if g is None:
            raise SimulationError(
                f"agent row {agent} is in group {group!r}, moved by the game: it has no tree"
            )
        return g, agent - g.rows.start

    def snapshot(self, agent: int) -> str:
        """py_trees' unicode rendering of the agent's tree with statuses (no colour codes)."""
        g, local = self.locate(agent)
        text = py_trees.display.unicode_tree(self.display(g, local), show_status=True)
        return _ANSI.sub("", text)

    def blackboard(self, agent: int) -> dict[str, Any]:
        """The agent's blackboard as ``{key: value}`` (unset keys left out)."""
        g, local = self.locate(agent)
        values = {key: g.board.get(key, local) for key in g.board.stored_keys()}
        return {key: value for key, value in values.items() if value is not None}

    def blackboard_view(self, agent: int) -> BlackboardView:
        """Global row ``agent``'s blackboard as a live, checked mapping (``tree/blackboard.py``)."""
        g, local = self.locate(agent)
        return BlackboardView(g.board, local, g.board.declared)

    def blackboard_points(self, group: str, key: str, rows: np.ndarray) -> np.ndarray:
        """``(n, 2)`` points stored under ``key`` for global ``rows``; NaN where unset or not a point."""
        g = self.groups[group]
        return g.board.points(key, np.asarray(rows, dtype=np.int64) - g.rows.start)

    def blackboard_passes(
        self, group: str, key: str, op: str, rhs: Any, rows: np.ndarray
    ) -> np.ndarray:
        """``compare(op, value under key, rhs)`` for ``group``'s local ``rows``, as a bool array
        (``tree/ops.Board.passes``, ``blackboard_compare``'s rule; breakpoints read it)."""
        return self.groups[group].board.passes(key, op, rhs, rows)


def carried(rows: np.ndarray, change: RowChange) -> np.ndarray:
    """A per-agent array after ``change``: survivors keep their rows, new agents get zeros."""
    if change.move is not None:
        return moved_copy(rows, change.move, 0)
    source = change.source
    out = np.zeros((change.n, *rows.shape[1:]), dtype=rows.dtype)
    kept = np.flatnonzero(source >= 0)
    out[kept] = rows[source[kept]]
    return out


def as_point(value: Any) -> tuple[float, float] | None:
    """A stored value as a finite ``(x, y)``, or None (boards use it for ``points``)."""
    if isinstance(value, list | tuple | np.ndarray) and len(value) == 2:
        x, y = value[0], value[1]
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y)):
            fx, fy = float(x), float(y)
            if np.isfinite(fx) and np.isfinite(fy):
                return (fx, fy)
    return None
