"""Spawn and despawn move rows in place (world/rows.RowPlan): worked by hand, against a
whole-array gather, and on a running batch simulation (no rebuild, no reallocation)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import numpy as np
from engine_support import definition
from hypothesis import given, settings
from hypothesis import strategies as st

from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation
from behaviortk.world.rows import RowPlan, carry, room, rows_at

SLICES = {"a": slice(0, 5), "b": slice(5, 8)}


def with_room(values: np.ndarray, rows: int) -> np.ndarray:
    """``values`` copied into the first rows of a buffer of ``rows`` rows."""
    buf = np.empty((rows, *values.shape[1:]), dtype=values.dtype)
    buf[: values.shape[0]] = values
    return buf[: values.shape[0]]


def moved_rows(plan: RowPlan) -> list[int]:
    """``plan.moved()`` as sorted rows."""
    return sorted(np.concatenate([np.atleast_1d(rows_at(at)) for at in plan.moved()]).tolist())


def test_a_despawn_fills_holes_with_the_last_survivors_and_slides_later_groups() -> None:
    """a loses local rows 1 and 3: 3 survivors, hole 1 takes row 4; b slides left by 2."""
    plan = RowPlan(SLICES, {"a": np.array([1, 3])}, {})
    assert plan.apply(np.arange(8), {}).tolist() == [0, 4, 2, 5, 6, 7]
    assert plan.moves["a"].source().tolist() == [0, 4, 2]
    assert plan.source_rows().tolist() == [0, 4, 2, 5, 6, 7]
    assert moved_rows(plan) == [1, 3, 4, 5]


def test_a_spawn_with_a_despawn_overwrites_the_freed_row_and_moves_nothing_else() -> None:
    """A frame's despawn of a's row 2 and spawn of one a: the new agent takes row 2; no
    survivor moves, no block slides, nothing grows (one store per array)."""
    plan = RowPlan(SLICES, {"a": np.array([2])}, {"a": 1})
    arr = np.arange(8)
    out = plan.apply(arr, {"a": np.array([-1])})
    assert out is arr and out.tolist() == [0, 1, -1, 3, 4, 5, 6, 7]
    assert plan.in_place and plan.fresh == [("a", slice(2, 3))]
    assert plan.source_rows().tolist() == [0, 1, -1, 3, 4, 5, 6, 7]
    assert plan.moved() == [slice(2, 3)]
    names = [f"n{i}" for i in range(8)]
    plan.names(names, {"a": ["x"]})
    assert names == ["n0", "n1", "x", "n3", "n4", "n5", "n6", "n7"]


def test_more_despawns_than_spawns_fill_the_rest_from_the_group_s_end() -> None:
    """a loses rows 1 and 3 and gains one agent (4 left): the new agent takes row 1, the
    last survivor (row 4) fills row 3, b slides left by one."""
    plan = RowPlan(SLICES, {"a": np.array([1, 3])}, {"a": 1})
    m = plan.moves["a"]
    assert (m.fresh.tolist(), m.holes.tolist(), m.fillers.tolist()) == ([1], [3], [4])
    assert plan.apply(np.arange(8), {"a": -1}).tolist() == [0, -1, 2, 4, 5, 6, 7]
    assert plan.source_rows().tolist() == [0, -1, 2, 4, 5, 6, 7]
    assert moved_rows(plan) == [1, 3, 4, 5, 6]
    names = [f"n{i}" for i in range(8)]
    plan.names(names, {"a": ["x"]})
    assert names == ["n0", "x", "n2", "n4", "n5", "n6", "n7"]


def test_more_spawns_than_despawns_overwrite_then_append() -> None:
    """b loses row 0 (global 5) and gains three: the first takes row 0, two follow b's rows."""
    plan = RowPlan(SLICES, {"b": np.array([0])}, {"b": 3})
    out = plan.apply(np.arange(8), {"b": np.array([-1, -2, -3])})
    assert out.tolist() == [0, 1, 2, 3, 4, -1, 6, 7, -2, -3]
    names = [f"n{i}" for i in range(8)]
    plan.names(names, {"b": ["x", "y", "z"]})
    assert names == ["n0", "n1", "n2", "n3", "n4", "x", "n6", "n7", "y", "z"]


