"""Simulation: the fixed-step tick ``sense -> decide -> act -> integrate``.

Seeded: ``SeedSequence(seed)`` is split into a spawn stream (positions,
headings; ``world.build``) and a per-tick stream. Every tick draws
``rng.random((N, n_slots))`` in full, whoever reads it, so the numbers a leaf
sees never depend on what other leaves did. Same file and seed, same run
(byte-identical traces); another seed, another run.

Time: ``tick`` counts finished steps; during a step ``tick``/``time`` name the
tick being decided (``time = tick * dt``, computed, never accumulated); after
``step()`` both have advanced by one. Sim-time decorators and ``wait`` read
``sim.tick`` and ``sim.dt``.

Embedding in a game (``behaviortk.sim.embed``): ``events`` after each step,
``on`` callbacks, ``watch``-ed agents' status changes, ``agent(id)`` views,
``advance(real_seconds)`` for render loops; agent ids go through ``row_of``
and ``ids_of``.

Phase timings (seconds, accumulated in ``timings``): *sense* draws the random
table, builds the tick's ``Sense`` and lets the engine compute the group-wide
facts its leaves read (conditions, leaf statuses); *decide* ticks the trees;
*act* computes and combines forces; *integrate* moves the agents (and, with the
world's ``non_penetration``, pushes overlapping ones apart: ``world/non_penetration.py``).
"""

from __future__ import annotations

import gc
import time as _time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from behaviortk.engines.base import RowChange
from behaviortk.engines.names import AUTO_BATCH_AGENTS, ENGINES  # defined there, for the CLI
from behaviortk.errors import SimulationError
from behaviortk.format.limits import MAX_LIVE_AGENTS, MAX_SEED
from behaviortk.registry import choices
from behaviortk.sense.formations import Formations
from behaviortk.sense.held import HeldPerception, Thinking
from behaviortk.sense.sensing import Sense
from behaviortk.sim.allocator import reuse_freed_memory
from behaviortk.sim.breakpoints import Breakpoint, Breakpoints, Hit
from behaviortk.sim.embed import MAX_STEPS, AgentView, Event, EventLog, FixedStep, TickEvents
from behaviortk.sim.pending import NOTHING_GIVEN, SPAWNING, NewRows, Pending, Spawned
from behaviortk.sim.think import ThinkSchedule
from behaviortk.sim.why import WhyWatch
from behaviortk.steering.context import LeafMemory
from behaviortk.steering.debug import DebugBuffer
from behaviortk.steering.formation_slot import members
from behaviortk.steering.requests import Requests
from behaviortk.tree.flat import Decision, FlatTree, flatten
from behaviortk.tree.status import INVALID
from behaviortk.vec import from_angle
from behaviortk.world.build import build
from behaviortk.world.integrate import integrate
from behaviortk.world.non_penetration import NonPenetration
from behaviortk.world.rows import (
    PER_AGENT,
    RowPlan,
    grown,
    moved_copy,
    pick,
    rearrange,
    rows_at,
)
from behaviortk.world.spatial import displacement
from behaviortk.world.state import Agents, World
from behaviortk.world.streams import uniforms

if TYPE_CHECKING:
    from behaviortk.engines.base import Engine
    from behaviortk.sim.serve import Server
    from behaviortk.tree.blackboard import BlackboardView

PHASES = ("sense", "decide", "act", "integrate")

REROW_DEPTH = 32
"""Batches applied between two steps before last tick's decisions, re-rowed lazily by each
(a chain of ``Decision`` s), are read into arrays: reading stays shallow."""


def make_engine(sim: Simulation, engine: str | Any) -> Engine:
    """The engine object for a name (``py_trees``, ``batch``, ``auto``) or an engine factory.

    Raises ``EngineError`` naming every node the engine cannot build.
    """
    if not isinstance(engine, str):
        return engine(sim) if callable(engine) else engine
    if engine == "auto":
        engine = "batch" if sim.agents.n >= AUTO_BATCH_AGENTS else "py_trees"
    if engine == "batch":
        from behaviortk.engines.batch.engine import BatchEngine

        return BatchEngine(sim)
    from behaviortk.engines.pytrees import PyTreesEngine

    return PyTreesEngine(sim)


def _check_engine(engine: Any) -> None:
    """An engine name, factory or object; ``SimulationError`` for anything else."""
    if isinstance(engine, str):
        if engine not in ENGINES:
            raise SimulationError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    elif engine is None or not (callable(engine) or hasattr(engine, "decide")):
        raise SimulationError(
            f"engine must be one of {', '.join(ENGINES)} or an engine factory, got {engine!r}"
        )


def _check_seed(seed: Any) -> int | None:
    """None (the file's seed) or a whole number in ``[0, MAX_SEED]``, as the format allows."""
    if seed is None:
        return None
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer):
        raise SimulationError(f"seed must be a whole number >= 0, got {seed!r}")
    if not 0 <= int(seed) <= MAX_SEED:
        raise SimulationError(f"seed must be in 0..{MAX_SEED} (2**63 - 1), got {seed}")
    return int(seed)


def freeze_gc() -> None:
    """Move everything alive into the collector's permanent generation (long runs only).

    Trees are many small, long-lived objects; freezing them keeps full
    collections from walking them every few thousand allocations. Objects
    frozen are never freed, so tests and short scripts should not call this.
    """
    gc.collect()
    gc.freeze()


