"""Zones and can_see overlays, drawn headless and checked pixel by pixel.

The world of ``engine_support.definition`` is 400 x 400 in a 1000 x 600 window
minus the 430 px panel, 26 px HUD and 8 px margins: scale min(554/400, 558/400) = 1.385.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from engine_support import definition, other_group

from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation
from behaviortk.viewer import palette
from behaviortk.viewer.scene import ViewOptions
from behaviortk.viewer.sight_cones import sights
from behaviortk.world.factory import make_agents
from behaviortk.world.state import World, Zone
from tests.viewer_support import count_color, draw, fake_sim, pixel_at

LOOK = {
    "type": "can_see",
    "target": {"kind": "nearest", "group": "intruder"},
    "distance": 250,
    "fov": 90,
}


def guards(root: dict[str, Any] = LOOK) -> Simulation:
    """Guard 0 at (100, 100) and guard 1 at (100, 300), both facing +x; intruders 200 ahead
    of each; an obstacle of radius 20 at (200, 100) sits on guard 0's line only."""
    data = definition(
        root,
        count=2,
        positions=[[100, 100], [100, 300]],
        others=[other_group("intruder", [[300, 100], [300, 300]])],
    )
    data["obstacles"] = [{"at": [200, 100], "radius": 20}]
    return Simulation(load_text(json.dumps(data), "guards.json"), debug=True)


def around(img: np.ndarray, screen_xy: np.ndarray, half: int = 3) -> np.ndarray:
    """The pixels within ``half`` of a screen point (y up): a 2 px line lands in it."""
    x, y = round(float(screen_xy[0])), img.shape[0] - 1 - round(float(screen_xy[1]))
    return img[y - half : y + half + 1, x - half : x + half + 1]


def test_sights_resolve_targets_and_blocking_by_hand() -> None:
    sim = guards()
    marked = np.ones(sim.agents.n, dtype=bool)
    [s] = sights(sim, marked)
    assert s.rows.tolist() == [0, 1]  # only group a has a can_see node
    np.testing.assert_allclose(s.target, [[300, 100], [300, 300]])
    # (100,100) -> (300,100) passes 0 from the obstacle centre < 20: blocked; y=300 is clear.
    assert s.blocked.tolist() == [True, False]
    np.testing.assert_allclose(s.reach, [250, 250])
    np.testing.assert_allclose(s.fov, [np.pi / 2, np.pi / 2])


def test_a_guard_condition_counts_as_a_can_see_node() -> None:
    root = {"type": "eternal_guard", "condition": LOOK, "child": {"type": "wait", "duration": 1}}
    [s] = sights(guards(root), np.ones(4, dtype=bool))
    assert s.blocked.tolist() == [True, False]


def test_rays_are_red_when_blocked_green_when_clear_and_absent_when_off() -> None:
    sim = guards()
    off, painter = draw(sim, ViewOptions())
    on, _ = draw(sim, ViewOptions(overlays={"sight"}))
    vp = painter.viewport(sim.world)
    assert vp.scale == pytest.approx(1.385)
    for ink in (palette.SIGHT_CLEAR, palette.SIGHT_BLOCKED):
        assert count_color(off, ink, tol=3) == 0
    # Ray midpoints before the obstacle / on the clear line.
    blocked_mid = vp.to_screen(np.array([150.0, 100.0]))
    clear_mid = vp.to_screen(np.array([200.0, 300.0]))
    assert count_color(around(on, blocked_mid), palette.SIGHT_BLOCKED, tol=3) >= 5
    assert count_color(around(on, clear_mid), palette.SIGHT_CLEAR, tol=3) >= 5
    assert count_color(around(off, clear_mid), palette.SIGHT_CLEAR, tol=3) == 0
    # The cone's upper edge: 45 degrees off +x, half-way out (125 units) from guard 1.
    edge = vp.to_screen(np.array([100.0, 300.0]) + 125.0 * np.array([1.0, 1.0]) / np.sqrt(2.0))
    r, g, b = (int(v) for v in pixel_at(on, edge))
    assert (r, g, b) != tuple(int(v) for v in pixel_at(off, edge))
    assert r > g > b  # the pale yellow cone ink over the dark floor


def test_the_selected_guard_alone_shows_its_sight_when_the_overlay_is_off() -> None:
    sim = guards()
    img, _ = draw(sim, ViewOptions(selected=1))
    assert count_color(img, palette.SIGHT_CLEAR, tol=3) > 100
    assert count_color(img, palette.SIGHT_BLOCKED, tol=3) == 0
    img, _ = draw(sim, ViewOptions(selected=2))  # an intruder: no can_see, no ray
    assert count_color(img, palette.SIGHT_CLEAR, tol=3) == 0


def test_sight_geometry_is_one_chunk_per_ink_for_many_guards() -> None:
    """2,000 guards: cones, clear rays and blocked rays are three soup chunks, not 2,000."""
    from behaviortk.viewer.gpu import TriangleSoup
    from behaviortk.viewer.sight_cones import sight_shapes
    from behaviortk.viewer.viewport import Viewport

    rng = np.random.default_rng(5)
    pts = rng.uniform(20, 380, (2000, 2)).round(1).tolist()
    data = definition(LOOK, count=2000, positions=pts, others=[other_group("intruder", [[5, 5]])])
    data["obstacles"] = [{"at": [200, 200], "radius": 40}]
    sim = Simulation(load_text(json.dumps(data), "many.json"), engine="batch")
    soup = TriangleSoup()
    sight_shapes(sim, Viewport(400, 400, 0, 0, 400, 400), np.ones(sim.agents.n, bool), soup)
    assert len(soup._verts) == 3
    # 16 arc segments + 2 edges per cone, 1 ray per guard, 6 vertices per segment
    assert len(soup) == 2000 * (18 + 1) * 6