def test_a_spawn_appends_to_its_group_and_slides_later_groups_right() -> None:
    plan = RowPlan(SLICES, {}, {"a": 2})
    out = plan.apply(np.arange(8) * 10, {"a": np.array([-1, -2])})
    assert out.tolist() == [0, 10, 20, 30, 40, -1, -2, 50, 60, 70]
    names = [f"n{i}" for i in range(8)]
    plan.names(names, {"a": ["x", "y"]})
    assert names == ["n0", "n1", "n2", "n3", "n4", "x", "y", "n5", "n6", "n7"]


def test_rows_move_inside_the_spare_room() -> None:
    arr = with_room(np.arange(8.0), 8)
    grown_ = RowPlan(SLICES, {}, {"b": 1}).apply(arr, {"b": 99.0})
    assert room(grown_) > grown_.shape[0] == 9  # grown by half, with room to spare
    again = RowPlan({"a": slice(0, 5), "b": slice(5, 9)}, {}, {"a": 1}).apply(grown_, 7.0)
    assert np.shares_memory(again, grown_)  # no copy: the room held it
    assert again.tolist() == [0, 1, 2, 3, 4, 7, 5, 6, 7, 99]


def test_an_array_two_fields_share_moves_once() -> None:
    """``apply_to`` moves each array once, however many fields name it: a swap applied twice
    would undo itself."""
    shared = np.arange(8.0)
    obj = SimpleNamespace(x=shared, y=shared, z=np.arange(8.0) * 10)
    plan = RowPlan(SLICES, {"a": np.array([1])}, {})  # a's last agent (row 4) fills row 1
    plan.apply_to(obj, ("x", "y", "z"), {})
    assert obj.x is obj.y and obj.x.tolist() == [0, 4, 2, 3, 5, 6, 7]
    assert obj.z.tolist() == [0, 40, 20, 30, 50, 60, 70]


def test_room_is_measured_for_each_array() -> None:
    """``room`` remembers the last array it measured; another array, a view starting inside
    a buffer or an array of its own each get their own answer."""
    buf = np.empty(20)
    first, inside, own = buf[:10], buf[5:12], np.empty(4)
    assert [room(first), room(inside), room(own), room(first), room(first[:3])] == [
        20,
        7,
        4,
        20,
        20,
    ]


@st.composite
def changes(draw: Any) -> tuple[dict[str, slice], dict[str, np.ndarray], dict[str, int]]:
    sizes = draw(st.lists(st.integers(0, 6), min_size=1, max_size=4))
    slices, gone, added, start = {}, {}, {}, 0
    for k, n in enumerate(sizes):
        name = f"g{k}"
        slices[name] = slice(start, start + n)
        start += n
        out = draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n)) if n else set()
        if out:
            gone[name] = np.array(sorted(out), dtype=np.int64)
        if draw(st.booleans()):
            added[name] = draw(st.integers(1, 4))
    return slices, gone, added


@settings(max_examples=200, deadline=None)
@given(changes(), st.booleans())
def test_a_plan_equals_the_whole_gather(
    change: tuple[dict[str, slice], dict[str, np.ndarray], dict[str, int]], spare: bool
) -> None:
    """In place (with or without room) = gathering every row by ``source_rows``, for any
    batch of spawns and despawns; the names follow the same map."""
    slices, gone, added = change
    n = sum(s.stop - s.start for s in slices.values())
    plan = RowPlan(slices, gone, added)
    values = np.arange(n, dtype=np.float64).reshape(n, 1) * np.array([[1.0, -1.0]])
    arr = with_room(values.copy(), n + 10) if spare else values.copy()
    out = plan.apply(arr, -7.0)
    src = plan.source_rows()
    padded = np.concatenate([values, [[-7.0, -7.0]]])  # row -1: a new agent's fill
    expected = padded[src]
    assert np.array_equal(out, expected)
    survivors = {
        name: s.stop - s.start - gone.get(name, np.zeros(0)).size for name, s in slices.items()
    }
    assert out.shape[0] == sum(survivors.values()) + sum(added.values())
    names = [f"n{i}" for i in range(n)]
    fresh = {name: [f"{name}+{k}" for k in range(count)] for name, count in added.items()}
    plan.names(names, fresh)
    order = iter([new for name in slices for new in fresh.get(name, [])])
    news = [next(order) if r < 0 else f"n{r}" for r in src.tolist()]
    assert names == news  # new agents in spawn order, group by group


