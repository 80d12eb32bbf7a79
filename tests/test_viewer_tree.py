"""The graphical tree panel: layout by hand, status fills, the running path, forces, folding,
pan and zoom, 60 nodes, and frames from a live simulation or recorded codes.

Drawn headless in the 1000 x 600 test window: the side panel is 430 px wide at
the right, so the tree's content rectangle starts at x = 570.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from engine_support import definition

from behaviortk.format.adapters import validate_node
from behaviortk.format.loader import load_text
from behaviortk.registry import default
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.flat import flatten
from behaviortk.tree.status import FAILURE, INVALID, RUNNING, SUCCESS
from behaviortk.viewer import palette
from behaviortk.viewer.hud import HudInfo
from behaviortk.viewer.painter import Overlay2D, PanelState
from behaviortk.viewer.scene import ViewOptions
from behaviortk.viewer.tree_frame import frame_from_codes, frame_from_sim
from behaviortk.viewer.tree_layout import BOX_H, INDENT, ROW, TOGGLE, layout_tree
from behaviortk.viewer.tree_panel import HEADER, PAD, TreeView, running_path
from behaviortk.world.factory import make_agents
from behaviortk.world.state import World
from tests.viewer_support import count_color, fake_sim, painter

ROOT = {
    "type": "selector",
    "name": "root",
    "memory": False,
    "children": [
        {
            "type": "sequence",
            "name": "scared",
            "memory": False,
            "children": [
                {"type": "in_range", "name": "near", "target": {"kind": "pointer"}, "radius": 50},
                {"type": "flee", "name": "run", "target": {"kind": "pointer"}},
            ],
        },
        {"type": "inverter", "name": "not", "child": {"type": "wander", "name": "roam"}},
    ],
}


def flat():
    return flatten(validate_node(ROOT, default()), default())


def draw_frame(frame, view: TreeView | None = None):
    """Draw a frame in the tree tab; returns pixels, the painter and the panel state."""
    p = painter()
    state = PanelState(tab="tree", frame=frame, tree=view or TreeView())
    sim = fake_sim(World(400.0, 300.0, "wrap"), make_agents([[10.0, 10.0]]))
    p.draw(sim, ViewOptions(), HudInfo(), Overlay2D(panel=state))
    return p.snapshot(), p, state


def box_centre(p, state, index: int) -> tuple[float, float]:
    """Screen centre of node ``index``'s box, from the layout rules (zoom 1, no pan)."""
    lay = layout_tree(state.tree._last[0].tree, state.tree.collapsed)
    rect = p.layout.content
    x = rect.x0 + PAD + lay.x[index] + 20.0
    y = rect.y1 - HEADER - PAD - lay.y[index] - BOX_H / 2
    return x, y


def at(img, x: float, y: float) -> np.ndarray:
    return img[img.shape[0] - 1 - round(y), round(x)]


def test_outline_layout_by_hand() -> None:
    """Pre-order rows: root, scared, near, run, not, roam; x = 14 + 20 * depth."""
    lay = layout_tree(flat())
    assert lay.order.tolist() == [0, 1, 2, 3, 4, 5]
    np.testing.assert_allclose(lay.x, TOGGLE + INDENT * np.array([0, 1, 2, 2, 1, 2]))
    np.testing.assert_allclose(lay.y, np.arange(6) * ROW + (ROW - BOX_H) / 2)
    assert lay.edges.tolist() == [[0, 1], [1, 2], [1, 3], [0, 4], [4, 5]]
    folded = layout_tree(flat(), {1})
    assert folded.order.tolist() == [0, 1, 4, 5] and folded.hidden[1] == 2
    assert folded.edges.tolist() == [[0, 1], [0, 4], [4, 5]]


def test_running_path_is_the_running_leaves_and_their_ancestors() -> None:
    codes = [RUNNING, FAILURE, FAILURE, INVALID, RUNNING, RUNNING]
    frame = frame_from_codes(flat(), codes)
    assert np.flatnonzero(running_path(frame, layout_tree(frame.tree))).tolist() == [0, 4, 5]


