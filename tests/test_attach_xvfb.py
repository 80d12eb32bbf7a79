"""``behaviortk attach`` in a real window (Xvfb, xdotool, screenshots) on a game in another process.

The game (``tests/attach_game.py --real-time``) serves the approach scene of
``tests/test_viewer_breaks_xvfb.py`` and calls ``step()`` once per ``dt`` of the clock: one
guard heads for (700, 300), and when it comes within 120 of the intruder (about 8 s in)
"chase" starts to run. The window attaches; the test pauses the game (space), clicks the
guard where the screenshot shows it, clicks "chase" in the tree panel the game's statuses
fill, presses ``b`` (the game's breakpoint: a red dot once it answers), resumes, and waits
until the game holds at the hit: the world stops, the status line says why. Then the game
is killed and the window says it has gone, still drawing the last frame.
``BEHAVIORTK_SHOTS=dir`` keeps the screenshots.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from behaviortk.viewer import palette
from behaviortk.viewer.layout import PANEL_WIDTH, make_layout
from behaviortk.viewer.painter import NOTE_HEIGHT
from behaviortk.viewer.tree_layout import BOX_H, layout_tree
from tests.test_attach import game_process
from tests.test_viewer_breaks_xvfb import CHASE, GUARD, SCENE, _tree, still
from tests.test_viewer_xvfb import count, keep, region
from tests.xvfb_support import ViewerProcess, XServer, xvfb_missing

pytestmark = [
    pytest.mark.xvfb,
    pytest.mark.skipif(xvfb_missing() is not None, reason=f"{xvfb_missing()} is not installed"),
]
TABS = ("tree", "info", "history")  # no Tune tab: the definition runs in the game


@pytest.fixture
def attached(tmp_path: Path):
    path = tmp_path / "approach.json"
    path.write_text(json.dumps(SCENE, indent=2))
    game, port = game_process(tmp_path, 10**6, "--wait-viewer", "--real-time", definition=str(path))
    try:
        server = XServer()
        try:
            where = f"127.0.0.1:{port}"
            v = ViewerProcess(server, where, command="attach", log=tmp_path / "attach.log")
            try:
                yield v, game, where
            finally:
                v.stop()
        finally:
            server.stop()
    finally:
        game.kill()
        game.wait(10)


def centre_of(img: np.ndarray, rgb: tuple[int, ...], box: tuple[float, ...]) -> tuple[float, float]:
    """Viewer coordinates (y up) of the middle of the pixels of colour ``rgb`` inside ``box``."""
    part = region(img, *box)
    ys, xs = np.nonzero(np.all(np.abs(part.astype(int) - rgb) <= 3, axis=-1))
    return box[0] + float(xs.mean()), box[3] - float(ys.mean())


def test_attach_window_selects_breaks_holds_the_game_and_outlives_it(attached) -> None:
    v, game, where = attached
    lay = make_layout(v.width, v.height, 2, PANEL_WIDTH, TABS)
    world = (lay.world.x0, lay.world.y0 + NOTE_HEIGHT + 2, lay.world.x1, lay.world.y1)
    v.wait_for(lambda img: count(img, GUARD) > 300, "the game's guard drawn")
    v.key("space")  # the game holds inside step()
    img = still(v, world, "the world held by space")
    v.click(*centre_of(img, GUARD, world))  # the guard: the game now sends its facts
    panel = lay.content
    body = (panel.x0, panel.y0, panel.x1, panel.y1 - 44)
    v.wait_for(lambda img: count(region(img, *body), palette.NODE_RUNNING, 0) > 500, "its tree")
    rows = layout_tree(_tree())
    x = panel.x0 + 8 + rows.x[CHASE]
    top = panel.y1 - 44 - 8 - rows.y[CHASE]
    v.click(x + 25, top - BOX_H / 2)
    v.wait_for(
        lambda img: count(region(img, *body), palette.NODE_SELECTED, 0) > 40, "chase selected"
    )
    v.key("b")
    dot = (x - 8, top - 8, x + 10, top + 8)
    keep(v.wait_for(lambda img: count(region(img, *dot), palette.BREAKPOINT, 0) > 40, "dot"), "ab")
    v.key("space")  # resumed: the game runs on to the hit and holds there
    band = (lay.world.x0, 0, lay.world.x1, NOTE_HEIGHT)

    def noted(img: np.ndarray) -> bool:
        return count(region(img, *band), palette.NOTE_BG, 0) > 0.5 * lay.world.x1 * NOTE_HEIGHT

    v.wait_for(noted, "the game held at the breakpoint, the status line shown")
    img = still(v, world, "the world stopped at the hit")
    keep(img, "attach_hit")
    chase_box = (x + 4, top - BOX_H + 3, x + 40, top - 3)
    assert count(region(img, *chase_box), palette.NODE_RUNNING, 0) > 100  # it runs now
    assert count(region(img, *dot), palette.BREAKPOINT, 0) > 40
    assert count(region(img, *band), palette.TEXT, 40) > 100  # the status line's words
    assert game.poll() is None  # the game goes on calling step(), held
    game.kill()
    game.wait(10)
    banner = (0, 0, lay.world.x1, 40)
    img = v.wait_for(
        lambda img: count(region(img, *banner), palette.ERROR_BG, 0) > 2000, "the game gone"
    )
    keep(img, "attach_gone")
    assert count(img, GUARD) > 300  # the last frame stays
    assert v.proc.poll() is None  # the window too
    assert where in v.xdotool("getwindowname", v.window)