@settings(max_examples=200, deadline=None)
@given(st.data(), st.integers(0, 30), st.booleans(), st.booleans())
def test_carry_is_the_masked_store(data: Any, n: int, permutation: bool, same_type: bool) -> None:
    """``carry`` (an ``np.take`` where every row has a source) writes what the masked store
    ``dst[kept] = src[source[kept]]`` writes, along either axis; new rows keep ``dst``'s."""
    old = data.draw(st.integers(max(n, 1), 40))
    if permutation:
        source = np.array(data.draw(st.permutations(range(n))), dtype=np.int64)
    else:
        drawn = data.draw(st.lists(st.integers(-1, old - 1), min_size=n, max_size=n))
        source = np.array(drawn, dtype=np.int64)
    src = np.arange(old * 3, dtype=np.float64).reshape(old, 3) - 5.0
    for axis in (0, 1):
        rows = src if axis == 0 else np.ascontiguousarray(src.T)
        shape = (n, 3) if axis == 0 else (3, n)
        dst = np.full(shape, -1, dtype=np.float64 if same_type else np.float32)
        expected = dst.copy()
        kept = np.flatnonzero(source >= 0)
        if axis == 0:
            expected[kept] = rows[source[kept]]
        else:
            expected[:, kept] = rows[:, source[kept]]
        carry(dst, rows, source, axis=axis)
        assert np.array_equal(dst, expected)
        if n == old:  # in place (dst is src): the same as from a copy
            alone = rows.copy()
            carry(alone, alone, source, axis=axis)
            carry(rows, rows.copy(), source, axis=axis)
            assert np.array_equal(alone, rows)


def test_a_re_sort_moves_every_bit_of_tree_state_with_its_agent() -> None:
    """Rows permuted (the cell-order re-sort's path: ``Simulation._rearrange``) mid-run: each
    agent's statuses, current children, wait timer, blackboard stamps and wander memory
    follow it, so the run goes on exactly as one never re-sorted (compared by id)."""
    plain, moved = crowd("batch"), crowd("batch")
    rng = np.random.default_rng(9)
    for tick in range(24):
        if tick % 5 == 3:
            moved._rearrange({"a": rng.permutation(40)})
            moved.blackboard(int(moved.ids[7]))["k"] = 5.0
            plain.blackboard(int(moved.ids[7]))["k"] = 5.0
        plain.step()
        moved.step()
        rows = moved.rows_of(plain.ids)
        assert np.array_equal(moved.agents.pos[rows], plain.agents.pos)
        assert np.array_equal(moved.decisions["a"].status[rows], plain.decisions["a"].status)
    for agent in plain.ids.tolist():
        assert moved.blackboard(agent).stored_tick("k") == plain.blackboard(agent).stored_tick("k")


def crowd(engine: str) -> Simulation:
    root = {"type": "sequence", "memory": True, "children": [
        {"type": "wait", "duration": 0.2},
        {"type": "wander", "units": "world", "radius": 10, "distance": 20, "jitter": 40},
    ]}  # fmt: skip
    data = definition(root, count=40, blackboard={"k": {"type": "number", "default": 3}})
    data["world"]["edges"] = "wrap"
    return Simulation(load_text(json.dumps(data), "crowd.json"), engine)


