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

Phase timings (seconds, accumulated in ``timings``): *sense* draws the random
table, builds the tick's ``Sense`` and lets the engine compute the group-wide
facts its leaves read (conditions, leaf statuses); *decide* ticks the trees;
*act* computes and combines forces; *integrate* moves the agents.
"""

from __future__ import annotations

import gc
import time as _time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from behaviortk.engines.names import AUTO_BATCH_AGENTS, ENGINES  # defined there, for the CLI
from behaviortk.sense import Sense
from behaviortk.steering.debug import DebugBuffer
from behaviortk.tree.flat import Decision, FlatTree, flatten
from behaviortk.world.build import build
from behaviortk.world.integrate import integrate
from behaviortk.world.memory import reuse_freed_memory
from behaviortk.world.state import Agents, World

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
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if engine == "auto":
        engine = "batch" if sim.agents.n >= AUTO_BATCH_AGENTS else "py_trees"
    if engine == "batch":
        from behaviortk.engines.batch import BatchEngine

        return BatchEngine(sim)
    from behaviortk.engines.pytrees import PyTreesEngine

    return PyTreesEngine(sim)


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
    ) -> None:
        if isinstance(scenario, str | Path):
            from behaviortk.format.loader import load

            scenario = load(scenario)
        reuse_freed_memory()  # process-wide allocator setting; halves the neighbour query
        self.scenario = scenario
        definition = scenario.definition
        self.seed = int(definition.world.seed if seed is None else seed)
        self.world: World
        self.agents: Agents
        self.world, self.agents, self.rng = build(definition, self.seed)
        self.dt = float(definition.world.dt)
        self.heading_smoothing = int(definition.world.heading_smoothing)
        self.tick = 0
        self.time = 0.0
        self.registries = scenario.registries
        self.trees: dict[str, FlatTree] = {
            group.name: flatten(scenario.trees[group.name], self.registries)
            for group in definition.groups
        }
        self.n_rand = max([1, *(t.n_rand for t in self.trees.values())])
        self.memory: dict[tuple[str, int], dict[str, np.ndarray]] = {}
        self.debug = DebugBuffer(enabled=debug)
        self.pointer: np.ndarray | None = None
        self.decisions: dict[str, Decision] = {}
        self.contributions: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
        self.timings: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.engine = make_engine(self, engine)
        from behaviortk.steering.act import act

        self._act: Callable[..., tuple[np.ndarray, np.ndarray]] = act

    @property
    def name(self) -> str:
        return str(self.scenario.definition.name)

    def sense(self) -> Sense:
        """The sensed facts of the current tick (draws this tick's random table)."""
        rand = self.rng.random((self.agents.n, self.n_rand))
        return Sense(
            self.world,
            self.agents,
            rand,
            self.tick,
            self.time,
            blackboard_points=self.engine.blackboard_points,
            pointer=self.pointer,
            registries=self.registries,
        )

    def step(self) -> None:
        """Advance one fixed tick: sense, decide, act, integrate."""
        clock = _time.perf_counter
        t0 = clock()
        sense = self.sense()
        self.engine.prepare(self, sense)
        t1 = clock()
        self.decisions = self.engine.decide(self, sense)
        t2 = clock()
        linear, angular = self._act(self, sense, self.decisions)
        t3 = clock()
        integrate(self.world, self.agents, linear, angular, self.dt, self.heading_smoothing)
        t4 = clock()
        timings = self.timings
        timings["sense"] += t1 - t0
        timings["decide"] += t2 - t1
        timings["act"] += t3 - t2
        timings["integrate"] += t4 - t3
        self.tick += 1
        self.time = self.tick * self.dt

    def run(self, ticks: int, on_tick: Callable[[Simulation], None] | None = None) -> None:
        """``step()`` ``ticks`` times, calling ``on_tick(sim)`` after each (traces, progress)."""
        for _ in range(int(ticks)):
            self.step()
            if on_tick is not None:
                on_tick(self)

    # ------------------------------------------------------------ inspection
    def locate(self, agent: int) -> tuple[str, int]:
        """``(group, row within the group)`` of global agent row ``agent``."""
        name = self.agents.group_names[int(self.agents.group[agent])]
        return name, agent - self.agents.slices[name].start

    def active_names(self, agent: int) -> list[str]:
        """Trace names of the steering leaves that emitted a request for ``agent`` last tick."""
        group, local = self.locate(agent)
        decision = self.decisions.get(group)
        if decision is None:
            return []
        tree = self.trees[group]
        row = decision.emitted[local]
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
            for local, flags in enumerate(decision.emitted.tolist()):
                out[rows.start + local] = [n for n, on in zip(names, flags, strict=True) if on]
        return out

    def snapshot(self, agent: int) -> str:
        """py_trees' unicode tree of ``agent`` with each node's status."""
        return str(self.engine.snapshot(agent))

    def blackboard(self, agent: int) -> BlackboardView:
        """``agent``'s blackboard (its row, for now) as a live mutable mapping of the keys its
        trees declare. Read and write it between ticks: the next ``step()`` sees a write.
        An undeclared key or a value of the wrong type raises ``behaviortk.BlackboardError``
        and changes nothing (``tree/blackboard.BlackboardView`` has the details)."""
        row = agent
        return self.engine.blackboard_view(row)

    def ticks_per_second(self) -> float:
        total = sum(self.timings.values())
        return self.tick / total if total > 0 else 0.0
