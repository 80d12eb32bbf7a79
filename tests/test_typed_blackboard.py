"""Typed blackboards (issue "Embed behaviortk in a game", item 5).

Trees declare their keys (``format/blackboard_keys.py``); the loader refuses undeclared
keys and values of the wrong type with located messages; ``sim.blackboard(agent)``
is a live mapping the game reads and writes between ticks, checked like the file
(``tree/blackboard.py``), and the next tick sees a write on both engines alike.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from engine_support import bb_is, seek, wait
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import behaviortk
from behaviortk import BlackboardError, DefinitionError
from behaviortk.format.loader import Scenario, load_text
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.status import FAILURE, RUNNING, SUCCESS

ENGINES = ("py_trees", "batch")

KEYS = {
    "alarm": {"type": "bool", "default": False},
    "home": {"type": "point"},
    "level": {"type": "number", "default": 0},
    "mood": {"type": "string"},
}


def definition(
    root: dict[str, Any], *, count: int = 3, keys: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "name": "typed_blackboard",
        "world": {"width": 400, "height": 400, "edges": "contain", "dt": 0.1, "seed": 5},
        "groups": [
            {
                "name": "a",
                "count": count,
                "spawn": {"kind": "area", "min": [100, 100], "max": [300, 300]},
                "heading": 0,
                "tree": "main",
            }
        ],
        "trees": {"main": {"blackboard": KEYS if keys is None else keys, "root": root}},
    }


def scenario(root: dict[str, Any], **kw: Any) -> Scenario:
    return load_text(json.dumps(definition(root, **kw)), "typed.json")


def both(root: dict[str, Any], **kw: Any) -> list[Simulation]:
    sc = scenario(root, **kw)
    return [Simulation(sc, engine=e) for e in ENGINES]


def guard(home: dict[str, Any]) -> dict[str, Any]:
    """nodes: 0 selector, 1 sequence, 2 alarm == true, 3 seek home, 4 seek idle."""
    return {
        "type": "selector",
        "memory": False,
        "children": [
            {
                "type": "sequence",
                "memory": False,
                "children": [
                    bb_is("alarm", True),
                    {"type": "seek", "name": "home", "target": home},
                ],
            },
            seek("idle", (200.0, 200.0)),
        ],
    }


GUARD = guard({"kind": "blackboard", "key": "home"})


# ------------------------------------------------------------------ defaults


@pytest.mark.parametrize("engine", ENGINES)
def test_declared_defaults_hold_from_the_start(engine: str) -> None:
    sim = Simulation(scenario(GUARD), engine=engine)
    for agent in range(3):
        view = sim.blackboard(agent)
        assert dict(view) == {"alarm": False, "level": 0}
        assert list(view) == ["alarm", "level"]  # declared order; unset keys left out
        assert view["alarm"] is False
        assert view.get("home") is None and "home" not in view
        assert sim.engine.blackboard(agent) == {"alarm": False, "level": 0}
    sim.step()
    assert sim.decisions["a"].status[:, 2].tolist() == [FAILURE] * 3  # alarm == true: false
    assert sim.active_names(0) == ["idle"]


def test_a_point_default_is_a_target_on_the_first_tick() -> None:
    keys = {"home": {"type": "point", "default": [300, 200]}}
    root = {"type": "seek", "target": {"kind": "blackboard", "key": "home"}}
    sims = both(root, keys=keys, count=2)
    for sim in sims:
        assert sim.blackboard(0)["home"] == (300.0, 200.0)
        sim.step()
        assert sim.decisions["a"].emitted.all()
    np.testing.assert_array_equal(sims[0].agents.pos, sims[1].agents.pos)


# ------------------------------------------------------------------ the game writes


def test_the_game_writes_a_point_and_the_next_tick_seeks_it() -> None:
    """Between ticks the game sets agent 1's alarm and home; on the very next step() the
    compare succeeds and the seek steers to that point (leaf statuses and targets are
    read at the start of the tick): positions equal, bit for bit, those of a run whose
    seek has the point written in the file, on both engines."""
    home = [320.0, 180.0]
    sims = both(GUARD, count=3)
    reference = Simulation(scenario(guard({"kind": "point", "at": home})), engine="py_trees")
    for sim in [*sims, reference]:
        sim.step()
        assert sim.active_names(1) == ["idle"]
    for sim in [*sims, reference]:
        view = sim.blackboard(1)
        if sim is not reference:
            view["home"] = np.array(home)
        view["alarm"] = True
        sim.step()
        assert sim.active_names(1) == ["home"]
        assert sim.active_names(0) == sim.active_names(2) == ["idle"]  # one agent's keys
        assert sim.decisions["a"].status[1].tolist() == [RUNNING, RUNNING, SUCCESS, RUNNING, 0]
    for _ in range(5):
        for sim in [*sims, reference]:
            np.testing.assert_array_equal(sim.agents.pos, reference.agents.pos)
            np.testing.assert_array_equal(sim.agents.vel, reference.agents.vel)
            sim.step()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_bool_written_by_the_game_flips_a_compare_branch(engine: str) -> None:
    sim = Simulation(scenario(GUARD), engine=engine)
    sim.blackboard(0)["home"] = (10, 10)
    seen = []
    for alarm in (False, True, True, False, True):
        sim.blackboard(0)["alarm"] = alarm
        sim.step()
        seen.append(sim.active_names(0))
    assert seen == [["idle"], ["home"], ["home"], ["idle"], ["home"]]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_blackboard_set_ticked_later_overrides_the_game(engine: str) -> None:
    """The game's write is on the board when the tick starts; a blackboard_set ticked in
    that tick writes over it, and blackboard_compare reads the board when ticked."""
    root = {
        "type": "sequence",
        "memory": False,
        "children": [
            {"type": "blackboard_compare", "key": "level", "op": ">", "value": 5},
            {"type": "blackboard_set", "key": "level", "value": 1},
        ],
    }
    sim = Simulation(scenario(root), engine=engine)
    view = sim.blackboard(0)
    view["level"] = 7.5
    sim.step()
    assert sim.decisions["a"].status[0].tolist() == [SUCCESS, SUCCESS, SUCCESS]
    assert view["level"] == 1
    sim.step()
    assert sim.decisions["a"].status[0].tolist() == [FAILURE, FAILURE, 0]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_view_is_a_live_mutable_mapping(engine: str) -> None:
    sim = Simulation(scenario(wait(10.0)), engine=engine)
    view = sim.blackboard(2)
    assert len(view) == 2
    view.update({"mood": "calm", "level": 3})
    view["home"] = [1, 2.5]
    assert dict(view) == {"alarm": False, "home": (1.0, 2.5), "level": 3, "mood": "calm"}
    assert sim.engine.blackboard(2) == {
        "alarm": False,
        "home": (1.0, 2.5),
        "level": 3,
        "mood": "calm",
    }
    assert sim.blackboard(2)["mood"] == "calm"  # a new view sees the same board
    assert sim.engine.blackboard(1) == {"alarm": False, "level": 0}
    del view["mood"]
    assert "mood" not in view and view.get("mood") is None
    with pytest.raises(KeyError):
        view["mood"]
    with pytest.raises(KeyError):
        del view["mood"]
    del view["alarm"]  # unset: the default does not come back
    assert dict(view) == {"home": (1.0, 2.5), "level": 3}
    view["level"] = np.float64(2.5)  # NumPy scalars are stored as plain numbers
    view["alarm"] = np.bool_(True)
    assert view["level"] == 2.5 and type(view["level"]) is float
    assert view["alarm"] is True
    assert view.setdefault("mood", "bored") == "bored"
    assert view.pop("mood") == "bored" and "mood" not in view


# ------------------------------------------------------------------ bad writes


@pytest.mark.parametrize("engine", ENGINES)
def test_undeclared_keys_and_wrong_types_raise_and_change_nothing(engine: str) -> None:
    sim = Simulation(scenario(GUARD), engine=engine)
    view = sim.blackboard(0)
    view["home"] = (5, 6)
    before = [sim.engine.blackboard(a) for a in range(3)]

    with pytest.raises(BlackboardError) as err:
        view["alrm"] = True
    assert str(err.value) == (
        "undeclared blackboard key 'alrm' in group 'a'; did you mean 'alarm'? "
        "valid: alarm, home, level, mood"
    )
    assert isinstance(err.value, KeyError) and isinstance(err.value, ValueError)
    assert err.value.key == "alrm"

    bad_values = [
        ("alarm", 3, "blackboard key 'alarm' is a bool, got 3"),
        ("alarm", "yes", "blackboard key 'alarm' is a bool, got 'yes'"),
        ("level", True, "blackboard key 'level' is a number, got True"),
        ("level", float("nan"), "blackboard key 'level' is a number, got nan"),
        ("level", "3", "blackboard key 'level' is a number, got '3'"),
        ("mood", 1, "blackboard key 'mood' is a string, got 1"),
        ("home", (1, 2, 3), "blackboard key 'home' is a point [x, y], got (1, 2, 3)"),
        ("home", [1, "x"], "blackboard key 'home' is a point [x, y], got [1, 'x']"),
        ("home", 4, "blackboard key 'home' is a point [x, y], got 4"),
    ]
    for key, value, message in bad_values:
        with pytest.raises(BlackboardError) as err:
            view[key] = value
        assert str(err.value) == message

    with pytest.raises(BlackboardError, match="undeclared blackboard key 'hme'"):
        view["hme"]
    with pytest.raises(BlackboardError, match="undeclared blackboard key 'hme'"):
        view.get("hme")  # a typo is never "unset"
    with pytest.raises(BlackboardError, match="undeclared"):
        del view["hme"]
    with pytest.raises(BlackboardError, match="undeclared blackboard key 3"):
        view[3] = 1  # type: ignore[index]
    with pytest.raises(BlackboardError, match="'level' is a number"):
        view.update({"mood": "ok", "level": "high"})  # checked in full before any write
    with pytest.raises(BlackboardError, match="undeclared"):
        view.update(mood="ok", nope=1)
    assert "hme" not in view

    assert [sim.engine.blackboard(a) for a in range(3)] == before
    sim.step()
    assert sim.active_names(0) == ["idle"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_tree_without_keys_refuses_every_write(engine: str) -> None:
    sim = Simulation(scenario(wait(1.0), keys={}), engine=engine)
    view = sim.blackboard(0)
    assert dict(view) == {}
    with pytest.raises(BlackboardError, match="its trees declare no blackboard keys"):
        view["x"] = 1


@pytest.mark.parametrize("engine", ENGINES)
def test_ops_writes_are_checked_too(engine: str) -> None:
    """A plugin's ops write through the board, which checks like the view."""
    sim = Simulation(scenario(GUARD), engine=engine)
    board = sim.engine.groups["a"].board
    with pytest.raises(BlackboardError, match="undeclared blackboard key 'nope'"):
        board.set("nope", np.array([0, 1]), 1)
    with pytest.raises(BlackboardError, match="'home' is a point"):
        board.set("home", np.array([0, 1]), 1.0)
    assert sim.engine.blackboard(0) == {"alarm": False, "level": 0}


