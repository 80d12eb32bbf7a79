"""The chase game in a real window (issue 28, item 9): nothing moves before a key, a key
starts the round, the hunters catch the still player and a ring marks the spot, Esc quits.

``examples/chase_game.py`` under Xvfb, typed into with xdotool, read from screenshots
(``xvfb_support``; ``BEHAVIORTK_SHOTS=dir`` keeps them).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from tests.test_viewer_xvfb import count, keep
from tests.xvfb_support import PATIENCE, ROOT, ViewerProcess, XServer, xvfb_missing

pytestmark = [
    pytest.mark.xvfb,
    pytest.mark.skipif(xvfb_missing() is not None, reason=f"{xvfb_missing()} is not installed"),
]

PLAYER = (0xFF, 0xD2, 0x4A)  # chase_game.json's colours
HUNTER = (0xE0, 0x52, 0x3F)
RING = (255, 80, 80)  # the catch ring (chase_game.Screen)


def test_a_key_starts_the_round_a_catch_is_ringed_and_esc_quits(tmp_path: Path) -> None:
    server = XServer()
    try:
        game = ViewerProcess(server, tmp_path / "chase", script=ROOT / "examples" / "chase_game.py")
        try:
            first = game.wait_for(
                lambda img: count(img, PLAYER, 2) > 30 and count(img, HUNTER, 2) > 30,
                "the player and the hunters drawn",
            )
            time.sleep(2.0)
            still = game.screenshot()
            keep(still, "chase_before_a_key")
            assert np.array_equal(first, still)  # the round waits for the player
            game.key("Right")  # pressed and released: the round starts, the player stops
            moved = game.wait_for(
                lambda img: not np.array_equal(img, still), "the hunters moving after a key"
            )
            keep(moved, "chase_started")
            caught = game.wait_for(lambda img: count(img, RING, 2) > 40, "the catch ring")
            keep(caught, "chase_caught")
            game.key("Escape")
            deadline = time.monotonic() + PATIENCE
            while game.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert game.proc.poll() == 0, game.log.read_text()[-2000:]
        finally:
            game.stop()
    finally:
        server.stop()
