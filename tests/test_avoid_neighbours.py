"""``avoid_neighbours``: OpenSteer's steerToAvoidNeighbors, against numbers worked out by hand.

Time of closest approach ``t = (v_j - v_i) . (p_i - p_j) / |v_j - v_i|^2``; a threat
when ``0 <= t < time_horizon`` and ``|d + (v_j - v_i) t| < r_i + r_j``; the force is
``side * steer * max_speed`` with ``side = perp(heading)`` (left of the heading).
"""

from __future__ import annotations

import json

import numpy as np
from numpy.testing import assert_allclose
from steering_support import node, run, world

import behaviortk
from behaviortk.sim.simulation import Simulation
from behaviortk.steering.debug import DebugBuffer
from behaviortk.world.factory import make_agents

AVOID = {"type": "avoid_neighbours"}


def pair(pos, vel, radius=5.0, max_speed=100.0, view=500.0):
    return make_agents(pos, vel, radius=radius, max_speed=max_speed, view_distance=view)


def force(agents, spec=AVOID, w=None):
    return run(node(spec), agents, w).linear


def test_head_on_both_steer_away_from_where_the_other_will_be() -> None:
    """i (0,0) v (10,0); j (30,1) v (-10,0). rel = (-20,0), p_i - p_j = (-30,-1): t = 600 / 400
    = 1.5 s; gap (30,1) + (-30,0) = (0,1), 1 < 10: a threat. Headings' dot -1: head on. For i
    the threat will be at (30,1) + (-15,0) = (15,1), on its left (side (0,1), dot 1 > 0):
    steer -side, (0,-100). For j (heading -x, side (0,-1)) i will be at (-15,-1): dot 1 > 0,
    steer -side = (0,100)."""
    out = force(pair([[0, 0], [30, 1]], [[10, 0], [-10, 0]]))
    assert_allclose(out, [[0, -100], [0, 100]], atol=1e-12)


def test_side_by_side_steer_away_from_where_the_other_is() -> None:
    """Both heading +x: i (0,0) v (20,0); j (-20,3) v (30,0) catches up. rel (10,0), p_i - p_j
    = (20,-3): t = 200 / 100 = 2 s; gap (-20,3) + (20,0) = (0,3) < 10. Parallel: j is at
    offset (-20,3), left of i (dot 3 > 0): i steers right, (0,-100). For j, i is at (20,-3),
    to its right (side (0,1), dot -3): j steers left, (0,100)."""
    out = force(pair([[0, 0], [-20, 3]], [[20, 0], [30, 0]]))
    assert_allclose(out, [[0, -100], [0, 100]], atol=1e-12)


def test_crossing_paths_the_slower_passes_behind() -> None:
    """i (0,0) v (10,0); j (20,-20) v (0,10). rel (-10,10), p_i - p_j = (-20,20): t = 400 / 200
    = 2 s; gap (20,-20) + (-20,20) = (0,0): a collision. Headings perpendicular; equal speeds,
    so both steer behind the other: i against j's velocity along its side (dot((0,1),(0,10))
    > 0): -side = (0,-100); j (side (-1,0)) against i's velocity (dot -10 < 0): +side =
    (-100,0). Make j faster, v (0,15): t = (-10,15).(-20,20) / 325 = 500/325 = 1.538 s, gap
    (20 - 15.38, -20 + 23.08) = (4.62, 3.08), 5.55 < 10: still a threat to both. Only an
    agent at least as fast as its threat steers (OpenSteer's code): j steers behind i as
    before, i does not steer."""
    out = force(pair([[0, 0], [20, -20]], [[10, 0], [0, 10]]))
    assert_allclose(out, [[0, -100], [-100, 0]], atol=1e-12)
    out = force(pair([[0, 0], [20, -20]], [[10, 0], [0, 15]]))
    assert_allclose(out, [[0, 0], [-100, 0]], atol=1e-12)


