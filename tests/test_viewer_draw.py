"""The drawing layer on real (headless) arcade rendering: shapes, colours, overlays, heat map.

States are built by hand (World + make_agents + a real DebugBuffer) so each
expected pixel is known: the world 400 x 300 fits a 1000 x 600 window minus
the 430 px panel, 26 px HUD and 8 px margins, i.e. scale min(554/400, 558/300) = 1.385.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from behaviortk.steering.debug import DebugBuffer
from behaviortk.steering.kernels import LJConstants
from behaviortk.viewer import geometry as geo
from behaviortk.viewer import palette
from behaviortk.viewer.heatmap import lj_potential, params_from_trees, potential_grid
from behaviortk.viewer.layout import MIN_WINDOW_SIZE
from behaviortk.viewer.overlays import OVERLAYS
from behaviortk.viewer.scene import ViewOptions, build_scene, pick_agent
from behaviortk.world.factory import make_agents
from behaviortk.world.state import Path, World
from tests.viewer_support import count_color, draw, fake_sim, pixel_at


def world() -> World:
    return World(
        400.0,
        300.0,
        "wrap",
        obstacle_pos=np.array([[300.0, 80.0]]),
        obstacle_radius=np.array([25.0]),
        wall_a=np.array([[20.0, 280.0]]),
        wall_b=np.array([[380.0, 280.0]]),
        wall_normal=np.array([[0.0, -1.0]]),
        paths={"loop": Path("loop", np.array([[50.0, 50.0], [150.0, 50.0], [100.0, 120.0]]), True)},
    )


def two_groups():
    return make_agents(
        [[100.0, 200.0], [250.0, 200.0]],
        [[30.0, 0.0], [0.0, -30.0]],
        groups=[("prey", 1), ("hunters", 1)],
        radius=10.0,
        view_distance=60.0,
        fov=[np.pi, 2.0 * np.pi],
    )


# ---------------------------------------------------------------- geometry
def test_heading_mark_is_a_wedge_from_the_centre_to_the_rim():
    """Nose at pos + r h, base corners at pos +- 0.4 r side (worked by hand)."""
    tri = geo.heading_marks(np.array([[0.0, 0.0]]), np.array([[1.0, 0.0]]), np.array([10.0]))
    np.testing.assert_allclose(tri, [[10.0, 0.0], [0.0, 4.0], [0.0, -4.0]])
    up = geo.heading_marks(np.array([[5.0, 5.0]]), np.array([[0.0, 2.0]]), np.array([1.0]))
    np.testing.assert_allclose(up[0], [5.0, 6.0])


def test_segments_are_two_triangles_of_the_stroke_width():
    quad = geo.segments(np.array([[0.0, 0.0]]), np.array([[10.0, 0.0]]), 4.0)
    assert quad.shape == (6, 2)
    assert quad[:, 1].max() == pytest.approx(2.0) and quad[:, 1].min() == pytest.approx(-2.0)
    assert geo.segments(np.zeros((0, 2)), np.zeros((0, 2)), 1.0).shape == (0, 2)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3), st.floats(-1, 1), st.floats(-1, 1)),
        min_size=1,
        max_size=20,
    ),
    st.floats(0.0, 50.0),
)
def test_heading_marks_finite_even_for_zero_heading(rows, r):
    arr = np.array(rows)
    tri = geo.heading_marks(arr[:, :2], arr[:, 2:], np.full(len(rows), r))
    assert tri.shape == (3 * len(rows), 2)
    assert np.isfinite(tri).all()


# ----------------------------------------------------------------- heat map
def test_lj_potential_matches_seed_003_by_hand():
    """Seed 003: U = -A/d^n + B/d^m, d = |r| / R. R = 10, |r| = 20 -> d = 2."""
    c, r = np.array([[0.0, 0.0]]), np.array([10.0])
    p = LJConstants(a=0.0, b=20.0, n=1.0, m=2.5, cutoff=40.0)
    u = lj_potential(np.array([[20.0, 0.0], [0.0, 100.0]]), c, r, p)
    assert u[0] == pytest.approx(20.0 / 2.0**2.5)  # 3.5355...
    assert u[1] == 0.0  # beyond the cutoff (40 + R)
    attract = LJConstants(a=1.0, b=20.0, n=1.0, m=2.5, cutoff=40.0)
    assert lj_potential(np.array([[20.0, 0.0]]), c, r, attract)[0] == pytest.approx(
        -0.5 + 3.5355339
    )


def test_potential_grid_is_finite_and_peaks_at_the_obstacle():
    grid = potential_grid(
        100.0, 50.0, 20, 10, np.array([[50.0, 25.0]]), np.array([5.0]), LJConstants()
    )
    assert grid.shape == (10, 20)
    assert np.isfinite(grid).all()
    assert np.unravel_index(np.argmax(grid), grid.shape) in {(4, 9), (4, 10), (5, 9), (5, 10)}


def test_lj_params_default_to_the_seed_without_a_potential_leaf():
    assert params_from_trees({}) == LJConstants(0.0, 20.0, 1.0, 2.5, 40.0)


# --------------------------------------------------------------- rendering
def body_points(vp, agents) -> np.ndarray:
    """A point of each body behind its centre (half a radius back along the heading), where
    the group colour shows; the centre itself is the darker heading mark."""
    back = agents.heading * (0.5 * agents.radius * vp.scale)[:, None]
    return vp.to_screen(agents.pos) - back


def test_agents_are_drawn_in_their_group_colours_where_they_are():
    sim = fake_sim(world(), two_groups())
    img, painter = draw(sim, ViewOptions())
    vp = painter.viewport(sim.world)
    assert vp.scale == pytest.approx(1.385)
    at = body_points(vp, sim.agents)
    np.testing.assert_allclose(pixel_at(img, at[0]), palette.group_color(0)[:3], atol=2)
    np.testing.assert_allclose(pixel_at(img, at[1]), palette.group_color(1)[:3], atol=2)
    obstacle = vp.to_screen(sim.world.obstacle_pos[0])
    np.testing.assert_allclose(pixel_at(img, obstacle), palette.OBSTACLE[:3], atol=2)
    wall_mid = vp.to_screen(np.array([200.0, 280.0]))
    np.testing.assert_allclose(pixel_at(img, wall_mid), palette.WALL[:3], atol=2)


def test_all_agents_are_one_draw_call_whatever_their_number():
    calls = []
    for n in (3, 400):
        rng = np.random.default_rng(n)
        ag = make_agents(rng.uniform(0, 300, (n, 2)), rng.normal(0, 10, (n, 2)), radius=3.0)
        _, painter = draw(fake_sim(world(), ag), ViewOptions())
        before = painter.body_batch.draw_calls, painter.world_batch.draw_calls
        draw(fake_sim(world(), ag), ViewOptions())
        after = painter.body_batch.draw_calls, painter.world_batch.draw_calls
        calls.append((after[0] - before[0], after[1] - before[1]))
    # one point per agent in one draw; the floor and the shapes under the agents (nothing
    # is over them: no selection, no overlay)
    assert calls[0] == calls[1] == (1, 2)


def debug_with_everything(agents) -> DebugBuffer:
    """A DebugBuffer as primitives would fill it, for agent 0 at (100, 200)."""
    d = DebugBuffer(enabled=True)
    d.add("crosshair", np.array([0]), point=np.array([[160.0, 150.0]]))
    d.add(
        "wander",
        np.array([0]),
        center=np.array([[130.0, 200.0]]),
        radius=np.array([15.0]),
        target=np.array([[145.0, 200.0]]),
    )
    box = np.array([[[100.0, 190.0], [140.0, 190.0], [140.0, 210.0], [100.0, 210.0]]])
    d.add("box", np.array([0]), corners=box)
    d.add(
        "feelers", np.array([0]), ends=np.array([[[140.0, 240.0], [140.0, 160.0], [60.0, 240.0]]])
    )
    d.add("hiding_spot", np.array([0]), point=np.array([[340.0, 40.0]]))
    d.add("waypoint", np.array([0]), point=np.array([[150.0, 50.0]]))
    return d


OPAQUE_INKS = {
    "velocity": palette.VELOCITY,
    "force": palette.FORCE,
    "crosshair": palette.CROSSHAIR,
    "wander": palette.WANDER,
    "feelers": palette.FEELER,
    "hiding": palette.HIDING,
    "waypoints": palette.WAYPOINT,
}


# "sight" needs a tree with a can_see node (tests/test_viewer_sight.py), "trails" a history
# of positions (tests/test_viewer_looks.py), "thinking" trees that think (tests/test_lod.py).
@pytest.mark.parametrize(
    "name", [o.name for o in OVERLAYS if o.name not in ("sight", "trails", "thinking")]
)
def test_each_overlay_is_present_when_on_and_absent_when_off(name):
    agents = make_agents(
        [[100.0, 200.0], [250.0, 200.0], [290.0, 215.0]],
        [[30.0, 0.0], [0.0, -30.0], [0.0, 10.0]],
        groups=[("prey", 1), ("hunters", 2)],
        radius=10.0,
        view_distance=60.0,
        fov=[np.pi, 2.0 * np.pi, 2.0 * np.pi],
    )
    agents.force[:] = [[50.0, 50.0], [-80.0, 0.0], [0.0, 80.0]]
    sim = fake_sim(world(), agents, debug_with_everything(agents))
    off, _ = draw(sim, ViewOptions())
    on, _ = draw(sim, ViewOptions(overlays={name}))
    changed = int(np.any(on != off, axis=-1).sum())
    assert changed > 40, f"overlay {name} changed only {changed} pixels"
    ink = OPAQUE_INKS.get(name)
    if ink is not None:
        assert count_color(off, ink, tol=3) == 0
        assert count_color(on, ink, tol=3) > 20


def test_selected_agent_overlays_show_with_global_overlays_off():
    agents = two_groups()
    sim = fake_sim(world(), agents, debug_with_everything(agents))
    plain, _ = draw(sim, ViewOptions())
    picked, _ = draw(sim, ViewOptions(selected=0))
    assert count_color(plain, palette.CROSSHAIR, tol=3) == 0
    assert count_color(picked, palette.CROSSHAIR, tol=3) > 20
    assert count_color(picked, palette.VELOCITY, tol=3) > 20
    assert count_color(picked, palette.SELECTED, tol=0) > count_color(plain, palette.SELECTED, 0)


def test_velocity_overlay_marks_only_the_selected_agent_when_off():
    """Off globally: the arrow of agent 0 (heading +x) is drawn, agent 1's (heading -y) is not."""
    agents = two_groups()
    sim = fake_sim(world(), agents)
    img, painter = draw(sim, ViewOptions(selected=0))
    vp = painter.viewport(sim.world)
    # |v| / max_speed = 30 / 100, so each arrow is 0.3 * 50 = 15 px long.
    inside0 = vp.to_screen(agents.pos[0]) + np.array([10.0, 0.0])
    beyond0 = vp.to_screen(agents.pos[0]) + np.array([20.0, 0.0])
    inside1 = vp.to_screen(agents.pos[1]) + np.array([0.0, -10.0])
    np.testing.assert_array_equal(pixel_at(img, inside0), palette.VELOCITY[:3])
    assert tuple(pixel_at(img, beyond0)) != palette.VELOCITY[:3]
    assert tuple(pixel_at(img, inside1)) != palette.VELOCITY[:3]


