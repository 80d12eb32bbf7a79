"""Think-rate LOD (issue 25, item 6): ``think_every``, ``lod``, ``Simulation.focus``.

Worked by hand from the rule of ``sim/think.py``: agent id ``i`` with rate ``r`` this tick
thinks on tick ``t`` iff ``(t - i) % r == 0`` or ``t - last(i) >= K`` (K the far rate, or
think_every without LOD; an agent that never thought thinks). Both engines, always.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trace_support import run_recorded

import behaviortk
from behaviortk.errors import SimulationError
from behaviortk.format.loader import load_text
from behaviortk.record.jsonl import TraceWriter
from behaviortk.record.parquet import ParquetTraceWriter
from behaviortk.record.reader import open_recording
from behaviortk.sim.simulation import Simulation
from behaviortk.sim.think import ThinkSchedule
from behaviortk.sim.tick_state import thought_of
from behaviortk.tree.status import RUNNING
from behaviortk.viewer.recorded import RecordedView, RecordedWorld

ENGINES = ("py_trees", "batch")
STILL = {"type": "wait", "duration": 1000}  # a tree that never steers: nobody moves


def scene(
    groups: list[dict[str, Any]],
    trees: dict[str, Any] | None = None,
    **world: Any,
) -> str:
    return json.dumps(
        {
            "name": "lod",
            "world": {"width": 1000, "height": 1000, "edges": "contain", "dt": 0.1, **world},
            "groups": groups,
            "trees": trees or {"still": {"root": STILL}},
        }
    )


def placed(name: str, points: list[list[float]], tree: str = "still", **fields: Any) -> dict:
    return {
        "name": name,
        "count": len(points),
        "spawn": {"kind": "positions", "points": points},
        "heading": 0,
        "tree": tree,
        **fields,
    }


def external(name: str, points: list[list[float]]) -> dict:
    return {
        "name": name,
        "count": len(points),
        "spawn": {"kind": "positions", "points": points},
        "control": "external",
    }


def thoughts(text: str, ticks: int, group: str = "a") -> list[list[int]]:
    """The ids of ``group`` that thought on each tick, the same on both engines."""
    runs = []
    for engine in ENGINES:
        sim = Simulation(load_text(text), engine=engine)
        seen = []
        for _ in range(ticks):
            sim.step()
            rows = sim.agents.slices[group]
            thought = sim.decisions[group].thought
            assert thought is not None
            seen.append(sim.agents.ids[rows][thought].tolist())
        runs.append(seen)
    assert runs[0] == runs[1]
    return runs[0]


# ------------------------------------------------------------------ who thinks when
def test_the_stagger_by_hand() -> None:
    """think_every 3, ids 0..5: all on tick 0 (their first), then (t - i) % 3 == 0."""
    text = scene([placed("a", [[100.0 * k + 50, 50] for k in range(6)], think_every=3)])
    assert thoughts(text, 7) == [
        [0, 1, 2, 3, 4, 5],
        [1, 4],
        [2, 5],
        [0, 3],
        [1, 4],
        [2, 5],
        [0, 3],
    ]


def test_a_spawned_agent_thinks_on_its_first_tick_then_on_its_slots() -> None:
    """Agent 3 spawned before tick 2: (2 - 3) % 3 != 0, yet it thinks (it never did), then
    on tick 3 ((3 - 3) % 3 == 0) and 6."""
    text = scene([placed("a", [[50, 50], [150, 50], [250, 50]], think_every=3)])
    for engine in ENGINES:
        sim = Simulation(load_text(text), engine=engine)
        seen = []
        for t in range(7):
            if t == 2:
                assert sim.spawn("a", pos=[400, 400]) == [3]
            sim.step()
            rows = sim.agents.slices["a"]
            seen.append(sim.agents.ids[rows][sim.decisions["a"].thought].tolist())
        assert seen == [[0, 1, 2], [1], [2, 3], [0, 3], [1], [2], [0, 3]], engine


def test_without_think_every_nothing_changes() -> None:
    sim = Simulation(load_text(scene([placed("a", [[50, 50]])])))
    sim.step()
    assert not sim.think.active and sim.decisions["a"].thought is None


LOD = {"focus": [[500, 500]], "near": 100, "far_think_every": 6}


def test_lod_boundary_by_hand() -> None:
    """near 100: id 0 at exactly 100 is near (rate 2), id 1 at 100.001 far (rate 6), id 2 on
    the focus near. Far id 1: tick 0 (first), then (t - 1) % 6 == 0: ticks 1 and 7."""
    points = [[600, 500], [600.001, 500], [500, 500]]
    text = scene([placed("a", points, think_every=2, lod=LOD)])
    assert thoughts(text, 8) == [[0, 1, 2], [1], [0, 2], [], [0, 2], [], [0, 2], [1]]


def test_near_is_measured_across_a_wrapped_edge() -> None:
    """On a wrapped world x = 40 is 50 from a focus at x = 990 (not 950): near."""
    lod = {"focus": [[990, 500]], "near": 60, "far_think_every": 4}
    text = scene([placed("a", [[40, 500], [400, 500]], think_every=1, lod=lod)], edges="wrap")
    # id 0 near (rate 1: every tick), id 1 far (rate 4: ticks 0, 1, 5)
    assert thoughts(text, 6) == [[0, 1], [0, 1], [0], [0], [0], [0, 1]]


def test_a_focus_group_follows_its_agents() -> None:
    """The player (external) is moved next to agent 1 before tick 3: agent 1 turns near."""
    lod = {"focus": {"group": "player"}, "near": 50, "far_think_every": 8}
    groups = [placed("a", [[100, 100], [800, 800]], think_every=2, lod=lod)]
    text = scene([*groups, external("player", [[90, 100]])])
    for engine in ENGINES:
        sim = Simulation(load_text(text), engine=engine)
        seen = []
        for t in range(6):
            if t == 3:
                sim.move(2, [800, 790])  # the player (id 2) beside agent 1, away from agent 0
            sim.step()
            seen.append(np.flatnonzero(sim.decisions["a"].thought).tolist())
        # id 0 near (rate 2) until tick 3, then far (rate 8: next far slot t = 8);
        # id 1 far (ticks 0, 1), near from tick 3 ((t - 1) % 2 == 0: ticks 3, 5)
        assert seen == [[0, 1], [1], [0], [1], [], [1]], engine


def test_coming_near_thinks_at_the_next_near_slot_going_far_at_the_next_far_slot() -> None:
    """think_every 4, far 12, agent id 1 (id 0 sits far away). Far: ticks 0, 1, 13... The
    game focuses on it before tick 6: next near slot (t - 1) % 4 == 0 is 9 (not at once).
    Focus away before tick 10: next far slot 13 ((13 - 1) % 12 == 0)."""
    lod = {"focus": [[0, 0]], "near": 10, "far_think_every": 12}
    text = scene([placed("a", [[900, 900], [500, 500]], think_every=4, lod=lod)])
    for engine in ENGINES:
        sim = Simulation(load_text(text), engine=engine)
        times = []
        for t in range(16):
            if t == 6:
                sim.focus([500, 500])
            if t == 10:
                sim.focus(None)  # the file's focus again: (0, 0), far from both
            sim.step()
            if sim.decisions["a"].thought[1]:
                times.append(t)
        assert times == [0, 1, 9, 13], engine


@settings(max_examples=60, deadline=None)
@given(
    every=st.integers(1, 5),
    extra=st.integers(0, 6),
    near=st.lists(st.booleans(), min_size=30, max_size=30),
)
def test_nobody_starves_whatever_the_focus_does(every: int, extra: int, near: list[bool]) -> None:
    """The focus jumps on and off six agents (ids 0..5) at random: each thinks on its first
    tick and never waits more than far_think_every ticks; while it stays near, never more
    than think_every."""
    far = every + extra
    lod = {"focus": [[500, 500]], "near": 50, "far_think_every": far}
    points = [[500 + k, 500] for k in range(6)]
    sim = Simulation(load_text(scene([placed("a", points, think_every=every, lod=lod)])))
    schedule = ThinkSchedule(sim.scenario.definition)
    last = [-1] * 6
    for t, on in enumerate(near):
        schedule.focus(None if on else [])
        thinkers = set(schedule.thinkers(t, sim.agents, sim.world, 6)["a"].tolist())
        for i in range(6):
            if i in thinkers:
                last[i] = t
            assert last[i] >= 0, "an agent did not think on its first tick"
            assert t - last[i] < far, f"agent {i} waited {t - last[i]} ticks at tick {t}"
            if all(near[: t + 1]):  # near all along: the stagger alone
                assert t - last[i] < every


@settings(max_examples=25, deadline=None)
@given(
    every=st.integers(1, 5),
    extra=st.integers(0, 6),
    near=st.lists(st.booleans(), min_size=20, max_size=20),
    shuffled=st.lists(st.integers(0, 19), max_size=3),
)
def test_compiled_who_thinks_equals_numpy(
    every: int, extra: int, near: list[bool], shuffled: list[int]
) -> None:
    """``think_loops.due_rows`` (numba) picks the same rows as the NumPy passes of
    ``ThinkSchedule.thinkers``, tick by tick, with the focus jumping on and off and the rows
    permuted before the ticks ``shuffled`` (the compiled pass reads ``last`` through a copy
    in row order: it must follow)."""
    from behaviortk.sim import choice

    kernels, _ = choice.load()
    far = every + extra
    lod = {"focus": [[500, 500]], "near": 50, "far_think_every": far}
    points = [[500 + k, 500] for k in range(9)]
    groups = [
        placed("a", points, think_every=every, lod=lod),
        placed("b", points[:4], think_every=every),
    ]
    sim = Simulation(load_text(scene(groups)))
    reference, compiled = (
        ThinkSchedule(sim.scenario.definition),
        ThinkSchedule(sim.scenario.definition),
    )
    rng = np.random.default_rng(len(shuffled))
    for t, on in enumerate(near):
        if t in shuffled:
            sim._rearrange(
                {g: rng.permutation(r.stop - r.start) for g, r in sim.agents.slices.items()}
            )
        for schedule in (reference, compiled):
            schedule.focus(None if on else [])
        mine = compiled.thinkers(t, sim.agents, sim.world, 13, kernels)
        theirs = reference.thinkers(t, sim.agents, sim.world, 13)
        assert mine.keys() == theirs.keys()
        for name in mine:
            assert mine[name].tolist() == theirs[name].tolist(), (t, name)
        assert compiled.last[:13].tolist() == reference.last[:13].tolist()


@settings(max_examples=30, deadline=None)
@given(
    every=st.integers(2, 5),
    events=st.lists(
        st.tuples(st.integers(0, 44), st.sampled_from(["gap", "last", "tune", "rows"])),
        max_size=4,
    ),
)
def test_compiled_stagger_follows_the_rule_after_changes(
    every: int, events: list[tuple[int, str]]
) -> None:
    """Settled, the compiled path takes a group's slot rows without the second clause
    (``ThinkSchedule._settled``); it still picks the NumPy rule's rows, tick by tick,
    across skipped ticks, a replaced ``last`` (a restore), a new rate (a tuning change)
    and permuted rows."""
    from behaviortk.sim import choice

    kernels, _ = choice.load()
    points = [[500 + k, 500] for k in range(11)]
    texts = [scene([placed("b", points, think_every=k)]) for k in (every, every + 1 + every % 2)]
    definitions = [load_text(text).definition for text in texts]
    sim = Simulation(load_text(texts[0]))
    reference, compiled = ThinkSchedule(definitions[0]), ThinkSchedule(definitions[0])
    rng = np.random.default_rng(every * 1000 + len(events))
    happen = dict(events)
    t, tuned = 0, 0
    for step in range(60):
        what = happen.get(step)
        if what == "gap":
            t += 1 + int(rng.integers(1, 6))
        elif what == "last":  # a restore: an arbitrary recent past
            past = t - rng.integers(0, 3 * every, 11)
            for schedule in (reference, compiled):
                schedule.last = np.concatenate([past, np.full(2, -(2**62))]).astype(np.int64)
        elif what == "tune":
            tuned = 1 - tuned
            for schedule in (reference, compiled):
                schedule.follow(definitions[tuned])
        elif what == "rows":
            sim._rearrange({"b": rng.permutation(11)})
        mine = compiled.thinkers(t, sim.agents, sim.world, 13, kernels)
        theirs = reference.thinkers(t, sim.agents, sim.world, 13)
        assert mine["b"].tolist() == theirs["b"].tolist(), (step, t, what)
        assert compiled.last[:13].tolist() == reference.last[:13].tolist(), (step, t)
        t += 1
    assert compiled._whole_rule_until < t - 5  # the last ticks took the slot rows


@settings(max_examples=20, deadline=None)
@given(nodes=st.integers(1, 6), capacity=st.integers(0, 40), data=st.data())
def test_held_statuses_transposed_equal_numpy(nodes: int, capacity: int, data: Any) -> None:
    """``status_loops.transposed`` (the batch engine's held statuses on kernels) is NumPy's
    ``st[:, :n].T``, byte for byte, C-ordered."""
    from behaviortk.engines.batch.status_loops import transposed

    n = data.draw(st.integers(0, capacity))
    st_ = np.random.default_rng(nodes * 100 + capacity).integers(-1, 4, (nodes, capacity))
    st_ = st_.astype(np.int8)
    mine = transposed(st_, n)
    assert mine.flags.c_contiguous and mine.dtype == np.int8
    assert np.array_equal(mine, st_[:, :n].T)


@settings(max_examples=20, deadline=None)
@given(width=st.integers(0, 4), n=st.integers(0, 30), data=st.data())
def test_held_requests_equal_numpy(width: int, n: int, data: Any) -> None:
    """``status_loops.held_requests`` (the held requests on kernels) is the held requests
    with the thinkers' rows cleared, byte for byte, and leaves the held array as it was."""
    from behaviortk.engines.batch.status_loops import held_requests

    held = np.random.default_rng(width * 100 + n).random((n, width)) < 0.5
    thinking = np.array(sorted(data.draw(st.sets(st.integers(0, max(n - 1, 0)))) if n else []))
    thinking = thinking.astype(np.int64)
    before = held.copy()
    mine = held_requests(held, thinking)
    expected = held.copy()
    expected[thinking] = False
    assert np.array_equal(mine, expected) and np.array_equal(held, before)
    assert mine.dtype == np.bool_ and mine.shape == (n, width)


# ------------------------------------------------------------------ what is held
SEEK = {"seek": {"root": {"type": "seek", "target": {"kind": "nearest", "group": "b"}}}}


def seeker_scene() -> str:
    a = placed("a", [[500, 500]], tree="seek", think_every=4, max_force=1e6, max_speed=10)
    return scene([a, external("b", [[550, 500], [100, 500]])], SEEK)


def seek_force(pos: np.ndarray, vel: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Seek's formula: normalize(target - pos) * max_speed - vel (max_speed 10)."""
    d = target - pos
    return d / np.hypot(*d) * 10.0 - vel


def test_a_held_target_is_the_same_agent_where_it_is_now() -> None:
    """Agent a (id 0, thinks on ticks 0 and 4) seeks the nearest b. Tick 0 picks b0 (id 1).
    Then b1 (id 2) comes nearer: a keeps seeking b0 on ticks 1-3, where b0 is now (moved on
    tick 2), nothing once b0 is gone (tick 3); on tick 4 it thinks and seeks b1."""
    for engine in ENGINES:
        sim = Simulation(load_text(seeker_scene()), engine=engine)
        for t in range(5):
            if t == 1:
                sim.move(2, [490, 500])
            if t == 2:
                sim.move(1, [sim.agents.pos[0, 0], sim.agents.pos[0, 1] + 50])
            if t == 3:
                sim.despawn(1)
            row = sim.row_of(0)
            pos, vel = sim.agents.pos[row].copy(), sim.agents.vel[row].copy()
            held = 1 if t < 4 else 2
            target = sim.agents.pos[sim.row_of(held)].copy() if t != 3 else None
            sim.step()
            force = sim.agents.force[sim.row_of(0)]
            if target is None:
                np.testing.assert_array_equal(force, [0.0, 0.0], err_msg=engine)
            else:
                np.testing.assert_allclose(force, seek_force(pos, vel, target), atol=1e-9)
            assert sim.decisions["a"].emitted.tolist() == [[True]]  # the request is held


def test_a_non_thinker_keeps_its_statuses_and_requests() -> None:
    """Statuses and requests of the agents that do not think are those of their last think,
    while they keep moving (act and integrate run every tick)."""
    tree = {
        "t": {
            "root": {
                "type": "selector",
                "memory": False,
                "children": [
                    {
                        "type": "eternal_guard",
                        "condition": {
                            "type": "in_range",
                            "target": {"kind": "nearest", "group": "a"},
                            "radius": 80,
                        },
                        "child": {"type": "separation"},
                    },
                    {"type": "wander"},
                ],
            }
        }
    }
    spec = {
        "name": "a",
        "count": 40,
        "spawn": {"kind": "area", "min": [0, 0], "max": [400, 400]},
        "tree": "t",
        "think_every": 3,
        "speed": 20,
    }
    text = scene([spec], tree, width=400, height=400, edges="wrap")
    for engine in ENGINES:
        sim = Simulation(load_text(text), engine=engine)
        sim.step()
        for _ in range(9):
            before = sim.decisions["a"]
            status, emitted = before.status.copy(), before.emitted.copy()
            pos = sim.agents.pos.copy()
            sim.step()
            now = sim.decisions["a"]
            held = ~now.thought
            assert held.sum() > 20
            np.testing.assert_array_equal(now.status[held], status[held])
            np.testing.assert_array_equal(now.emitted[held], emitted[held])
            assert np.all(np.any(sim.agents.pos[held] != pos[held], axis=1))


def test_a_wait_ends_on_the_first_think_at_or_after_its_duration() -> None:
    """A 0.5 s wait at dt 0.1 is 5 ticks: without LOD the emit after it fires on tick 5;
    thinking every 3 ticks (id 0: ticks 0, 3, 6) it fires on tick 6. Events, and a watched
    agent's status events, come only on ticks it thinks."""
    tree = {
        "t": {
            "root": {
                "type": "sequence",
                "memory": True,
                "children": [
                    {"type": "wait", "duration": 0.5},
                    {"type": "emit", "event": "done"},
                    {"type": "wait", "duration": 1000},
                ],
            }
        }
    }
    for every, fired in ((1, 5), (3, 6)):
        text = scene([placed("a", [[50, 50]], tree="t", think_every=every)], tree)
        for engine in ENGINES:
            sim = Simulation(load_text(text), engine=engine)
            sim.watch(0)
            done, changes = [], set()
            for _ in range(9):
                sim.step()
                done += [e.tick for e in sim.events if e.name == "done"]
                changes |= {e.tick for e in sim.events if e.name == "status"}
            assert done == [fired], (every, engine)
            if every == 3:
                assert changes <= {0, 3, 6}
                assert sim.decisions["a"].status[0, 0] == RUNNING


# ------------------------------------------------------------------ the game's side
@pytest.mark.parametrize(
    "points",
    ["here", [1, 2, 3], [[1.0, float("nan")]], [[1e20, 0.0]], [[[1, 2]]], object()],
)
def test_bad_focus_points_are_simulation_errors(points: Any) -> None:
    sim = Simulation(load_text(scene([placed("a", [[50, 50]], think_every=2, lod=LOD)])))
    with pytest.raises(SimulationError, match="focus points"):
        sim.focus(points)


def test_an_empty_focus_makes_everyone_far() -> None:
    """focus([]) before tick 1: agent id 0 on the file's focus turns far (rate 6: tick 6)."""
    text = scene([placed("a", [[500, 500]], think_every=2, lod=LOD)])
    sim = Simulation(load_text(text))
    seen = []
    for t in range(8):
        if t == 1:
            sim.focus([])
        sim.step()
        seen.append(bool(sim.decisions["a"].thought[0]))
    assert seen == [True, False, False, False, False, False, True, False]


# ------------------------------------------------------------------ the format
def issues(text: str) -> list[str]:
    with pytest.raises(behaviortk.DefinitionError) as err:
        load_text(text, "x.json")
    return [str(i).split(": ", 1)[1] for i in err.value.issues]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"think_every": 0}, "/groups/0/think_every: must be >= 1, got 0"),
        ({"think_every": -3}, "/groups/0/think_every: must be >= 1, got -3"),
        ({"think_every": 10**9}, "/groups/0/think_every: must be <= 3600, got 1000000000"),
        ({"think_every": 1.5}, "/groups/0/think_every"),
        (
            {"think_every": 4, "lod": {**LOD, "far_think_every": 2}},
            "/groups/0: lod.far_think_every (2) is below think_every (4)",
        ),
        ({"lod": {**LOD, "near": -1}}, "/groups/0/lod/near: must be >= 0"),
        ({"lod": {**LOD, "near": "NaN"}}, "/groups/0/lod/near"),
        ({"lod": {**LOD, "focus": []}}, "/groups/0/lod/focus"),
        (
            {"lod": {**LOD, "focus": {"group": "playr"}}},
            "/groups/0/lod/focus/group: group 'a': unknown group 'playr'; did you mean 'player'?",
        ),
    ],
)
def test_bad_lod_fields_are_located_errors(fields: dict[str, Any], expected: str) -> None:
    text = scene([placed("a", [[50, 50]], **fields), external("player", [[1, 1]])])
    found = issues(text)
    assert any(issue.startswith(expected) for issue in found), found