class Simulation:
    """One running scenario. See the module docstring and ARCHITECTURE.md "Simulation"."""

    def __init__(
        self,
        scenario: Any,
        engine: str | Any = "py_trees",
        *,
        seed: int | None = None,
        debug: bool = False,
        kernels: str = "auto",
        _state: tuple[World, Agents, int] | None = None,
    ) -> None:
        """``_state``: the world, agents and next id to start from instead of the
        definition's (``Simulation.restore``, ``sim/snapshot.py``)."""
        _check_engine(engine)
        seed = _check_seed(seed)
        from behaviortk.sim import choice

        choice.resolve(kernels, 0)  # an unknown name fails here, before anything is built
        if isinstance(scenario, str | Path):
            from behaviortk.format.loader import load

            scenario = load(scenario)
        reuse_freed_memory()  # process-wide allocator setting; halves the neighbour query
        self.scenario = scenario
        definition = scenario.definition
        self.seed = int(definition.world.seed if seed is None else seed)
        self._pending: Pending | None = None  # spawns / despawns not applied to rows yet
        self.world: World
        self._agents: Agents
        self.world, self._agents = build(definition, self.seed) if _state is None else _state[:2]
        self._next_id = self._agents.n if _state is None else _state[2]
        self._row_of = np.arange(self._agents.n, dtype=np.int64)
        """Id -> row (-1: despawned or never spawned, ``SPAWNING``), with room past ``_next_id``."""
        self._sizes: dict[str, int] = {}
        """Each group's live agents, spawned ones not placed yet included."""
        self._live = 0
        self._index_rows()
        self._new_rows = NewRows(self.seed)
        self._specs: tuple[Any, dict[str, Any]] = (None, {})  # (definition, its groups by name)
        self._shown_ids: tuple[np.ndarray | None, np.ndarray] = (None, self._row_of[:0])
        """``agents.ids`` when ``sim.ids`` last copied it, and that copy."""
        self.dt = float(definition.world.dt)
        self.heading_smoothing = int(definition.world.heading_smoothing)
        self.non_penetration: NonPenetration | None = (
            NonPenetration(int(definition.world.non_penetration_passes))
            if definition.world.non_penetration
            else None
        )
        """The world's non-penetration constraint (None when the definition leaves it off)."""
        self.tick = 0
        self.time = 0.0
        self.registries = scenario.registries
        self.trees: dict[str, FlatTree] = {
            name: flatten(root, self.registries) for name, root in scenario.trees.items()
        }
        """Flat trees of the groups their trees control (external groups have none)."""
        self.n_rand = max([1, *(t.n_rand for t in self.trees.values())])
        self._memory: dict[tuple[str, int], LeafMemory] = {}
        self.debug = DebugBuffer(enabled=debug)
        self.pointer: np.ndarray | None = None
        self._decisions: dict[str, Decision] = {}
        self._rerowed = 0  # batches applied to the rows since the last step (_move_rows)
        self._contributions: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
        self.timings: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.why_watch = WhyWatch()
        """The agents a viewer asks "why" of: each tick records their conditions' reasons as
        its trees see them (``sim/why.py``)."""
        self.event_log = EventLog(self)  # before the engine: its emit nodes record here
        self._events: list[Event] | TickEvents = []
        self._fixed_step = FixedStep()
        self._breaks = Breakpoints()
        self.hit: Hit | None = None
        """The breakpoint hit of the last step, or None (``sim/breakpoints.py``)."""
        self.server: Server | None = None
        """What ``serve`` started: frames to attached viewers (``sim/serve.py``), or None."""
        self._think = ThinkSchedule(definition)
        """Who thinks each tick (``think_every``, ``lod``: ``sim/think.py``)."""
        self._held = HeldPerception()
        self.formations = Formations(definition)
        """The groups' formations: members, their slots, centroid anchors
        (``sense/formations.py``; updated each tick between decide and act)."""
        """What the agents that do not think this tick keep perceiving (``sense/held.py``)."""
        self._engine = make_engine(self, engine)
        from behaviortk.steering.act import act

        self._act: Callable[..., tuple[np.ndarray, np.ndarray]] = act
        self._integrate: Callable[..., None] = integrate
        self.kernels: Any = None
        """The compiled kernels this run uses (``sim.backend.Kernels``), or None (NumPy)."""
        self.compile_s = 0.0
        """Seconds this Simulation spent compiling kernels or loading them from the disk cache."""
        if choice.resolve(kernels, self._agents.n) == "numba":
            found, self.compile_s = choice.load()
            # what this run calls, compiled (its kernels, loops and the batch engine's fused
            # trees: sim/kernel_plan.py), with a notice when that takes long
            took = None if found is None else choice.ready(self)
            if took is not None:
                self.kernels = found
                self.compile_s += took
        if self.kernels is not None:
            self._act = self.kernels.act
            self._integrate = self.kernels.integrate
            if self.non_penetration is not None:
                self.non_penetration.kernels = self.kernels

    def _index_rows(self) -> None:
        """Id -> row, group sizes and the live count, from the rows (no batch pending)."""
        ag = self._agents
        if not (ag.n == self._next_id and np.array_equal(ag.ids, self._row_of[: ag.n])):
            self._row_of = np.full(grown(self._next_id), -1, dtype=np.int64)
            self._row_of[ag.ids] = np.arange(ag.n)
        self._sizes = {name: s.stop - s.start for name, s in ag.slices.items()}
        self._live = ag.n

    # ------------------------------------------------------------ snapshots (sim/snapshot.py)
    def save(self, path: str | Path) -> int:
        """Write a snapshot of everything this run needs to continue to ``path`` (replaced
        whole, never half-written); returns its size in bytes. ``on`` subscriptions are the
        game's and are not saved. ``SnapshotError`` when it cannot be written."""
        from behaviortk.sim.snapshot import save

        return save(self, path)

    @classmethod
    def restore(
        cls,
        path: str | Path,
        engine: str | None = None,
        *,
        kernels: str = "auto",
        debug: bool = False,
        registries: Any = None,
    ) -> Simulation:
        """The Simulation saved in ``path``, continuing as the saved run would have, on the
        engine it was saved on or ``engine``. ``SnapshotError`` for a file that is not a
        complete snapshot this version reads (``sim/snapshot.py``)."""
        from behaviortk.sim.snapshot import restore

        return restore(cls, path, engine, kernels=kernels, debug=debug, registries=registries)

    @property
    def kernel_name(self) -> str:
        """``"numba"`` (compiled kernels) or ``"numpy"`` (the reference)."""
        return "numpy" if self.kernels is None else str(self.kernels.name)

    @property
    def name(self) -> str:
        return str(self.scenario.definition.name)

    @property
    def events(self) -> list[Event]:
        """The last step's events (``sim/embed.py``), a new list each step."""
        if isinstance(self._events, TickEvents):
            self._events = self._events.made()
        return self._events

    @property
    def ids(self) -> np.ndarray:
        """Agent ids in row order (int64, read-only); an id is never reused within a run.
        A snapshot, never changed afterwards: a game may iterate it while it despawns (it
        is copied from ``agents.ids`` once after each change of rows, when first read)."""
        ids = self.agents.ids
        shown = self._shown_ids
        if shown[0] is not ids:
            copy = ids.copy()
            copy.flags.writeable = False
            shown = self._shown_ids = (ids, copy)
        return shown[1]

    # Row-holding state: reading any of it first applies pending spawns and despawns.
    @property
    def agents(self) -> Agents:
        """Every agent's state, one row per agent (``world/state.Agents``)."""
        if self._pending is not None:
            self._flush()
        return self._agents

    @agents.setter
    def agents(self, value: Agents) -> None:
        self._flush()
        self._agents = value

    @property
    def decisions(self) -> dict[str, Decision]:
        """Each group's ``Decision`` of the last tick."""
        if self._pending is not None:
            self._flush()
        return self._decisions

    @decisions.setter
    def decisions(self, value: dict[str, Decision]) -> None:
        self._flush()
        self._decisions = value

    @property
    def memory(self) -> dict[tuple[str, int], LeafMemory]:
        """Steering leaves' persistent per-agent arrays, by (group, node index)."""
        if self._pending is not None:
            self._flush()
        return self._memory

    @memory.setter
    def memory(self, value: dict[tuple[str, int], LeafMemory]) -> None:
        self._flush()
        self._memory = value

    @property
    def contributions(self) -> dict[str, dict[int, tuple[np.ndarray, np.ndarray]]]:
        """The last act phase's forces per steering leaf (debug views), by group."""
        if self._pending is not None:
            self._flush()
        return self._contributions

    @contributions.setter
    def contributions(self, value: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]]) -> None:
        self._flush()
        self._contributions = value

    @property
    def engine(self) -> Engine:
        """The engine deciding for every group (its state follows the rows)."""
        if self._pending is not None:
            self._flush()
        return self._engine

    @engine.setter
    def engine(self, value: Engine) -> None:
        self._flush()
        self._engine = value

    def sense(self, thinking: Thinking | None = None) -> Sense:
        """The sensed facts of the current tick (each agent's random numbers of this tick);
        ``thinking``: who thinks this tick, where some group does not all think."""
        draw = uniforms if self.kernels is None else self.kernels.uniforms_later
        rand = draw(self.seed, self.agents.ids, self.tick, self.n_rand)
        return Sense(
            self.world,
            self.agents,
            rand,
            self.tick,
            self.time,
            blackboard_points=self.engine.blackboard_points,
            pointer=self.pointer,
            registries=self.registries,
            kernels=self.kernels,
            thinking=thinking,
            formations=self.formations if self.formations.groups else None,
        )

    @property
    def think(self) -> ThinkSchedule:
        """Who thinks each tick (``think_every``, ``lod``; ``sim/think.py``): its ``active``
        says whether some group does not think every tick."""
        return self._think

    def _thinking(self) -> Thinking | None:
        """This tick's thinkers (``sim/think.py``), recorded as thinking; None when every
        agent thinks every tick."""
        schedule = self._think
        schedule.follow(self.scenario.definition)  # a tuning change may set think_every
        if not schedule.active:
            return None
        rows = schedule.thinkers(
            self.tick, self.agents, self.world, self._row_of.size, self.kernels
        )
        return Thinking(rows, self._held, self._row_of)

    def focus(self, points: Any) -> None:
        """Move the think-rate LOD's focus (the camera): ``[x, y]`` or a list of points
        replaces every LOD group's focus (the file's ``focus``) until ``focus(None)``; an
        empty list makes every agent far. ``SimulationError`` for anything else."""
        self._think.focus(points)

    def step(self) -> None:
        """Advance one fixed tick: sense, decide, act, integrate. While an attached viewer
        holds the simulation (``serve``: paused, or at its breakpoint) it returns at once."""
        if self.server is not None and self.server.holding(self):
            return
        clock = _time.perf_counter
        t0 = clock()
        # last tick's decisions are dropped first (an engine may read held ones: Decision),
        # before rows move: nobody reads them moved
        self._decisions = {}
        self._rerowed = 0
        if self._pending is not None:
            self._flush()
        if self.kernels is not None:
            keep = self.kernels.cell_order(self)
            if keep is not None:
                self._rearrange(keep)
        sense = self.sense(self._thinking())
        if self.why_watch.asked:  # a viewer's selected agents, as this tick senses them
            self.why_watch.record(self, sense)
        self.engine.prepare(self, sense)
        t1 = clock()
        self.decisions = self.engine.decide(self, sense)
        self._keep_formations(sense)
        t2 = clock()
        linear, angular = self._act(self, sense, self.decisions)
        t3 = clock()
        held = self._hold_external()
        before = self.agents.pos
        self._integrate(self.world, self.agents, linear, angular, self.dt, self.heading_smoothing)
        self._release_external(held)
        if self.non_penetration is not None:
            self.non_penetration.apply(self.world, self.agents, before, self._fixed_rows())
        t4 = clock()
        timings = self.timings
        timings["sense"] += t1 - t0
        timings["decide"] += t2 - t1
        timings["act"] += t3 - t2
        timings["integrate"] += t4 - t3
        self.tick += 1
        self.time = self.tick * self.dt
        leaving = self.event_log.leaving(self._agents)  # before the events move any row
        self._events = self.event_log.collect(self.tick - 1)
        if leaving.size:  # despawn leaves: gone as if the game despawned them now, their
            self._despawn(leaving, self.tick - 1)  # events with this tick's
            self._events = self.event_log.join_recorded(self._events)
        self.hit = self._breaks.check(self) if self._breaks.points else None
        if self.event_log.listening:
            self.event_log.dispatch(self.events)
        if self.server is not None:
            self.server.after_step(self)

    def serve(self, port: int = 0, host: str = "127.0.0.1", *, token: str | None = None) -> int:
        """Stream this simulation to ``behaviortk attach HOST:PORT`` while the game keeps
        calling ``step()``; returns the port bound (``port=0``: a free one). Loopback unless
        ``host`` says otherwise, and then viewers must present ``token`` (generated and
        printed when not given; ``sim.server.token``). ``sim.server.close()`` stops it;
        serving again replaces the server. See ``sim/serve.py``."""
        from behaviortk.sim.serve import Server

        if self.server is not None:
            self.server.close()
            self.server = None
        self.server = Server(self, port, host, token)
        return self.server.port

    def _keep_formations(self, sense: Sense) -> None:
        """Between decide and act: the formations' members are the agents that asked for
        ``formation_slot`` (``sense/formations.py``: slots re-assigned when they change)."""
        if self.formations.groups:
            asked = Requests(self.trees, self.decisions, self.agents.slices)
            self.formations.update(sense, members(asked), self.dt)

    def run(
        self, max_ticks: int, on_tick: Callable[[Simulation], None] | None = None
    ) -> Hit | None:
        """``step()`` up to ``max_ticks`` times, calling ``on_tick(sim)`` after each (traces,
        progress); stop after a step where a breakpoint hits and return that :class:`Hit`
        (``sim/breakpoints.py``), else None once ``max_ticks`` steps have run."""
        if (
            isinstance(max_ticks, bool | np.bool_)
            or not isinstance(max_ticks, int | np.integer)
            or max_ticks < 0
        ):
            raise SimulationError(f"max_ticks must be a whole number >= 0, got {max_ticks!r}")
        if on_tick is not None and not callable(on_tick):
            raise SimulationError(f"on_tick must be callable, got {on_tick!r}")
        for _ in range(int(max_ticks)):
            self.step()
            if on_tick is not None:
                on_tick(self)
            if self.hit is not None:
                return self.hit
        return None

    def break_on(
        self,
        node: str | None = None,
        status: str | None = None,
        *,
        event: str | None = None,
        blackboard: tuple[str, str, Any] | None = None,
        agent: int | None = None,
        group: str | None = None,
    ) -> Breakpoint:
        """Set a breakpoint: ``node=PATH`` (a trace path or a unique node name) becoming
        ``status`` (``"RUNNING"`` by default, ``"SUCCESS"``, ``"FAILURE"``), ``event=NAME``,
        or ``blackboard=(KEY, OP, VALUE)`` becoming true; for one ``agent`` (an id) or
        ``group``, else every agent. Returns the :class:`Breakpoint` (``.remove()``);
        ``step`` sets ``sim.hit`` and ``run`` stops where one hits (``sim/breakpoints.py``).
        ``SimulationError`` (nothing set) for a bad argument."""
        return self._breaks.add(
            self,
            node=node,
            status=status,
            event=event,
            blackboard=blackboard,
            agent=agent,
            group=group,
        )

    @property
    def breakpoints(self) -> tuple[Breakpoint, ...]:
        """The breakpoints set, in the order they were set."""
        return tuple(self._breaks.points)

    # ------------------------------------------------------- game-driven bodies
    @property
    def external_groups(self) -> list[str]:
        """Groups whose agents the game moves (``"control": "external"``)."""
        return [g.name for g in self.scenario.definition.groups if g.control == "external"]

    _HELD = ("pos", "vel", "heading", "smoothed_heading", "orientation", "rotation", "force")

    def _hold_external(self) -> list[tuple[slice, dict[str, np.ndarray]]]:
        """The state of external agents before integration (the integrator must not move them)."""
        ag = self.agents
        return [
            (rows, {f: getattr(ag, f)[rows].copy() for f in self._HELD})
            for rows in (ag.slices[g] for g in self.external_groups)
            if rows.stop > rows.start
        ]

    def _fixed_rows(self) -> np.ndarray:
        """(N,) bool: the agents non-penetration must not move (external groups)."""
        fixed = np.zeros(self.agents.n, dtype=bool)
        for name in self.external_groups:
            fixed[self.agents.slices[name]] = True
        return fixed

    def _release_external(self, held: list[tuple[slice, dict[str, np.ndarray]]]) -> None:
        for rows, state in held:
            for field, value in state.items():
                getattr(self.agents, field)[rows] = value

    def move(self, agent: int, pos: Any, vel: Any = None) -> None:
        """Place an agent of an external group (a player) at ``pos``, before the next tick.

        ``vel`` defaults to the displacement since its last place divided by ``dt``
        (pursuers predict from it); its heading follows the velocity when it moves.
        """
        row = int(self.rows_of([agent])[0])
        group = self.agents.group_names[int(self.agents.group[row])]
        if group not in self.external_groups:
            movable = ", ".join(self.external_groups) or "none"
            raise SimulationError(
                f"agent {agent} is in group {group!r}, which its tree moves; "
                f"only agents of external groups can be moved (external groups: {movable})"
            )
        p = _points(pos, 1, "pos", required=True)
        v = _points(vel, 1, "vel")
        ag = self.agents
        if v is None:
            v = displacement(ag.pos[row], p, self.world) / self.dt
        ag.pos[row], ag.vel[row], ag.force[row] = p[0], v[0], 0.0
        speed = float(np.hypot(*v[0]))
        if speed > 1e-9:
            ag.heading[row] = ag.smoothed_heading[row] = v[0] / speed
            ag.orientation[row] = float(np.arctan2(v[0, 1], v[0, 0]))

    # ------------------------------------------------------- spawn, despawn
    def rows_of(self, ids: Any) -> np.ndarray:
        """Rows of live agent ids; ``SimulationError`` naming an unknown, despawned or repeated id."""
        self._flush()
        return self._lookup(ids)[1]

    def _lookup(self, ids: Any) -> tuple[np.ndarray, np.ndarray]:
        """``ids`` checked (whole numbers, live, none repeated) and their rows, ``SPAWNING``
        for agents spawned since the rows were last brought up to date."""
        if isinstance(ids, np.ndarray) and ids.dtype.kind in "iu" and ids.ndim == 1:
            wanted = ids if ids.dtype == np.int64 else ids.astype(np.int64)  # only read
            if wanted.size == 1:  # one id (a game despawning a shot): no array passes
                value = int(wanted[0])
                row = int(self._row_of[value]) if 0 <= value < self._next_id else -1
                if row != -1:
                    return wanted, np.array([row], dtype=np.int64)
        else:
            items = [ids] if isinstance(ids, int | np.integer | str | float) or ids is None else ids
            try:
                items = list(items)
            except TypeError:
                items = [ids]
            checked: list[int] = []
            for item in items:
                if isinstance(item, bool | np.bool_) or not isinstance(item, int | np.integer):
                    raise SimulationError(
                        f"agent ids are whole numbers, got {item!r} ({type(item).__name__}); "
                        f"live ids: {self._live_ids()}"
                    )
                if not _INT64_MIN <= int(item) <= _INT64_MAX:  # an id beyond int64: never spawned
                    raise SimulationError(
                        f"agent id {int(item)} was never spawned; live ids: {self._live_ids()}"
                    )
                checked.append(int(item))
            wanted = np.array(checked, dtype=np.int64)
        if wanted.size and int(wanted.min()) >= 0 and int(wanted.max()) < self._next_id:
            rows = self._row_of[wanted]  # every id was handed out: one gather
        else:
            known = (wanted >= 0) & (wanted < self._next_id)
            rows = np.full(wanted.size, -1, dtype=np.int64)
            rows[known] = self._row_of[wanted[known]]
        if wanted.size and int(rows.min()) < 0:  # -1: despawned, or never spawned
            value = int(wanted[np.flatnonzero(rows < 0)[0]])
            why = "was despawned" if 0 <= value < self._next_id else "was never spawned"
            raise SimulationError(f"agent id {value} {why}; live ids: {self._live_ids()}")
        if wanted.size > 1 and len(set(wanted.tolist())) != wanted.size:
            raise SimulationError(f"agent ids repeat in {wanted.tolist()}")
        return wanted, rows

    def _live_ids(self) -> str:
        """The live ids as ranges, for messages (spawned ones not placed yet included)."""
        return _id_ranges(np.flatnonzero(self._row_of != -1))

    def spawn(
        self,
        group: str,
        count: int = 1,
        *,
        pos: Any = None,
        vel: Any = None,
        heading: Any = None,
    ) -> list[int]:
        """Add ``count`` agents to ``group``; returns their new ids.

        ``pos``/``vel`` are ``[x, y]`` (for every new agent) or one per agent,
        ``heading`` degrees (one or one per agent); each left out follows the
        group's spawn rule (positions, heading, ``speed`` along the heading). New
        agents start their tree fresh; nobody else's state changes. The ids work at
        once everywhere; the rows are made with the frame's other spawns and despawns
        (``sim/pending.py``).
        """
        spec = self._group_spec(group)
        if type(count) is not int and (  # a plain int is a whole number (not a bool)
            isinstance(count, bool) or not isinstance(count, int | np.integer)
        ):
            raise SimulationError(f"count must be a whole number >= 1, got {count!r}")
        if count < 1:
            raise SimulationError(f"count must be a whole number >= 1, got {count!r}")
        if count > MAX_LIVE_AGENTS - self._live:
            raise SimulationError(
                f"cannot spawn {count} agents: {self._live} live + {count} exceeds "
                f"the limit of {MAX_LIVE_AGENTS:,} agents in one simulation"
            )
        n = int(count)
        given: tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None] = NOTHING_GIVEN
        if pos is not None or vel is not None or heading is not None:
            p, v, h = _points(pos, n, "pos"), _points(vel, n, "vel"), None
            if heading is not None:
                h = from_angle(np.radians(_numbers(heading, n, "heading")))
            given = (p, v, h)
        first = self._next_id
        draw = uniforms if self.kernels is None else self.kernels.uniforms
        rows, names = self._new_rows.rows(spec, first, n, self._sizes[group], given, draw)
        self._next_id += n
        if self._next_id > self._row_of.size:
            more = np.full(grown(self._next_id), -1, dtype=np.int64)
            more[: self._row_of.size] = self._row_of
            self._row_of = more
        if n == 1:
            self._row_of[first] = SPAWNING
        else:
            self._row_of[first : first + n] = SPAWNING
        batch = self._pending if self._pending is not None else self._batch()
        batch.spawn(group, rows, names)
        self._sizes[group] += n
        self._live += n
        ids = list(range(first, first + n))
        self.event_log.add_many(self.tick, ids, "spawn")
        return ids

    def despawn(self, ids: Any) -> None:
        """Remove agents ``ids``; everyone else keeps all their state.

        Rows move in place (new agents or the group's last agents fill the freed rows):
        arrays read from ``sim.agents`` before the call may hold other agents after it, so
        read them again; ``sim.ids`` is never changed in place, safe to iterate while
        despawning."""
        self._despawn(ids, self.tick)

    def _despawn(self, ids: Any, tick: int) -> None:
        """:meth:`despawn`, its events stamped ``tick``."""
        batch = self._pending if self._pending is not None else self._batch()
        one = _one_id(ids)
        row = -1
        if one is not None and 0 <= one < self._next_id:
            row = int(self._row_of.item(one))
        if one is not None and 0 <= row < SPAWNING:  # one live agent with a row: no arrays
            batch.gone.append(row)
            ag = self._agents
            self._sizes[ag.group_names[ag.group.item(row)]] -= 1
            self._live -= 1
            self._row_of[one] = -1
            gone_ids = [one]
        else:
            wanted, rows = self._lookup(ids)
            gone_ids = self._gone(wanted, rows, batch)
            self._live -= wanted.size
            self._row_of[wanted] = -1
        self.event_log.forget(gone_ids)
        self.event_log.add_many(tick, gone_ids, "despawn")

    def _gone(self, wanted: np.ndarray, rows: np.ndarray, batch: Pending) -> list[int]:
        """Despawned agents into ``batch``: those with a row by row, those spawned in the
        batch dropped from it; their ids in that order, each group's size brought down."""
        ag = self._agents
        placed = rows if not rows.size or int(rows.max()) < SPAWNING else rows[rows != SPAWNING]
        gone_ids: list[int] = []
        if placed.size:
            placed = np.sort(placed)
            batch.gone.append(placed)
            gone_ids = ag.ids[placed].tolist()
            names = ag.group_names
            counts = np.bincount(ag.group[placed], minlength=len(names)).tolist()
            for name, count in zip(names, counts, strict=True):
                self._sizes[name] -= count
        if placed.size < rows.size:  # spawned in this batch: they never get a row
            unplaced = np.sort(wanted[rows == SPAWNING])
            for name in batch.cancel(unplaced):
                self._sizes[name] -= 1
            gone_ids += unplaced.tolist()
        return gone_ids

    def _batch(self) -> Pending:
        """The pending batch of spawns and despawns (a new one when none is)."""
        if self._pending is None:
            self._pending = Pending()
        return self._pending

    def _group_spec(self, group: Any) -> Any:
        definition = self.scenario.definition
        known, specs = self._specs
        if known is not definition:  # a tuning change replaces the definition
            specs = {spec.name: spec for spec in definition.groups}
            self._specs = (definition, specs)
        spec = specs.get(group) if isinstance(group, str) else None
        if spec is None:
            names = [g.name for g in definition.groups]
            raise SimulationError(f"unknown group {group!r}{choices(str(group), names)}")
        return spec

    def _flush(self) -> None:
        """Apply the pending spawns and despawns to the rows, as one batch."""
        batch = self._pending
        if batch is None:
            return
        self._pending = None  # first: what the move reads of the Simulation is up to date
        ag = self._agents
        gone: dict[str, np.ndarray] = {}
        if len(batch.gone) == 1 and type(batch.gone[0]) is int:  # one despawn
            row = batch.gone[0]
            name = ag.group_names[ag.group.item(row)]
            gone[name] = np.array([row - ag.slices[name].start])
        elif batch.gone:
            rows = batch.gone[0]  # one despawn call's rows, sorted
            if len(batch.gone) > 1 or not isinstance(rows, np.ndarray):
                parts = [np.atleast_1d(np.asarray(part, dtype=np.int64)) for part in batch.gone]
                rows = np.sort(np.concatenate(parts))
            assert isinstance(rows, np.ndarray)
            if rows.size == 1:
                name = ag.group_names[int(ag.group[rows[0]])]
                gone[name] = rows - ag.slices[name].start
            else:
                for name, s in ag.slices.items():
                    lo, hi = np.searchsorted(rows, [s.start, s.stop]).tolist()
                    if hi > lo:
                        gone[name] = rows[lo:hi] - s.start
        fresh = batch.batches()
        if gone or fresh:
            self._move_rows(gone, fresh)

    def _move_rows(self, gone: dict[str, np.ndarray], fresh: dict[str, Spawned]) -> None:
        """Despawn the sorted local rows ``gone`` and place ``fresh`` agents (each group's
        ``world/build.spawned_rows`` and names), moving only the rows that must move
        (``world/rows.RowPlan``): amortised O(changed agents) plus one block move per array
        for the groups after one whose size changed."""
        old = self._agents
        added = {name: len(names) for name, (_, names) in fresh.items()}
        if len(gone) == len(added) and all(
            g in gone and gone[g].size == k for g, k in added.items()
        ):
            plan = RowPlan.overwrite(old.slices, gone)  # as many in as out, group by group
        else:
            plan = RowPlan(old.slices, gone, added)
        plan.apply_to(old, PER_AGENT, {name: rows for name, (rows, _) in fresh.items()})
        old.ids = old.ids[:]  # a new array object (caches know their rows by it), same memory
        if not plan.stays:  # else every group keeps its rows, each row its group
            index = {name: k for k, name in enumerate(old.group_names)}
            old.group = plan.apply(old.group, {name: index[name] for name in fresh})
            old.slices = {
                name: slice(m.new_start, m.new_start + m.n_new) for name, m in plan.moves.items()
            }
        plan.names(old.names, {name: names for name, (_, names) in fresh.items()})
        if old.smoother is not None and plan.stays:
            plan.apply_across(old.smoother.history, old.heading)
        elif old.smoother is not None:
            old.smoother = old.smoother.rerow(plan.source_rows(), old.heading)
        if plan.in_place:  # the new agents' rows, and the groups they join, change only
            for name, at in plan.fresh:
                new = fresh[name][0]["ids"]
                if isinstance(at, slice) and new.size == 1:  # one new agent: no array passes
                    self._row_of[new.item()] = at.start
                else:
                    self._row_of[new] = rows_at(at)
            moved = [name for name, _ in plan.fresh]
        else:
            for at in plan.moved():
                self._row_of[old.ids[at]] = rows_at(at)
            moved = [
                name for name, m in plan.moves.items() if m.changed or m.new_start != m.old_start
            ]
        for memory in self._memory.values():
            if memory:
                memory.move(plan)
        changes = {name: RowChange(rows=old.slices[name], move=plan.moves[name]) for name in moved}
        if self._decisions:
            self._rerowed += 1
            if self._rerowed > REROW_DEPTH:  # many batches since the step: read them (O(n))
                for held in self._decisions.values():
                    held.status, held.emitted, held.acted, held.thought  # noqa: B018 - each read ends a chain
                self._rerowed = 1
            decisions = dict(self._decisions)  # a new dict: one the game holds keeps its rows
            for name, change in changes.items():
                d = decisions.get(name)
                if d is not None and plan.moves[name].changed:
                    decisions[name] = _rerow_decision(d, change, len(self.trees[name]))
            self._decisions = decisions
        if self._contributions:
            self._contributions = {}
        self._engine.regroup(changes)

    def _rearrange(self, keep: dict[str, np.ndarray]) -> None:
        """New rows: each group's agents in the order ``keep`` gives (old local rows)."""
        old = self._agents
        src, changes, start = [], {}, 0
        for name, rows in old.slices.items():
            src.append(rows.start + keep[name])
            n = keep[name].size
            changes[name] = RowChange(rows=slice(start, start + n), source=keep[name])
            start += n
        mapping = np.concatenate(src)
        agents = rearrange(old, mapping, pick(old.names, mapping.tolist()))
        if old.smoother is not None:
            agents.smoother = old.smoother.rerow(mapping, agents.heading)
        self._agents = agents
        self._row_of[agents.ids] = np.arange(agents.n)
        for memory in self._memory.values():
            memory.rerow(mapping, agents.n)
        self._decisions = {
            name: _rerow_decision(d, changes[name], len(self.trees[name]))
            for name, d in self._decisions.items()
        }
        self._contributions = {}
        self._engine.regroup(changes)

    # ------------------------------------------------------------ the game's side (embed.py)
    def row_of(self, agent_id: Any) -> int:
        """The row in ``agents`` of agent ``agent_id``; ``SimulationError`` if malformed or unknown.

        Every id a caller passes is looked up here (:meth:`rows_of` for many),
        every id handed out comes from :meth:`ids_of`.
        """
        return int(self.rows_of([agent_id])[0])

    def ids_of(self, rows: np.ndarray) -> np.ndarray:
        """The ids of agent ``rows`` (int64 array)."""
        return self.agents.ids[np.asarray(rows, dtype=np.int64)]

    def watch(self, ids: Any) -> None:
        """Report node status changes of these agents (one id or many) as ``status`` events."""
        self.event_log.watch(ids)

    def unwatch(self, ids: Any) -> None:
        """Stop reporting their status changes."""
        self.event_log.unwatch(ids)

    @property
    def watching(self) -> tuple[int, ...]:
        """The watched agents' ids, ascending."""
        return self.event_log.watching

    def on(self, name: str, callback: Callable[[Event], Any]) -> Callable[[], None]:
        """Call ``callback(event)`` after each step for events called ``name`` (``"*"``: all).

        Returns a function that unsubscribes. Exceptions from callbacks propagate.
        """
        return self.event_log.subscribe(name, callback)

    def agent(self, agent_id: Any) -> AgentView:
        """A read-only snapshot of one agent (id, group, pos, vel, heading, active, blackboard)."""
        return AgentView.of(self, agent_id)

    def advance(self, real_seconds: float, *, max_steps: int = MAX_STEPS) -> float:
        """Run the fixed ticks ``real_seconds`` of real time allow (at most ``max_steps``).

        Returns the interpolation fraction in ``[0, 1)`` for drawing.
        """
        return self._fixed_step.advance(self, real_seconds, max_steps)

    def _record(self, event: Event) -> None:
        """Record a spawn/despawn event; it is delivered with the next step's events."""
        self.event_log.add(event)

    # ------------------------------------------------------------ inspection
    def locate(self, agent: int) -> tuple[str, int]:
        """``(group, row within the group)`` of global agent row ``agent``."""
        name = self.agents.group_names[int(self.agents.group[agent])]
        return name, agent - self.agents.slices[name].start

    def active_names(self, agent: int) -> list[str]:
        """Trace names of the steering leaves whose request for ``agent`` last tick gave a
        force or torque (a request of zero force, such as separation with nobody near, is
        left out; ``decisions[group].emitted`` has every request)."""
        group, local = self.locate(agent)
        decision = self.decisions.get(group)
        if decision is None:
            return []
        tree = self.trees[group]
        row = _acted(decision)[local]
        return [tree.nodes[tree.steering[k]].name for k in np.flatnonzero(row).tolist()]

    def active_table(self) -> list[list[str]]:
        """``active_names`` of every agent, computed per group with one pass over the emitted arrays."""
        out: list[list[str]] = [[] for _ in range(self.agents.n)]
        for group, rows in self.agents.slices.items():
            decision = self.decisions.get(group)
            if decision is None:
                continue
            tree = self.trees[group]
            names = [tree.nodes[i].name for i in tree.steering]
            for local, flags in enumerate(_acted(decision).tolist()):
                out[rows.start + local] = [n for n, on in zip(names, flags, strict=True) if on]
        return out

    def snapshot(self, agent: int) -> str:
        """py_trees' unicode tree of ``agent`` with each node's status."""
        return str(self.engine.snapshot(agent))

    def blackboard(self, agent: int) -> BlackboardView:
        """Agent ``agent``'s (an id) blackboard as a live mutable mapping of the keys its
        trees declare. Read and write it between ticks: the next ``step()`` sees a write.
        An undeclared key or a value of the wrong type raises ``behaviortk.BlackboardError``
        and changes nothing (``tree/blackboard.BlackboardView`` has the details)."""
        row = self.row_of(agent)
        group, _ = self.locate(row)
        if group not in self.trees:
            raise SimulationError(
                f"agent {agent} is in group {group!r}, moved by the game: external agents "
                "have no blackboard (sim.agent(id).blackboard is empty)"
            )
        return self.engine.blackboard_view(row)

    def ticks_per_second(self) -> float:
        total = sum(self.timings.values())
        return self.tick / total if total > 0 else 0.0