def test_heat_map_reddens_around_obstacles_only_when_on():
    sim = fake_sim(world(), two_groups())
    off, painter = draw(sim, ViewOptions())
    on, _ = draw(sim, ViewOptions(overlays={"potential"}))
    vp = painter.viewport(sim.world)
    near = vp.to_screen(np.array([300.0, 80.0 + 30.0]))  # 5 units outside the rim: repulsive
    far = vp.to_screen(np.array([40.0, 260.0]))  # far beyond the cutoff: untouched
    assert pixel_at(on, near)[0] > pixel_at(off, near)[0] + 40
    np.testing.assert_array_equal(pixel_at(on, far), pixel_at(off, far))


def test_colour_by_action_uses_the_first_emitted_request():
    """Decisions say agent 0 ran leaf 1 ("flee"), agent 1 nothing: colours 'flee' and idle grey."""
    from types import SimpleNamespace

    agents = two_groups()
    sim = fake_sim(world(), agents)
    node = SimpleNamespace
    tree = SimpleNamespace(nodes=(node(name="seek"), node(name="flee")), steering=(0, 1))
    sim.trees = {"prey": tree, "hunters": tree}
    sim.decisions = {
        "prey": SimpleNamespace(emitted=np.array([[False, True]])),
        "hunters": SimpleNamespace(emitted=np.array([[False, False]])),
    }
    img, painter = draw(sim, ViewOptions(color_by="action"))
    vp = painter.viewport(sim.world)
    at = body_points(vp, agents)
    from behaviortk.viewer.scene import action_color

    np.testing.assert_allclose(pixel_at(img, at[0]), action_color(1)[:3], atol=2)
    np.testing.assert_allclose(pixel_at(img, at[1]), palette.IDLE[:3], atol=2)