def test_an_external_group_has_nothing_to_think() -> None:
    player = {**external("player", [[1, 1]]), "think_every": 2}
    (issue,) = issues(scene([placed("a", [[50, 50]]), player]))
    assert issue.startswith("/groups/1: an external group has no tree to think")


# ------------------------------------------------------------------ traces and the viewer
def recorded(text: str, tmp_path: Path, ticks: int) -> tuple[list[Any], Path, Path]:
    """Run ``text`` with both trace writers; the live ``thought`` of every tick."""
    sim = Simulation(load_text(text))
    jsonl, parquet = tmp_path / "t.jsonl", tmp_path / "t.parquet"
    with jsonl.open("w", encoding="utf-8") as out:
        writers = [TraceWriter(out, sim), ParquetTraceWriter(str(parquet), sim)]
        live = run_recorded(sim, ticks, *writers)
    return [live[t].thought for t in range(ticks)], jsonl, parquet


def test_traces_record_who_thought(tmp_path: Path) -> None:
    """With LOD: a ``thought`` flag per agent (JSONL, last key) and column (Parquet), read
    back as recorded; the external player never thinks, its thinking group every tick."""
    lod = {"focus": {"group": "player"}, "near": 50, "far_think_every": 4}
    groups = [
        placed("a", [[100, 100], [800, 800], [500, 500]], think_every=2, lod=lod),
        placed("c", [[300, 300]]),
        external("player", [[90, 100]]),
    ]
    live, jsonl, parquet = recorded(scene(groups), tmp_path, 5)
    # ids 0 (near: rate 2), 1 and 2 (far: rate 4), c's id 3 every tick, the player id 4 never
    assert [np.flatnonzero(t).tolist() for t in live] == [
        [0, 1, 2, 3],
        [1, 3],
        [0, 2, 3],
        [3],
        [0, 3],
    ]
    line = json.loads(jsonl.read_text().splitlines()[2])
    assert [list(agent)[-1] for agent in line["agents"]] == ["thought"] * 5
    assert [agent["thought"] for agent in line["agents"]] == live[1].tolist()
    assert "thought" in pq.read_schema(parquet).names
    for path in (jsonl, parquet):
        rec = open_recording(path)
        for t in range(5):
            np.testing.assert_array_equal(rec.state(t).thought, live[t])
        assert thought_of(RecordedView(rec, RecordedWorld(rec), rec.state(3))).tolist() == [
            False,
            False,
            False,
            True,
            False,
        ]