def test_boxes_are_filled_by_status_and_the_running_path_is_white() -> None:
    codes = [RUNNING, FAILURE, FAILURE, INVALID, RUNNING, SUCCESS]
    img, p, state = draw_frame(frame_from_codes(flat(), codes, title="agent-0"))
    fills = {0: palette.NODE_RUNNING, 1: palette.NODE_FAILURE, 3: palette.NODE_IDLE}
    fills[5] = palette.NODE_SUCCESS
    for index, colour in fills.items():
        x, y = box_centre(p, state, index)
        # a point of the box right of its text (boxes are at least 60 px wide)
        np.testing.assert_array_equal(at(img, x + 32, y + 5), colour[:3])
    # Elbows go down from 6 px right of the parent's left edge. Between the rows of
    # nodes 3 and 4 the root's trunk leads only to node 4 ("not", on the running path):
    # white. Between nodes 2 and 3 scared's trunk leads to node 3 (not running): grey.
    lay = layout_tree(state.tree._last[0].tree)
    rect = p.layout.content

    def between(a: int) -> float:  # the screen y where row a ends and row a + 1 starts
        return rect.y1 - HEADER - PAD - (a + 1) * ROW

    np.testing.assert_array_equal(
        at(img, rect.x0 + PAD + lay.x[0] + 6, between(3)), palette.TREE_PATH[:3]
    )
    np.testing.assert_array_equal(
        at(img, rect.x0 + PAD + lay.x[1] + 6, between(2)), palette.TREE_EDGE[:3]
    )
    labels = p.pool("tree.body").texts()
    assert labels[:6] == ["? root", "→ scared", "near", "run", "◇ not", "roam"]
    assert p.pool("tree.header").texts()[0] == "agent-0"


def test_forces_beside_steering_leaves() -> None:
    """run asked (30, 40): |F| = 50; roam asked nothing: no dial; zero shows apart."""
    frame = frame_from_codes(flat(), [RUNNING] * 6, [[30.0, 40.0], [np.nan, np.nan]], max_force=100)
    _, p, _ = draw_frame(frame)
    labels = p.pool("tree.body").texts()
    assert "|F| 50 of 100" in labels and "0 (zero force)" not in labels
    zero = frame_from_codes(flat(), [RUNNING] * 6, [[0.0, 0.0], [3.0, 4.0]], max_force=100)
    _, p, _ = draw_frame(zero)
    labels = p.pool("tree.body").texts()
    assert "0 (zero force)" in labels and "|F| 5 of 100" in labels


def test_the_force_dial_is_legible_and_its_text_never_runs_into_a_note() -> None:
    """A weak force (5 of 100) still draws a needle 0.4 of the radius long, toward it; a
    leaf's note starts after its |F| text."""
    from behaviortk.viewer.tree_panel import FORCE_FONT, FORCE_R, MONO_ADVANCE, NEEDLE_MIN

    frame = frame_from_codes(flat(), [RUNNING] * 6, [[np.nan, np.nan], [0.0, 5.0]], max_force=100)
    frame = dataclasses.replace(frame, notes=("", "", "", "", "", "41 ticks"))
    img, p, _ = draw_frame(frame)
    labels = {lab.text: lab for lab in p.pool("tree.body").labels}
    force, note = labels["|F| 5 of 100"], labels["41 ticks"]
    assert note.x >= force.x + len(force.text) * MONO_ADVANCE * FORCE_FONT  # past its glyphs
    # the needle points up (+y) from the dial's centre: red at 0.4 of the radius up
    x, y = force.x - 5.0 - FORCE_R, force.y
    red = at(img, x, y + NEEDLE_MIN * FORCE_R - 1.0)
    assert red[0] > 200 and red[1] < 60, red


def test_clicking_a_box_folds_its_subtree_and_clicking_again_unfolds_it() -> None:
    view = TreeView()
    frame = frame_from_codes(flat(), [SUCCESS] * 6)
    _, p, state = draw_frame(frame, view)
    x, y = box_centre(p, state, 1)
    assert view.node_at(x, y) == 1
    assert view.click(x, y) is True and view.collapsed == {1}
    _, p, _ = draw_frame(frame, view)
    labels = p.pool("tree.body").texts()
    assert "near" not in labels and "run" not in labels and "+2" in labels
    view.click(*box_centre(p, state, 1))
    assert view.collapsed == set()
    draw_frame(frame, view)
    assert view.click(*box_centre(p, state, 2)) is False  # a leaf: nothing to fold
    assert view.collapsed == set()


def test_zoom_keeps_the_node_under_the_pointer_and_drag_pans() -> None:
    view = TreeView()
    frame = frame_from_codes(flat(), [SUCCESS] * 6)
    _, p, state = draw_frame(frame, view)
    x, y = box_centre(p, state, 3)
    view.wheel(x, y, 3)  # zoom in 1.15^3
    assert view.zoom == pytest.approx(1.15**3)
    draw_frame(frame, view)
    assert view.node_at(x, y) == 3
    view.drag(0.0, ROW * view.zoom)  # one row up: the next node is now under the pointer
    draw_frame(frame, view)
    assert view.node_at(x, y) == 4
    view.fit()
    assert view.zoom == 1.0 and view.pan.tolist() == [0.0, 0.0]


