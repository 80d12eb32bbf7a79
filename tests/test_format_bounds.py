"""Definitions that validate must run: every number of the format is bounded (issue 23, item 5).

A world of 2^64 by 600 validated and then hung ``run``; a dt of 5e-324 validated
and then made a moved player's velocity inf and its heading nan. Every numeric
field now has both bounds (``format/limits.py`` says why each), checked when
loading with a located, one-line error naming the value and the limit; values
at the bounds load and run.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

import annotated_types
import numpy as np
import pytest
from engine_support import definition
from pydantic import BaseModel

import behaviortk
from behaviortk import registry
from behaviortk.format.definition import Definition
from behaviortk.format.group import AreaSpawn, PositionsSpawn, RingSpawn
from behaviortk.format.limits import (
    MAX_CHECK_TICK,
    MAX_COORD,
    MAX_COUNT,
    MAX_DT,
    MAX_LJ_EXPONENT,
    MAX_MAGNITUDE,
    MAX_PATH_POINTS,
    MAX_SEED,
    MAX_WORLD_SIDE,
    MIN_DT,
    MIN_POSITIVE,
    MIN_WORLD_SIDE,
)
from behaviortk.format.nodes import SLOTS, slot_models
from behaviortk.format.world import CircleZone, RectZone
from behaviortk.sim.simulation import Simulation

LOWER = (annotated_types.Ge, annotated_types.Gt)
UPPER = (annotated_types.Le, annotated_types.Lt)


def all_models() -> set[type[BaseModel]]:
    """Every model a definition can hold: the file's own and every registered node, target,
    predictor and check."""
    found: set[type[BaseModel]] = set()
    todo: list[Any] = [Definition, AreaSpawn, PositionsSpawn, RingSpawn, CircleZone, RectZone]
    regs = registry.default()
    for slot in SLOTS:
        todo.extend(slot_models(slot, regs).values())
    while todo:
        model = todo.pop()
        if model in found:
            continue
        found.add(model)
        for field in model.model_fields.values():
            todo.extend(_models(field.annotation))
    return found


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def unbounded(annotation: Any, metadata: list[Any]) -> list[str]:
    """The int and float types inside ``annotation`` lacking a lower or an upper bound."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *extra = typing.get_args(annotation)
        flat = [x for m in extra for x in getattr(m, "metadata", [m])]
        return unbounded(inner, metadata + flat)
    if origin is typing.Literal:
        return []
    if annotation in (int, float):
        low = any(isinstance(m, LOWER) for m in metadata)
        high = any(isinstance(m, UPPER) for m in metadata)
        return (
            []
            if low and high
            else [
                f"{annotation.__name__} without {'' if low else 'lower '}{'' if high else 'upper '}bound"
            ]
        )
    if origin is dict:
        return unbounded(typing.get_args(annotation)[1], [])  # keys are strings
    # a field's own bounds apply to each branch of a union (``int | None``), not to items
    inherited = metadata if origin in (typing.Union, types.UnionType) else []
    return [p for arg in typing.get_args(annotation) for p in unbounded(arg, inherited)]


def test_every_numeric_field_of_every_model_has_both_bounds() -> None:
    models = all_models()
    assert len(models) > 80  # the walk reached the registered nodes
    missing = [
        f"{model.__name__}.{name}: {problem}"
        for model in models
        for name, field in model.model_fields.items()
        for problem in unbounded(field.annotation, list(field.metadata))
    ]
    assert missing == []


def test_the_walk_sees_a_missing_bound() -> None:
    class Loose(BaseModel):
        n: int
        x: typing.Annotated[float, annotated_types.Ge(0)] | None

    problems = [p for f in Loose.model_fields.values() for p in unbounded(f.annotation, [])]
    assert problems == ["int without lower upper bound", "float without upper bound"]


def issues_of(data: dict[str, Any]) -> list[str]:
    with pytest.raises(behaviortk.DefinitionError) as err:
        behaviortk.load_text(json.dumps(data, indent=1), "x.json")
    return [str(i) for i in err.value.issues]


def base() -> dict[str, Any]:
    return definition({"type": "wait", "duration": 1})