def test_traces_without_lod_are_as_before(tmp_path: Path) -> None:
    live, jsonl, parquet = recorded(scene([placed("a", [[100, 100]])]), tmp_path, 2)
    assert live == [None, None]
    assert all("thought" not in a for a in json.loads(jsonl.read_text().splitlines()[1])["agents"])
    assert "thought" not in pq.read_schema(parquet).names
    assert open_recording(parquet).state(1).thought is None


def test_the_thinking_overlay_rings_the_agents_that_thought() -> None:
    """Ids 0 and 1, think_every 2: after tick 1 only id 1 thought; with the overlay on (key
    d) a halo lights the floor beside it, and nothing changes beside id 0."""
    from viewer_support import draw, painter, pixel_at

    from behaviortk.viewer.overlays import BY_KEY
    from behaviortk.viewer.scene import ViewOptions

    assert BY_KEY["d"].name == "thinking"
    text = scene([placed("a", [[300, 500], [700, 500]], think_every=2, radius=30)])
    sim = Simulation(load_text(text))
    sim.step()
    sim.step()
    assert sim.decisions["a"].thought.tolist() == [False, True]
    off, _ = draw(sim, ViewOptions())
    on, _ = draw(sim, ViewOptions(overlays={"thinking"}))
    vp = painter().viewport(sim.world)
    beside = np.array([30.0 * 1.4 * vp.scale, 0.0])  # outside the body, inside the halo
    idle = vp.to_screen(sim.agents.pos[0]) + beside
    busy = vp.to_screen(sim.agents.pos[1]) + beside
    np.testing.assert_array_equal(pixel_at(on, idle), pixel_at(off, idle))
    assert int(pixel_at(on, busy).sum()) > int(pixel_at(off, busy).sum()) + 300