def _one_id(ids: Any) -> int | None:
    """``ids`` as one id when it is one whole number (alone, in a list, or in an integer
    array of one), else None (``Simulation._lookup`` checks the rest)."""
    if type(ids) is int:
        return ids
    if isinstance(ids, np.integer):
        return int(ids)
    if isinstance(ids, np.ndarray):
        return ids.item() if ids.size == 1 and ids.ndim == 1 and ids.dtype.kind in "iu" else None
    if type(ids) is list and len(ids) == 1 and type(ids[0]) is int:
        return ids[0]
    return None


def _acted(decision: Decision) -> np.ndarray:
    """The requests that gave a force (all requests before the act phase has run)."""
    return decision.emitted if decision.acted is None else decision.acted


def _rerow_decision(d: Decision, change: RowChange, nodes: int) -> Decision:
    """Last tick's decision with survivors' rows kept and new agents' rows empty (new
    arrays: a Decision the game holds keeps its rows).

    Statuses nobody has read yet stay unread (:class:`RerowedStatuses`).
    """
    m = change.move
    if m is not None:  # rows moved only when somebody reads them
        return Decision(
            emitted=lambda: moved_copy(d.emitted, m, False),
            status=RerowedStatuses(d, change, nodes),
            acted=lambda: None if d.acted is None else moved_copy(d.acted, m, False),
            thought=lambda: None if d.thought is None else moved_copy(d.thought, m, False),
        )
    source = change.source
    kept = np.flatnonzero(source >= 0)
    emitted = np.zeros((change.n, d.emitted.shape[1]), dtype=bool)
    emitted[kept] = d.emitted[source[kept]]
    acted = None
    if d.acted is not None:
        acted = np.zeros_like(emitted)
        acted[kept] = d.acted[source[kept]]
    thought = None
    if d.thought is not None:
        thought = np.zeros(change.n, dtype=bool)
        thought[kept] = d.thought[source[kept]]
    status = RerowedStatuses(d, change, nodes)
    status_now = status.all() if d.collected else status
    return Decision(emitted=emitted, status=status_now, acted=acted, thought=thought)