def test_an_unknown_agent_is_the_one_simulation_error() -> None:
    sim = Simulation(scenario(GUARD), engine="batch")
    with pytest.raises(behaviortk.SimulationError, match="agent id 3 was never spawned"):
        sim.blackboard(3)
    assert issubclass(BlackboardError, behaviortk.SimulationError)


def test_blackboard_error_is_public_and_documented() -> None:
    assert behaviortk.BlackboardError is BlackboardError
    assert "BlackboardError" in behaviortk.__all__
    assert BlackboardError.__doc__ and "changed nothing" in BlackboardError.__doc__


def test_the_batch_board_keeps_only_values_in_use() -> None:
    """A game may write a new value every tick: the batch board's value table is compacted
    to the values agents hold, and comparisons and points stay right."""
    root = {
        "type": "sequence",
        "memory": False,
        "children": [
            {"type": "blackboard_compare", "key": "level", "op": ">=", "value": 500},
            {"type": "seek", "target": {"kind": "blackboard", "key": "home"}},
        ],
    }
    sims = both(root, count=4)
    held = [-0.5] * 4  # the default, 0
    for i in range(1000):
        held[i % 4] = i
        for sim in sims:
            view = sim.blackboard(i % 4)
            view["level"] = i + 0.5
            view["home"] = (float(i % 400), 200.0)
            assert [sim.blackboard(a)["level"] for a in range(4)] == [h + 0.5 for h in held]
            if i % 50 == 0:
                sim.step()
    board = sims[1].engine.groups["a"].board
    assert len(board.values["level"]) <= 2 * 4 + 16
    for sim in sims:
        sim.step()
        assert sim.decisions["a"].status[:, 1].tolist() == [SUCCESS] * 4
        assert [sim.blackboard(a)["level"] for a in range(4)] == [996.5, 997.5, 998.5, 999.5]
        points = sim.engine.blackboard_points("a", "home", np.arange(4))
        assert points.tolist() == [[196.0, 200.0], [197.0, 200.0], [198.0, 200.0], [199.0, 200.0]]
    np.testing.assert_array_equal(sims[0].agents.pos, sims[1].agents.pos)


