"""The game's side of a Simulation: events, watched agents, agent views, fixed-step advance.

A game drives a ``Simulation`` and reads back what happened. Everything here
is reached through ``Simulation`` methods (``sim.events``, ``sim.on``,
``sim.watch``, ``sim.agent``, ``sim.advance``); this module holds their types.

**Agent ids.** Every call that takes an agent id goes through
``Simulation.row_of`` (id -> row) and every id handed out comes from
``Simulation.ids_of`` (rows -> ids): an agent's id is a whole number it keeps
for the whole run (``sim.ids`` lists them in row order; rows move when agents
spawn or despawn), and those two methods are the only places rows meet ids. A
malformed id (not a whole number: ``"wolves-0"``, ``1.0``, ``True``) or an
unknown one raises :class:`SimulationError` naming the value and the valid
ids; the call then changed nothing.

**Events.** After each ``step()``, ``sim.events`` is the list of that tick's
:class:`Event` s (a new list each step; ``[]`` before the first step):

* ``name`` = the ``event`` of an ``emit`` node the agent ticked;
* ``"spawn"`` / ``"despawn"``: recorded by the code that adds or removes agents
  with ``Simulation._record(Event(tick, id, "spawn"))`` (``Simulation.spawn`` and
  ``despawn`` use ``EventLog.add_many``: the ``Event`` objects are made when the
  tick's events are first read, ``sim.events`` or a callback); an event recorded
  between two steps belongs to the next one (stamp it with ``sim.tick``, the
  tick that step will decide), one recorded during a step to that step;
  despawning code also calls ``sim.event_log.forget(ids)`` so a removed agent
  is no longer watched;
* ``"status"``: a node of a *watched* agent (``sim.watch(ids)``) changed status
  since the previous tick (or since it was watched); ``.node`` is the node's
  trace path (``FlatNode.path``, e.g. ``"selector/sequence[1]/evade"``) and
  ``.status`` its new status name (``"INVALID"``, ``"RUNNING"``, ``"SUCCESS"``,
  ``"FAILURE"``). Statuses come from ``sim.decisions`` (``Decision.status``),
  which both engines produce identically, so the events are engine-independent.
  An agent watched before the first step starts from all ``INVALID``; one
  watched later starts from its statuses of the last tick (no events for the
  past). Watching is opt-in: with nothing watched, no emit node ticked and
  nothing recorded, the end of a tick costs one test of three empty containers.

Order within a tick, identical on both engines: first spawn/despawn events in
the order recorded; then emitted events by agent row, and for one agent in the
order its tree ticked its ``emit`` nodes (flat pre-order: a tree ticks a node
at most once per tick, parents before children, children left to right); then
status events by agent row, then by node index (flat pre-order). The py_trees
engine records agent by agent and the batch engine node by node; a stable sort
by row at the end of the tick makes the two lists equal.

**Callbacks.** ``sim.on(name, callback)`` subscribes ``callback(event)`` to
events called ``name``, or to every event with ``name="*"``; ``name`` must be
one the simulation can raise (an ``emit`` node's event in the scenario's trees,
``"spawn"``, ``"despawn"``, ``"status"``) or ``"*"``, else :class:`SimulationError`
lists those. It returns a function that unsubscribes. Callbacks run at the end
of ``step()``, after the tick is complete (``sim.tick`` advanced, ``sim.events``
set), one event at a time in the order above; for one event, those subscribed
to its name in subscription order, then the ``"*"`` ones. An exception raised
by a callback propagates out of ``step()`` (and ``advance()``/``run()``): the
simulation stays consistent (the tick is done), the remaining callbacks of
that tick are not called.

**Agent views.** ``sim.agent(id)`` is an :class:`AgentView`: a snapshot taken at
the call (read-only copies), so a later ``step()`` does not change it; ask
again for fresh values.

**Fixed step.** ``sim.advance(real_seconds)`` adds the elapsed real time to an
accumulator, runs ``floor(accumulated / dt)`` ticks but at most ``max_steps``
(default :data:`MAX_STEPS`), and returns ``alpha = accumulated / dt`` in
``[0, 1)``, the fraction of a tick to interpolate by when drawing (Fiedler,
"Fix Your Timestep!"). Time beyond the cap is dropped (alpha 0), so a stall
(a breakpoint, a dragged window) costs at most ``max_steps`` ticks and never
spirals. ``sim.events`` then holds the last tick's events only: subscribe with
``sim.on`` to see those of every tick an ``advance`` ran. A step where a breakpoint hits
(``sim.hit``, ``sim/breakpoints.py``) ends the ``advance``: the ticks it had left are
dropped as a stall's are, so ``sim.hit`` after the call is that hit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np

from behaviortk.errors import SimulationError
from behaviortk.format.fields import RESERVED_EVENTS
from behaviortk.tree.clock import TICK_EPS
from behaviortk.tree.flat import Decision, FlatTree
from behaviortk.tree.ops import Rows
from behaviortk.tree.status import STATUS_NAMES
from behaviortk.world.state import Agents

SPAWN, DESPAWN, STATUS = RESERVED_EVENTS
ALL = "*"
"""``sim.on(ALL, callback)`` subscribes to every event."""
MAX_STEPS = 5
"""Default cap on the ticks one ``advance()`` runs."""


class Simulation(Protocol):
    """What this module uses of ``behaviortk.sim.simulation.Simulation`` (which imports this module)."""

    agents: Agents
    trees: dict[str, FlatTree]
    decisions: dict[str, Decision]
    dt: float
    engine: Any
    hit: Any  # the last step's breakpoint hit (sim/breakpoints.Hit), or None

    def row_of(self, agent_id: Any) -> int: ...
    def ids_of(self, rows: np.ndarray) -> np.ndarray: ...
    def locate(self, agent: int) -> tuple[str, int]: ...
    def active_names(self, agent: int) -> list[str]: ...
    def step(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened on ``tick`` to agent ``agent`` (an id). See the module docstring."""

    tick: int
    agent: int
    name: str
    node: str | None = None  # status events: the node's trace path
    status: str | None = None  # status events: the new status name