def zoned_world() -> World:
    return World(
        400.0,
        300.0,
        "contain",
        zones={
            "exit": Zone("exit", "circle", np.array([300.0, 150.0]), radius=40.0),
            "yard": Zone(
                "yard",
                "rect",
                np.array([100.0, 100.0]),
                low=np.array([50.0, 60.0]),
                high=np.array([150.0, 140.0]),
            ),
        },
    )


def test_zones_are_filled_rimmed_and_named() -> None:
    """Each zone's name is centred across it, 12 px below its top rim, on an opaque plate
    drawn over the agents: an agent standing where the yard's name is leaves it legible."""
    scale = min(554 / 400, 558 / 300)  # 1.385: the world fitted beside the panel
    agents = make_agents([[100.0, 140.0 - 12.0 / scale], [20.0, 280.0]], radius=6.0)
    sim = fake_sim(zoned_world(), agents)
    img, painter = draw(sim, ViewOptions())
    vp = painter.viewport(sim.world)
    assert vp.scale == pytest.approx(scale)
    rim_circle = vp.to_screen(np.array([340.0, 150.0]))  # centre + radius along +x
    rim_rect = vp.to_screen(np.array([100.0, 60.0]))  # middle of the bottom side
    np.testing.assert_allclose(pixel_at(img, rim_circle), palette.ZONE_EDGE[:3], atol=2)
    np.testing.assert_allclose(pixel_at(img, rim_rect), palette.ZONE_EDGE[:3], atol=2)
    inside = pixel_at(img, vp.to_screen(np.array([300.0, 130.0]))).astype(int)
    outside = pixel_at(img, vp.to_screen(np.array([300.0, 250.0]))).astype(int)
    assert inside[1] > outside[1] + 10  # the green-teal fill tints the floor
    texts = {t.text: (t.x, t.y) for t in painter.pool("world").labels}
    assert set(texts) == {"exit", "yard"}
    yard_top = vp.to_screen(np.array([100.0, 140.0]))
    exit_top = vp.to_screen(np.array([300.0, 190.0]))
    np.testing.assert_allclose(texts["yard"], yard_top - [0.0, 12.0])
    np.testing.assert_allclose(texts["exit"], exit_top - [0.0, 12.0])
    x, y = (round(float(v)) for v in texts["yard"])
    label = img[img.shape[0] - 1 - y - 7 : img.shape[0] - 1 - y + 7, x - 20 : x + 20]
    assert count_color(label, palette.ZONE_TEXT, tol=60) > 10
    body = palette.GROUP_COLORS[0][:3]
    assert count_color(label, body, tol=30) == 0  # the agent under the name is covered
    # the plate: 4 glyphs of 10 pt (8.2 px) + 4 px each side, 16 px high, opaque
    plate = img[img.shape[0] - 1 - y + 6, x - 19].astype(int)
    np.testing.assert_allclose(plate, palette.ZONE_PLATE[:3], atol=12)


def test_a_low_zone_keeps_its_name_at_its_centre() -> None:
    """A zone under 12 px tall on screen: the name stays at its centre, not above it."""
    from behaviortk.viewer.viewport import Viewport
    from behaviortk.viewer.zones import zone_labels

    world = World(
        400.0, 300.0, "contain",
        zones={"ledge": Zone("ledge", "rect", np.array([100.0, 100.0]),
                             low=np.array([50.0, 98.0]), high=np.array([150.0, 102.0]))},
    )  # fmt: skip
    vp = Viewport(400, 300, 0, 0, 400, 300)
    [(name, x, y)] = zone_labels(world, vp)
    assert (name, x, y) == ("ledge", 100.0, 100.0)


def test_rays_take_the_ink_of_their_reason_and_the_legend_names_them() -> None:
    """Guard 0's intruder moved 100 straight down (90° off +x, fov 90): outside the cone,
    orange; guard 1 (moved to x = 90) has its intruder 290 ahead (reach 250): out of range,
    blue. The legend lists the
    four reasons in the view test's order while the overlay is on, none while it is off."""
    from behaviortk.leaves.why import SIGHT_REASONS
    from behaviortk.viewer.hud import legend

    sim = guards()
    rows = sim.rows_of(sim.ids[2:])
    sim.agents.pos[rows] = [[100.0, 0.0], [380.0, 300.0]]
    sim.agents.pos[1] = [90.0, 300.0]
    [s] = sights(sim, np.ones(sim.agents.n, dtype=bool))
    assert s.reason.tolist() == [2, 1]
    on, painter = draw(sim, ViewOptions(overlays={"sight"}))
    vp = painter.viewport(sim.world)
    up = vp.to_screen(np.array([100.0, 50.0]))
    far = vp.to_screen(np.array([235.0, 300.0]))
    assert count_color(around(on, up), palette.SIGHT_OUTSIDE_CONE, tol=3) >= 5
    assert count_color(around(on, far), palette.SIGHT_OUT_OF_RANGE, tol=3) >= 5
    assert count_color(around(on, up), palette.SIGHT_CLEAR, tol=3) == 0
    names = [name for name, _ in legend(sim, ViewOptions(overlays={"sight"}))]
    assert names[-4:] == [f"sight: {why}" for why in SIGHT_REASONS]
    assert not any(n.startswith("sight") for n, _ in legend(sim, ViewOptions()))