def with_world(**world: Any) -> dict[str, Any]:
    data = base()
    data["world"].update(world)
    return data


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"width": 2**64}, "/world/width: must be <= 10000000.0, got 18446744073709551616"),
        ({"height": 1e300}, "/world/height: must be <= 10000000.0, got 1e+300"),
        ({"width": 0.5}, "/world/width: must be >= 1.0, got 0.5"),
        ({"dt": 5e-324}, "/world/dt: must be >= 1e-06, got 5e-324"),
        ({"dt": 1.5}, "/world/dt: must be <= 1.0, got 1.5"),
        ({"seed": 2**63}, "/world/seed: must be <= 9223372036854775807, got 9223372036854775808"),
    ],
)
def test_world_bounds_are_located_one_line_errors(change: dict[str, Any], expected: str) -> None:
    (issue,) = issues_of(with_world(**change))
    assert issue.startswith("x.json:") and "\n" not in issue
    assert issue.split(": ", 1)[1].startswith(expected)


def test_the_world_bounds_are_the_limits() -> None:
    assert (MIN_WORLD_SIDE, MAX_WORLD_SIDE, MIN_DT, MAX_DT) == (1.0, 1e7, 1e-6, 1.0)
    assert MAX_SEED == 2**63 - 1


def group_issue(**fields: Any) -> str:
    data = base()
    data["groups"][0].update(fields)
    issues = [i.split(": ", 1)[1] for i in issues_of(data)]
    return next(i for i in issues if "/groups/0/" in i)  # the field's own issue


def test_group_numbers_are_bounded() -> None:
    assert (
        group_issue(mass=5e-324)
        == "/groups/0/mass: must be >= 1e-06, got 5e-324 [greater_than_equal]"
    )
    assert group_issue(max_speed=1e300) == (
        "/groups/0/max_speed: must be <= 1000000000.0, got 1e+300 [less_than_equal]"
    )
    assert group_issue(view_distance=2e9).startswith(
        "/groups/0/view_distance: must be <= 1000000000.0"
    )
    assert group_issue(heading=-1e10).startswith("/groups/0/heading: must be >= -1000000000.0")
    assert group_issue(count=10**8).startswith(
        "/groups/0/count: must be <= 10000000, got 100000000"
    )
    assert group_issue(spawn={"kind": "ring", "center": [2e9, 0], "radius": 1}) == (
        "/groups/0/spawn/center/0: must be <= 1000000000.0, got 2000000000.0 [less_than_equal]"
    )
    assert group_issue(params={"big": 1e300}).startswith(
        "/groups/0/params/big: must be <= 1000000000.0"
    )


def node_issue(root: dict[str, Any]) -> str:
    (issue,) = issues_of(definition(root))
    return issue.split(": ", 1)[1]


def test_node_numbers_are_bounded() -> None:
    lj = {"type": "lj_avoidance", "m": 100}
    assert node_issue(lj) == "/trees/main/root/m: must be <= 12.0, got 100 [less_than_equal]"
    repeat = {"type": "repeat", "num_success": 2**31, "child": {"type": "wait", "duration": 1}}
    assert node_issue(repeat).startswith(
        "/trees/main/root/num_success: must be <= 2147483647, got 2147483648"
    )
    seek = {"type": "seek", "target": {"kind": "point", "at": [0, -1e10]}}
    assert node_issue(seek).startswith("/trees/main/root/target/at/1: must be >= -1000000000.0")
    flow = {"type": "flow", "target": {"kind": "point", "at": [1, 1]}, "cell_size": 1e-300}
    assert node_issue(flow).startswith("/trees/main/root/cell_size: must be >= 1e-06, got 1e-300")
    assert node_issue({"type": "wait", "duration": 1e300}).startswith(
        "/trees/main/root/duration: must be <= 1000000000.0, got 1e+300"
    )