def test_a_batch_spawn_rebuilds_nothing() -> None:
    """The group program, its fused/compiled parts and the per-agent buffers survive a
    spawn and a despawn; after one growth, the integrator's new arrays keep the room."""
    sim = crowd("batch")
    sim.run(2)
    program = sim.engine.groups["a"]
    root, board = program.root, program.board
    sim.spawn("a", 1)
    sim.step()
    pos = sim.agents.pos
    assert room(pos) > sim.agents.n and room(sim.agents.mass) > sim.agents.n
    sim.spawn("a", 1)
    sim.despawn(int(sim.ids[3]))
    assert np.shares_memory(sim.agents.pos, pos)  # moved in place
    assert sim.engine.groups["a"] is program and program.root is root and program.board is board
    assert program.state.n == program.n == 41
    new_row = int(sim.rows_of(41)[0])
    assert sim.blackboard(41)["k"] == 3 and sim.blackboard(41).stored_tick("k") == sim.tick
    assert program.state.status[:, new_row - program.rows.start].tolist() == [0, 0, 0]
    sim.run(3)
    assert np.isfinite(sim.agents.pos).all()


def test_spawns_every_tick_stay_identical_on_both_engines() -> None:
    """A game spawning and despawning every frame: both engines agree bit for bit."""
    sims = [crowd(e) for e in ("py_trees", "batch")]
    rng = np.random.default_rng(4)
    for tick in range(30):
        pick = rng.integers(0, 1000)
        for sim in sims:
            sim.spawn("a", 1 + tick % 3, pos=[float(tick), 50.0])
            ids = sim.ids[sim.agents.slices["a"]]
            sim.despawn([int(ids[pick % ids.size])])
            sim.step()
        a, b = sims
        assert a.ids.tolist() == b.ids.tolist()
        assert np.array_equal(a.agents.pos, b.agents.pos)
        assert np.array_equal(a.decisions["a"].status, b.decisions["a"].status)


def test_a_group_emptied_and_refilled_stays_identical_on_both_engines() -> None:
    """Despawn every agent of a group (its tree state shrinks to nothing), step, spawn it
    again past the old size (its arrays grow): both engines agree bit for bit."""
    sims = [crowd(e) for e in ("py_trees", "batch")]
    for sim in sims:
        sim.run(2)
        sim.despawn(sim.ids.tolist())
        sim.step()
        assert sim.agents.n == 0
        sim.spawn("a", 50)
        sim.run(3)
    a, b = sims
    assert a.ids.tolist() == b.ids.tolist() == list(range(40, 90))
    assert np.array_equal(a.agents.pos, b.agents.pos)
    assert np.array_equal(a.decisions["a"].status, b.decisions["a"].status)


@settings(max_examples=100, deadline=None)
@given(changes())
def test_an_overwrite_plan_is_the_general_plan_of_its_batch(
    change: tuple[dict[str, slice], dict[str, np.ndarray], dict[str, int]],
) -> None:
    """``RowPlan.overwrite`` (as many in as out, group by group) writes what the general
    plan of the same batch writes, in place."""
    slices, gone, _ = change
    added = {name: rows.size for name, rows in gone.items()}
    general, quick = RowPlan(slices, gone, added), RowPlan.overwrite(slices, gone)
    assert general.in_place and quick.in_place
    assert [(name, rows_at(at).tolist()) for name, at in quick.fresh] == [
        (name, rows_at(at).tolist()) for name, at in general.fresh
    ]
    n = sum(s.stop - s.start for s in slices.values())
    fresh = {name: -np.arange(1.0, k + 1) for name, k in added.items()}
    assert np.array_equal(
        quick.apply(np.arange(n, dtype=float), fresh),
        general.apply(np.arange(n, dtype=float), fresh),
    )
    names = {name: [f"{name}+{k}" for k in range(count)] for name, count in added.items()}
    a, b = [f"n{i}" for i in range(n)], [f"n{i}" for i in range(n)]
    quick.names(a, names)
    general.names(b, names)
    assert a == b
    for name in gone:
        assert quick.moves[name].source().tolist() == general.moves[name].source().tolist()