FLOCK = {
    "flock": {
        "root": {
            "type": "selector",
            "memory": False,
            "children": [
                {
                    "type": "eternal_guard",
                    "condition": {"type": "neighbours", "min_count": 1},
                    "child": {
                        "type": "blend",
                        "children": [
                            {"type": "separation"},
                            {"type": "alignment"},
                            {"type": "cohesion"},
                        ],
                    },
                },
                {"type": "pursuit", "target": {"kind": "nearest", "group": "b", "radius": 120}},
                {"type": "wander"},
            ],
        }
    }
}


@pytest.mark.parametrize("kernels", ["numpy", "numba"])
def test_spawns_and_despawns_keep_both_engines_equal(kernels: str) -> None:
    """Every tick two agents of each group come and two go, the rows move (and are
    re-sorted by cell on compiled kernels): held targets and neighbour sets follow the ids,
    the engines agree tick for tick."""
    area = {"kind": "area", "min": [0, 0], "max": [300, 300]}
    lod = {"focus": {"group": "b"}, "near": 60, "far_think_every": 5}
    a = {"name": "a", "count": 60, "spawn": area, "tree": "flock", "think_every": 2, "lod": lod}
    b = {"name": "b", "count": 8, "spawn": area, "tree": "flock", "think_every": 3}
    text = scene([a, b], FLOCK, width=300, height=300, edges="wrap")
    sims = [Simulation(load_text(text), engine=e, kernels=kernels) for e in ENGINES]
    rng = np.random.default_rng(4)
    for t in range(40):
        for group in ("a", "b"):
            ids = sims[0].ids[sims[0].agents.slices[group]]
            gone = rng.choice(ids, 2, replace=False)
            for sim in sims:
                sim.spawn(group, 2)
                sim.despawn(gone)
        for sim in sims:
            sim.step()
        for group in ("a", "b"):
            da, db = sims[0].decisions[group], sims[1].decisions[group]
            np.testing.assert_array_equal(da.thought, db.thought, err_msg=f"{t} {group}")
            np.testing.assert_array_equal(da.emitted, db.emitted, err_msg=f"{t} {group}")
            np.testing.assert_array_equal(da.status, db.status, err_msg=f"{t} {group}")
        np.testing.assert_array_equal(sims[0].agents.pos, sims[1].agents.pos, err_msg=str(t))
    assert not sims[0].decisions["a"].thought.all()


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    focus=st.sampled_from([1, 5, 40]),
    edges=st.sampled_from(["wrap", "contain"]),
)
def test_near_is_within_near_of_some_focus_point(seed: int, focus: int, edges: str) -> None:
    """``within`` (a loop over a few points, a tree over many) against every distance."""
    from behaviortk.sim.think import within
    from behaviortk.world.spatial import displacement
    from behaviortk.world.state import World

    rng = np.random.default_rng(seed)
    world = World(width=400.0, height=300.0, edges=edges)
    pos = rng.uniform(-20.0, 420.0, (300, 2))
    points = rng.uniform(0.0, 400.0, (focus, 2))
    near = float(rng.uniform(5.0, 80.0))
    want = np.zeros(pos.shape[0], dtype=bool)
    for point in points:
        d = displacement(pos, point, world)
        want |= np.hypot(d[:, 0], d[:, 1]) <= near
    np.testing.assert_array_equal(within(pos, points, near, world), want)