def test_paths_checks_and_blackboards_are_bounded() -> None:
    data = base()
    data["paths"] = [{"name": "p", "points": [[0, 0]] * (MAX_PATH_POINTS + 1)}]
    (issue,) = issues_of(data)
    assert ": /paths/0/points: needs at most 10000 item(s), got 10001 [too_long]" in issue
    data = base()
    data["checks"] = [
        {"name": "c", "metric": "mean_speed", "group": "a", "to_tick": 10**7, "op": ">", "value": 0}
    ]
    (issue,) = issues_of(data)
    assert ": /checks/0/to_tick: must be <= 1000000, got 10000000" in issue
    data = definition(
        {"type": "wait", "duration": 1}, blackboard={"k": {"type": "number", "default": -1e300}}
    )
    (issue,) = issues_of(data)
    assert ": /trees/main/blackboard/k/default: must be >= -1000000000.0" in issue


def test_limits_hold_together() -> None:
    assert MAX_COORD == 100 * MAX_WORLD_SIDE
    assert MAX_COUNT == 2**31 - 1 and MAX_CHECK_TICK == 10**6
    # the engines' worst quotient and product stay finite with room to spare
    assert MAX_MAGNITUDE / MIN_POSITIVE * MAX_MAGNITUDE < 1e30
    assert (MAX_COORD / MIN_POSITIVE) ** MAX_LJ_EXPONENT < 1e300  # lj d^m
    assert 0.01**MAX_LJ_EXPONENT > 0 and MAX_MAGNITUDE / 0.01**MAX_LJ_EXPONENT < 1e300


def test_json_infinities_and_overflowing_literals_are_refused() -> None:
    text = json.dumps(base())
    for literal, kind in (("-Infinity", "json_nan"), ("1e400", "json_number"), ("NaN", "json_nan")):
        bad = text.replace('"duration": 1}', f'"duration": {literal}}}', 1)
        with pytest.raises(behaviortk.DefinitionError) as err:
            behaviortk.load_text(bad, "x.json")
        (issue,) = err.value.issues
        assert issue.kind == kind and issue.line == 1 and issue.col > 1


def extreme_world(
    width: float, height: float, dt: float, view: float = MAX_MAGNITUDE
) -> dict[str, Any]:
    """A flock (neighbour queries) and an external player at the format's extremes."""
    flock = {"type": "blend", "children": [{"type": "separation"}, {"type": "cohesion"}]}
    data = definition(flock, count=20, dt=dt)
    data["world"].update(width=width, height=height, edges="wrap")
    data["groups"][0]["spawn"] = {"kind": "area", "min": [0, 0], "max": [width, height]}
    data["groups"][0]["view_distance"] = view
    data["groups"].append(
        {
            "name": "player",
            "count": 1,
            "control": "external",
            "spawn": {"kind": "positions", "points": [[0, 0]]},
        }
    )
    return data


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
@pytest.mark.parametrize("view", [MIN_POSITIVE, MAX_MAGNITUDE])  # many cells, or one
@pytest.mark.parametrize(
    ("width", "height"), [(MAX_WORLD_SIDE, MIN_WORLD_SIDE), (MIN_WORLD_SIDE, MAX_WORLD_SIDE)]
)
def test_a_long_thin_world_at_the_bounds_runs_at_once(
    engine: str, view: float, width: float, height: float
) -> None:
    data = extreme_world(width, height, MIN_DT, view)
    scenario = behaviortk.load_text(json.dumps(data), "x.json")
    sim = Simulation(scenario, engine=engine)
    for _ in range(3):  # it used to never return (grid_shape counted cells down one by one)
        sim.step()
    assert np.isfinite(sim.agents.pos).all() and np.isfinite(sim.agents.vel).all()


def test_a_moved_player_keeps_a_finite_velocity_and_heading_at_the_shortest_dt() -> None:
    data = extreme_world(MAX_WORLD_SIDE, MAX_WORLD_SIDE, MIN_DT)
    data["world"]["edges"] = "contain"
    sim = Simulation(behaviortk.load_text(json.dumps(data), "x.json"), engine="batch")
    player = 20  # the first 20 ids are the flock's
    (row,) = sim.rows_of([player])
    sim.move(player, [MAX_WORLD_SIDE, MAX_WORLD_SIDE])  # across the whole world in one tick
    sim.step()
    vel, heading = sim.agents.vel[row], sim.agents.heading[row]
    assert np.isfinite(vel).all() and np.isfinite(heading).all()
    assert vel[0] == pytest.approx(MAX_WORLD_SIDE / MIN_DT)
    assert heading == pytest.approx([2**-0.5, 2**-0.5])
