"""Looks and fixes of issue 15: group colours everywhere, bodies to radius with a heading mark,
trails, the legend in the side panel, zero-force requests, captions, render flags, and the
README's first example moving.

Drawn in the 1000 x 600 test window unless a render says otherwise.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from engine_support import definition, other_group
from PIL import Image

import behaviortk
from behaviortk.cli import main
from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation
from behaviortk.viewer import palette
from behaviortk.viewer.render import render
from behaviortk.viewer.scene import ViewOptions, action_index, action_names
from behaviortk.viewer.trails import Trails
from behaviortk.viewer.viewport import Viewport, view_region
from behaviortk.world.factory import make_agents
from behaviortk.world.state import World
from tests.viewer_support import count_color, draw, fake_sim, painter, pixel_at

README = Path(__file__).resolve().parents[1] / "README.md"
ORANGE = (255, 128, 0)


def coloured(engine: str = "py_trees") -> Simulation:
    """Group a (orange, radius 20) at (100, 200) heading +x; group b (no colour) at (300, 200)."""
    data = definition({"type": "wait", "duration": 5}, count=1, positions=[[100, 200]])
    data["groups"][0].update(colour="#ff8000", radius=20)
    data["groups"].append(other_group("b", [[300, 200]]))
    return Simulation(load_text(json.dumps(data), "c.json"), engine=engine)


def test_group_colours_come_from_the_definition_on_bodies_and_legend() -> None:
    sim = coloured()
    img, p = draw(sim, ViewOptions())
    vp = p.viewport(sim.world)
    r = 20.0 * vp.scale
    behind = vp.to_screen(sim.agents.pos[0]) - np.array([0.5 * r, 0.0])
    np.testing.assert_array_equal(pixel_at(img, behind), ORANGE)
    behind_b = sim.agents.heading[1] * 0.5 * sim.agents.radius[1] * vp.scale
    other = vp.to_screen(sim.agents.pos[1]) - behind_b
    np.testing.assert_array_equal(pixel_at(img, other), palette.group_color(1)[:3])
    # Legend: each swatch is centred on its label's line, in the side panel.
    lay = p.layout
    labels = p.pool("ui").labels[1:]  # after the heading
    assert [label.text for label in labels] == ["a", "b"]
    for i, (label, colour) in enumerate(
        zip(labels, (ORANGE, palette.group_color(1)[:3]), strict=True)
    ):
        y = lay.legend_row_y(i)
        assert label.y == y and label.anchor_y == "center" and label.x > lay.panel.x0
        np.testing.assert_array_equal(pixel_at(img, np.array([lay.legend.x0 + 18, y])), colour)
    assert lay.legend.x0 >= lay.world.x1  # the legend no longer covers the world


def test_bodies_are_drawn_to_their_radius_with_a_darker_heading_mark() -> None:
    sim = coloured()
    img, p = draw(sim, ViewOptions())
    vp = p.viewport(sim.world)
    c = vp.to_screen(sim.agents.pos[0])
    r = 20.0 * vp.scale  # 27.7 px
    np.testing.assert_array_equal(
        pixel_at(img, c + np.array([0.0, 0.9 * r])), ORANGE
    )  # inside the rim
    assert tuple(pixel_at(img, c + np.array([0.0, 1.1 * r]))) == palette.WORLD_FLOOR[:3]  # outside
    mark = tuple(round(v * 0.35) for v in ORANGE)
    np.testing.assert_allclose(
        pixel_at(img, c + np.array([0.6 * r, 0.0])), mark, atol=1
    )  # ahead: mark
    np.testing.assert_array_equal(
        pixel_at(img, c - np.array([0.6 * r, 0.0])), ORANGE
    )  # behind: body


def test_a_gif_keeps_the_group_colour(tmp_path: Path) -> None:
    out = io.BytesIO()
    render(coloured(), out, 2, fmt="gif", every=1, size=(400, 300))
    out.seek(0)
    with Image.open(out) as gif:
        gif.seek(2)
        rgb = np.asarray(gif.convert("RGB"))
    assert count_color(rgb, ORANGE, tol=6) > 300  # the orange body, radius 20


def test_trails_follow_ids_and_skip_wraps() -> None:
    w = World(100.0, 100.0, "wrap")
    ag = make_agents([[10.0, 10.0], [50.0, 50.0]], ids=[7, 9])
    sim = SimpleNamespace(world=w, agents=ag, tick=0)
    t = Trails(length=4)
    for tick, (a, b) in enumerate(
        [((10, 10), (50, 50)), ((12, 10), (50, 52)), ((14, 10), (50, 54))]
    ):
        sim.tick = tick
        ag.pos[:] = [a, b]
        t.record(sim)
    np.testing.assert_array_equal(t.history()[:, 1], [[50, 50], [50, 52], [50, 54]])
    # Agent 7 despawned, 11 spawned: 9's trail moves to row 0, 11 starts empty.
    sim.agents = make_agents([[50.0, 56.0], [1.0, 1.0]], ids=[9, 11])
    sim.tick = 3
    t.record(sim)
    hist = t.history()
    np.testing.assert_array_equal(hist[:, 0], [[50, 50], [50, 52], [50, 54], [50, 56]])
    assert np.isnan(hist[:3, 1]).all()
    # A restart (an earlier tick) starts over.
    sim.tick = 0
    t.record(sim)
    assert t.history().shape == (1, 2, 2)


def test_trails_are_drawn_when_on_and_for_the_selected_agent() -> None:
    ag = make_agents([[50.0, 150.0], [300.0, 150.0]], [[1.0, 0.0], [0.0, 1.0]], radius=3.0)
    sim = fake_sim(World(400.0, 300.0, "wrap"), ag)
    trails = Trails()
    for tick in range(30):
        sim.tick = tick
        ag.pos[0] = [50.0 + 5 * tick, 150.0]  # 145 units in 29 ticks
        ag.pos[1] = [300.0, 150.0 + 3 * tick]
        trails.record(sim)
    from behaviortk.viewer.hud import HudInfo
    from behaviortk.viewer.painter import Overlay2D

    p = painter()

    def frame(opts: ViewOptions) -> np.ndarray:
        p.draw(sim, opts, HudInfo(), Overlay2D(trails=trails))
        return p.snapshot()

    vp = p.viewport(sim.world)
    mid0 = vp.to_screen(np.array([120.0, 150.0]))  # on agent 0's trail
    mid1 = vp.to_screen(np.array([300.0, 190.0]))  # on agent 1's trail

    def lit(img: np.ndarray, xy: np.ndarray) -> bool:
        """Whether a trail (1.5 px wide) brightens the floor within 2 px of ``xy``."""
        x, y = round(float(xy[0])), img.shape[0] - 1 - round(float(xy[1]))
        patch = img[y - 2 : y + 3, x - 2 : x + 3].astype(int)
        return bool((patch.sum(axis=-1) > sum(palette.WORLD_FLOOR[:3]) + 60).any())

    off = frame(ViewOptions())
    assert not lit(off, mid0) and not lit(off, mid1)
    on = frame(ViewOptions(overlays={"trails"}))
    assert lit(on, mid0) and lit(on, mid1)
    picked = frame(ViewOptions(selected=1))
    assert not lit(picked, mid0) and lit(picked, mid1)


def zero_and_seek(engine: str) -> Simulation:
    """separation with nobody near asks for a force of exactly zero; seek does not."""
    root = {
        "type": "parallel",
        "policy": "success_on_all",
        "children": [
            {"type": "separation", "name": "apart"},
            {"type": "seek", "name": "go", "target": {"kind": "point", "at": [300, 300]}},
        ],
    }
    data = definition(root, count=1, positions=[[100, 100]])
    return Simulation(load_text(json.dumps(data), "z.json"), engine=engine)


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_requests_of_zero_force_are_not_active(engine: str) -> None:
    sim = zero_and_seek(engine)
    sim.step()
    dec = sim.decisions["a"]
    assert dec.emitted[0].tolist() == [True, True]  # both asked
    assert dec.acted is not None and dec.acted[0].tolist() == [False, True]
    assert sim.active_names(0) == ["go"] and sim.active_table() == [["go"]]
    # colour by action: the first request with a force ("go", index 1), not "apart"
    assert action_names(sim) == ["apart", "go"]
    assert action_index(sim, action_names(sim)).tolist() == [1]


def test_renders_carry_a_caption_instead_of_the_hud() -> None:
    from behaviortk.viewer.hud import HudInfo, hud_text
    from behaviortk.viewer.painter import Painter
    from behaviortk.viewer.render import frame_image, headless_window
    from behaviortk.viewer.scene import ViewOptions

    sim = coloured()
    sim.run(3)
    p = Painter(headless_window(), size=(500, 300))
    image = frame_image(sim, p, ViewOptions())
    assert image.size == (500, 300)
    # 3 steps of 0.1 s: the last one taken is tick 2, as its trace record numbers it
    assert p.hud.text == "engine_test   tick 2   t = 0.30 s   2 agents"
    live = hud_text(sim, HudInfo(fps=60.0, paused=True))
    assert "FPS" in live and "PAUSED" in live and "FPS" not in p.hud.text


def test_the_render_command_offers_every_overlay() -> None:
    from behaviortk.commands.render import OVERLAY_NAMES
    from behaviortk.viewer.overlays import OVERLAYS

    assert set(OVERLAY_NAMES) == {o.name for o in OVERLAYS}


def test_region_and_zoom_by_hand() -> None:
    """Region (100, 100)-(300, 200) in a 600 x 300 screen rectangle: scale min(600/200,
    300/100) = 3; zoom 2 shows (150, 125)-(250, 175): scale 6, centre (200, 150) at the middle."""
    vp = Viewport(800, 600, 0, 0, 600, 300, (100.0, 100.0, 300.0, 200.0))
    assert vp.scale == 3.0
    np.testing.assert_allclose(vp.to_screen(np.array([100.0, 100.0])), [0.0, 0.0])
    region = view_region(800, 600, (100.0, 100.0, 300.0, 200.0), 2.0)
    assert region == (150.0, 125.0, 250.0, 175.0)
    z = Viewport(800, 600, 0, 0, 600, 300, region)
    assert z.scale == 6.0
    np.testing.assert_allclose(z.to_screen(np.array([200.0, 150.0])), [300.0, 150.0])
    np.testing.assert_allclose(z.world_rect(), (0.0, 0.0, 600.0, 300.0))  # clipped to the screen


def test_render_command_size_region_and_zoom(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = tmp_path / "c.json"
    data = definition({"type": "wait", "duration": 5}, count=1, positions=[[100, 200]])
    data["groups"][0].update(colour="#ff8000", radius=10)
    demo.write_text(json.dumps(data))
    whole, near = tmp_path / "whole.png", tmp_path / "near.png"
    assert (
        main(["render", str(demo), "--ticks", "0", "--out", str(whole), "--size", "640", "360"])
        == 0
    )
    args = ["--region", "50", "150", "150", "250", "--zoom", "2", "--size", "640", "360"]
    assert main(["render", str(demo), "--ticks", "0", "--out", str(near), *args]) == 0
    a, b = np.asarray(Image.open(whole).convert("RGB")), np.asarray(Image.open(near).convert("RGB"))
    assert a.shape == b.shape == (360, 640, 3)
    # Without a selected agent a render's panel is the 210 px legend: the world gets
    # 640 - 210 - 16 = 414 x 360 - 26 - 16 = 318 px. Whole 400 x 400 world: scale 0.795;
    # the region zoomed to 50 x 50 units: scale 6.36, so the body's area grows by
    # (6.36 / 0.795)^2 = 64 (the legend's swatch, right of x = 430, is not counted).
    small = count_color(a[:, :430], ORANGE, tol=2)
    big = count_color(b[:, :430], ORANGE, tol=2)
    assert 50 * small < big < 80 * small
    assert main(["render", str(demo), "--out", str(near), "--region", "5", "5", "1", "9"]) == 2
    assert "X0 < X1" in capsys.readouterr().err
    assert main(["render", str(demo), "--out", str(near), "--size", "10", "10"]) == 2


def readme_example() -> str:
    text = README.read_text()
    return re.search(r"```json\n(.*?)```", text, re.S).group(1)  # type: ignore[union-attr]


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_the_readme_first_example_visibly_moves(engine: str) -> None:
    """Two seconds in, every sheep has moved at least two body radii (12 units) and the wolves
    (max speed 90 along their loop) more than 60; both engines the same."""
    from behaviortk.world.spatial import displacement

    sim = behaviortk.Simulation(load_text(readme_example(), "chase.json"), engine=engine)
    start = sim.agents.pos.copy()
    sim.run(120)
    moved = np.hypot(*displacement(start, sim.agents.pos, sim.world).T)
    sheep, wolves = sim.agents.slices["sheep"], sim.agents.slices["wolves"]
    assert (moved[sheep] > 12.0).all() and (moved[wolves] > 60.0).all()
    reference = behaviortk.Simulation(load_text(readme_example(), "chase.json"))
    reference.run(120)
    np.testing.assert_array_equal(sim.agents.pos, reference.agents.pos)


def test_bodies_bigger_than_a_point_are_drawn_as_triangles_alike() -> None:
    """Zoomed to 60 x 60 units the radius-20 body is 20 * min(554, 558)/60 = 185 px, more than
    the largest point (the fallback path): same colour, same heading mark."""
    sim = coloured()
    opts = ViewOptions(region=(70.0, 170.0, 130.0, 230.0))
    img, p = draw(sim, opts)
    vp = p.viewport(sim.world, opts)
    r = 20.0 * vp.scale
    assert r > p.body_batch.max_radius
    c = vp.to_screen(sim.agents.pos[0])
    np.testing.assert_array_equal(pixel_at(img, c - np.array([0.6 * r, 0.0])), ORANGE)
    mark = tuple(round(v * 0.35) for v in ORANGE)
    np.testing.assert_allclose(pixel_at(img, c + np.array([0.6 * r, 0.0])), mark, atol=1)


def test_the_info_tab_tells_the_scenarios_description_until_an_agent_is_chosen() -> None:
    from behaviortk.viewer.hud import HudInfo
    from behaviortk.viewer.painter import Overlay2D, PanelState
    from behaviortk.viewer.scene import ViewOptions
    from tests.viewer_support import painter

    path = Path(__file__).resolve().parents[1] / "definitions" / "seek_and_arrive.json"
    sim = Simulation(behaviortk.load(path))
    p = painter()
    p.draw(sim, ViewOptions(), HudInfo(), Overlay2D(panel=PanelState(tab="info")))
    description = sim.scenario.definition.description
    assert p.panel.text.startswith(f"seek_and_arrive\n\n{description}\n\nClick an agent")


def test_the_overlay_key_names_what_the_selected_agent_draws() -> None:
    """A guard patrolling a path past walls draws its feelers and waypoints (and vectors):
    each gets a swatch in the key; an overlay switched on for all gets one without a
    selection; the side panel's legend (and so its layout) does not change on selection."""
    from behaviortk.viewer import palette as ink
    from behaviortk.viewer.hud import legend
    from behaviortk.viewer.overlays import overlay_legend

    path = Path(__file__).resolve().parents[1] / "definitions" / "guard_patrol.json"
    sim = Simulation(behaviortk.load(path), debug=True)
    sim.run(10)
    assert overlay_legend(sim, None, set()) == []
    guard = int(sim.agents.slices["guards"].start)
    chosen = overlay_legend(sim, guard, set())
    for entry in [
        ("velocity", ink.VELOCITY),
        ("steering force", ink.FORCE),
        ("detection box, feelers", ink.BOX),
        ("waypoints", ink.WAYPOINT),
    ]:
        assert entry in chosen, (entry, chosen)
    assert ("hiding spots", ink.HIDING) not in chosen  # a guard never hides
    assert ("velocity", ink.VELOCITY) in overlay_legend(sim, None, {"velocity"})
    assert legend(sim, ViewOptions(selected=guard)) == legend(sim, ViewOptions())