def test_no_threat_beyond_the_horizon_when_parting_or_passing_wide() -> None:
    """Head on 30 apart closing at 20: t = 1.5 s; horizon 1 s: nothing. Parting (v swapped):
    t = -1.5 s: nothing. Passing 12 apart sideways (gap 12 > 10): nothing."""
    closing = pair([[0, 0], [30, 1]], [[10, 0], [-10, 0]])
    assert_allclose(force(closing, {**AVOID, "time_horizon": 1.0}), 0.0)
    assert_allclose(force(pair([[0, 0], [30, 1]], [[-10, 0], [10, 0]])), 0.0)
    assert_allclose(force(pair([[0, 0], [30, 12]], [[10, 0], [-10, 0]])), 0.0)


def test_the_soonest_threat_wins() -> None:
    """Agent 0 at (0,0) v (10,0), horizon 5 s, faces two head-on threats: agent 1 at (30,1)
    (t = 1.5 s, will be on its left) and agent 2 at (60,-2) v (-10,0) (t = 1200 / 400 = 3 s,
    gap (0,-2), will be on its right). The soonest, agent 1, decides: steer right, (0,-100)."""
    ag = pair([[0, 0], [30, 1], [60, -2]], [[10, 0], [-10, 0], [-10, 0]])
    out = force(ag, {**AVOID, "time_horizon": 5.0})
    assert_allclose(out[0], [0, -100], atol=1e-12)


def test_an_overlapping_neighbour_comes_first_straight_sideways() -> None:
    """i (0,0) heading +x, radius 6; j (6,8) radius 6: 10 < 12, overlapping. -d = (-6,-8); its
    part across the heading is (0,-8): force (0,-1) * 100. A neighbour dead ahead at (5,0)
    has no such part: left to the prediction (both still: t = 0, gap 5 < 12, parallel
    headings, j ahead on neither side: dot 0 -> +side, (0,100))."""
    ag = make_agents([[0, 0], [6, 8]], radius=6.0, max_speed=100.0, view_distance=50.0)
    assert_allclose(force(ag)[0], [0, -100], atol=1e-12)
    ag = make_agents(
        [[0, 0], [5, 0]], heading=[[1, 0], [1, 0]], radius=6.0, max_speed=100.0, view_distance=50.0
    )
    assert_allclose(force(ag)[0], [0, 100], atol=1e-12)


def test_across_a_wrapped_edge_and_the_debug_crosshair() -> None:
    """The head-on case shifted so that i sits at (95,50) and j at (25,51) on a 100-wide
    torus: the short way j is at (30,1) from i, as in the first test. The crosshair marks
    where the threat will be: (95,50) + (15,1) = (110,51) (unwrapped, next to i)."""
    w = world(100.0, 100.0, "wrap")
    ag = pair([[95, 50], [25, 51]], [[10, 0], [-10, 0]], view=40.0)
    debug = DebugBuffer(enabled=True)
    out = run(node(AVOID), ag, w, debug=debug, rows=[0]).linear
    assert_allclose(out, [[0, -100]], atol=1e-12)
    rows, points = debug.gather("crosshair", "point")
    assert rows.tolist() == [0]
    assert_allclose(points, [[110, 51]])


def test_both_engines_agree_with_non_penetration_on() -> None:
    from engine_support import definition

    root = {
        "type": "blend",
        "children": [
            {"type": "avoid_neighbours", "of": "any"},
            {"type": "seek", "target": {"kind": "point", "at": [200, 200]}},
        ],
    }
    data = definition(root, count=30)
    data["groups"][0]["radius"] = 6
    data["world"]["non_penetration"] = True
    scenario = behaviortk.load_text(json.dumps(data), "avoid.json")
    ref, batch = (Simulation(scenario, engine=e) for e in ("py_trees", "batch"))
    for _ in range(40):
        ref.step()
        batch.step()
        assert np.array_equal(ref.decisions["a"].status, batch.decisions["a"].status)
        assert np.array_equal(ref.agents.pos, batch.agents.pos)
