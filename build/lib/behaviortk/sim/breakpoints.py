"""Breakpoints: stop a run where a node's status, an event or a blackboard value says so.

Set with ``Simulation.break_on`` (each call returns a :class:`Breakpoint`, whose
``remove()`` takes it away)::

    sim.break_on(node=PATH, status="RUNNING", agent=None, group=None)
    sim.break_on(event=NAME, agent=None)
    sim.break_on(blackboard=(KEY, OP, VALUE), agent=None, group=None)

A node is named by its path as the trace header lists it (``FlatNode.path``,
``"guard/decide[2]/chase[0]"``) or by its name when that names one node of the tree
(``"chase"``); without ``group`` or ``agent`` every group whose tree has it is
watched. ``agent`` is an id, ``group`` a group name; ``OP`` is one of
``blackboard_compare``'s (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``) and ``VALUE`` of
the key's declared type. A bad argument is a ``SimulationError`` naming it (an
unknown node lists the closest paths) and sets nothing.

**When a breakpoint hits.** Breakpoints are checked at the end of every step, after
the tick's events are collected (``sim.hit``: that step's hit, or None), so
``sim.run``, ``advance`` and a game calling ``step`` see the same hits:

* node: an agent's node *became* ``status``: it has it after this step and had
  another status after the previous one (or when the breakpoint was set; an agent
  spawned since starts from INVALID, as its trace row does). Statuses are the ones a
  trace records (``Decision.status``). A node's status changes only on ticks its
  agent thinks (``sim/think.py``), so with think-rate LOD a hit is always on one of
  the agent's thinking ticks. From a fresh simulation the first hit is the first tick
  on which any agent's node has that status;
* event: the step raised event ``NAME`` (``sim.events``: an ``emit`` node's event,
  ``spawn``, ``despawn``, or ``status`` for watched agents);
* blackboard: ``compare(OP, value, VALUE)`` (``blackboard_compare``'s rule: an unset
  key is false) became true for an agent: true after this step, false after the
  previous one or when set (an agent spawned since starts from its declared default).

One hit per step: the lowest agent id it happens for, and for that agent the
breakpoint set first. Its ``tick`` is the step's 0-based index, the ``tick`` a trace
record of that step carries (``sim.tick`` is then ``tick + 1``).

**Cost.** With no breakpoint set a step tests one empty list. The node breakpoints of a
group share one comparison of its statuses with the last step's and look only at the
entries that changed (``sim/break_watches.GroupStatuses``; no loop over agents; the
py_trees engine reads the watched nodes' statuses alone); each blackboard breakpoint
reads the board's comparison for its group (``tree/ops.Board.passes``), each event one
scans the step's events. ``benchmarks/bench_breakpoints.py`` measures it.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, get_args

from behaviortk.errors import SimulationError
from behaviortk.format.blackboard_keys import NOUNS
from behaviortk.format.semantic import ORDERING
from behaviortk.leaves.conditions import Op
from behaviortk.registry import choices
from behaviortk.sim.break_watches import (
    BoardWatch,
    EventWatch,
    GroupStatuses,
    NodeWatch,
    Watch,
)
from behaviortk.sim.break_watches import Simulation as Watched
from behaviortk.tree.blackboard import Keys
from behaviortk.tree.status import FAILURE, RUNNING, STATUS_NAMES, SUCCESS

OPS: tuple[str, ...] = get_args(Op)
"""The comparisons a blackboard breakpoint takes: ``blackboard_compare``'s."""
STATUSES = {STATUS_NAMES[code]: code for code in (RUNNING, SUCCESS, FAILURE)}
"""The statuses a node breakpoint waits for, by name."""
CLOSEST = 5
"""Paths an unknown node's message suggests."""


class Simulation(Watched, Protocol):
    """What breakpoints use of ``sim/simulation.Simulation`` (which imports this module)."""

    event_log: Any

    def row_of(self, agent_id: Any) -> int: ...
    def locate(self, agent: int) -> tuple[str, int]: ...


