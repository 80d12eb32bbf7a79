"""Stable ids, spawn and despawn mid-run on both engines (the embedding API)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from engine_support import definition
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from behaviortk.errors import SimulationError
from behaviortk.format.loader import load_text
from behaviortk.sim.embed import Event
from behaviortk.sim.pending import AHEAD, NewRows
from behaviortk.sim.simulation import Simulation
from behaviortk.world.build import spawned_rows
from behaviortk.world.streams import uniforms

ENGINES = ("py_trees", "batch")


def wanderers(count: int = 5, seed: int = 3) -> dict[str, Any]:
    """Group ``a`` wanders (random numbers, steering memory); ``b`` waits in a sequence."""
    root = {
        "type": "sequence",
        "memory": True,
        "children": [
            {"type": "wait", "duration": 0.3},
            {"type": "blackboard_set", "key": "done", "value": True},
            {"type": "wander", "units": "world", "radius": 10, "distance": 20, "jitter": 40},
        ],
    }
    data = definition(root, count=count, seed=seed, blackboard={"done": "bool"})
    data["world"]["edges"] = "wrap"
    data["groups"].append(
        {
            "name": "b",
            "count": 2,
            "spawn": {"kind": "positions", "points": [[10, 10], [20, 20]]},
            "tree": "idle",
        }
    )
    return data


def sim_of(data: dict[str, Any], engine: str) -> Simulation:
    return Simulation(load_text(json.dumps(data), "spawn.json"), engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_ids_are_stable_and_never_reused(engine: str) -> None:
    sim = sim_of(wanderers(), engine)
    assert sim.ids.tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert sim.spawn("a", 2) == [7, 8]
    assert sim.ids.tolist() == [0, 1, 2, 3, 4, 7, 8, 5, 6]  # groups stay contiguous
    sim.despawn([1, 7])  # the group's last survivor (8) takes the first freed row (swap-remove)
    assert sim.ids.tolist() == [0, 8, 2, 3, 4, 5, 6]
    assert sim.spawn("b") == [9]
    assert sim.agents.names[-1] == "b-9"
    assert sim.agents.slices == {"a": slice(0, 5), "b": slice(5, 8)}


@pytest.mark.parametrize("engine", ENGINES)
def test_survivors_keep_every_bit_of_state(engine: str) -> None:
    """Wanderers do not interact: with agents spawned and despawned around them, each
    survivor moves exactly as in a run where nothing happened (tree timers, wander memory,
    its own random stream, blackboard)."""
    control, sim = sim_of(wanderers(), engine), sim_of(wanderers(), engine)
    for tick in range(12):
        if tick == 2:  # agents are mid-wait: the wait timer must survive
            assert sim.spawn("a", 3, pos=[[100, 100], [150, 150], [200, 200]]) == [7, 8, 9]
        if tick == 5:
            sim.despawn([0, 8, 5])
        if tick == 7:
            sim.spawn("b", pos=[50, 50], vel=[1, 0], heading=0)
        control.step()
        sim.step()
        for agent in (1, 2, 3, 4, 6):
            row, ref = int(sim.rows_of(agent)[0]), agent
            assert np.array_equal(sim.agents.pos[row], control.agents.pos[ref]), (tick, agent)
            assert np.array_equal(sim.engine.node_status(row), control.engine.node_status(ref))
            assert sim.engine.blackboard(row) == control.engine.blackboard(ref)
    new = int(sim.rows_of(9)[0])
    assert sim.engine.blackboard(new) == {"done": True}  # started fresh at tick 2, waited 3 ticks


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 20), st.integers(1, 3)), max_size=10))
def test_engines_agree_under_random_game_calls(calls: list[tuple[int, int, int]]) -> None:
    """Random spawn / despawn / move / blackboard writes / steps: both engines stay equal."""
    data = wanderers(count=4, seed=5)
    data["trees"]["main"]["root"]["children"].insert(
        0, {"type": "in_range", "target": {"kind": "nearest", "group": "p"}, "radius": 500}
    )
    data["groups"].append(
        {
            "name": "p",
            "count": 1,
            "control": "external",
            "spawn": {"kind": "positions", "points": [[200, 200]]},
        }
    )
    sims = [sim_of(data, e) for e in ENGINES]
    for action, pick, count in calls:
        for sim in sims:
            live = sim.ids.tolist()
            a_ids = sim.ids[sim.agents.slices["a"]].tolist()
            if action == 0 and live:
                sim.despawn([live[pick % len(live)]])
            elif action == 1:
                sim.spawn(("a", "b", "p")[pick % 3], count)
            elif action == 2:
                p_ids = sim.ids[sim.agents.slices["p"]].tolist()
                if p_ids:
                    sim.move(p_ids[pick % len(p_ids)], [10.0 * pick, 5.0 * count])
            elif action == 3 and a_ids:
                sim.blackboard(a_ids[pick % len(a_ids)])["done"] = bool(count % 2)
            else:
                sim.run(count)
        ref, batch = sims
        views = [[s.agent(i) for i in s.ids[s.agents.slices["p"]].tolist()] for s in sims]
        for a, b in zip(*views, strict=True):  # the game reads its players every frame
            assert (a.id, a.active, dict(a.blackboard)) == (b.id, (), {}) == (b.id, b.active, {})
            assert np.array_equal(a.pos, b.pos) and np.array_equal(a.vel, b.vel)
        assert ref.ids.tolist() == batch.ids.tolist()
        assert np.array_equal(ref.agents.pos, batch.agents.pos)
        assert [ref.engine.blackboard(r) for r in range(ref.agents.slices["a"].stop)] == [
            batch.engine.blackboard(r) for r in range(batch.agents.slices["a"].stop)
        ]
        for group, decision in ref.decisions.items():
            assert np.array_equal(decision.status, batch.decisions[group].status)
            assert np.array_equal(decision.emitted, batch.decisions[group].emitted)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.spawn("c"), "unknown group 'c'; valid: a, b"),
        (lambda s: s.spawn("a", 0), "count must be a whole number >= 1, got 0"),
        (lambda s: s.spawn("a", 2, pos=[[1, 2]]), "pos must be [x, y] or 2 of them"),
        (lambda s: s.spawn("a", pos=[1, float("nan")]), "pos must be [x, y] or 1 of them, finite"),
        (lambda s: s.spawn("a", vel="fast"), "vel must be [x, y] or 1 of them"),
        (lambda s: s.spawn("a", heading=[1, 2]), "heading must be 1 finite number(s)"),
        (lambda s: s.despawn([42]), "agent id 42 was never spawned; live ids: 0-6"),
        (lambda s: s.despawn([3, 3]), "agent ids repeat in [3, 3]"),
        (lambda s: s.despawn("x"), "agent ids are whole numbers, got 'x' (str); live ids: 0-6"),
    ],
)
def test_a_bad_call_names_the_value_and_changes_nothing(
    engine: str, call: Any, message: str
) -> None:
    sim = sim_of(wanderers(), engine)
    sim.run(2)
    before = (sim.ids.copy(), sim.agents.pos.copy(), sim.tick)
    with pytest.raises(SimulationError) as err:
        call(sim)
    assert message in str(err.value)
    assert np.array_equal(sim.ids, before[0]) and np.array_equal(sim.agents.pos, before[1])
    assert sim.tick == before[2]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_despawned_id_is_refused(engine: str) -> None:
    sim = sim_of(wanderers(), engine)
    sim.despawn(2)
    with pytest.raises(SimulationError, match="agent id 2 was despawned; live ids: 0-1, 3-6"):
        sim.despawn([2])


def test_same_seed_and_calls_give_byte_identical_traces() -> None:
    from behaviortk.record.jsonl import record

    def run() -> list[str]:
        sim = sim_of(wanderers(), "batch")
        lines = []
        for tick in range(10):
            if tick == 3:
                sim.spawn("a", 2)
            if tick == 6:
                sim.despawn([1])
            sim.step()
            lines.append(json.dumps(record(sim)))
        return lines

    first, second = run(), run()
    assert first == second
    assert '"id": 7' in first[-1] and '"id": 1,' not in first[-1]


# ------------------------------------------------------------------ a frame's batch


def with_player(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with an external group ``p`` (a player the game moves) that ``a`` looks for."""
    data["trees"]["main"]["root"]["children"].insert(
        0, {"type": "in_range", "target": {"kind": "nearest", "group": "p"}, "radius": 500}
    )
    data["groups"].append(
        {
            "name": "p",
            "count": 1,
            "control": "external",
            "spawn": {"kind": "positions", "points": [[200, 200]]},
        }
    )
    return data