class RerowedStatuses:
    """Last tick's statuses after agents spawned or despawned, read from the old Decision
    when asked: survivors' rows where they are now, INVALID (0) for new agents.

    Holding the old Decision keeps it true: the engine reads a held Decision
    before the trees tick again (``tree/flat.Decision``).
    """

    __slots__ = ("change", "nodes", "old")

    def __init__(self, old: Decision, change: RowChange, nodes: int) -> None:
        self.old, self.change, self.nodes = old, change, nodes

    def all(self) -> np.ndarray:
        m = self.change.move
        if m is not None and self.old.collected:
            return moved_copy(self.old.status, m, INVALID)
        return self.rows(np.arange(self.change.n))

    def rows(self, local: np.ndarray) -> np.ndarray:
        source = self.change.source[local]
        status = np.zeros((local.size, self.nodes), dtype=np.int8)
        kept = np.flatnonzero(source >= 0)
        if kept.size:
            status[kept] = self.old.status_of(source[kept])
        return status


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _id_ranges(ids: np.ndarray) -> str:
    """Sorted ids as ranges: ``0-4, 7, 9-12`` (at most ten ranges shown)."""
    values = np.sort(ids)
    if values.size == 0:
        return "none"
    breaks = np.flatnonzero(np.diff(values) != 1)
    starts = np.concatenate([[0], breaks + 1])
    ends = np.concatenate([breaks, [values.size - 1]])
    parts = [
        f"{values[a]}" if a == b else f"{values[a]}-{values[b]}"
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True)
    ]
    more = f" (+{len(parts) - 10} more ranges)" if len(parts) > 10 else ""
    return ", ".join(parts[:10]) + more