# ------------------------------------------------------------------ agent ids


def id_of(sim: Simulation, row: int) -> int:
    """The id of one row (``Simulation.ids_of`` on a single row)."""
    return int(sim.ids_of(np.array([row], dtype=np.int64))[0])


def id_list(ids: Any) -> list[Any]:
    """``ids`` as a list: one id, or any iterable of ids (not a string)."""
    if isinstance(ids, str | bytes):
        return [ids]  # malformed: reported by row_of with the value
    if isinstance(ids, np.ndarray):
        return list(ids.reshape(-1)) if ids.ndim else [ids]
    if isinstance(ids, Iterable):
        return list(ids)
    return [ids]


# ------------------------------------------------------------------ events


class EventLog:
    """One Simulation's events: the ops' sink (``tree/ops.EventSink``), watched agents, callbacks."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self._chunks: list[tuple[int, str, Rows, str]] = []  # (tick, group, local rows, name)
        self._leaving: list[tuple[str, Rows]] = []  # (group, local rows) of despawn leaves
        self._recorded: list[Event | Recorded] = []  # spawn / despawn, in recording order
        self._watched: dict[int, np.ndarray] = {}  # id -> statuses it was last seen with
        self._subscribers: dict[str, list[Callable[[Event], Any]]] = {}

    # -------------------------------------------------------- sources
    def record(self, tick: int, group: str, rows: Rows, name: str) -> None:
        """EventSink: ``name`` raised on ``tick`` by the group-local ``rows`` (emit ops)."""
        self._chunks.append((tick, group, np.array(rows, dtype=np.int64), name))

    def leave(self, group: str, rows: Rows) -> None:
        """EventSink: the group-local ``rows`` ticked a ``despawn`` leaf (:meth:`leaving`)."""
        self._leaving.append((group, np.array(rows, dtype=np.int64)))

    def leaving(self, agents: Any) -> np.ndarray:
        """The ids of the agents that ticked ``despawn`` since the last call, sorted; read off
        ``agents`` (the rows as decided: before any of them moved)."""
        if not self._leaving:
            return np.zeros(0, dtype=np.int64)
        found, self._leaving = self._leaving, []
        rows = [agents.slices[group].start + local for group, local in found]
        return np.unique(agents.ids[np.concatenate(rows)])

    def add(self, event: Event) -> None:
        """A spawn/despawn event (``Simulation._record``); it goes out with the next tick's events."""
        self._recorded.append(event)

    def add_many(self, tick: int, agents: list[int], name: str) -> None:
        """:meth:`add` for ``Event(tick, agent, name)`` of each of ``agents``, made when read."""
        self._recorded.append((tick, agents, name))

    def saved(self) -> tuple[list[Recorded], dict[int, np.ndarray]]:
        """What the next step's events still need (a snapshot's): the spawn / despawn events
        recorded since the last step, as ``(tick, ids, name)``, and each watched agent's
        statuses as last seen. Subscriptions are the game's: not saved."""
        recorded = [
            (e.tick, [e.agent], e.name) if isinstance(e, Event) else e for e in self._recorded
        ]
        return recorded, dict(self._watched)

    def load_saved(self, recorded: list[Recorded], watched: dict[int, np.ndarray]) -> None:
        """Hold what :meth:`saved` gave."""
        self._recorded = [(tick, list(ids), name) for tick, ids, name in recorded]
        self._watched = dict(watched)

    # -------------------------------------------------------- watching
    def watch(self, ids: Any) -> None:
        """Watch ``ids`` (one id or many); all are checked before any is added."""
        checked = [(id_of(self.sim, row), row) for row in self._rows(ids)]
        for agent, row in checked:
            if agent not in self._watched:
                self._watched[agent] = self._statuses(row)

    def unwatch(self, ids: Any) -> None:
        """Stop watching ``ids``; ids not watched are ignored, unknown ones refused."""
        checked = [id_of(self.sim, row) for row in self._rows(ids)]
        for agent in checked:
            self._watched.pop(agent, None)

    def forget(self, ids: Iterable[int]) -> None:
        """Stop watching ``ids`` without checking them (despawned agents)."""
        if not self._watched:
            return
        for agent in ids:
            self._watched.pop(int(agent), None)

    @property
    def watching(self) -> tuple[int, ...]:
        return tuple(sorted(self._watched))

    def _rows(self, ids: Any) -> list[int]:
        return [self.sim.row_of(agent) for agent in id_list(ids)]

    def _statuses(self, row: int) -> np.ndarray:
        """The agent's node statuses of the last tick (all INVALID before the first)."""
        group, local = self.sim.locate(row)
        decision = self.sim.decisions.get(group)
        if decision is None:  # before the first step, or an external agent (no tree: no nodes)
            tree = self.sim.trees.get(group)
            return np.zeros(0 if tree is None else len(tree), dtype=np.int8)
        return decision.status_of([local])[0]

    # -------------------------------------------------------- subscribing
    def known_names(self) -> list[str]:
        """Event names the simulation can raise: every emit node's, then the built-in ones."""
        emitted = {
            str(node.model.event)
            for tree in self.sim.trees.values()
            for node in tree.nodes
            if getattr(node.model, "type", None) == "emit"
        }
        return [*sorted(emitted), *RESERVED_EVENTS]

    def subscribe(self, name: Any, callback: Any) -> Callable[[], None]:
        """``callback(event)`` for each event called ``name`` (``"*"``: all); returns the unsubscriber."""
        known = self.known_names()
        if name != ALL and (not isinstance(name, str) or name not in known):
            raise SimulationError(
                f"no node raises event {name!r}; choose one of {', '.join([*known, ALL])}"
            )
        if not callable(callback):
            raise SimulationError(f"the callback must be callable, got {callback!r}")
        self._subscribers.setdefault(name, []).append(callback)

        def unsubscribe() -> None:
            listeners = self._subscribers.get(name, [])
            if callback in listeners:
                listeners.remove(callback)

        return unsubscribe

    # -------------------------------------------------------- end of a tick
    def collect(self, tick: int) -> list[Event] | TickEvents:
        """The events of ``tick`` (just decided), in the documented order; clears the sources.
        Spawn / despawn events recorded in bulk come as :class:`TickEvents`."""
        if not (self._chunks or self._recorded or self._watched):
            return []
        recorded, self._recorded = self._recorded, []
        events: list[Event] = []
        if self._chunks:
            chunks, self._chunks = self._chunks, []
            events += self._emitted(tick, [c for c in chunks if c[0] == tick])
        if self._watched:
            events += self._status_changes(tick)
        return TickEvents(recorded, events) if recorded else events

    def join_recorded(self, events: list[Event] | TickEvents) -> list[Event] | TickEvents:
        """``events`` (a tick's, collected) with the spawn / despawn events recorded since
        (a ``despawn`` leaf's, after the tick): those go out with that tick."""
        if not self._recorded:
            return events
        recorded, self._recorded = self._recorded, []
        if isinstance(events, TickEvents):
            return TickEvents(events.recorded + recorded, events.rest)
        return TickEvents(recorded, events)

    @property
    def listening(self) -> bool:
        """Whether any callback is subscribed (``dispatch`` has something to call)."""
        return any(self._subscribers.values())

    def _emitted(self, tick: int, chunks: list[tuple[int, str, Rows, str]]) -> list[Event]:
        if not chunks:
            return []
        slices = self.sim.agents.slices
        rows = np.concatenate([slices[group].start + local for _, group, local, _ in chunks])
        which = np.repeat(np.arange(len(chunks)), [c[2].size for c in chunks])
        order = np.argsort(rows, kind="stable")  # per agent: the order its tree ticked
        ids = self.sim.ids_of(rows[order]).tolist()
        names = [chunks[k][3] for k in which[order].tolist()]
        return [Event(tick, agent, name) for agent, name in zip(ids, names, strict=True)]

    def _status_changes(self, tick: int) -> list[Event]:
        """Watched agents' node status changes, by row then node; one pass per group."""
        sim, watched = self.sim, self._watched
        rows = np.array([sim.row_of(agent) for agent in watched], dtype=np.int64)
        order = np.argsort(rows)
        rows, ids = rows[order], np.fromiter(watched, dtype=np.int64, count=len(watched))[order]
        events: list[Event] = []
        for group, span in sim.agents.slices.items():
            lo, hi = np.searchsorted(rows, [span.start, span.stop]).tolist()
            decision = sim.decisions.get(group)
            if lo == hi or decision is None:
                continue
            now = decision.status_of(rows[lo:hi] - span.start)  # (k, nodes), a copy
            agents = ids[lo:hi].tolist()
            changed = np.argwhere(now != np.stack([watched[a] for a in agents]))
            if not changed.size:
                continue
            nodes = sim.trees[group].nodes
            codes = now[changed[:, 0], changed[:, 1]].tolist()
            for (i, k), code in zip(changed.tolist(), codes, strict=True):
                events.append(Event(tick, agents[i], STATUS, nodes[k].path, STATUS_NAMES[code]))
            for i in np.unique(changed[:, 0]).tolist():
                watched[agents[i]] = now[i]
        return events

    def dispatch(self, events: list[Event]) -> None:
        """Call the subscribers of each event (named ones, then ``"*"``); exceptions propagate."""
        if not self._subscribers or not events:
            return
        subscribers = {name: list(cbs) for name, cbs in self._subscribers.items() if cbs}
        every = subscribers.get(ALL, [])
        for event in events:
            for callback in subscribers.get(event.name, ()):
                callback(event)
            for callback in every:
                callback(event)