@pytest.mark.parametrize("engine", ENGINES)
def test_a_frame_s_despawn_and_spawn_overwrite_the_freed_row(engine: str) -> None:
    """A frame's despawns and spawns go in as one batch: a new agent takes a despawned
    agent's row and nobody else moves; with more despawns, the group's last agent fills
    the row left over and the next group slides."""
    sim = sim_of(wanderers(), engine)
    sim.run(2)
    pos = sim.agents.pos
    before = pos.copy()
    sim.despawn([2])
    assert sim.spawn("a") == [7]
    assert sim.ids.tolist() == [0, 1, 7, 3, 4, 5, 6]
    assert sim.agents.pos is pos  # written in place: nothing moved, nothing regrown
    assert np.array_equal(pos[[0, 1, 3, 4, 5, 6]], before[[0, 1, 3, 4, 5, 6]])
    assert sim.agents.names[2] == "a-7"
    sim.despawn([1, 3])
    assert sim.spawn("a") == [8]  # 8 takes row 1, agent 4 (row 4) fills row 3, b slides left
    assert sim.ids.tolist() == [0, 8, 7, 4, 5, 6]
    assert sim.agents.names == ["a-0", "a-8", "a-7", "a-4", "b-0", "b-1"]
    assert sim.agents.slices == {"a": slice(0, 4), "b": slice(4, 6)}
    assert np.array_equal(sim.agents.pos[[0, 3, 4, 5]], before[[0, 4, 5, 6]])
    sim.run(2)
    assert np.isfinite(sim.agents.pos).all()


