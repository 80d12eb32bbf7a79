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
from behaviortk.sense.sensing import Sense
from behaviortk.sim.allocator import reuse_freed_memory
from behaviortk.sim.embed import MAX_STEPS, AgentView, Event, EventLog, FixedStep
from behaviortk.steering.context import LeafMemory
from behaviortk.steering.debug import DebugBuffer
from behaviortk.tree.flat import Decision, FlatTree, flatten
from behaviortk.tree.status import INVALID
from behaviortk.vec import from_angle
from behaviortk.world.build import build, spawned_rows
from behaviortk.world.integrate import integrate
from behaviortk.world.non_penetration import NonPenetration
from behaviortk.world.rows import (
    PER_AGENT,
    RowPlan,
    copied,
    lengthened,
    moved_copy,
    pick,
    rearrange,
    stack,
)
from behaviortk.world.spatial import displacement
from behaviortk.world.state import Agents, World
from behaviortk.world.streams import uniforms

if TYPE_CHECKING:
    from behaviortk.engines.base import Engine
    from behaviortk.tree.blackboard import BlackboardView

PHASES = ("sense", "decide", "act", "integrate")


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
    ) -> None:
        _check_engine(engine)
        seed = _check_seed(seed)
        from behaviortk.sim import choice

        choice.resolve(kernels, "batch")  # an unknown name fails here, before anything is built
        if isinstance(scenario, str | Path):
            from behaviortk.format.loader import load

            scenario = load(scenario)
        reuse_freed_memory()  # process-wide allocator setting; halves the neighbour query
        self.scenario = scenario
        definition = scenario.definition
        self.seed = int(definition.world.seed if seed is None else seed)
        self.world: World
        self.agents: Agents
        self.world, self.agents = build(definition, self.seed)
        self._next_id = self.agents.n
        self._row_of = np.arange(self.agents.n, dtype=np.int64)  # id -> row, -1 once despawned
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
        self.memory: dict[tuple[str, int], LeafMemory] = {}
        self.debug = DebugBuffer(enabled=debug)
        self.pointer: np.ndarray | None = None
        self.decisions: dict[str, Decision] = {}
        self.contributions: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
        self.timings: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.event_log = EventLog(self)  # before the engine: its emit nodes record here
        self.events: list[Event] = []
        self._fixed_step = FixedStep()
        self.engine = make_engine(self, engine)
        from behaviortk.steering.act import act

        self._act: Callable[..., tuple[np.ndarray, np.ndarray]] = act
        self._integrate: Callable[..., None] = integrate
        self.kernels: Any = None
        """The compiled kernels this run uses (``sim.backend.Kernels``), or None (NumPy)."""
        self.compile_s = 0.0
        """Seconds this Simulation spent compiling kernels or loading them from the disk cache."""
        if choice.resolve(kernels, self.engine.name) == "numba":
            self.kernels, self.compile_s = choice.load()
        if self.kernels is not None:
            self._act = self.kernels.act
            self._integrate = self.kernels.integrate
            compile_trees = getattr(self.engine, "compile_trees", None)
            if compile_trees is not None:  # the batch engine's fused trees (batch/fused.py)
                self.compile_s += compile_trees()
            if self.non_penetration is not None:
                self.non_penetration.kernels = self.kernels

    @property
    def kernel_name(self) -> str:
        """``"numba"`` (compiled kernels) or ``"numpy"`` (the reference)."""
        return "numpy" if self.kernels is None else str(self.kernels.name)

    @property
    def name(self) -> str:
        return str(self.scenario.definition.name)

    @property
    def ids(self) -> np.ndarray:
        """Agent ids in row order (int64); an id is never reused within a run."""
        return self.agents.ids

    def sense(self) -> Sense:
        """The sensed facts of the current tick (each agent's random numbers of this tick)."""
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
        )

    def step(self) -> None:
        """Advance one fixed tick: sense, decide, act, integrate."""
        clock = _time.perf_counter
        t0 = clock()
        if self.kernels is not None:
            keep = self.kernels.cell_order(self)
            if keep is not None:
                self._rearrange(keep, {})
        sense = self.sense()
        self.engine.prepare(self, sense)
        t1 = clock()
        self.decisions = {}  # last tick's are dropped first: an engine may read held ones (Decision)
        self.decisions = self.engine.decide(self, sense)
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
        self.events = self.event_log.collect(self.tick - 1)
        self.event_log.dispatch(self.events)

    def run(self, ticks: int, on_tick: Callable[[Simulation], None] | None = None) -> None:
        """``step()`` ``ticks`` times, calling ``on_tick(sim)`` after each (traces, progress)."""
        if (
            isinstance(ticks, bool | np.bool_)
            or not isinstance(ticks, int | np.integer)
            or ticks < 0
        ):
            raise SimulationError(f"ticks must be a whole number >= 0, got {ticks!r}")
        if on_tick is not None and not callable(on_tick):
            raise SimulationError(f"on_tick must be callable, got {on_tick!r}")
        for _ in range(int(ticks)):
            self.step()
            if on_tick is not None:
                on_tick(self)

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
        if isinstance(ids, np.ndarray) and ids.dtype.kind in "iu" and ids.ndim == 1:
            wanted = ids.astype(np.int64)
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
                        f"live ids: {_id_ranges(self.agents.ids)}"
                    )
                if not _INT64_MIN <= int(item) <= _INT64_MAX:  # an id beyond int64: never spawned
                    raise SimulationError(
                        f"agent id {int(item)} was never spawned; live ids: "
                        f"{_id_ranges(self.agents.ids)}"
                    )
                checked.append(int(item))
            wanted = np.array(checked, dtype=np.int64)
        known = (wanted >= 0) & (wanted < self._next_id)
        rows = np.full(wanted.size, -1, dtype=np.int64)
        rows[known] = self._row_of[wanted[known]]
        bad = np.flatnonzero(rows < 0)
        if bad.size:
            value = int(wanted[bad[0]])
            why = "was despawned" if 0 <= value < self._next_id else "was never spawned"
            raise SimulationError(
                f"agent id {value} {why}; live ids: {_id_ranges(self.agents.ids)}"
            )
        if np.unique(wanted).size != wanted.size:
            raise SimulationError(f"agent ids repeat in {wanted.tolist()}")
        return rows

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
        agents start their tree fresh; nobody else's state changes.
        """
        spec = self._group_spec(group)
        if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 1:
            raise SimulationError(f"count must be a whole number >= 1, got {count!r}")
        if count > MAX_LIVE_AGENTS - self.agents.n:
            raise SimulationError(
                f"cannot spawn {count} agents: {self.agents.n} live + {count} exceeds "
                f"the limit of {MAX_LIVE_AGENTS:,} agents in one simulation"
            )
        n = int(count)
        p = _points(pos, n, "pos")
        v = _points(vel, n, "vel")
        h = None
        if heading is not None:
            h = from_angle(np.radians(_numbers(heading, n, "heading")))
        ids = np.arange(self._next_id, self._next_id + n, dtype=np.int64)
        rows = self.agents.slices[group]
        first = rows.stop - rows.start
        names = [f"{group}-{i}" for i in ids.tolist()]
        fresh = spawned_rows(spec, ids, self.seed, first, pos=p, vel=v, heading=h)
        self._next_id += n
        self._move_rows({}, {group: (fresh, names)})
        for agent in ids.tolist():
            self._record(Event(self.tick, agent, "spawn"))
        return ids.tolist()

    def despawn(self, ids: Any) -> None:
        """Remove agents ``ids``; everyone else keeps all their state.

        Rows move in place (the group's last agents fill the freed rows): arrays read from
        ``sim.agents`` before the call may hold other agents after it, so read them again;
        ``sim.ids`` is a new array each time, safe to iterate while despawning."""
        rows = np.sort(self.rows_of(ids))
        gone_ids = self.agents.ids[rows].tolist()
        gone = {}
        for name, s in self.agents.slices.items():
            lo, hi = np.searchsorted(rows, [s.start, s.stop]).tolist()
            if hi > lo:
                gone[name] = rows[lo:hi] - s.start
        self._row_of[self.agents.ids[rows]] = -1
        self._move_rows(gone, {})
        self.event_log.forget(gone_ids)
        for agent in gone_ids:
            self._record(Event(self.tick, agent, "despawn"))

    def _group_spec(self, group: Any) -> Any:
        for spec in self.scenario.definition.groups:
            if spec.name == group:
                return spec
        names = [g.name for g in self.scenario.definition.groups]
        raise SimulationError(f"unknown group {group!r}{choices(str(group), names)}")

    def _move_rows(
        self, gone: dict[str, np.ndarray], fresh: dict[str, tuple[dict[str, Any], list[str]]]
    ) -> None:
        """Despawn the sorted local rows ``gone`` and append ``fresh`` agents (each group's
        ``world/build.spawned_rows`` and names), moving only the rows that must move
        (``world/rows.RowPlan``): amortised O(changed agents) plus one block move per array
        for the groups after a changed one."""
        old = self.agents
        plan = RowPlan(old.slices, gone, {name: len(names) for name, (_, names) in fresh.items()})
        index = {name: k for k, name in enumerate(old.group_names)}
        done: dict[int, np.ndarray] = {}  # arrays shared by two fields move once
        for field in PER_AGENT:
            arr = getattr(old, field)
            if field == "ids":  # a new array (caches know their rows by it), with the room
                arr = copied(arr)
            if id(arr) not in done:
                values = {g: rows[field] for g, (rows, _) in fresh.items()} if fresh else {}
                done[id(arr)] = plan.apply(arr, values)
            setattr(old, field, done[id(arr)])
        old.group = plan.apply(old.group, {name: index[name] for name in fresh})
        plan.names(old.names, {name: names for name, (_, names) in fresh.items()})
        old.slices = {
            name: slice(m.new_start, m.new_start + m.n_new) for name, m in plan.moves.items()
        }
        if old.smoother is not None:
            old.smoother = old.smoother.rerow(plan.source_rows(), old.heading)
        self._row_of = lengthened(self._row_of, self._next_id, -1)
        moved = plan.moved_rows()
        self._row_of[old.ids[moved]] = moved
        for memory in self.memory.values():
            memory.move(plan)
        changes = {name: RowChange(rows=old.slices[name], move=m) for name, m in plan.moves.items()}
        self.decisions = {
            name: _rerow_decision(d, changes[name], len(self.trees[name]))
            if plan.moves[name].changed
            else d
            for name, d in self.decisions.items()
        }
        self.contributions = {}
        self.engine.regroup(changes)

    def _rearrange(self, keep: dict[str, np.ndarray], fresh: dict[str, Agents]) -> None:
        """New rows: per group, its survivors (``keep``, old local rows) then ``fresh`` agents."""
        old = self.agents
        src, names, changes, start = [], [], {}, 0
        for name, rows in old.slices.items():
            added = fresh.get(name)
            n_added = 0 if added is None else added.n
            src += [rows.start + keep[name], np.full(n_added, -1, dtype=np.int64)]
            names += pick(old.names, (rows.start + keep[name]).tolist())
            names += [] if added is None else added.names
            n = keep[name].size + n_added
            changes[name] = RowChange(rows=slice(start, start + n), keep=keep[name])
            start += n
        mapping = np.concatenate(src)
        added = stack(list(fresh.values()), old.group_names) if fresh else None
        agents = rearrange(old, mapping, names, added)
        if old.smoother is not None:
            agents.smoother = old.smoother.rerow(mapping, agents.heading)
        self.agents = agents
        self._row_of[old.ids] = -1
        self._row_of = np.concatenate(
            [self._row_of, np.full(self._next_id - self._row_of.size, -1, dtype=np.int64)]
        )
        self._row_of[agents.ids] = np.arange(agents.n)
        for memory in self.memory.values():
            memory.rerow(mapping, agents.n)
        self.decisions = {
            name: _rerow_decision(d, changes[name], len(self.trees[name]))
            for name, d in self.decisions.items()
        }
        self.contributions = {}
        self.engine.regroup(changes)

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
        )
    emitted = np.zeros((change.n, d.emitted.shape[1]), dtype=bool)
    emitted[: change.keep.size] = d.emitted[change.keep]
    acted = None
    if d.acted is not None:
        acted = np.zeros_like(emitted)
        acted[: change.keep.size] = d.acted[change.keep]
    status = RerowedStatuses(d, change, nodes)
    return Decision(emitted=emitted, status=status.all() if d.collected else status, acted=acted)


class RerowedStatuses:
    """Last tick's statuses after agents spawned or despawned, read from the old Decision
    when asked: survivors' rows in their new order, INVALID (0) for new agents.

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
        keep = self.change.keep
        status = np.zeros((self.change.n, self.nodes), dtype=np.int8)
        if keep.size:
            status[: keep.size] = self.old.status_of(keep)
        return status

    def rows(self, local: np.ndarray) -> np.ndarray:
        m = self.change.move
        n_kept = m.n_kept if m is not None else self.change.keep.size
        status = np.zeros((local.size, self.nodes), dtype=np.int8)
        kept = local < n_kept
        if kept.any():
            new = local[kept]
            old = m.old_rows(new) if m is not None else self.change.keep[new]
            status[kept] = self.old.status_of(old)
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
