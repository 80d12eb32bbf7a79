"""A game's per-frame calls on the embedding API: external agents' views, every bad argument
refused with a SimulationError that changes nothing, blackboard writes bounded at the write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from engine_support import definition
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from behaviortk.errors import SimulationError
from behaviortk.format.limits import MAX_LIVE_AGENTS
from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.blackboard import BlackboardError

ENGINES = ("py_trees", "batch")
CHASE = Path(__file__).resolve().parents[1] / "examples" / "chase_game.json"


@pytest.mark.parametrize("engine", ENGINES)
def test_the_players_own_agent_has_a_view(engine: str) -> None:
    """chase_game's player (id 0, external): a view with its place, no tree, no board."""
    sim = Simulation(CHASE, engine)
    sim.move(0, [410.0, 300.0])  # 10 units in one tick of 0.0333 s: vel 300.3 along +x
    sim.step()
    view = sim.agent(0)
    assert (view.id, view.group, view.active) == (0, "player", ())
    assert view.pos.tolist() == [410.0, 300.0]
    assert view.vel[0] == pytest.approx(10.0 / 0.0333) and view.vel[1] == 0.0
    assert dict(view.blackboard) == {}
    with pytest.raises(TypeError):
        view.blackboard["x"] = 1  # type: ignore[index]
    with pytest.raises(SimulationError, match="external agents have no blackboard"):
        sim.blackboard(0)
    assert sim.agent(1).group == "hunters"


def test_engines_agree_while_the_game_reads_its_player_every_tick() -> None:
    """The player moves on a circle; both engines read every agent's view each tick."""
    sims = [Simulation(CHASE, e) for e in ENGINES]
    for tick in range(60):
        angle = tick * 0.1
        for sim in sims:
            sim.move(0, [400 + 100 * np.cos(angle), 300 + 100 * np.sin(angle)])
            sim.step()
        views = [[s.agent(i) for i in s.ids.tolist()] for s in sims]
        for a, b in zip(*views, strict=True):
            assert (a.id, a.group, a.active, dict(a.blackboard)) == (
                b.id,
                b.group,
                b.active,
                dict(b.blackboard),
            )
            assert np.array_equal(a.pos, b.pos) and np.array_equal(a.vel, b.vel)


def state(sim: Simulation) -> tuple[Any, ...]:
    """Everything a bad call must leave alone."""
    return (
        sim.ids.tolist(),
        sim.agents.pos.tobytes(),
        sim.agents.vel.tobytes(),
        sim.tick,
        sim._next_id,
        sim.watching,
        [
            sim.engine.blackboard(r)
            for r in range(*sim.agents.slices["hunters"].indices(sim.agents.n))
        ],
    )


BAD_CALLS = {
    "move None": lambda s: s.move(0, None),
    "move to NaN": lambda s: s.move(0, [np.nan, 1]),
    "move vel inf": lambda s: s.move(0, [1, 1], vel=[np.inf, 0]),
    "despawn 2**63": lambda s: s.despawn(2**63),
    "despawn -2**64": lambda s: s.despawn(-(2**64)),
    "agent 10**30": lambda s: s.agent(10**30),
    "watch 2**70": lambda s: s.watch([1, 2**70]),
    "spawn 10**20": lambda s: s.spawn("hunters", 10**20),
    "spawn 2**64": lambda s: s.spawn("hunters", 2**64),
    "run abc": lambda s: s.run("abc"),
    "run None": lambda s: s.run(None),
    "run -1": lambda s: s.run(-1),
    "run 1.5": lambda s: s.run(1.5),
    "run True": lambda s: s.run(True),
    "advance nan": lambda s: s.advance(float("nan")),
    "break_on an unknown node": lambda s: s.break_on("nope"),
    "break_on agent 2**70": lambda s: s.break_on(event="caught", agent=2**70),
    "blackboard of the player": lambda s: s.blackboard(0),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_every_bad_call_is_a_simulation_error_that_changes_nothing(engine: str, name: str) -> None:
    sim, control = Simulation(CHASE, engine), Simulation(CHASE, engine)
    for s in (sim, control):
        s.run(3)
    before = state(sim)
    with pytest.raises(SimulationError) as err:
        BAD_CALLS[name](sim)
    assert type(err.value).__module__.startswith("behaviortk")
    assert state(sim) == before
    sim.run(5)
    control.run(5)
    assert state(sim) == state(control)  # the run continues as if the call was not made


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"engine": "nope"}, "unknown engine 'nope'; choose one of py_trees, batch, auto"),
        ({"engine": None}, "engine must be one of py_trees, batch, auto or an engine factory"),
        ({"engine": 3}, "engine must be one of"),
        ({"seed": "x"}, "seed must be a whole number >= 0, got 'x'"),
        ({"seed": -1}, "seed must be in 0..9223372036854775807"),
        ({"seed": 2**63}, "seed must be in 0..9223372036854775807 (2**63 - 1), got 92233"),
        ({"seed": 1.0}, "seed must be a whole number"),
        ({"kernels": "bogus"}, "unknown kernels 'bogus'; choose one of auto, numba, numpy"),
        ({"kernels": None}, "unknown kernels None"),
    ],
)
def test_a_bad_simulation_argument_is_a_simulation_error(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(SimulationError) as err:
        Simulation(CHASE, **kwargs)
    assert message in str(err.value)


def test_the_largest_seed_runs_the_same_on_both_engines() -> None:
    a, b = (Simulation(CHASE, e, seed=2**63 - 1) for e in ENGINES)
    a.run(5)
    b.run(5)
    assert np.array_equal(a.agents.pos, b.agents.pos)


# ------------------------------------------------------------- random bad arguments

WEIRD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.lists(st.integers(-5, 5), max_size=3),
    st.lists(st.lists(st.floats(allow_nan=True), max_size=3), max_size=2),
    st.just(object()),
)
METHODS = ("agent", "despawn", "move", "spawn_count", "spawn_pos", "run", "advance", "watch")


