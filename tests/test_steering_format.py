"""The steering library in the file format: schema tags, documented parameters, whole runs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from behaviortk import load_text, registry
from behaviortk.format.schema import json_schema
from behaviortk.sim.simulation import Simulation

PRIMITIVES = [
    "seek",
    "flee",
    "arrive",
    "pursuit",
    "evade",
    "wander",
    "face",
    "look_where_you_are_going",
    "align",
    "velocity_match",
    "separation",
    "alignment",
    "cohesion",
    "obstacle_avoidance",
    "lj_avoidance",
    "wall_avoidance",
    "hide",
    "interpose",
    "offset_pursuit",
    "path_following",
    "containment",
]
COMBINERS = ["blend", "prioritized_sum", "prioritized_dither", "first_nonzero"]
PREDICTORS = ["linear", "capped", "intercept"]


def test_schema_contains_every_tag():
    """Issue 3 'done when': the schema names every primitive, combiner and predictor."""
    text = json.dumps(json_schema())
    assert set(PRIMITIVES) <= set(registry.default().primitives.tags())
    assert set(COMBINERS) <= set(registry.default().combiners.tags())
    assert set(PREDICTORS) <= set(registry.default().predictors.tags())
    for tag in PRIMITIVES + COMBINERS + PREDICTORS:
        assert f'"{tag}"' in text, tag


@pytest.mark.parametrize(
    "model",
    [
        *registry.default().primitives.models(),
        *registry.default().combiners.models(),
        *registry.default().predictors.models(),
    ],
    ids=lambda m: registry.tag_of(m),
)
def test_every_parameter_documented_with_default(model):
    for name, field in model.model_fields.items():
        if name == "type":
            continue
        assert field.description, f"{registry.tag_of(model)}.{name} has no description"
        if field.default is not None and not field.is_required() and field.default_factory is None:
            assert "Default:" in field.description, f"{registry.tag_of(model)}.{name}"


EVERYTHING = {
    "name": "all_primitives",
    "world": {"width": 400, "height": 300, "edges": "wrap", "seed": 3},
    "obstacles": [{"at": [200, 150], "radius": 20}, {"at": [100, 100], "radius": 10}],
    "walls": [{"from": [50, 250], "to": [350, 250]}],
    "paths": [{"name": "loop", "points": [[50, 50], [350, 50], [350, 200]], "looped": True}],
    "groups": [
        {
            "name": "leader",
            "count": 2,
            "spawn": {"kind": "area", "min": [0, 0], "max": [400, 300]},
            "speed": 20,
            "max_speed": 60,
            "max_force": 150,
            "radius": 5,
            "view_distance": 80,
            "fov": 270,
            "tree": "lead",
        },
        {
            "name": "crowd",
            "count": 12,
            "spawn": {"kind": "area", "min": [0, 0], "max": [400, 300]},
            "speed": 20,
            "max_speed": 70,
            "max_force": 150,
            "radius": 4,
            "view_distance": 60,
            "fov": 300,
            "tree": "crowd",
        },
    ],
    "trees": {
        "lead": {"root": {"type": "path_following", "target": {"kind": "path", "path": "loop"}}},
        "crowd": {
            "root": {
                "type": "parallel",
                "policy": "success_on_all",
                "children": [
                    {"type": "seek", "target": {"kind": "point", "at": [10, 10]}, "weight": 0.1},
                    {
                        "type": "flee",
                        "target": {"kind": "nearest", "group": "leader"},
                        "weight": 0.1,
                    },
                    {
                        "type": "arrive",
                        "target": {"kind": "point", "at": [200, 100]},
                        "weight": 0.1,
                    },
                    {
                        "type": "arrive",
                        "target": {"kind": "point", "at": [200, 100]},
                        "deceleration": "fast",
                        "weight": 0.1,
                    },
                    {
                        "type": "pursuit",
                        "target": {"kind": "nearest", "group": "leader"},
                        "weight": 0.1,
                        "predictor": {"type": "intercept"},
                    },
                    {
                        "type": "evade",
                        "target": {"kind": "nearest", "group": "leader"},
                        "weight": 0.1,
                        "predictor": {"type": "capped", "max_prediction": 2},
                    },
                    {"type": "wander", "weight": 0.3},
                    {"type": "face", "target": {"kind": "nearest", "group": "leader"}},
                    {"type": "look_where_you_are_going"},
                    {"type": "align", "target": {"kind": "nearest", "group": "crowd"}},
                    {
                        "type": "velocity_match",
                        "target": {"kind": "nearest", "group": "crowd"},
                        "weight": 0.1,
                    },
                    {
                        "type": "prioritized_dither",
                        "probabilities": [0.5, 0.9],
                        "children": [{"type": "obstacle_avoidance"}, {"type": "wall_avoidance"}],
                    },
                    {
                        "type": "first_nonzero",
                        "children": [
                            {"type": "lj_avoidance"},
                            {"type": "hide", "target": {"kind": "nearest", "group": "leader"}},
                        ],
                    },
                    {
                        "type": "prioritized_sum",
                        "children": [
                            {
                                "type": "interpose",
                                "target": {"kind": "agent", "id": "leader-0"},
                                "other": {"kind": "agent", "id": "leader-1"},
                            },
                            {
                                "type": "offset_pursuit",
                                "target": {"kind": "agent", "id": "leader-0"},
                                "offset": [-20, 10],
                            },
                        ],
                    },
                    {
                        "type": "blend",
                        "children": [
                            {"type": "separation", "weight": 100},
                            {"type": "alignment"},
                            {"type": "cohesion", "of": "any"},
                            {"type": "containment", "rect": [[20, 20], [380, 280]]},
                        ],
                    },
                ],
            }
        },
    },
}


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_every_primitive_runs_in_a_simulation(engine):
    """All primitives, combiners and predictors together: 60 ticks, finite state, geometry recorded."""
    sim = Simulation(load_text(json.dumps(EVERYTHING), "everything.json"), engine, debug=True)
    sim.run(60)
    ag = sim.agents
    for arr in (ag.pos, ag.vel, ag.orientation, ag.rotation):
        assert np.isfinite(arr).all()
    assert (np.linalg.norm(ag.vel, axis=1) <= ag.max_speed + 1e-9).all()
    kinds = {r.kind for r in sim.debug.records}
    assert {"crosshair", "wander", "waypoint", "potential"} <= kinds
    assert sim.memory[("leader", 0)]["waypoint"].max() >= 0
    assert len(sim.contributions["crowd"]) == 15
