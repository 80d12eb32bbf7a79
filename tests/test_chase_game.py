"""examples/chase_game.py: the embedding API in a small game, played with scripted input."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import chase_game


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_a_scripted_round_runs_spawns_and_ends_on_contact(engine: str) -> None:
    game = chase_game.play_scripted(chase_game.ChaseGame.new(engine), run_for=6.0)
    assert game.over  # a hunter's emit node raised "caught"
    assert 6.0 < game.score < 30.0
    assert game.hunters == 2 + int(game.score // chase_game.SPAWN_EVERY)
    caught = [e for e in game.sim.events if e.name == "caught"]
    assert caught and all(game.sim.agents.group_names[1] == "hunters" for _ in caught)
    score = game.score
    game.update(1.0)  # the round is over: nothing moves any more
    assert game.score == score


def test_the_keyboard_moves_the_player_the_world_does_not() -> None:
    game = chase_game.ChaseGame.new("batch")
    start = game.sim.agents.pos[0].copy()
    game.held = {"right"}
    for _ in range(30):
        game.update(1 / 60)
    moved = game.sim.agents.pos[0] - start
    np.testing.assert_allclose(moved, [chase_game.PLAYER_SPEED * 0.5, 0.0], atol=1e-9)
    game.held = {"right", "up"}  # diagonal: same speed
    game.update(0.1)
    np.testing.assert_allclose(np.hypot(*game.sim.agents.vel[0]), chase_game.PLAYER_SPEED)


def test_a_frame_shows_the_player_in_its_colour() -> None:
    import arcade
    from viewer_support import window

    win = window()
    game = chase_game.ChaseGame.new("batch")
    win.clear()
    chase_game.draw(game)
    image = np.asarray(arcade.get_image(0, 0, *win.get_size()).convert("RGB"))
    scale = min(win.width / 800, win.height / 600)
    x, y = (game.sim.agents.pos[0] * scale).round().astype(int)
    assert tuple(image[win.height - 1 - y, x]) == (0xFF, 0xD2, 0x4A)