@pytest.mark.parametrize("engine", ENGINES)
def test_spawned_then_despawned_in_one_frame_never_gets_a_row(engine: str) -> None:
    """Agent 8 comes and goes before the rows are made: it never gets one; every event is
    delivered with the next step, in the order of the calls (a despawn call: agents with a
    row by row, then the others by id), and the event list is made once."""
    sim = sim_of(wanderers(), engine)
    heard: list[Event] = []
    sim.on("*", heard.append)
    assert sim.spawn("a", 2) == [7, 8]
    sim.despawn([8, 3])
    sim.step()
    assert sim.ids.tolist() == [0, 1, 2, 7, 4, 5, 6]  # 7 took 3's row
    assert sim.events == [
        Event(0, 7, "spawn"),
        Event(0, 8, "spawn"),
        Event(0, 3, "despawn"),
        Event(0, 8, "despawn"),
    ]
    assert heard == sim.events and sim.events is sim.events
    with pytest.raises(SimulationError, match="agent id 8 was despawned; live ids: 0-2, 4-7"):
        sim.agent(8)
    sim.step()
    assert sim.events == []


@pytest.mark.parametrize("engine", ENGINES)
def test_new_ids_work_at_once(engine: str) -> None:
    """A spawned agent can be moved, watched, looked at and written to before any step."""
    sim = sim_of(with_player(wanderers()), engine)
    (player,) = sim.spawn("p", pos=[5, 6])
    sim.move(player, [7.0, 8.0], vel=[1.0, 0.0])
    assert sim.agent(player).pos.tolist() == [7.0, 8.0]
    (walker,) = sim.spawn("a", pos=[50, 60])
    sim.watch(walker)
    assert sim.watching == (walker,)
    sim.blackboard(walker)["done"] = True
    view = sim.agent(walker)
    assert (view.group, view.pos.tolist(), dict(view.blackboard)) == (
        "a",
        [50.0, 60.0],
        {"done": True},
    )
    sim.step()
    assert sim.agent(player).pos.tolist() == [7.0, 8.0]  # external: the step does not move it


