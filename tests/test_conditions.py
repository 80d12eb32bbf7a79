"""Conditions: hand-worked values of the vector formulas, hysteresis, and evaluation on a real Sense.

Formulas are the ones written in behaviortk/leaves/conditions.py: in_range is a
Schmitt trigger (enter at ``radius``, leave beyond ``radius + hysteresis``),
facing compares the angle between heading and the direction to the target
with half its full angle (``h . d >= |d| cos(angle / 2)``, as can_see's fov), chance is ``u < p`` on the seeded table.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from behaviortk.leaves.conditions import (
    Arrived,
    Chance,
    Facing,
    InRange,
    NeighboursCond,
    arrived_mask,
    chance_mask,
    compare,
    count_within,
    evaluate_condition,
    facing_mask,
    in_range_mask,
)
from behaviortk.sense.sensing import Sense
from behaviortk.world.factory import make_agents
from behaviortk.world.state import World


def test_in_range_hysteresis_sequence() -> None:
    """radius 10, hysteresis 5: in at <= 10, out only beyond 15."""
    dists = [12.0, 9.0, 13.0, 14.9, 15.1, 12.0, 9.5, 10.0]
    expected = [False, True, True, True, False, False, True, True]
    prev = np.zeros(1, dtype=bool)
    got = []
    for d in dists:
        prev = in_range_mask(np.array([d]), np.array([True]), 10.0, 5.0, prev)
        got.append(bool(prev[0]))
    assert got == expected


def test_in_range_invalid_target_is_false() -> None:
    out = in_range_mask(np.array([1.0, 1.0]), np.array([True, False]), 10.0, 0.0, np.ones(2, bool))
    assert out.tolist() == [True, False]


@given(
    st.floats(0, 1000),
    st.floats(0, 100),
    st.floats(0, 100),
    st.booleans(),
)
def test_in_range_properties(dist: float, radius: float, hysteresis: float, prev: bool) -> None:
    """Without hysteresis prev is irrelevant; with it, prev True can only add to the result."""
    d, v = np.array([dist]), np.array([True])
    plain = in_range_mask(d, v, radius, 0.0, np.array([prev]))[0]
    assert plain == (dist <= radius)
    off = in_range_mask(d, v, radius, hysteresis, np.array([False]))[0]
    on = in_range_mask(d, v, radius, hysteresis, np.array([True]))[0]
    assert off == (dist <= radius)
    assert on == (dist <= radius + hysteresis)
    assert on or not off


def test_arrived_needs_both_distance_and_speed() -> None:
    dist = np.array([1.0, 1.0, 3.0, 1.0])
    speed = np.array([0.5, 2.0, 0.5, 0.5])
    valid = np.array([True, True, True, False])
    assert arrived_mask(dist, speed, valid, 2.0, 1.0).tolist() == [True, False, False, False]


def test_facing_45_degrees_by_hand() -> None:
    """Heading +x, target at (1, 1): 45 degrees off the heading, so inside a cone of full
    angle 90 (45 either side) and outside one of 88 (44 either side)."""
    h = np.array([[1.0, 0.0]])
    p = np.zeros((1, 2))
    t = np.array([[1.0, 1.0]])
    v = np.array([True])
    assert facing_mask(h, p, t, v, 90.0).tolist() == [True]
    assert facing_mask(h, p, t, v, 88.0).tolist() == [False]
    assert facing_mask(h, p, t, v, 45.0).tolist() == [False]  # 22.5 either side
    behind = np.array([[-1.0, 0.0]])
    assert facing_mask(h, p, behind, v, 358.0).tolist() == [False]  # 179 either side
    assert facing_mask(h, p, behind, v, 360.0).tolist() == [True]  # all round
    assert facing_mask(h, p, p, v, 0.0).tolist() == [True]  # standing on the target


@given(st.floats(-math.pi, math.pi), st.floats(1.0, 359.0), st.floats(1e-3, 500))
def test_facing_matches_the_angle(theta: float, angle: float, r: float) -> None:
    """Same answer as measuring the angle with atan2 against half the full angle (away
    from the boundary, where the cosine slack of the field-of-view test decides)."""
    measured = abs(math.degrees(theta))
    if abs(measured - angle / 2.0) < 1e-4:
        return
    h = np.array([[1.0, 0.0]])
    t = np.array([[r * math.cos(theta), r * math.sin(theta)]])
    got = facing_mask(h, np.zeros((1, 2)), t, np.array([True]), angle)[0]
    assert got == (measured <= angle / 2.0)


def test_facing_and_can_see_share_one_convention() -> None:
    """facing with angle A is can_see with fov A, unlimited distance, no line of sight:
    a target 30 degrees off the heading is inside both at 60 (30 either side) and 61,
    outside both at 59."""
    from steering_support import node

    from behaviortk.leaves.conditions import can_see, facing

    ang = math.radians(30.0)
    agents = make_agents(
        [[0.0, 0.0], [100 * math.cos(ang), 100 * math.sin(ang)]],
        heading=[[1.0, 0.0], [1.0, 0.0]],
        view_distance=1000.0,
    )
    sense = Sense(World(400.0, 400.0, "contain"), agents, np.zeros((2, 1)), 0, 0.0)
    target = {"kind": "agent", "id": "agents-1"}
    prev = np.zeros(2, dtype=bool)
    for angle, inside in ((61.0, True), (60.0, True), (59.0, False)):
        f = node({"type": "facing", "target": target, "angle": angle})
        c = node({"type": "can_see", "target": target, "fov": angle, "line_of_sight": False})
        assert bool(facing(f, sense, "agents", prev, None)[0]) is inside
        assert bool(can_see(c, sense, "agents", prev, None)[0]) is inside


def test_chance_is_u_below_p() -> None:
    u = np.array([0.0, 0.25, 0.5, 0.75, 0.999])
    assert chance_mask(u, 0.5).tolist() == [True, True, False, False, False]
    assert chance_mask(u, 0.0).tolist() == [False] * 5
    assert chance_mask(u, 1.0).tolist() == [True] * 5


def test_count_within_radius() -> None:
    i = np.array([5, 5, 6, 8])
    dist = np.array([1.0, 4.0, 2.0, 9.0])
    assert count_within(i, dist, 5, 4, None).tolist() == [2, 1, 0, 1]
    assert count_within(i, dist, 5, 4, 3.0).tolist() == [1, 1, 0, 0]


def test_compare_truth_table() -> None:
    assert compare("==", 1, 1.0) and not compare("==", True, 1)
    assert compare("<", 1, 2) and not compare("<", "a", "b")
    assert compare(">=", 2.0, 2) and not compare(">", 2, 2)
    assert compare("==", "idle", "idle") and compare("!=", "idle", "run")
    assert compare("==", (1.0, 2.0), [1, 2])
    assert not compare("==", None, None) and not compare("!=", None, 1)  # unset key


def sense_of(pos: list[list[float]], groups: list[tuple[str, int]], heading=None) -> Sense:
    world = World(width=1000.0, height=1000.0, edges="wrap")
    agents = make_agents(
        np.array(pos, dtype=float),
        np.zeros((len(pos), 2)),
        heading=heading,
        groups=groups,
        view_distance=50.0,
    )
    return Sense(world, agents, np.array([[0.1], [0.9], [0.3], [0.6]])[: len(pos)], 0, 0.0)


def test_evaluate_in_range_on_a_wrapped_world() -> None:
    """Prey at x=5 and x=500, predator at x=995: wrap-aware distances 10 and 495."""
    s = sense_of([[5, 0], [500, 0], [995, 0]], [("prey", 2), ("predator", 1)])
    m = InRange(target={"kind": "nearest", "group": "predator"}, radius=10.0)
    got = evaluate_condition(m, s, "prey", np.zeros(2, bool), -1)
    assert got.tolist() == [True, False]


def test_evaluate_neighbours_arrived_facing_chance() -> None:
    s = sense_of(
        [[0, 0], [30, 0], [500, 500], [520, 500]],
        [("a", 4)],
        heading=np.array([[1.0, 0.0]] * 4),
    )
    prev = np.zeros(4, bool)
    near = NeighboursCond(min_count=1)
    assert evaluate_condition(near, s, "a", prev, -1).tolist() == [True, True, True, True]
    tight = NeighboursCond(min_count=1, radius=25.0)
    assert evaluate_condition(tight, s, "a", prev, -1).tolist() == [False, False, True, True]
    at = Arrived(target={"kind": "point", "at": [0, 1]}, tolerance=2.0, max_speed=1.0)
    assert evaluate_condition(at, s, "a", prev, -1).tolist() == [True, False, False, False]
    # heading +x; (100, 0) is dead ahead of rows 0 and 1, behind rows 2 and 3
    face = Facing(target={"kind": "point", "at": [100, 0]}, angle=10.0)
    assert evaluate_condition(face, s, "a", prev, -1).tolist() == [True, True, False, False]
    # (100, 100) is exactly 45 degrees off for row 0: inside a full angle of 90, not of 88
    wide = Facing(target={"kind": "point", "at": [100, 100]}, angle=90.0)
    assert evaluate_condition(wide, s, "a", prev, -1).tolist()[0] is True
    narrow = Facing(target={"kind": "point", "at": [100, 100]}, angle=88.0)
    assert evaluate_condition(narrow, s, "a", prev, -1).tolist()[0] is False
    luck = Chance(probability=0.5)
    assert evaluate_condition(luck, s, "a", prev, 0).tolist() == [True, False, True, False]
