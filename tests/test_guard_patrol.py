"""definitions/guard_patrol.json: a guard sees, remembers, reaches the last-seen point,
searches, forgets and returns to its beat, checked by state on both engines.

The scenario also runs with every shipped file in ``test_scenarios.py`` (600 ticks,
finite state, speed limits) and ``test_equivalence.py`` (both engines, 600 ticks).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
from test_scenarios import DEFINITIONS, segments_cross

from behaviortk import load
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.clock import ticks_for
from behaviortk.tree.status import FAILURE, RUNNING, SUCCESS
from behaviortk.vec import Array, length

TICKS = 760  # guard 1 sees the intruder on tick 165 and gives up on 577; guard 0 on 729


@dataclass
class GuardRun:
    sim: Simulation
    status: np.ndarray  # (ticks, guards, nodes): each guard's node statuses per tick
    pos: Array  # (ticks + 1, agents, 2): positions before each tick (and after the last)
    stored: list[list[Stored]]  # per tick, per guard: last_seen and its stored tick, after it

    def node(self, name: str) -> int:
        found = [n.index for n in self.sim.trees["guards"].nodes if n.name == name]
        assert len(found) == 1, name
        return found[0]

    def of(self, name: str, guard: int) -> np.ndarray:
        """Guard ``guard``'s status of the node called ``name`` on every tick."""
        return self.status[:, guard, self.node(name)]


Stored = tuple[tuple[float, float] | None, int | None]


@cache
def guard_run(engine: str) -> GuardRun:
    sim = Simulation(load(DEFINITIONS / "guard_patrol.json"), engine=engine)
    views = [sim.blackboard(int(i)) for i in sim.ids[sim.agents.slices["guards"]]]
    status, pos, stored = [], [sim.agents.pos.copy()], []
    for _ in range(TICKS):
        sim.step()
        status.append(sim.decisions["guards"].status.copy())
        pos.append(sim.agents.pos.copy())
        stored.append([(v.get("last_seen"), v.stored_tick("last_seen")) for v in views])
    return GuardRun(sim, np.array(status), np.array(pos), stored)


def test_both_engines_run_it_alike() -> None:
    a, b = guard_run("py_trees"), guard_run("batch")
    np.testing.assert_array_equal(a.status, b.status)
    np.testing.assert_array_equal(a.pos, b.pos)
    assert a.stored == b.stored


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_each_guard_sees_remembers_reaches_searches_and_returns_to_patrol(engine: str) -> None:
    run = guard_run(engine)
    for g in range(2):
        check_first_round(run, g)


def check_first_round(run: GuardRun, g: int) -> None:
    """Guard ``g``'s first round, walked back from the tick it first gives up."""
    sim = run.sim
    give_ups = np.flatnonzero(run.of("give up", g) == SUCCESS)
    assert give_ups.size, f"guard {g} never finished a search"
    intruder = sim.agents.slices["intruder"].start
    guard = sim.agents.slices["guards"].start + g
    sees, note, pursue = (run.of(n, g) for n in ("sees intruder", "note where", "pursue"))
    go, search, patrol = (run.of(n, g) for n in ("go to last seen", "search", "patrol"))
    stored = [per_tick[g] for per_tick in run.stored]
    search_ticks = ticks_for(3.5, sim.dt)  # the search's wait: 3.5 s at 60 Hz = 210 ticks

    # 5. gave up: `forget` succeeded on tick r and the key is unset
    r = int(give_ups[0])
    assert stored[r] == (None, None)
    # 4. searched: the 3.5 s wait ran from the tick it reached the point to r - 1
    reached = r - search_ticks
    assert (search[reached:r] == RUNNING).all() and search[r] == SUCCESS
    point, stored_on = stored[reached]
    assert point is not None and stored_on is not None
    assert all(stored[t] == (point, stored_on) for t in range(stored_on, r))
    near = length(run.pos[reached:r, guard] - np.asarray(point))
    assert near.max() < 80.0  # wandering about the point (at most 55 here), pulled back to it
    # 3. reached the last-seen point: arrive succeeds within its tolerance (10)
    assert go[reached] == SUCCESS
    assert length(run.pos[reached, guard] - np.asarray(point)) <= 10.0
    # 2. lost sight on the tick after the last remember, then went there
    assert (sees[stored_on + 1 : reached] == FAILURE).all()
    assert (go[stored_on + 1 : reached] == RUNNING).all()
    assert reached - stored_on > 60  # a walk of over a second, not a point underfoot
    # 1. saw it, remembered where it was at the start of that tick, and chased it
    assert sees[stored_on] == note[stored_on] == SUCCESS and pursue[stored_on] == RUNNING
    np.testing.assert_array_equal(point, run.pos[stored_on, intruder])
    first_seen = int(np.flatnonzero(sees == SUCCESS)[0])
    assert first_seen <= stored_on
    assert (patrol[:first_seen] == RUNNING).all()  # on its beat until then
    # 6. back on the beat the tick after giving up
    assert patrol[r + 1] == RUNNING


def test_the_intruder_makes_its_round_and_nobody_walks_through_a_wall() -> None:
    run = guard_run("batch")
    sim, pos = run.sim, run.pos
    zones = sim.world.zones
    intruder = sim.agents.slices["intruder"].start
    order = []
    for t in range(pos.shape[0]):
        for name, zone in zones.items():
            p = pos[t, intruder]
            inside = (
                length(p - zone.center) <= zone.radius
                if zone.kind == "circle"
                else bool(((p >= zone.low) & (p <= zone.high)).all())
            )
            if inside and (not order or order[-1] != name):
                order.append(name)
    assert order[:3] == ["west hall", "vault", "east gate"]  # ticks 0, 445, 699; garden 1168
    w = sim.world
    step_a, step_b = pos[:-1, :, None, :], pos[1:, :, None, :]
    crossed = segments_cross(step_a, step_b, w.wall_a[None, None], w.wall_b[None, None])
    assert not crossed.any()
    gap = length(pos[:, :, None, :] - w.obstacle_pos[None, None])
    assert (gap > w.obstacle_radius[None, None]).all()