Recorded = tuple[int, list[int], str]
"""Spawn or despawn events in bulk: ``(tick, agent ids, name)`` (``EventLog.add_many``)."""


class TickEvents:
    """One tick's events, its spawn / despawn part kept as recorded until somebody reads
    them (``sim.events``, a callback): a game that spawns a hundred shots a frame and never
    looks at those events does not pay for a hundred ``Event`` objects."""

    __slots__ = ("recorded", "rest")

    def __init__(self, recorded: list[Event | Recorded], rest: list[Event]) -> None:
        self.recorded, self.rest = recorded, rest

    def made(self) -> list[Event]:
        """Every event, in the documented order (a new list)."""
        out: list[Event] = []
        for item in self.recorded:
            if isinstance(item, Event):
                out.append(item)
            else:
                tick, agents, name = item
                out += [Event(tick, agent, name) for agent in agents]
        return out + self.rest


# ------------------------------------------------------------------ agent views


def _frozen(values: np.ndarray) -> np.ndarray:
    out = np.array(values, dtype=np.float64)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class AgentView:
    """One agent as the last tick left it: a snapshot with read-only copies (``sim.agent(id)``)."""

    id: int
    group: str
    pos: np.ndarray  # (2,) world units
    vel: np.ndarray  # (2,) world units per second
    heading: np.ndarray  # (2,) unit vector
    active: tuple[str, ...]  # trace names of its steering leaves that asked for a force
    blackboard: Mapping[str, Any]  # its blackboard, {key: value}, unset keys left out
    # (an agent of a "control": "external" group has neither: empty, read-only)

    @classmethod
    def of(cls, sim: Simulation, agent_id: Any) -> AgentView:
        row = sim.row_of(agent_id)
        agents = sim.agents
        group, _ = sim.locate(row)
        return cls(
            id=id_of(sim, row),
            group=group,
            pos=_frozen(agents.pos[row]),
            vel=_frozen(agents.vel[row]),
            heading=_frozen(agents.heading[row]),
            active=tuple(sim.active_names(row)),
            blackboard=MappingProxyType(
                dict(sim.engine.blackboard(row)) if group in sim.trees else {}
            ),  # an external agent (moved by the game) has no tree and no board
        )