# ------------------------------------------------------------------ validation

TEXT = """{
  "name": "bad",
  "world": {"width": 100, "height": 100},
  "groups": [{"name": "g", "count": 1, "spawn": {"kind": "ring", "center": [50, 50], "radius": 1},
              "tree": "main"}],
  "trees": {
    "main": {
      "blackboard": {"alarm": {"type": "bool", "default": false}, "home": {"type": "point"}},
      "root": {"type": "sequence", "memory": false, "children": [
        {"type": "blackboard_set", "key": "alrm", "value": true},
        {"type": "blackboard_set", "key": "alarm", "value": 3},
        {"type": "blackboard_compare", "key": "home", "value": "x"},
        {"type": "blackboard_compare", "key": "alarm", "op": "<", "value": true},
        {"type": "seek", "target": {"kind": "blackboard", "key": "alarm"}},
        {"type": "subtree", "tree": "sub", "params": {"v": [1, 2]}}
      ]}
    },
    "sub": {
      "params": {"v": {}},
      "root": {"type": "blackboard_set", "key": "alarm", "value": "$v"}
    }
  }
}
"""


def test_validation_messages_are_located() -> None:
    with pytest.raises(DefinitionError) as err:
        load_text(TEXT, "bad.json")
    lines = [str(i) for i in err.value.issues]
    assert lines == [
        "bad.json:10:43: /trees/main/root/children/0/key: group 'g': undeclared blackboard "
        "key 'alrm'; did you mean 'alarm'? valid: alarm, home [undeclared_blackboard_key]",
        "bad.json:11:61: /trees/main/root/children/1/value: group 'g': blackboard key 'alarm' "
        "is a bool, got 3 [blackboard_type]",
        "bad.json:12:64: /trees/main/root/children/2/value: group 'g': blackboard key 'home' "
        "is a point [x, y], got 'x' [blackboard_type]",
        "bad.json:13:62: /trees/main/root/children/3/op: group 'g': blackboard key 'alarm' "
        "is a bool; '<' compares numbers only (use == or !=) [blackboard_type]",
        "bad.json:14:66: /trees/main/root/children/4/target/key: group 'g': blackboard key "
        "'alarm' is a bool, but a `blackboard` target needs a point [x, y]; point keys: home "
        "[blackboard_type]",
        "bad.json:20:67: /trees/sub/root/value: group 'g': blackboard key 'alarm' is a bool, "
        "got [1, 2] [blackboard_type]",
    ]


