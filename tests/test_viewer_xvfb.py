"""The viewer in a real window under Xvfb, driven with xdotool and checked on screenshots.

Two guards at (200, 150) and (200, 450) face +x; an intruder stands at (600, 150) and an
obstacle of radius 50 at (400, 300). Guard 0 sees the intruder (400 away, within its view
of 450 and 120 degrees, nothing between): it chases it at 1 unit/s. Guard 1's line to the
intruder passes through the obstacle's centre, and the intruder is 500 away: it wanders.
Everything moves slowly, so the positions below are where a person would click.

The window is 1360 x 800 at (0, 0): the side panel is the right 430 px, the 800 x 600 world
fits 914 x 758 px at scale min(914/800, 758/600) = 1.1425. ``BEHAVIORTK_SHOTS=dir`` keeps
the screenshots.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from behaviortk.viewer import palette
from behaviortk.viewer.layout import PANEL_WIDTH, TABS, make_layout
from behaviortk.viewer.tree_layout import BOX_H, layout_tree
from behaviortk.viewer.viewport import Viewport
from tests.xvfb_support import ViewerProcess, XServer, xvfb_missing

pytestmark = [
    pytest.mark.xvfb,
    pytest.mark.skipif(xvfb_missing() is not None, reason=f"{xvfb_missing()} is not installed"),
]

GUARD = (74, 163, 255)  # "#4aa3ff"
SCENE = {
    "name": "guards",
    "world": {"width": 800, "height": 600, "edges": "contain", "dt": 0.0167, "seed": 1},
    "obstacles": [{"at": [400, 300], "radius": 50}],
    "groups": [
        {
            "name": "guards",
            "count": 2,
            "spawn": {"kind": "positions", "points": [[200, 150], [200, 450]]},
            "heading": 0,
            "max_speed": 1,
            "radius": 14,
            "view_distance": 450,
            "fov": 120,
            "colour": "#4aa3ff",
            "tree": "guard",
        },
        {
            "name": "intruder",
            "count": 1,
            "spawn": {"kind": "positions", "points": [[600, 150]]},
            "radius": 14,
            "colour": "#e8504a",
            "tree": "idle",
        },
    ],
    "trees": {
        "guard": {
            "root": {
                "type": "selector",
                "name": "guard",
                "memory": False,
                "children": [
                    {
                        "type": "sequence",
                        "name": "spot",
                        "memory": False,
                        "children": [
                            {
                                "type": "can_see",
                                "name": "sees",
                                "target": {"kind": "nearest", "group": "intruder"},
                            },
                            {
                                "type": "seek",
                                "name": "chase",
                                "target": {"kind": "nearest", "group": "intruder"},
                            },
                        ],
                    },
                    {"type": "wander", "name": "patrol"},
                ],
            }
        },
        "idle": {"root": {"type": "wait", "duration": 100000}},
    },
}


def count(img: np.ndarray, rgb: tuple[int, ...], tol: int = 3) -> int:
    diff = np.abs(img.astype(np.int16) - np.array(rgb[:3], dtype=np.int16))
    return int(np.all(diff <= tol, axis=-1).sum())


def region(img: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    """Pixels of a rectangle given in viewer coordinates (y up)."""
    h = img.shape[0]
    return img[max(h - round(y1), 0) : h - round(y0), round(x0) : round(x1)]


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("xvfb")
    path = folder / "guards.json"
    path.write_text(json.dumps(SCENE, indent=2))
    server = XServer()
    try:
        v = ViewerProcess(server, path)
        try:
            yield v
        finally:
            v.stop()
    finally:
        server.stop()


def keep(img: np.ndarray, name: str) -> None:
    folder = os.environ.get("BEHAVIORTK_SHOTS")
    if folder:
        from PIL import Image

        Path(folder).mkdir(parents=True, exist_ok=True)
        Image.fromarray(img).save(Path(folder) / f"{name}.png")


def geometry(v: ViewerProcess):
    lay = make_layout(v.width, v.height, 2, PANEL_WIDTH, TABS)
    r = lay.world
    return lay, Viewport(800, 600, r.x0, r.y0, r.width, r.height)


def test_clicking_a_guard_shows_its_live_tree(viewer: ViewerProcess) -> None:
    lay, vp = geometry(viewer)
    assert (viewer.width, viewer.height) == (1360, 800) and vp.scale == pytest.approx(1.1425)
    viewer.wait_for(lambda img: count(img, GUARD) > 500, "the two guards drawn")
    x, y = vp.to_screen(np.array([200.0, 150.0]))
    viewer.click(x, y)
    panel = lay.content

    def tree_shown(img: np.ndarray) -> bool:
        box = region(img, panel.x0, panel.y0, panel.x1, panel.y1 - 44)
        return (
            count(box, palette.NODE_RUNNING, 0) > 1500 and count(box, palette.NODE_SUCCESS, 0) > 500
        )

    img = viewer.wait_for(
        tree_shown, "guard 0's tree with running (chase) and success (sees) boxes"
    )
    keep(img, "tree_panel")
    ring = region(img, x - 30, y - 30, x + 30, y + 30)
    assert count(ring, palette.SELECTED, 0) > 40  # the selection ring
    world = region(img, lay.world.x0, lay.world.y0, lay.world.x1, lay.world.y1)
    assert count(world, palette.SIGHT_CLEAR) > 100  # the selected guard's clear line of sight
    assert count(world, palette.SIGHT_BLOCKED) == 0


def test_the_sight_key_shows_every_guard_and_the_blocked_line(viewer: ViewerProcess) -> None:
    lay, _ = geometry(viewer)
    viewer.key("s")

    def both(img: np.ndarray) -> bool:
        """Guard 0's green (seen) ray, and guard 1's coloured by why it does not see."""
        world = region(img, lay.world.x0, lay.world.y0, lay.world.x1, lay.world.y1)
        unseen = (palette.SIGHT_BLOCKED, palette.SIGHT_OUT_OF_RANGE, palette.SIGHT_OUTSIDE_CONE)
        return (
            max(count(world, c) for c in unseen) > 100 and count(world, palette.SIGHT_CLEAR) > 100
        )

    try:
        keep(viewer.wait_for(both, "guard 1's unseen ray beside guard 0's green one"), "sight")
    finally:
        viewer.key("s")  # the overlay off again for the tests after this one


def test_folding_and_zooming_the_tree_panel(viewer: ViewerProcess) -> None:
    lay, _ = geometry(viewer)
    panel = lay.content
    rows = layout_tree(_guard_tree())
    # "spot" (node 1): its box's left part, below the 44 px header and 8 px padding
    sx = panel.x0 + 8 + rows.x[1] + 25
    sy = panel.y1 - 44 - 8 - rows.y[1] - BOX_H / 2

    def body(img: np.ndarray) -> np.ndarray:
        return region(img, panel.x0, panel.y0, panel.x1, panel.y1 - 44)

    before = viewer.screenshot()
    assert count(body(before), palette.NODE_SUCCESS, 0) > 500  # "sees"
    viewer.click(sx, sy)
    folded = viewer.wait_for(
        lambda img: count(body(img), palette.NODE_SUCCESS, 0) == 0, "spot folded: sees hidden"
    )
    keep(folded, "tree_folded")
    viewer.click(sx, sy)
    viewer.wait_for(lambda img: count(body(img), palette.NODE_SUCCESS, 0) > 500, "spot unfolded")
    running = count(body(viewer.screenshot()), palette.NODE_RUNNING, 0)
    viewer.wheel(sx, sy, 3)  # zoom in around "spot"
    zoomed = viewer.wait_for(
        lambda img: count(body(img), palette.NODE_RUNNING, 0) > 1.5 * running, "bigger boxes"
    )
    keep(zoomed, "tree_zoomed")
    viewer.key("0")  # fitted again


def _guard_tree():
    from behaviortk.format.adapters import validate_node
    from behaviortk.registry import default
    from behaviortk.tree.flat import flatten

    return flatten(validate_node(SCENE["trees"]["guard"]["root"], default()), default())


def test_a_slider_in_the_tune_tab_changes_the_running_guards(viewer: ViewerProcess) -> None:
    from behaviortk.viewer.layout import Rect
    from behaviortk.viewer.tuning import Tuner
    from behaviortk.viewer.tuning_panel import (
        BUTTON_W,
        FOOTER,
        HEADER,
        PAD,
        SCROLL_W,
        TuningPanel,
    )

    lay, _ = geometry(viewer)
    tab = lay.tab_rect(TABS.index("tune"))
    world = lambda img: region(img, lay.world.x0, lay.world.y0, lay.world.x1, lay.world.y1)  # noqa: E731
    before = count(world(viewer.screenshot()), GUARD)
    viewer.click((tab.x0 + tab.x1) / 2, (tab.y0 + tab.y1) / 2)
    knobs = Tuner("g.json", json.dumps(SCENE)).knobs(0)
    k = [knob.name for knob in knobs].index("radius")
    c = lay.content
    body = Rect(c.x0, c.y0 + FOOTER, c.x1, c.y1 - HEADER)
    y = TuningPanel().slider_ys(knobs, body)[k]  # rows grow with wrapped descriptions
    x0 = lay.content.x0 + PAD + BUTTON_W + 10
    x1 = lay.content.x1 - PAD - SCROLL_W - BUTTON_W - 10
    assert y > lay.content.y0 + FOOTER  # on screen without scrolling
    # radius 14 on a span of 0.056..28: its knob is at half the track; drag it to the end.
    viewer.drag(x0 + 0.5 * (x1 - x0), y, x1 + 5, y)
    img = viewer.wait_for(
        lambda img: count(world(img), GUARD) > 3 * before, "guards drawn at twice the radius"
    )
    keep(img, "tuning_panel")