def test_error_banner_is_drawn_when_there_are_errors():
    sim = fake_sim(world(), two_groups())
    clean, _ = draw(sim, ViewOptions())
    banner, _ = draw(sim, ViewOptions(), errors=["x.json:3:5: /groups/0: bad"])
    assert count_color(clean, palette.ERROR_BG, tol=6) == 0
    assert count_color(banner, palette.ERROR_BG, tol=6) > 1000


def test_scene_holds_every_agent_in_one_chunk_and_picks_by_position():
    agents = two_groups()
    sim = fake_sim(world(), agents)
    from behaviortk.viewer.viewport import Viewport

    scene = build_scene(sim, Viewport(400, 300, 0, 0, 400, 300), ViewOptions())
    (verts, colors), (points, body_colors), _ = scene.build()
    assert verts.dtype == np.float32 and colors.dtype == np.uint8
    assert verts.shape[0] == colors.shape[0]
    # every agent one row: x, y, radius in pixels (10 units at scale 1), heading
    assert points.shape == (2, 5) and body_colors.shape == (2, 4)
    np.testing.assert_allclose(points[:, :3], [[100, 200, 10], [250, 200, 10]])
    assert pick_agent(agents, np.array([252.0, 203.0]), 0.0) == 1
    assert pick_agent(agents, np.array([180.0, 100.0]), 2.0) is None