# ------------------------------------------------------------ sensing for thinkers alone
GUARDED = {
    "guarded": {
        "root": {
            "type": "selector",
            "memory": False,
            "children": [
                {
                    "type": "eternal_guard",
                    "condition": {
                        "type": "in_range",
                        "target": {"kind": "nearest", "group": "b"},
                        "radius": 300,
                    },
                    "child": {"type": "seek", "target": {"kind": "nearest", "group": "b"}},
                },
                {
                    "type": "eternal_guard",
                    "condition": {"type": "neighbours", "min_count": 1},
                    "child": {"type": "separation"},
                },
                {"type": "wander"},
            ],
        }
    }
}


@pytest.mark.parametrize("kernels", ["numpy", "numba"])
def test_the_sense_phase_senses_for_the_thinkers_alone(
    kernels: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25, item 6: what agents that do not think hold (their nearest b, their
    neighbours) is measured when the act phase reads it, never while the trees' facts are
    computed (the sense phase); both engines keep moving identically."""
    import behaviortk.sense.sensing as sensing

    calls: list[str] = []
    for name in ("held_nearest", "held_pairs"):
        real = getattr(sensing, name)
        monkeypatch.setattr(
            sensing, name, lambda *a, _f=real, _n=name, **k: (calls.append(_n), _f(*a, **k))[1]
        )
    near_b = [[150.0, 150.0], [200.0, 150.0], [150.0, 200.0], [200.0, 200.0]]  # seek b0
    apart = [[700.0, 500.0], [740.0, 500.0], [700.0, 540.0], [740.0, 540.0]]  # separate
    a = placed("a", near_b + apart, tree="guarded", think_every=4)
    text = scene([a, external("b", [[100, 100], [950, 950]])], GUARDED)
    moved = []
    for engine in ENGINES:
        sim = Simulation(load_text(text), engine=engine, kernels=kernels)
        prepare = sim.engine.prepare

        def counted(*args: Any, _prepare: Any = prepare) -> None:
            before = len(calls)
            _prepare(*args)
            assert len(calls) == before, "held perception measured in the sense phase"

        sim.engine.prepare = counted  # type: ignore[method-assign]
        calls.clear()
        for _ in range(12):
            sim.step()
        assert {"held_nearest", "held_pairs"} <= set(calls)  # act read what is held
        moved.append(sim.agents.pos.copy())
    np.testing.assert_array_equal(moved[0], moved[1])


@pytest.mark.parametrize("every", [True, False])
def test_in_range_at_some_rows_by_hand(every: bool) -> None:
    """The compiled ``in_range`` at the thinkers' rows only: distances 5, 15, 5 and 9 from
    the origin, radius 10 (hysteresis 2 where it held last tick: row 3 at 9 <= 12)."""
    from behaviortk.sense.sensing import TargetFacts
    from behaviortk.sim.backend import Kernels

    target = np.array([[3.0, 4.0], [9.0, 12.0], [0.0, 5.0], [0.0, 11.0]])
    facts = TargetFacts(target, np.zeros((4, 2)), np.arange(4), np.ones(4, dtype=bool))
    prev = np.array([False, False, False, True])
    only = None if every else np.array([1, 3])
    found = Kernels.in_range(np.zeros((4, 2)), facts, 10.0, 2.0, prev, only)
    expected = [True, False, True, True] if every else [False, False, False, True]
    assert found.tolist() == expected
