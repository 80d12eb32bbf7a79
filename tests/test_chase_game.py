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
    game.update(1.0)  # no key yet: the round has not started, nothing moves
    assert game.sim.tick == 0 and game.score == 0.0
    game.press("right")
    for _ in range(30):
        game.update(1 / 60)
    moved = game.sim.agents.pos[0] - start
    np.testing.assert_allclose(moved, [chase_game.PLAYER_SPEED * 0.5, 0.0], atol=1e-9)
    game.held = {"right", "up"}  # diagonal: same speed
    game.update(0.1)
    np.testing.assert_allclose(np.hypot(*game.sim.agents.vel[0]), chase_game.PLAYER_SPEED)


def test_a_frame_draws_the_world_as_the_viewer_does_and_shows_the_catch() -> None:
    """The player in its colour where the viewer's viewport puts it; before the first key
    the start line, after the catch the hunter's name and a ring where it happened."""
    import arcade
    from viewer_support import window

    from behaviortk.viewer.scene import ViewOptions

    win = window()
    game = chase_game.ChaseGame.new("batch")
    screen = chase_game.Screen(win)
    screen.draw(game)
    image = np.asarray(arcade.get_image(0, 0, *win.get_size()).convert("RGB"))
    vp = screen.painter.viewport(game.sim.world, ViewOptions())
    x, y = vp.to_screen(game.sim.agents.pos[0]).round().astype(int)
    r = int(game.sim.agents.radius[0] * vp.scale)
    body = image[win.height - 1 - y - r : win.height - y + r, x - r : x + r + 1]
    assert (body == (0xFF, 0xD2, 0x4A)).all(axis=2).sum() > r * r  # its disc, in its colour
    assert [t.text for t in screen.labels][1] == "press an arrow key or WASD to start"
    chase_game.play_scripted(game, run_for=6.0)
    screen.draw(game)
    hunter = chase_game.caught_by(game)
    assert hunter.startswith("hunters") and game.catch is not None
    assert screen.labels[1].text.startswith(f"CAUGHT by {hunter} at {game.score:.1f} s")
    image = np.asarray(arcade.get_image(0, 0, *win.get_size()).convert("RGB"))
    cx, cy = vp.to_screen(np.asarray(game.caught_at, dtype=float))
    ring = 6.0 * vp.scale + 6.0
    px, py = round(float(cx + ring)), round(float(cy))
    r, g, b = image[win.height - 1 - py, px - 1 : px + 2].max(axis=0)
    assert r > 200 and g < 120, (r, g, b)  # the red ring round the catch
    # the status lines sit on a translucent plate (PLATE, darker than the window's
    # background and the world's floor, whichever lies under that corner at this size)
    from behaviortk.viewer import palette

    plate = image[win.height - 1 - 31, 14].astype(int)  # inside the plate, left of the text
    under = np.minimum(palette.BACKGROUND[:3], palette.WORLD_FLOOR[:3])
    assert (plate < under).all() and (plate >= np.array(chase_game.PLATE[:3])).all(), plate
