"""A breakpoint set with ``b`` in the real viewer window (Xvfb, xdotool, screenshots).

One guard at (150, 300) heads for the point (700, 300) at 40 units/s ("patrol"); an
intruder stands at (600, 300). When the guard comes within 120 of it (about 8 s in),
"spot" succeeds and "chase" (node 3, ``guard/spot[0]/chase[1]``) starts to run. The test
pauses at once (space), selects the guard (tab), clicks "chase" in the tree panel, presses
``b`` (a red dot), resumes, and waits until the viewer pauses by itself at the hit: the
world stops, the status line at the bottom says why, the dot is still there.

``paused_at_breakpoint`` is the starting point of the step-back test (``,``, the history
ring): from the hit, ``,`` shows the tick before and ``.`` the hit again. The guard's
centre on screen is checked against the positions a headless run of the same scene had at
those ticks (the guard moves 0.67 units a tick, under a pixel: the test measures the
centroid of its disc, then steps back 30 ticks more for a move plain to see).
``BEHAVIORTK_SHOTS=dir`` keeps the screenshots.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from behaviortk.viewer import palette
from behaviortk.viewer.layout import PANEL_WIDTH, TABS, make_layout
from behaviortk.viewer.painter import NOTE_HEIGHT
from behaviortk.viewer.tree_layout import BOX_H, layout_tree
from behaviortk.viewer.viewport import Viewport
from tests.test_viewer_xvfb import count, keep, region
from tests.xvfb_support import ViewerProcess, XServer, xvfb_missing

pytestmark = [
    pytest.mark.xvfb,
    pytest.mark.skipif(xvfb_missing() is not None, reason=f"{xvfb_missing()} is not installed"),
]

GUARD = (74, 163, 255)
SCENE = {
    "name": "approach",
    "world": {"width": 800, "height": 600, "edges": "contain", "dt": 0.0167, "seed": 1},
    "groups": [
        {
            "name": "guards",
            "count": 1,
            "spawn": {"kind": "positions", "points": [[150, 300]]},
            "heading": 0,
            "max_speed": 40,
            "radius": 14,
            "colour": "#4aa3ff",
            "tree": "guard",
        },
        {
            "name": "intruder",
            "count": 1,
            "spawn": {"kind": "positions", "points": [[600, 300]]},
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
                                "type": "in_range",
                                "name": "near",
                                "target": {"kind": "nearest", "group": "intruder"},
                                "radius": 120,
                            },
                            {
                                "type": "seek",
                                "name": "chase",
                                "target": {"kind": "nearest", "group": "intruder"},
                            },
                        ],
                    },
                    {
                        "type": "seek",
                        "name": "patrol",
                        "target": {"kind": "point", "at": [700, 300]},
                    },
                ],
            }
        },
        "idle": {"root": {"type": "wait", "duration": 100000}},
    },
}
CHASE = 3  # guard 0, spot 1, near 2, chase 3, patrol 4


@pytest.fixture
def viewer(tmp_path: Path):
    path = tmp_path / "approach.json"
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


def _tree():
    from behaviortk.format.adapters import validate_node
    from behaviortk.registry import default
    from behaviortk.tree.flat import flatten

    return flatten(validate_node(SCENE["trees"]["guard"]["root"], default()), default())


def still(v: ViewerProcess, world: tuple[float, float, float, float], what: str) -> np.ndarray:
    """A screenshot after which the world did not change for a second (the viewer paused)."""
    last = [v.screenshot()]

    def unchanged(img: np.ndarray) -> bool:
        same = np.array_equal(region(img, *world), region(last[0], *world))
        last[0] = img
        if not same:
            return False
        time.sleep(1.0)
        again = v.screenshot()
        return np.array_equal(region(again, *world), region(img, *world))

    return v.wait_for(unchanged, what)


def paused_at_breakpoint(v: ViewerProcess) -> np.ndarray:
    """Pause, select the guard, ``b`` on "chase", resume, and wait for the pause at the hit;
    returns the screenshot there (the viewer stays paused at the hit)."""
    lay = make_layout(v.width, v.height, 2, PANEL_WIDTH, TABS)
    world = (lay.world.x0, lay.world.y0 + NOTE_HEIGHT + 2, lay.world.x1, lay.world.y1)
    v.wait_for(lambda img: count(img, GUARD) > 300, "the guard drawn")
    v.key("space")
    still(v, world, "the world paused by space")
    v.key("Tab")  # the guard (row 0): its tree in the panel
    panel = lay.content
    rows = layout_tree(_tree())
    x = panel.x0 + 8 + rows.x[CHASE]
    top = panel.y1 - 44 - 8 - rows.y[CHASE]
    body = (panel.x0, panel.y0, panel.x1, panel.y1 - 44)
    v.wait_for(lambda img: count(region(img, *body), palette.NODE_RUNNING, 0) > 500, "the tree")
    v.click(x + 25, top - BOX_H / 2)  # "chase": selected
    v.wait_for(
        lambda img: count(region(img, *body), palette.NODE_SELECTED, 0) > 40, "chase selected"
    )
    v.key("b")
    dot = (x - 8, top - 8, x + 10, top + 8)
    keep(v.wait_for(lambda img: count(region(img, *dot), palette.BREAKPOINT, 0) > 40, "dot"), "b")
    v.key("space")
    band = (lay.world.x0, 0, lay.world.x1, NOTE_HEIGHT)

    def stopped(img: np.ndarray) -> bool:
        return count(region(img, *band), palette.NOTE_BG, 0) > 0.5 * lay.world.x1 * NOTE_HEIGHT

    v.wait_for(stopped, "the viewer paused at the breakpoint, the status line shown")
    img = still(v, world, "the world stopped at the hit")
    keep(img, "breakpoint_hit")
    return img


def test_b_sets_a_breakpoint_and_the_viewer_pauses_where_it_hits(viewer: ViewerProcess) -> None:
    img = paused_at_breakpoint(viewer)
    lay = make_layout(viewer.width, viewer.height, 2, PANEL_WIDTH, TABS)
    panel = lay.content
    rows = layout_tree(_tree())
    x = panel.x0 + 8 + rows.x[CHASE]
    top = panel.y1 - 44 - 8 - rows.y[CHASE]
    chase_box = (x + 4, top - BOX_H + 3, x + 40, top - 3)
    assert count(region(img, *chase_box), palette.NODE_RUNNING, 0) > 100  # it runs now
    assert count(region(img, x - 8, top - 8, x + 10, top + 8), palette.BREAKPOINT, 0) > 40
    band = region(img, lay.world.x0, 0, lay.world.x1, NOTE_HEIGHT)
    assert count(band, palette.TEXT, 40) > 100  # the status line's words
    guard = region(img, lay.world.x0, lay.world.y0, lay.world.x1, lay.world.y1)
    assert count(guard, palette.SELECTED, 0) > 40  # the guard selected (its ring)


def _run_to_the_hit() -> tuple[int, np.ndarray]:
    """The hit's tick and the guard's position at every tick up to it (a headless run)."""
    from behaviortk.format.loader import load_text
    from behaviortk.sim.simulation import Simulation

    sim = Simulation(load_text(json.dumps(SCENE), "approach"), engine="batch")
    sim.break_on(node="guard/spot[0]/chase[1]", status="RUNNING", group="guards")
    path = [sim.agents.pos[0].copy()]
    while sim.hit is None:
        sim.step()
        path.append(sim.agents.pos[0].copy())
    return sim.tick, np.array(path)


def _guard_centre(img: np.ndarray, lay) -> np.ndarray:
    """The centroid of the guard's disc (its colour's pixels), viewer coordinates (y up)."""
    w = lay.world
    part = region(img, w.x0, w.y0 + NOTE_HEIGHT + 2, w.x1, w.y1)
    ys, xs = np.nonzero(np.all(np.abs(part.astype(int) - GUARD) <= 3, axis=-1))
    assert xs.size > 300, "the guard is not on the screen"
    top = w.y1  # region's row 0 is the world's top
    return np.array([round(w.x0) + xs.mean() + 0.5, top - ys.mean() - 0.5])


def test_comma_steps_back_from_the_hit_and_period_comes_back(viewer: ViewerProcess) -> None:
    hit_tick, path = _run_to_the_hit()
    at_hit = paused_at_breakpoint(viewer)
    lay = make_layout(viewer.width, viewer.height, 2, PANEL_WIDTH, TABS)
    w = lay.world
    vp = Viewport(800, 600, w.x0, w.y0, w.width, w.height)
    screen = vp.to_screen(path)
    hud = (0, viewer.height - 26, 150, viewer.height)  # "tick N   t S.SSs"
    world = (w.x0, w.y0 + NOTE_HEIGHT + 2, w.x1, w.y1)
    c_hit = _guard_centre(at_hit, lay)
    assert np.hypot(*(c_hit - screen[hit_tick])) < 1.5  # the tick the headless run hit on

    viewer.key("comma")
    back = viewer.wait_for(
        lambda img: not np.array_equal(region(img, *hud), region(at_hit, *hud)), "the HUD's tick"
    )
    back = still(viewer, world, "the tick before shown")
    keep(back, "step_back_1")
    c_back = _guard_centre(back, lay)
    moved, expected = c_hit - c_back, screen[hit_tick] - screen[hit_tick - 1]
    assert 0.4 < np.hypot(*expected) < 1.5  # under a pixel or so: the centroid measures it
    assert np.hypot(*(moved - expected)) < 0.3

    viewer.key(*["comma"] * 30)
    far = viewer.wait_for(
        lambda img: np.hypot(*(_guard_centre(img, lay) - screen[hit_tick - 31])) < 1.5,
        "the guard where it was 31 ticks before the hit",
    )
    keep(far, "step_back_31")
    assert np.hypot(*(screen[hit_tick] - screen[hit_tick - 31])) > 15

    viewer.key(*["period"] * 31)
    again = viewer.wait_for(
        lambda img: np.array_equal(region(img, *hud), region(at_hit, *hud)), "the hit's tick again"
    )
    again = still(viewer, world, "the hit's tick shown again")
    keep(again, "step_forward_31")
    assert np.array_equal(region(again, *world), region(at_hit, *world))  # replayed exactly
