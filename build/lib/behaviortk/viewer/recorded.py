"""A recorded tick dressed as a Simulation, so every drawing layer shows it unchanged.

The painter, overlays, legend and tree panel read a handful of Simulation
attributes (``world``, ``agents``, ``trees``, ``decisions``, ``engine.node_status``,
``tick``, ...; ``tests/viewer_support.fake_sim`` lists them). ``RecordedView``
has them, built from a ``Recording`` (the world and each group's constants come
from the recorded definition) and one ``TickState`` (positions, velocities,
headings, forces, statuses, active leaves of that tick).

What a trace does not hold is shown as missing, never made up: no blackboards,
no per-leaf forces (only the total ``fx``/``fy``), no steering debug geometry
(crosshairs, wander circles, feelers, hiding spots), so those overlays draw
nothing in a replay.

``tick_state(sim)`` gives the ``TickState`` of either a live Simulation or a
``RecordedView``: a panel that reads it (statuses, active leaves, positions)
works the same on a live run and on a replay.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.record.reader import Recording
from behaviortk.record.tick_state import TickState
from behaviortk.steering.debug import DebugBuffer
from behaviortk.tree.flat import Decision
from behaviortk.world.build import GROUP_CONSTANTS, build, build_world, group_agents
from behaviortk.world.factory import make_agents
from behaviortk.world.state import Agents


def tick_state(sim: Any) -> TickState:
    """The ``TickState`` shown: a replay's recorded one, or a copy of a live Simulation's."""
    state = getattr(sim, "state", None)
    return state if isinstance(state, TickState) else TickState.of(sim)


class RecordedEngine:
    """The engine calls the panel makes, answered from the recorded tick."""

    def __init__(self, name: str, state: TickState) -> None:
        self.name = name
        self.state = state

    def node_status(self, agent: int) -> np.ndarray:
        return self.state.node_status(agent)

    def blackboard(self, agent: int) -> dict[str, Any]:
        return {}  # blackboards are not recorded


class RecordedWorld:
    """What stays the same across a recording's ticks: world geometry, group constants, names."""

    def __init__(self, rec: Recording) -> None:
        definition = rec.scenario.definition
        self.world = build_world(
            definition.world,
            definition.obstacles,
            definition.walls,
            definition.paths,
            definition.zones,
        )
        seed = int(rec.header.get("seed", definition.world.seed))
        one = np.zeros(1, dtype=np.int64)
        groups = [group_agents(g, one, ["_"], seed) for g in definition.groups]
        self.constants = {
            name: np.concatenate([getattr(a, name) for a in groups]) if groups else np.zeros(0)
            for name in GROUP_CONSTANTS
        }
        self.initial_names = build(definition, seed)[1].names if definition.groups else []
        self._names: tuple[np.ndarray, list[str]] | None = None

    def names(self, state: TickState) -> list[str]:
        """Definition names for the initial ids, ``<group>-<id>`` for agents spawned later."""
        if self._names is not None and np.array_equal(self._names[0], state.ids):
            return self._names[1]
        first = self.initial_names
        groups = state.group_names
        names = [
            first[i] if 0 <= i < len(first) else f"{groups[g]}-{i}"
            for i, g in zip(state.ids.tolist(), state.group.tolist(), strict=True)
        ]
        self._names = (state.ids.copy(), names)
        return names

    def agents(self, state: TickState) -> Agents:
        counts = np.bincount(state.group, minlength=len(state.group_names))
        per_row = {name: values[state.group] for name, values in self.constants.items()}
        agents = make_agents(
            state.pos,
            state.vel,
            heading=state.heading,
            groups=list(zip(state.group_names, counts.tolist(), strict=True)),
            names=self.names(state),
            ids=state.ids,
            **per_row,
        )
        agents.force = state.force
        return agents


class RecordedView:
    """One recorded tick with the attributes the drawing layers read of a Simulation."""

    recorded = True

    def __init__(self, rec: Recording, fixed: RecordedWorld, state: TickState) -> None:
        self.recording = rec
        self.state = state
        self.scenario = rec.scenario
        self.world = fixed.world
        self.agents = fixed.agents(state)
        self.trees = rec.trees
        self.decisions = {
            group: Decision(emitted=state.emitted[group], status=state.status[group])
            for group in state.status
        }
        self.contributions: dict[str, Any] = {}  # per-leaf forces are not recorded
        self.debug = DebugBuffer(enabled=False)  # nor is steering debug geometry
        self.engine = RecordedEngine(str(rec.header.get("engine", "?")), state)
        self.tick = state.tick + 1  # a Simulation's tick counts the steps taken
        self.time = state.time
        self.dt = rec.dt
        self.seed = int(rec.header.get("seed", 0))
        self.pointer = None

    @property
    def name(self) -> str:
        return self.recording.name

    @property
    def ids(self) -> np.ndarray:
        return self.state.ids

    def locate(self, agent: int) -> tuple[str, int]:
        return self.state.locate(agent)

    def active_names(self, agent: int) -> list[str]:
        return self.state.active(agent)

    def active_table(self) -> list[list[str]]:
        return self.state.active_lists()