# ------------------------------------------------------------------ fixed step


def _seconds(value: Any) -> float:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise SimulationError(
            f"real_seconds must be a number of seconds >= 0, got {value!r} ({type(value).__name__})"
        )
    seconds = float(value)
    if not (math.isfinite(seconds) and seconds >= 0.0):
        raise SimulationError(f"real_seconds must be finite and >= 0, got {value!r}")
    return seconds


def _max_steps(value: Any) -> int:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) or value < 1:
        raise SimulationError(f"max_steps must be a whole number >= 1, got {value!r}")
    return int(value)


class FixedStep:
    """The real-time accumulator behind ``Simulation.advance`` (see the module docstring)."""

    def __init__(self) -> None:
        self.accumulated = 0.0  # real seconds not yet simulated, < dt between calls

    def advance(self, sim: Simulation, real_seconds: Any, max_steps: Any = MAX_STEPS) -> float:
        seconds, cap, dt = _seconds(real_seconds), _max_steps(max_steps), sim.dt
        acc = self.accumulated + seconds
        ratio = acc / dt
        steps = cap + 1 if not ratio < cap + 1 else math.floor(ratio + TICK_EPS * max(1.0, ratio))
        if steps > cap:  # a stall: run the cap, drop the rest
            steps, left = cap, 0.0
        else:  # (0.3 / 0.1 is 2.9999999999999996: 3 ticks, as in ticks_for)
            left = max(acc - steps * dt, 0.0)
        for done in range(1, steps + 1):
            self.accumulated = left + (steps - done) * dt  # set first: callbacks may raise
            sim.step()
            if sim.hit is not None:  # a breakpoint: stop here, like a stall
                break
        self.accumulated = left
        return self.alpha(dt)

    def alpha(self, dt: float) -> float:
        """How far the accumulated time is into the next tick, in ``[0, 1)``."""
        return min(max(self.accumulated / dt, 0.0), math.nextafter(1.0, 0.0))