@dataclass(frozen=True)
class Hit:
    """Where a breakpoint hit: the step's ``tick`` (0-based, as traces number records), the
    ``agent`` (an id) and the ``breakpoint``; a node hit has ``group``, ``node`` (the path)
    and ``status``; an event hit ``event``; a blackboard hit ``group``, ``key`` and the
    agent's ``value``."""

    tick: int
    agent: int
    breakpoint: Breakpoint
    group: str | None = None
    node: str | None = None
    status: str | None = None
    event: str | None = None
    key: str | None = None
    value: Any = None

    def __str__(self) -> str:
        """The line ``behaviortk run --break`` prints: ``break: tick 240, agent 17, node
        guard/spot[0]/chase, RUNNING`` (``event caught``; ``blackboard alarm == true, value true``;
        values as JSON)."""
        where = f"break: tick {self.tick}, agent {self.agent}, "
        if self.node is not None:
            return f"{where}node {self.node}, {self.status}"
        if self.event is not None:
            return f"{where}event {self.event}"
        _, op, rhs = self.breakpoint.target
        return f"{where}blackboard {self.key} {op} {_text(rhs)}, value {_text(self.value)}"

    def reason(self) -> str:
        """Why a run stopped, in words (the viewer's status line, a trace's end record)."""
        if self.node is not None:
            what = f"{self.node} became {self.status}"
        elif self.event is not None:
            what = f"event {self.event}"
        else:
            _, op, rhs = self.breakpoint.target
            what = f"{self.key} {op} {_text(rhs)} became true (value {_text(self.value)})"
        return f"breakpoint: {what} for agent {self.agent} at tick {self.tick}"


class Breakpoint:
    """One breakpoint (``Simulation.break_on`` returns it): what it waits for, and
    ``remove()``. ``kind`` is ``"node"``, ``"event"`` or ``"blackboard"``; ``spec`` says
    what it waits for in ``--break`` syntax (``guard/spot[0]/chase=RUNNING``,
    ``event=caught``, ``blackboard=alarm==true``)."""

    def __init__(
        self,
        owner: Breakpoints,
        kind: str,
        target: Any,
        spec: str,
        agent: int | None,
        group: str | None,
        watches: list[Watch],
    ) -> None:
        self._owner = owner
        self.kind, self.target, self.spec = kind, target, spec
        self.agent, self.group = agent, group
        self.watches = watches

    @property
    def active(self) -> bool:
        """Whether it is still set (``remove()`` clears it)."""
        return self in self._owner.points

    def remove(self) -> None:
        """Stop checking it; removing it again does nothing."""
        if self in self._owner.points:
            self._owner.points.remove(self)
            for watch in self.watches:
                watch.disarm()

    def __repr__(self) -> str:
        who = "" if self.agent is None else f", agent {self.agent}"
        where = "" if self.group is None else f", group {self.group!r}"
        return f"Breakpoint({self.spec!r}{who}{where})"