def few(value: Any) -> Any:
    """A valid count up to the spawn limit is honoured (millions of agents, then a step):
    keep it small; every other value goes through as drawn."""
    if isinstance(value, int) and not isinstance(value, bool) and 3 < value <= MAX_LIVE_AGENTS:
        return 3
    return value


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ENGINES), st.sampled_from(METHODS), WEIRD)
def test_any_argument_is_honoured_or_refused_without_a_trace(
    engine: str, method: str, value: Any
) -> None:
    """Whatever a game passes: the call works, or it raises a SimulationError and the
    simulation is exactly as before (and a valid step follows)."""
    sim = Simulation(CHASE, engine)
    sim.step()
    before = state(sim)
    call = {
        "agent": lambda: sim.agent(value),
        "despawn": lambda: sim.despawn(value),
        "move": lambda: sim.move(0, value),
        "spawn_count": lambda: sim.spawn("hunters", few(value)),
        "spawn_pos": lambda: sim.spawn("hunters", 1, pos=value),
        "run": lambda: sim.run(value if not isinstance(value, int) else min(value, 3)),
        "advance": lambda: sim.advance(value if not isinstance(value, float) else min(value, 0.1)),
        "watch": lambda: sim.watch(value),
    }[method]
    try:
        call()
    except SimulationError:
        assert state(sim) == before
    sim.step()
    assert np.isfinite(sim.agents.pos).all()


# ------------------------------------------------------------- blackboard writes


def number_board(engine: str) -> Simulation:
    root = {
        "type": "selector",
        "memory": False,
        "children": [
            {"type": "blackboard_compare", "key": "fear", "op": ">=", "value": 1.5},
            {"type": "seek", "target": {"kind": "blackboard", "key": "spot"}},
        ],
    }
    data = definition(root, blackboard={"fear": "number", "spot": "point"})
    return Simulation(load_text(json.dumps(data), "board.json"), engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("key", "value"),
    [("fear", 10**400), ("fear", -(10**309)), ("spot", [10**400, 1]), ("spot", [1, -(10**309)])],
)
def test_a_value_beyond_the_float_range_is_refused_at_the_write(
    engine: str, key: str, value: Any
) -> None:
    """Comparisons read numbers as floats: an int that has none is refused at the write
    (10**308 fits; 10**309 does not), and every later step runs."""
    sim = number_board(engine)
    board = sim.blackboard(0)
    board["fear"] = 10**308
    with pytest.raises(BlackboardError) as err:
        board[key] = value
    assert f"blackboard key '{key}' is a" in str(err.value) and "characters)" in str(err.value)
    assert board["fear"] == 10**308
    sim.run(3)
    assert sim.decisions["a"].status[0, 1] == 2  # SUCCESS: 1e308 >= 1.5


def test_big_exact_numbers_compare_the_same_on_both_engines() -> None:
    sims = [number_board(e) for e in ENGINES]
    for sim in sims:
        sim.blackboard(0)["fear"] = 2**64
        sim.run(2)
    assert [s.blackboard(0)["fear"] for s in sims] == [2**64, 2**64]
    assert np.array_equal(sims[0].decisions["a"].status, sims[1].decisions["a"].status)


@pytest.mark.parametrize("engine", ENGINES)
def test_watching_the_player_gives_no_status_events(engine: str) -> None:
    """An external agent has no nodes: watching it is allowed and reports nothing."""
    sim = Simulation(CHASE, engine)
    sim.watch([0, 1])
    sim.step()
    assert sim.watching == (0, 1)
    assert {e.agent for e in sim.events if e.name == "status"} == {1}