def _numbers(value: Any, n: int, what: str) -> np.ndarray:
    """``value`` as ``n`` finite numbers (one for all, or one each)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise SimulationError(f"{what} must be a number or {n} numbers, got {value!r}") from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,) or not np.isfinite(arr).all():
        raise SimulationError(f"{what} must be {n} finite number(s), got {value!r}")
    return arr


@overload
def _points(value: Any, n: int, what: str, *, required: Literal[True]) -> np.ndarray: ...
@overload
def _points(value: Any, n: int, what: str, *, required: bool = False) -> np.ndarray | None: ...
def _points(value: Any, n: int, what: str, *, required: bool = False) -> np.ndarray | None:
    """``value`` as ``(n, 2)`` finite coordinates (one ``[x, y]`` for all, or one each); None
    stays None unless ``required``."""
    if value is None:
        if required:
            raise SimulationError(f"{what} must be [x, y] (finite numbers), got None")
        return None
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise SimulationError(f"{what} must be [x, y] or {n} of them, got {value!r}") from None
    if arr.shape == (2,):
        arr = np.tile(arr, (n, 1))
    if arr.shape != (n, 2) or not np.isfinite(arr).all():
        raise SimulationError(f"{what} must be [x, y] or {n} of them, finite, got {value!r}")
    return arr