def sixty_node_tree() -> dict:
    """A selector of 11 guarded sequences, each with a condition and three leaves plus a
    decorated leaf: 1 + 11 * (1 + 1 + 3 + 2) + 3 = 81 > 60 nodes; trimmed to exactly 60."""
    branches = []
    for k in range(8):
        branches.append(
            {
                "type": "sequence",
                "name": f"branch_{k}",
                "memory": False,
                "children": [
                    {
                        "type": "in_range",
                        "name": f"near_{k}",
                        "target": {"kind": "pointer"},
                        "radius": 10 * k,
                    },
                    {"type": "seek", "name": f"seek_{k}", "target": {"kind": "pointer"}},
                    {"type": "flee", "name": f"flee_{k}", "target": {"kind": "pointer"}},
                    {
                        "type": "inverter",
                        "name": f"not_{k}",
                        "child": {"type": "wander", "name": f"wander_{k}"},
                    },
                    {"type": "wait", "name": f"wait_{k}", "duration": 1},
                ],
            }
        )
    # 1 root + 8 * 7 = 57, plus a last sequence of two leaves = 60
    branches.append(
        {
            "type": "sequence",
            "name": "last",
            "memory": True,
            "children": [{"type": "wander"}, {"type": "wait", "duration": 2}],
        }
    )
    return {"type": "selector", "name": "root", "memory": False, "children": branches}


def test_sixty_nodes_are_readable_and_reachable_by_panning() -> None:
    tree = flatten(validate_node(sixty_node_tree(), default()), default())
    assert len(tree) == 60
    lay = layout_tree(tree)
    # One row per node, rows farther apart than a box is tall, text inside its box.
    assert np.unique(lay.y).size == 60 and ROW > BOX_H
    import arcade

    from behaviortk.viewer.labels import MONO
    from behaviortk.viewer.tree_layout import TEXT_PAD, label_of

    painter()  # the window (fonts need a GL context)
    measured = np.array(
        [
            arcade.Text(label_of(tree, i), 0, 0, font_name=MONO, font_size=9).content_width
            for i in range(60)
        ]
    )
    assert (lay.w >= measured + TEXT_PAD).all()  # every name fits inside its box
    view = TreeView()
    codes = np.full(60, SUCCESS)
    img, p, _ = draw_frame(frame_from_codes(tree, codes), view)
    body = p.layout.content
    visible = (body.height - HEADER - PAD) // ROW
    assert visible >= 20  # at zoom 1 (9 pt text) a screenful holds 20+ rows
    first = img[: img.shape[0] - round(body.y0), round(body.x0) :]
    assert count_color(first, palette.NODE_SUCCESS, tol=0) > 20 * 500  # 20+ filled boxes
    view.drag(0.0, lay.height - 0.5 * (body.height - HEADER))  # drag up: the bottom shows
    draw_frame(frame_from_codes(tree, codes), view)
    x = body.x0 + PAD + lay.x[59] + 10.0 + float(view.pan[0])
    y = body.y1 - HEADER - PAD - lay.y[59] - BOX_H / 2 + float(view.pan[1])
    assert body.y0 < y < body.y1 - HEADER
    assert view.node_at(x, y) == 59


def test_frames_from_a_live_simulation_carry_its_statuses_and_forces() -> None:
    data = definition(ROOT, count=2, positions=[[100, 100], [300, 300]])
    sim = Simulation(load_text(json.dumps(data), "t.json"), engine="batch")
    sim.pointer = np.array([110.0, 100.0])  # agent 0 is 10 away: scared; agent 1 roams
    sim.step()
    f0, f1 = frame_from_sim(sim, 0), frame_from_sim(sim, 1)
    assert f0 is not None and f1 is not None
    np.testing.assert_array_equal(f0.status, sim.decisions["a"].status[0])
    np.testing.assert_array_equal(f1.status, sim.decisions["a"].status[1])
    rows, forces = sim.contributions["a"][0]  # "run" (flee): only agent 0 asked
    assert rows.tolist() == [0]
    np.testing.assert_allclose(f0.forces[0], forces[0])
    assert np.isnan(f0.forces[1]).all() and np.isnan(f1.forces[0]).all()
    assert np.isfinite(f1.forces[1]).all()  # roam (wander) asked for agent 1
    assert f0.max_force == sim.agents.max_force[0]
