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
nothing in a replay. An attached game's frame (``viewer/remote.py``) also carries
``facts`` of the agents the viewer selected (their why, blackboard entries and leaf
forces: ``sim/agent_facts.py``): the panels show them as for a live Simulation.

``tick_state(sim)`` gives the ``TickState`` of either a live Simulation or a
``RecordedView``: a panel that reads it (statuses, active leaves, positions)
works the same on a live run and on a replay.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.record.reader import Recording
from behaviortk.sim.tick_state import TickState
from behaviortk.steering.debug import DebugBuffer
from behaviortk.tree.flat import Decision
from behaviortk.world.build import GROUP_CONSTANTS, build, build_world, group_agents
from behaviortk.world.factory import make_agents
from behaviortk.world.state import Agents


def tick_state(sim: Any) -> TickState:
    """The ``TickState`` shown: a replay's recorded one, or a copy of a live Simulation's."""
    state = getattr(sim, "state", None)
    return state if isinstance(state, TickState) else TickState.of(sim)


def _placed(
    state: TickState, facts: dict[int, dict[str, Any]]
) -> list[tuple[int, str, dict[str, Any]]]:
    """``(row, group, facts)`` of each agent ``facts`` speaks of that ``state`` holds."""
    out = []
    for agent, one in facts.items():
        rows = np.flatnonzero(state.ids == agent)
        if rows.size:
            out.append((int(rows[0]), state.group_names[int(state.group[rows[0]])], one))
    return out


def contributions(
    state: TickState, facts: dict[int, dict[str, Any]]
) -> dict[str, dict[int, tuple[np.ndarray, np.ndarray]]]:
    """``sim.contributions``' shape (group -> leaf -> (rows, forces)) of the agents whose
    leaf forces ``facts`` carries (an attached game's selected agents: a few)."""
    found: dict[str, dict[int, list[tuple[int, np.ndarray]]]] = {}
    for row, group, one in _placed(state, facts):
        for k in np.flatnonzero(~np.isnan(one["forces"][:, 0])).tolist():
            found.setdefault(group, {}).setdefault(k, []).append((row, one["forces"][k]))
    return {
        group: {
            k: (np.array([r for r, _ in got]), np.array([f for _, f in got]))
            for k, got in leaves.items()
        }
        for group, leaves in found.items()
    }


def recorded_contributions(
    state: TickState,
) -> dict[str, dict[int, tuple[np.ndarray, np.ndarray]]]:
    """``sim.contributions``' shape from a trace's ``leaf_force`` column (every agent; empty
    when the trace left it out): a loop over steering leaves, never over agents."""
    out: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
    for group, forces in (state.leaf_forces or {}).items():
        start = state.slices[group].start
        asked = np.isfinite(forces[:, :, 0])
        leaves = {}
        for k in np.flatnonzero(asked.any(axis=0)).tolist():
            rows = np.flatnonzero(asked[:, k])
            leaves[k] = (rows + start, forces[rows, k].astype(np.float64))
        out[group] = leaves
    return out


def requests(state: TickState, facts: dict[int, dict[str, Any]]) -> dict[str, np.ndarray]:
    """Per group with an agent ``facts`` speaks of: the trace's requests (those whose force
    counted) with that agent's row replaced by every request it emitted, as a live
    Simulation's decision has them."""
    out: dict[str, np.ndarray] = {}
    for row, group, one in _placed(state, facts):
        if group not in state.emitted:
            continue
        start = int(np.searchsorted(state.group, state.group[row]))  # groups are contiguous
        emitted = out.setdefault(group, state.emitted[group].copy())
        if emitted.shape[1] == one["asked"].shape[0]:
            emitted[row - start] = one["asked"]
    return out


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

    def __init__(
        self,
        rec: Recording,
        fixed: RecordedWorld,
        state: TickState,
        facts: dict[int, dict[str, Any]] | None = None,
    ) -> None:
        """``facts``: an attached game's facts of its selected agents, by id (None: a trace,
        which has none)."""
        self.recording = rec
        self.state = state
        self.scenario = rec.scenario
        self.world = fixed.world
        self.agents = fixed.agents(state)
        self.trees = rec.trees
        asked = requests(state, facts or {})
        self.decisions = {
            group: Decision(emitted=asked.get(group, state.emitted[group]), status=codes)
            for group, codes in state.status.items()
        }
        self.facts = facts
        self.contributions = contributions(state, facts) if facts else recorded_contributions(state)
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