def test_spawn_points_are_taken_in_turn_across_a_frame_s_calls() -> None:
    """Group b spawns at its two points in turn, counting the agents it has, those of the
    frame's earlier calls included: b has 2, loses one (1 left), gains 1 + 2."""
    sim = sim_of(wanderers(), "batch")
    sim.despawn([6])
    sim.spawn("b")
    sim.spawn("b", 2)
    assert sim.ids.tolist() == [0, 1, 2, 3, 4, 5, 7, 8, 9]
    assert sim.agents.pos[6:].tolist() == [[20.0, 20.0], [10.0, 10.0], [20.0, 20.0]]


def test_last_tick_s_decisions_survive_many_batches_between_steps() -> None:
    """A game reading rows after each of 1,200 spawns between two steps: last tick's
    statuses stay readable (survivors keep theirs, newcomers are INVALID) and the next
    step runs."""
    sim = sim_of(wanderers(), "batch")
    sim.run(2)
    before = sim.decisions["a"].status.copy()
    for _ in range(1200):
        sim.spawn("a")
        sim.agents  # noqa: B018 - a read of the rows applies the spawn
    status = sim.decisions["a"].status
    assert status.shape == (1205, before.shape[1]) and sim.decisions["a"].emitted.shape[0] == 1205
    assert np.array_equal(status[:5], before) and not status[5:].any()
    sim.step()
    assert sim.decisions["a"].status.shape[0] == 1205


@pytest.mark.parametrize(
    "one", [2, np.int64(2), np.uint8(2), [2], np.array([2]), np.array([2], dtype=np.uint32)]
)
def test_one_id_in_any_form_is_despawned_alike(one: Any) -> None:
    """An id alone, as a NumPy integer, in a list or in an integer array of one: the same
    despawn (the short way for one agent) as the general one for many."""
    sim, ref = sim_of(wanderers(), "batch"), sim_of(wanderers(), "batch")
    sim.despawn(one)
    ref.despawn([2, 3])
    ref.spawn("a")  # 7 takes 2's row, 3's row goes
    sim.despawn(np.array([3]))
    sim.spawn("a")
    assert sim.ids.tolist() == ref.ids.tolist() == [0, 1, 7, 4, 5, 6]
    assert sim.events == ref.events == []
    with pytest.raises(SimulationError, match="agent id 2 was despawned"):
        sim.despawn(one)


def test_ids_read_before_a_batch_keep_their_values() -> None:
    """``sim.ids`` is never written in place: a game may go on iterating the array it read."""
    sim = sim_of(wanderers(), "batch")
    held = sim.ids
    sim.despawn([0, 5])
    sim.spawn("b", 2)
    sim.step()
    assert held.tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert sim.ids.tolist() == [4, 1, 2, 3, 7, 6, 8]  # 7 takes 5's row, 8 follows b


def test_a_bad_call_leaves_the_frame_s_batch_as_it_was() -> None:
    """A refused call in the middle of a frame changes nothing: the batch goes in as if only
    the good calls had been made."""
    sims = [sim_of(wanderers(), "batch") for _ in range(2)]
    for k, sim in enumerate(sims):
        sim.despawn([1])
        sim.spawn("a", 2)
        if k:
            with pytest.raises(SimulationError, match="agent ids repeat"):
                sim.despawn([2, 7, 2])
            with pytest.raises(SimulationError, match="agent id 1 was despawned"):
                sim.despawn([7, 1])
            with pytest.raises(SimulationError, match="count must be"):
                sim.spawn("a", 0)
        sim.despawn([8])
        sim.step()
    a, b = sims
    assert a.ids.tolist() == b.ids.tolist() == [0, 7, 2, 3, 4, 5, 6]
    assert np.array_equal(a.agents.pos, b.agents.pos)
    assert a.events == b.events


@pytest.mark.parametrize("heading", ["random", 30])
def test_rows_drawn_ahead_are_the_rows_drawn_one_by_one(heading: Any) -> None:
    """A group's new rows are drawn ``AHEAD`` ids at a time; each agent's are the bits a
    draw of its own id gives, whichever group took the ids between; a changed group
    definition draws again."""
    data = wanderers()
    data["groups"][0]["heading"] = heading
    sim = sim_of(data, "batch")
    spec = sim._group_spec("a")
    new = NewRows(sim.seed)
    calls = [(7, 1), (8, 2), (12, 1), (13, AHEAD), (13 + AHEAD, 3), (200, 1)]  # ids 10-11: others
    for first, n in calls:
        got, names = new.rows(spec, first, n, 0, (None, None, None), uniforms)
        want = spawned_rows(spec, np.arange(first, first + n), sim.seed)
        assert names == [f"a-{i}" for i in range(first, first + n)]
        assert got.keys() == want.keys()
        for field, value in want.items():
            assert np.array_equal(got[field], value), (first, field)
    faster = spec.model_copy(update={"speed": 99.0})
    got, _ = new.rows(faster, 201, 1, 0, (None, None, None), uniforms)
    assert np.array_equal(got["vel"], got["heading"] * 99.0)