def test_a_subtree_may_use_keys_its_caller_declares_and_vice_versa() -> None:
    data = definition({"type": "subtree", "tree": "sub"})
    data["trees"]["sub"] = {
        "blackboard": {"seen": {"type": "bool", "default": True}},
        "root": {
            "type": "sequence",
            "memory": False,
            "children": [bb_is("alarm", True), bb_is("seen", True)],
        },
    }
    sc = load_text(json.dumps(data))
    assert list(sc.blackboards["a"]) == ["alarm", "home", "level", "mood", "seen"]
    for engine in ENGINES:
        sim = Simulation(sc, engine=engine)
        assert sim.blackboard(0)["seen"] is True
    # on its own, sub may not use alarm
    data["groups"][0]["tree"] = "sub"
    with pytest.raises(DefinitionError, match="undeclared blackboard key 'alarm'; valid: seen"):
        load_text(json.dumps(data))


# ------------------------------------------------------------------ both engines, random writes

RANDOM_TREE = {
    "type": "selector",
    "memory": False,
    "children": [
        {
            "type": "sequence",
            "memory": False,
            "children": [
                bb_is("alarm", True),
                {"type": "blackboard_compare", "key": "level", "op": ">", "value": 2},
                {"type": "seek", "name": "home", "target": {"kind": "blackboard", "key": "home"}},
            ],
        },
        {
            "type": "sequence",
            "memory": True,
            "children": [
                bb_is("mood", "restless"),
                {"type": "flee", "name": "away", "target": {"kind": "blackboard", "key": "home"}},
                {"type": "blackboard_set", "key": "mood", "value": "calm"},
            ],
        },
        {
            "type": "sequence",
            "memory": False,
            "children": [
                {"type": "blackboard_compare", "key": "level", "op": "<=", "value": -1},
                {"type": "blackboard_set", "key": "alarm", "value": True},
                {"type": "wander", "name": "wander"},
            ],
        },
        {"type": "arrive", "name": "rest", "target": {"kind": "blackboard", "key": "home"}},
    ],
}

