"""Game-driven bodies: groups with ``"control": "external"`` are placed by the game."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import behaviortk
from behaviortk.errors import SimulationError
from behaviortk.sim.simulation import Simulation


def chase() -> dict[str, Any]:
    return {
        "name": "chase",
        "world": {"width": 400, "height": 400, "edges": "contain", "dt": 0.1, "seed": 2},
        "groups": [
            {
                "name": "player",
                "count": 1,
                "control": "external",
                "speed": 0,
                "heading": 0,
                "spawn": {"kind": "positions", "points": [[200, 200]]},
            },
            {
                "name": "hunters",
                "count": 3,
                "max_speed": 50,
                "tree": "hunt",
                "spawn": {"kind": "positions", "points": [[20, 20], [380, 20], [20, 380]]},
            },
        ],
        "trees": {
            "hunt": {"root": {"type": "pursuit", "target": {"kind": "nearest", "group": "player"}}}
        },
    }


def sims() -> list[Simulation]:
    scenario = behaviortk.load_text(json.dumps(chase()), "chase.json")
    return [Simulation(scenario, engine=e) for e in ("py_trees", "batch")]


def test_the_integrator_leaves_external_agents_where_the_game_put_them() -> None:
    for sim in sims():
        sim.run(5)
        assert sim.agents.pos[0].tolist() == [200.0, 200.0]
        sim.move(0, [210, 200])
        assert sim.agents.vel[0].tolist() == [100.0, 0.0]  # (10, 0) / dt 0.1
        sim.step()
        assert sim.agents.pos[0].tolist() == [210.0, 200.0]
        assert sim.agents.heading[0].tolist() == [1.0, 0.0]
        sim.move(0, [220, 200], vel=[0, 5])
        assert sim.agents.vel[0].tolist() == [0.0, 5.0]


def test_hunters_chase_the_player_the_same_on_both_engines() -> None:
    ref, batch = sims()
    for tick in range(100):  # the player circles at 15 units/s; hunters run at 50
        target = [200 + 60 * np.cos(tick / 40), 200 + 60 * np.sin(tick / 40)]
        for sim in (ref, batch):
            sim.move(0, target)
            sim.step()
        assert np.array_equal(ref.agents.pos, batch.agents.pos)
    gap = np.hypot(*(ref.agents.pos[1:] - ref.agents.pos[0]).T)
    assert gap.max() < 30.0  # from 180-300 units away they closed in
    assert ref.active_names(1) == ["pursuit"] and ref.active_names(0) == []


def test_moving_an_agent_its_tree_moves_is_refused() -> None:
    sim = sims()[0]
    with pytest.raises(
        SimulationError, match=r"group .hunters., which its tree moves; .*external groups: player"
    ):
        sim.move(1, [0, 0])
    with pytest.raises(SimulationError, match="pos must be"):
        sim.move(0, [np.inf, 0])
    assert sim.agents.pos[0].tolist() == [200.0, 200.0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"control": "external", "tree": "hunt"}, "an external group has no tree"),
        ({"control": "tree"}, "a group needs a `tree`"),
    ],
)
def test_control_and_tree_must_agree(change: dict[str, Any], message: str) -> None:
    data = chase()
    data["groups"][0].update(change)
    with pytest.raises(behaviortk.DefinitionError, match=message):
        behaviortk.load_text(json.dumps(data), "chase.json")