class Breakpoints:
    """A Simulation's breakpoints, in the order they were set (see the module docstring)."""

    def __init__(self) -> None:
        self.points: list[Breakpoint] = []
        self.statuses: dict[str, GroupStatuses] = {}
        """Each group's statuses after the last step, shared by its node watches."""

    def add(
        self,
        sim: Simulation,
        *,
        node: Any = None,
        status: Any = None,
        event: Any = None,
        blackboard: Any = None,
        agent: Any = None,
        group: Any = None,
    ) -> Breakpoint:
        """Check every argument, then set the breakpoint (nothing is set when one is bad)."""
        kinds = (("node", node), ("event", event), ("blackboard", blackboard))
        given = [name for name, value in kinds if value is not None]
        if len(given) != 1:
            raise SimulationError(
                "break_on takes one of node=PATH, event=NAME or blackboard=(KEY, OP, VALUE), "
                f"got {' and '.join(given) if given else 'none'}"
            )
        agent_id = None if agent is None else _agent_id(sim, agent)
        if node is None and status is not None:
            raise SimulationError(f"status= goes with node=, not with {given[0]}=")
        if event is not None:
            if group is not None:
                raise SimulationError(
                    "an event breakpoint takes agent= (an id), not group=: events name agents"
                )
            return self._set(sim, "event", *_event(sim, event), agent_id, None)
        groups = _groups(sim, group, agent_id)
        if node is not None:
            made = _node(sim, node, status, groups, self.statuses)
            return self._set(sim, "node", *made, agent_id, group)
        return self._set(sim, "blackboard", *_blackboard(sim, blackboard, groups), agent_id, group)

    def _set(
        self,
        sim: Simulation,
        kind: str,
        target: Any,
        spec: str,
        watches: list[Watch],
        agent: int | None,
        group: str | None,
    ) -> Breakpoint:
        point = Breakpoint(self, kind, target, spec, agent, group, watches)
        for watch in watches:
            watch.arm(sim)
        self.points.append(point)
        return point

    def check(self, sim: Simulation) -> Hit | None:
        """The step just taken's hit (lowest agent id, then the breakpoint set first), or None;
        every breakpoint moves on to this step's state, hit or not."""
        best: tuple[int, int, Watch] | None = None
        for order, point in enumerate(self.points):
            for watch in point.watches:
                agent = watch.check(sim, point.agent)
                if agent is not None and (best is None or (agent, order) < best[:2]):
                    best = (agent, order, watch)
        if best is None:
            return None
        agent, order, watch = best
        return Hit(sim.tick - 1, agent, self.points[order], **watch.fields(sim))


# ------------------------------------------------------------------ arguments


def _agent_id(sim: Simulation, agent: Any) -> int:
    """A live agent's id (``Simulation.row_of`` refuses a malformed, unknown or despawned one)."""
    row = sim.row_of(agent)
    return int(sim.agents.ids[row])


def _tree_groups(sim: Simulation) -> list[str]:
    return list(sim.trees)


def _groups(sim: Simulation, group: Any, agent: int | None) -> list[str]:
    """The groups a node or blackboard breakpoint watches: ``group``, the agent's, or all."""
    if group is not None:
        names = [g.name for g in sim.scenario.definition.groups]
        if not isinstance(group, str) or group not in names:
            raise SimulationError(f"unknown group {group!r}{choices(str(group), names)}")
        if group not in sim.trees:
            raise SimulationError(
                f"group {group!r} is moved by the game: it has no tree to break in "
                f"(groups with trees: {', '.join(_tree_groups(sim)) or 'none'})"
            )
    if agent is None:
        return [group] if group is not None else _tree_groups(sim)
    own, _ = sim.locate(sim.row_of(agent))
    if group is not None and own != group:
        raise SimulationError(f"agent {agent} is in group {own!r}, not {group!r}")
    if own not in sim.trees:
        raise SimulationError(
            f"agent {agent} is in group {own!r}, moved by the game: it has no tree"
        )
    return [own]


def _where(groups: list[str]) -> str:
    return f" in group {groups[0]!r}" if len(groups) == 1 else ""


def resolve_node(sim: Simulation, node: Any, groups: list[str]) -> list[tuple[str, int]]:
    """``(group, node index)`` of every group in ``groups`` whose tree has the path ``node``,
    else the one node named ``node``; ``SimulationError`` for an unknown node (listing the
    closest paths) or a name that several nodes of one tree share (listing their paths)."""
    if not isinstance(node, str) or not node:
        raise SimulationError(f"node must be a node path or name (a string), got {node!r}")
    found: list[tuple[str, int]] = []
    for group in groups:
        found += [(group, n.index) for n in sim.trees[group].nodes if n.path == node]
    if found:
        return found
    for group in groups:
        named = [n for n in sim.trees[group].nodes if n.name == node]
        if len(named) > 1:
            paths = ", ".join(n.path for n in named)
            raise SimulationError(
                f"{len(named)} nodes of group {group!r} are named {node!r} ({paths}); "
                "give the path of one"
            )
        found += [(group, n.index) for n in named]
    if found:
        return found
    raise SimulationError(
        f"unknown node {node!r}{_where(groups)}; {closest_paths(sim, node, groups)}"
    )