coordinate = st.floats(0, 400, allow_nan=False)
VALUES = {
    "alarm": st.booleans(),
    "level": st.one_of(st.integers(-3, 6), st.floats(-3, 6, allow_nan=False)),
    "mood": st.sampled_from(["calm", "restless", ""]),
    "home": st.tuples(coordinate, coordinate),
}
write = st.one_of(
    *(st.tuples(st.integers(0, 5), st.just(key), strategy) for key, strategy in VALUES.items()),
    st.tuples(st.integers(0, 5), st.sampled_from(sorted(VALUES)), st.none()),  # None: delete
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    writes=st.lists(st.lists(write, max_size=4), min_size=30, max_size=30),
    seed=st.integers(0, 1000),
)
def test_random_writes_between_ticks_keep_the_engines_identical(
    writes: list[list[tuple[int, str, Any]]], seed: int
) -> None:
    sc = scenario(RANDOM_TREE, count=6)
    a, b = (Simulation(sc, engine=e, seed=seed) for e in ENGINES)
    for tick, batch in enumerate(writes):
        for sim in (a, b):
            for agent, key, value in batch:
                view = sim.blackboard(agent)
                if value is None:
                    view.pop(key, None)
                else:
                    view[key] = value
            sim.step()
        for group, da in a.decisions.items():
            db = b.decisions[group]
            assert np.array_equal(da.status, db.status), f"tick {tick}: statuses"
            assert np.array_equal(da.emitted, db.emitted), f"tick {tick}: requests"
        np.testing.assert_array_equal(a.agents.pos, b.agents.pos)
        for agent in range(6):
            assert dict(a.blackboard(agent)) == dict(b.blackboard(agent))