def test_the_info_tab_scrolls_when_taller_than_the_panel() -> None:
    """An agent with 60 blackboard keys: its Info tab is taller than the panel, so the
    wheel moves the text up by 42 px a notch, the thumb follows, a press at the bottom of
    the track shows the last keys. (Its status changes are the History tab's.)"""
    from behaviortk.viewer.hud import HudInfo
    from behaviortk.viewer.painter import Overlay2D, PanelState
    from behaviortk.viewer.text_scroll import WHEEL_PX
    from tests.viewer_support import painter

    keys = {f"key{i:02d}": {"type": "number", "default": float(i)} for i in range(60)}
    d = definition({"type": "wait", "duration": 5}, positions=[[100, 100]], blackboard=keys)
    sim = Simulation(load_text(json.dumps(d), "keys.json"))
    sim.step()
    p, panel = painter(), PanelState(tab="info")
    opts = ViewOptions(selected=0)
    p.draw(sim, opts, HudInfo(), Overlay2D(panel=panel))
    assert "key59 = 59" in p.panel.text and "Status history:" in p.panel.text
    assert panel.info.bar is not None
    track, thumb, most = panel.info.bar
    assert thumb.y1 == track.y1 and most > 0  # at the top
    top = p.panel.y
    panel.info.wheel(-3)
    p.draw(sim, opts, HudInfo(), Overlay2D(panel=panel))
    assert p.panel.y == pytest.approx(top + 3 * WHEEL_PX)
    assert panel.info.bar[1].y1 < track.y1
    assert panel.info.press(track.x0 + 1, track.y0 - 2)
    panel.info.release()
    p.draw(sim, opts, HudInfo(), Overlay2D(panel=panel))
    assert panel.info.scroll == pytest.approx(most)
    assert panel.info.bar[1].y0 == pytest.approx(track.y0)  # the thumb at the bottom
    img = p.snapshot()
    thumb = panel.info.bar[1]
    at = np.array([(thumb.x0 + thumb.x1) / 2, (thumb.y0 + thumb.y1) / 2])
    np.testing.assert_allclose(pixel_at(img, at), palette.SLIDER_FILL[:3], atol=2)
