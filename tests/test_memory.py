"""Memory: `remember`, `recall`, `forget`, stored ticks and `blackboard` targets, by hand.

Every scenario runs on both engines and must give the same statuses, the same
stored values and the same stored ticks (``behaviortk/leaves/memory.py``,
``tree/blackboard.Stamps``).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from engine_support import bb_is, definition, other_group, statuses
from hypothesis import given
from hypothesis import strategies as st

from behaviortk import BlackboardError
from behaviortk.format.loader import load_text
from behaviortk.leaves.conditions import compare, compare_points
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.status import FAILURE, RUNNING, SUCCESS

ENGINES = ("py_trees", "batch")
SEEN = {"kind": "nearest", "group": "b"}


def both(root: dict[str, Any], **kw: Any) -> list[Simulation]:
    text = json.dumps(definition(root, **kw))
    return [Simulation(load_text(text, "memory.json"), engine=e) for e in ENGINES]


def remember(target: dict[str, Any] | None = None, key: str = "seen") -> dict[str, Any]:
    return {"type": "remember", "key": key, "target": target or SEEN}


def recall(max_age: float | None = None, key: str = "seen") -> dict[str, Any]:
    node: dict[str, Any] = {"type": "recall", "key": key}
    if max_age is not None:
        node["max_age"] = max_age
    return node


def parallel(*children: dict[str, Any]) -> dict[str, Any]:
    return {"type": "parallel", "policy": "success_on_all", "children": list(children)}


# ------------------------------------------------------------------ remember


@pytest.mark.parametrize("engine", ENGINES)
def test_remember_stores_the_target_position_and_the_tick(engine: str) -> None:
    """b stands still at (130, 140) (the idle tree never steers): a remembers that point on
    every tick it ticks remember, stamped with the tick being decided (0, then 1, 2)."""
    text = json.dumps(
        definition(
            remember(),
            positions=[[100, 100]],
            others=[other_group("b", [[130, 140]])],
            blackboard={"seen": "point"},
        )
    )
    sim = Simulation(load_text(text, "m.json"), engine=engine)
    view = sim.blackboard(0)
    assert "seen" not in view and view.stored_tick("seen") is None
    for tick in range(3):
        sim.step()
        assert statuses(sim) == [SUCCESS]
        assert view["seen"] == (130.0, 140.0)
        assert view.stored_tick("seen") == tick


@pytest.mark.parametrize("engine", ENGINES)
def test_remember_fails_and_keeps_the_old_memory_when_the_target_is_missing(engine: str) -> None:
    """Agent 0 at (100, 100), agent 1 at (300, 300); b at (130, 140): 50 from agent 0, about
    234 from agent 1. Within radius 60 only agent 0 finds b; an empty group finds nothing."""
    near = {"kind": "nearest", "group": "b", "radius": 60}
    root = parallel(remember(near), remember({"kind": "nearest", "group": "nobody"}, "other"))
    data = definition(
        root,
        count=2,
        positions=[[100, 100], [300, 300]],
        others=[other_group("b", [[130, 140]]), {**other_group("nobody", []), "count": 0}],
        blackboard={"seen": "point", "other": {"type": "point", "default": [1, 2]}},
    )
    sim = Simulation(load_text(json.dumps(data), "m.json"), engine=engine)
    sim.step()
    # nodes: 0 parallel, 1 remember within 60, 2 remember from the empty group
    assert sim.decisions["a"].status[:, 1:].tolist() == [[SUCCESS, FAILURE], [FAILURE, FAILURE]]
    first, second = sim.blackboard(0), sim.blackboard(1)
    assert first["seen"] == (130.0, 140.0) and "seen" not in second
    assert first["other"] == second["other"] == (1.0, 2.0)  # the default stays, stamped tick 0
    assert first.stored_tick("other") == 0


def test_remember_on_a_wrapped_world_stores_the_point_inside_it() -> None:
    """400 x 400 torus: from (390, 200) the nearest image of b at (10, 200) is (410, 200);
    the stored point is folded back to (10, 200), and seek heads +x across the edge."""
    data = definition(
        {"type": "sequence", "memory": False, "children": [remember(), seek_seen()]},
        positions=[[390, 200]],
        others=[other_group("b", [[10, 200]])],
        blackboard={"seen": "point"},
    )
    data["world"]["edges"] = "wrap"
    for sim in (Simulation(load_text(json.dumps(data), "w.json"), engine=e) for e in ENGINES):
        sim.run(2)
        assert sim.blackboard(0)["seen"] == (10.0, 200.0)
        assert sim.agents.vel[0, 0] > 0.0  # toward x = 410, not back toward x = 10


def seek_seen(name: str = "go") -> dict[str, Any]:
    return {"type": "seek", "name": name, "target": {"kind": "blackboard", "key": "seen"}}


# ------------------------------------------------------------------ recall


def test_recall_counts_whole_ticks_less_than_max_age() -> None:
    """The game writes `seen` before tick 0, so it is stored on tick 0 (dt 0.1).
    max_age 0.25: n = ceil(2.5) = 3 ticks, true while now - 0 < 3: ticks 0, 1, 2.
    max_age 0.3: 0.3 / 0.1 is 2.9999999999999996 in floating point, still n = 3.
    max_age 0: n = 0, never. No max_age: while stored, whatever the age."""
    root = parallel(recall(0.25), recall(0.3), recall(0.0), recall())
    got = []
    for sim in both(root, blackboard={"seen": "point"}):
        sim.blackboard(0)["seen"] = [5, 6]
        per_tick = []
        for _ in range(5):
            sim.step()
            per_tick.append(statuses(sim)[1:])
        got.append(per_tick)
    s, f = SUCCESS, FAILURE
    expected = [[s, s, f, s]] * 3 + [[f, f, f, s]] * 2
    assert got[0] == got[1] == expected


def test_a_remember_earlier_in_the_tick_is_recalled_at_age_zero() -> None:
    """remember then recall(max_age = dt = 0.1, n = 1) in one sequence: age 0 < 1 every tick;
    recall before remember in a parallel sees last tick's memory (age 1, not < 1) except on
    tick 0, where nothing is stored yet."""
    root = parallel(
        recall(0.1),
        {"type": "sequence", "memory": False, "children": [remember(), recall(0.1)]},
    )
    for sim in both(root, others=[other_group("b", [[10, 10]])], blackboard={"seen": "point"}):
        for _ in range(3):
            sim.step()
            # nodes: 0 parallel, 1 recall before, 2 sequence, 3 remember, 4 recall after
            assert statuses(sim)[1:] == [FAILURE, SUCCESS, SUCCESS, SUCCESS]


def test_a_default_is_stored_on_the_first_tick_and_a_game_write_on_the_next() -> None:
    """`alarm` defaults to false: stored on tick 0. A write after 4 ticks is stored on tick 4,
    the first tick that sees it; recall(max_age 0.2, n = 2) is true on ticks 0, 1 and 4, 5."""
    root = recall(0.2, key="alarm")
    for sim in both(root, blackboard={"alarm": {"type": "bool", "default": False}}):
        view = sim.blackboard(0)
        assert view.stored_tick("alarm") == 0
        seen = []
        for tick in range(7):
            if tick == 4:
                view["alarm"] = True
                assert view.stored_tick("alarm") == 4
            sim.step()
            seen.append(statuses(sim)[0])
        assert seen == [SUCCESS, SUCCESS, FAILURE, FAILURE, SUCCESS, SUCCESS, FAILURE]


# ------------------------------------------------------------------ forget, blackboard target


def test_forget_clears_recall_and_the_blackboard_target_fails() -> None:
    """The game picks what the tree does with `mode` (set before the tick):

    tick 0 remember: seek `go` FAILURE (seen unset when sensed), recall FAILURE (ticked
      before remember), remember stores b's point (120, 100) on tick 0.
    tick 1 hold: seek RUNNING (it emits), recall SUCCESS.
    tick 2 forget: seek RUNNING (sensed before forget ran), recall SUCCESS, then forget.
    tick 3 forget: seek FAILURE and no request, recall FAILURE.
    """
    act = {
        "type": "failure_is_success",
        "child": {
            "type": "selector",
            "memory": False,
            "children": [
                {
                    "type": "sequence",
                    "memory": False,
                    "children": [bb_is("mode", "remember"), remember()],
                },
                {
                    "type": "sequence",
                    "memory": False,
                    "children": [bb_is("mode", "forget"), {"type": "forget", "key": "seen"}],
                },
            ],
        },
    }
    root = parallel(seek_seen(), recall(), act)
    plan = ["remember", "hold", "forget", "forget"]
    expected = [
        (FAILURE, FAILURE, 0, False),
        (RUNNING, SUCCESS, 0, True),
        (RUNNING, SUCCESS, None, True),
        (FAILURE, FAILURE, None, False),
    ]
    sims = both(
        root,
        positions=[[100, 100]],
        others=[other_group("b", [[120, 100]])],
        blackboard={"seen": "point", "mode": "string"},
    )
    for sim in sims:
        view = sim.blackboard(0)
        for mode, (seek, recalled, stored, emitted) in zip(plan, expected, strict=True):
            view["mode"] = mode
            sim.step()
            assert statuses(sim)[1:3] == [seek, recalled]
            assert view.stored_tick("seen") == stored
            assert bool(sim.decisions["a"].emitted[0, 0]) is emitted
    np.testing.assert_array_equal(sims[0].agents.pos, sims[1].agents.pos)


def test_arrive_at_a_remembered_point() -> None:
    """a (100, 100) remembers b (200, 100) once (mode), b is then moved away by the game;
    a arrives where b was, not where it is."""
    root = parallel(
        {
            "type": "arrive",
            "name": "go",
            "target": {"kind": "blackboard", "key": "seen"},
            "tolerance": 2,
        },
        {
            "type": "failure_is_success",
            "child": {
                "type": "sequence",
                "memory": False,
                "children": [bb_is("mode", "look"), remember()],
            },
        },
    )
    data = definition(
        root,
        positions=[[100, 100]],
        others=[
            {
                "name": "b",
                "count": 1,
                "spawn": {"kind": "positions", "points": [[200, 100]]},
                "control": "external",
            }
        ],
        blackboard={"seen": "point", "mode": {"type": "string", "default": "look"}},
    )
    sims = [Simulation(load_text(json.dumps(data), "a.json"), engine=e) for e in ENGINES]
    for sim in sims:
        sim.step()
        sim.blackboard(0)["mode"] = "rest"
        sim.move(1, [350, 350])
        sim.run(300)
        np.testing.assert_allclose(sim.agents.pos[0], [200, 100], atol=2.0)
        assert statuses(sim)[1] == SUCCESS  # arrive: within tolerance
    np.testing.assert_array_equal(sims[0].agents.pos, sims[1].agents.pos)


# ------------------------------------------------------------------ stamps across spawn/despawn


def test_stored_ticks_follow_agents_through_spawn_and_despawn() -> None:
    """Agents 0..2 remember on tick 0; after two ticks agent 1 despawns and one agent spawns:
    survivors keep their values and ticks, the newcomer holds the default stamped tick 2."""
    root = {"type": "one_shot", "policy": "on_completion", "child": remember()}
    for sim in both(
        root,
        count=3,
        positions=[[100, 100], [150, 100], [200, 100]],
        others=[other_group("b", [[150, 300]])],
        blackboard={"seen": "point", "home": {"type": "point", "default": [7, 8]}},
    ):
        sim.run(2)
        sim.despawn([1])
        (new,) = sim.spawn("a", pos=[300, 100])
        for agent in (0, 2):
            view = sim.blackboard(agent)
            assert view["seen"] == (150.0, 300.0) and view.stored_tick("seen") == 0
            assert view.stored_tick("home") == 0
        fresh = sim.blackboard(new)
        assert "seen" not in fresh and fresh.stored_tick("seen") is None
        assert fresh["home"] == (7.0, 8.0) and fresh.stored_tick("home") == 2


def test_stored_tick_refuses_an_undeclared_key() -> None:
    sim = both(recall(), blackboard={"seen": "point"})[1]
    with pytest.raises(BlackboardError, match="undeclared blackboard key 'sen'"):
        sim.blackboard(0).stored_tick("sen")


def test_set_points_checks_the_key_and_the_points() -> None:
    sim = both(recall(), blackboard={"seen": "point", "flag": "bool"}, count=2)[1]
    board = sim.engine.groups["a"].board
    rows = np.array([0, 1])
    with pytest.raises(BlackboardError, match="'flag' is a bool"):
        board.set_points("flag", rows, np.zeros((2, 2)))
    with pytest.raises(BlackboardError, match="finite"):
        board.set_points("seen", rows, np.array([[1.0, np.nan], [0.0, 0.0]]))
    with pytest.raises(BlackboardError, match="shape"):
        board.set_points("seen", rows, np.zeros((1, 2)))
    board.set_points("seen", rows, np.array([[-0.0, 1.0], [2.0, 3.0]]))
    assert [sim.blackboard(a)["seen"] for a in (0, 1)] == [(0.0, 1.0), (2.0, 3.0)]
    assert str(sim.blackboard(0)["seen"][0]) == "0.0"  # -0.0 stored as 0.0, as coerce does


# ------------------------------------------------------------------ point comparisons

coordinate = st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0])
operand = st.one_of(
    st.tuples(coordinate, coordinate),
    st.lists(st.sampled_from([0, 1, 2.5, True]), min_size=2, max_size=2),
    st.sampled_from([1, 2.5, True, "x", None]),
    st.lists(coordinate, min_size=3, max_size=3),
)


@given(
    points=st.lists(
        st.one_of(st.none(), st.tuples(coordinate, coordinate)), min_size=1, max_size=6
    ),
    op=st.sampled_from(["==", "!=", "<", "<=", ">", ">="]),
    rhs=operand,
)
def test_compare_points_is_compare_per_row(points: list[Any], op: str, rhs: Any) -> None:
    """The batch board compares point keys as arrays; each row must be ``compare``'s answer."""
    xy = np.array([(np.nan, np.nan) if p is None else p for p in points], dtype=float)
    expected = [compare(op, p, rhs) for p in points]
    assert compare_points(op, xy, rhs).tolist() == expected