Call = tuple[int, int, int]  # (what, pick, count)
FRAMES = st.lists(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 20), st.integers(1, 3)), max_size=6),
    min_size=1,
    max_size=5,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FRAMES)
def test_a_frame_s_batch_means_what_the_calls_meant_one_by_one(frames: list[list[Call]]) -> None:
    """Frames of random game calls (despawn, spawn, move, blackboard write, agent view),
    then a step, on both engines, each call applied at once (rows read after it) or left
    to the frame's batch: every agent ends the same whatever its row, and the engines
    agree row by row."""
    data = with_player(wanderers(count=4, seed=5))
    data["groups"][0].update(heading="random", speed=20)  # new agents' rows all differ
    data["groups"][1]["speed"] = 5  # b spawns at points taken in turn: the order counts
    sims = {(e, eager): sim_of(data, e) for e in ENGINES for eager in (True, False)}
    live = {"a": [0, 1, 2, 3], "b": [4, 5], "p": [6]}  # the game's own record of its agents
    views: dict[tuple[str, bool], list[Any]] = {key: [] for key in sims}
    next_id = 7
    for frame in frames:
        for action, pick, count in frame:
            every = [i for ids in live.values() for i in ids]
            group = ("a", "b", "p")[pick % 3]
            for key, sim in sims.items():
                if action == 0 and every:
                    sim.despawn([every[pick % len(every)]])
                elif action == 1:
                    assert sim.spawn(group, count) == list(range(next_id, next_id + count))
                elif action == 2 and live["p"]:
                    sim.move(live["p"][pick % len(live["p"])], [10.0 * pick, 5.0 * count])
                elif action == 3 and live["a"]:
                    sim.blackboard(live["a"][pick % len(live["a"])])["done"] = bool(count % 2)
                elif action == 4 and every:
                    view = sim.agent(every[pick % len(every)])
                    seen = (view.id, view.pos.tolist(), view.vel.tolist(), dict(view.blackboard))
                    views[key].append(seen)
                if key[1]:
                    sim.agents  # noqa: B018 - a read of the rows applies the call at once
            if action == 0 and every:
                for ids in live.values():
                    if every[pick % len(every)] in ids:
                        ids.remove(every[pick % len(every)])
            elif action == 1:
                live[group] += list(range(next_id, next_id + count))
                next_id += count
        for sim in sims.values():
            sim.step()
    every = sorted(i for ids in live.values() for i in ids)
    state = {}
    for key, sim in sims.items():
        assert sorted(sim.ids.tolist()) == every
        rows = sim.rows_of(every)
        treed = [r for r in rows.tolist() if sim.locate(r)[0] in sim.trees]
        state[key] = (
            sim.agents.pos[rows],
            sim.agents.vel[rows],
            [sim.engine.node_status(r).tolist() for r in treed],
            [sim.engine.blackboard(r) for r in treed],
            sim.events,
        )
    for engine in ENGINES:  # applied at once or in a batch: every agent the same
        now, later = state[(engine, True)], state[(engine, False)]
        assert np.array_equal(now[0], later[0]) and np.array_equal(now[1], later[1])
        assert now[2:] == later[2:]
    assert len({str(seen) for seen in views.values()}) == 1
    for eager in (True, False):  # the engines agree row by row
        ref, batch = sims[("py_trees", eager)], sims[("batch", eager)]
        assert ref.ids.tolist() == batch.ids.tolist()
        assert np.array_equal(ref.agents.pos, batch.agents.pos)
        for group, decision in ref.decisions.items():
            assert np.array_equal(decision.status, batch.decisions[group].status)