def closest_paths(sim: Simulation, word: str, groups: list[str]) -> str:
    """``closest paths: a, b (group)`` (difflib over every path and node name of ``groups``;
    the close ones, else the five nearest)."""
    by_word: dict[str, list[str]] = {}
    for group in groups:
        suffix = "" if len(groups) == 1 else f" ({group})"
        for n in sim.trees[group].nodes:
            for key in (n.path, n.name):
                by_word.setdefault(key, []).append(n.path + suffix)
    if not by_word:
        return "no group has a tree"
    words = list(by_word)
    near = difflib.get_close_matches(word, words, n=CLOSEST, cutoff=0.6)
    near = near or difflib.get_close_matches(word, words, n=CLOSEST, cutoff=0.0)
    paths = list(dict.fromkeys(p for w in near for p in by_word[w]))[:CLOSEST]
    return f"closest paths: {', '.join(paths)}"


def _status(status: Any) -> int:
    name = "RUNNING" if status is None else status
    code = STATUSES.get(name.upper()) if isinstance(name, str) else None
    if code is None:
        raise SimulationError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
    return code


def _node(
    sim: Simulation,
    node: Any,
    status: Any,
    groups: list[str],
    statuses: dict[str, GroupStatuses],
) -> tuple[Any, str, list[Watch]]:
    code = _status(status)
    targets = resolve_node(sim, node, groups)
    path = sim.trees[targets[0][0]].nodes[targets[0][1]].path
    watches: list[Watch] = []
    for group, index in targets:
        shared = statuses.get(group)
        if shared is None:
            shared = statuses[group] = GroupStatuses(group, len(sim.trees[group]))
        watches.append(NodeWatch(shared, index, code))
    return (path, STATUS_NAMES[code]), f"{path}={STATUS_NAMES[code]}", watches


def _event(sim: Simulation, event: Any) -> tuple[Any, str, list[Watch]]:
    known = sim.event_log.known_names()
    if not isinstance(event, str) or event not in known:
        raise SimulationError(f"no node raises event {event!r}; choose one of {', '.join(known)}")
    return event, f"event={event}", [EventWatch(event)]


def _blackboard(sim: Simulation, condition: Any, groups: list[str]) -> tuple[Any, str, list[Watch]]:
    if (
        isinstance(condition, str | bytes)
        or not isinstance(condition, Sequence)
        or len(condition) != 3
    ):
        raise SimulationError(
            f"blackboard= takes (KEY, OP, VALUE), such as ('alarm', '==', True), got {condition!r}"
        )
    key, op, value = condition
    if not isinstance(op, str) or op not in OPS:
        raise SimulationError(f"unknown comparison {op!r}; choose one of {', '.join(OPS)}")
    declared = {g: Keys(getattr(sim.scenario, "blackboards", {}).get(g, {}), g) for g in groups}
    holding = [g for g in groups if key in declared[g]]
    if not holding:
        if len(groups) == 1:
            declared[groups[0]].spec(key)  # BlackboardError: undeclared, with the declared keys
        keys = sorted({k for keys in declared.values() for k in keys})
        raise SimulationError(f"no group declares blackboard key {key!r}{choices(str(key), keys)}")
    stored = None
    for g in holding:  # one key is declared alike by every tree that declares it
        spec = declared[g].spec(key)
        if op in ORDERING and spec.type != "number":
            raise SimulationError(
                f"blackboard key {key!r} is {NOUNS[spec.type]}; {op!r} compares numbers only "
                "(use == or !=)"
            )
        stored = declared[g].coerce(key, value)
    watches: list[Watch] = [BoardWatch(g, key, op, stored) for g in holding]
    return (key, op, stored), f"blackboard={key}{op}{_text(stored)}", watches


def _text(value: Any) -> str:
    """A value as ``--break`` writes it: JSON's ``true``, ``3``, ``"idle"``, ``[1.0, 2.0]``."""
    return json.dumps(list(value) if isinstance(value, tuple) else value)