def test_selected_agent_neighbour_links_agree_with_sense():
    """The direct path (few selected rows) links exactly the pairs Sense.neighbours finds."""
    from behaviortk.sense.sensing import Sense
    from behaviortk.viewer.overlays import OverlayInput, _few_neighbours
    from behaviortk.viewer.viewport import Viewport

    rng = np.random.default_rng(3)
    agents = make_agents(
        rng.uniform(0, 400, (40, 2)),
        rng.normal(0, 10, (40, 2)),
        groups=[("a", 25), ("b", 15)],
        view_distance=90.0,
        fov=np.deg2rad(200.0),
    )
    sim = fake_sim(world(), agents)
    rows = np.zeros(40, dtype=bool)
    rows[[3, 30]] = True
    starts, b = _few_neighbours(
        OverlayInput(sim, Viewport(400, 300, 0, 0, 400, 300), rows), np.array([3, 30])
    )
    sense = Sense(sim.world, agents, np.zeros((40, 1)), 0, 0.0)
    expected = []
    for g in ("a", "b"):
        nb = sense.neighbours(g, "same")
        keep = rows[nb.i]
        expected.append(agents.pos[nb.i[keep]] + nb.d[keep])
    exp = np.concatenate(expected)
    assert len(exp) > 0 and len(starts) == len(b)
    np.testing.assert_allclose(np.sort(b, axis=0), np.sort(exp, axis=0))


@pytest.mark.parametrize("size", [MIN_WINDOW_SIZE, (1400, 900)])
def test_the_banner_and_the_help_wrap_inside_their_boxes(size: tuple[int, int]) -> None:
    """Long lines wrap to the box; the box grows to the wrapped text, from the smallest
    window the viewer allows to a large one."""
    from behaviortk.viewer.hud import HudInfo
    from behaviortk.viewer.painter import BOX_PAD, HELP_WIDTH, Overlay2D, Painter
    from tests.viewer_support import window

    sim = fake_sim(world(), two_groups())
    p = Painter(window(), size=size)
    long = "x.json:3:5: /groups/0/tree/children/2: " + "a long message that goes on " * 12
    p.draw(sim, ViewOptions(), HudInfo(), Overlay2D(errors=[long, "second"], show_help=True))
    img = p.snapshot()
    lay = p.layout
    assert lay is not None
    assert p.banner.content_width <= lay.panel.x0 - 2 * BOX_PAD
    assert p.banner.text.count("\n") == 1 and p.banner.content_height > 3 * 11  # wrapped
    column = img[:, 2]  # the banner's left edge, bottom up
    red = np.all(np.abs(column[::-1].astype(int) - palette.ERROR_BG[:3]) <= 6, axis=1)
    tall = int(np.argmin(red)) if not red.all() else len(red)
    assert tall >= p.banner.content_height + 2 * BOX_PAD - 1  # the box holds every line
    assert p.help.content_width <= min(HELP_WIDTH, lay.world.width - 40) - 2 * BOX_PAD


def test_paths_are_named_beside_their_first_point() -> None:
    from types import SimpleNamespace

    from behaviortk.viewer.scene import path_labels
    from behaviortk.viewer.viewport import Viewport
    from behaviortk.world.state import Path as WorldPath

    w = SimpleNamespace(
        paths={
            "patrol": WorldPath("patrol", np.array([[10.0, 20.0], [50.0, 20.0]]), True),
            "exit": WorldPath("exit", np.array([[100.0, 5.0], [0.0, 0.0]]), False),
        }
    )
    vp = Viewport(400, 300, 0, 0, 400, 300)  # one world unit per pixel, origin at (0, 0)
    assert path_labels(w, vp) == [("patrol", 18.0, 28.0), ("exit", 108.0, 13.0)]
    assert path_labels(SimpleNamespace(paths={}), vp) == []
