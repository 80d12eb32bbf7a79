"""Non-penetration (``world/non_penetration.py``) and the overlap figure (``world/overlap.py``).

Pushes worked out by hand from the rule: a pair closer than ``r_i + r_j`` is
pushed along its centre line by ``1.6 * ((r_i + r_j) * 1.02 - distance)``
(over-relaxation 1.6, contact margin 2 %), shared by inverse mass; agents
inside obstacles or closer to a wall than their radius are pushed to their
contact distance times 1.02, unrelaxed.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import behaviortk
from behaviortk.sim.simulation import Simulation
from behaviortk.world.build import wall_geometry
from behaviortk.world.factory import make_agents
from behaviortk.world.non_penetration import (
    CONTACT_MARGIN,
    DEFAULT_PASSES,
    OVER_RELAXATION,
    NonPenetration,
    distinct,
)
from behaviortk.world.overlap import OverlapLog, close_pairs, overlap_fraction, overlapping
from behaviortk.world.state import World

NONE_FIXED = np.zeros(8, dtype=bool)


def settle(world: World, agents, before=None, passes: int = 1, fixed=None, **kw) -> NonPenetration:
    constraint = NonPenetration(passes, **kw)
    fixed = NONE_FIXED[: agents.n] if fixed is None else np.asarray(fixed)
    constraint.apply(world, agents, agents.pos.copy() if before is None else before, fixed)
    return constraint


def test_the_constants_the_hand_computations_use() -> None:
    assert (OVER_RELAXATION, CONTACT_MARGIN) == (1.6, 0.02)
    from behaviortk.format.world import WorldDef

    assert WorldDef(width=1, height=1).non_penetration_passes == DEFAULT_PASSES


def test_an_overlapping_pair_is_pushed_apart_along_its_centre_line() -> None:
    """(10,10) and (17,10), radii 5: distance 7 < 10.1. Push 1.6 * (10.2 - 7) = 5.12, half
    each: x = 10 - 2.56 = 7.44 and 17 + 2.56 = 19.56 (distance 12.12). y does not change."""
    w = World(width=100, height=100, edges="contain")
    ag = make_agents([[10, 10], [17, 10]], radius=5.0)
    c = settle(w, ag)
    assert_allclose(ag.pos, [[7.44, 10.0], [19.56, 10.0]])
    assert c.last_passes == 1


def test_the_short_way_across_a_wrapped_edge_and_the_fold_back() -> None:
    """(99,50) and (3,50) on a 100-wide torus are 4 apart through the edge. Push 1.6 * (10.2 -
    4) = 9.92, half each: 99 - 4.96 = 94.04 and 3 + 4.96 = 7.96."""
    w = World(width=100, height=100, edges="wrap")
    ag = make_agents([[99, 50], [3, 50]], radius=5.0)
    settle(w, ag)
    assert_allclose(ag.pos, [[94.04, 50.0], [7.96, 50.0]])
    ag = make_agents([[99.5, 50], [0.5, 50]], radius=5.0)  # 1 apart: push 14.72, 7.36 each
    settle(w, ag)
    assert_allclose(ag.pos, [[92.14, 50.0], [7.86, 50.0]])  # 99.5 - 7.36; 0.5 + 7.36
    assert ((ag.pos >= 0) & (ag.pos < 100)).all()


def test_the_overlap_is_shared_by_inverse_mass_and_fixed_agents_never_move() -> None:
    """Masses 1 and 3: inverse 1 and 1/3, shares 3/4 and 1/4 of 1.6 * (10.2 - 6) = 6.72:
    5.04 and 1.68. Fixed (external) second agent: the first takes all 6.72."""
    w = World(width=100, height=100, edges="contain")
    ag = make_agents([[20, 20], [26, 20]], radius=5.0, mass=np.array([1.0, 3.0]))
    settle(w, ag)
    assert_allclose(ag.pos, [[14.96, 20.0], [27.68, 20.0]])
    ag = make_agents([[20, 20], [26, 20]], radius=5.0)
    settle(w, ag, fixed=[False, True])
    assert_allclose(ag.pos, [[13.28, 20.0], [26.0, 20.0]])
    ag = make_agents([[20, 20], [26, 20]], radius=5.0)
    settle(w, ag, fixed=[True, True])  # neither can move: left as they are
    assert_allclose(ag.pos, [[20.0, 20.0], [26.0, 20.0]])


def test_coincident_agents_split_along_a_fixed_direction() -> None:
    w = World(width=100, height=100, edges="contain")
    ag = make_agents([[50, 50], [50, 50]], radius=5.0)
    settle(w, ag)
    d = ag.pos[1] - ag.pos[0]
    assert math.hypot(*d) == pytest.approx(1.6 * 10.2)  # the whole push, from distance 0
    assert_allclose(ag.pos.mean(axis=0), [50.0, 50.0])


def test_a_pair_at_rest_within_the_margin_is_left_alone() -> None:
    """10.05 apart: closer than the push target 10.2 but not than contact, 10."""
    w = World(width=100, height=100, edges="contain")
    ag = make_agents([[10, 10], [20.05, 10]], radius=5.0)
    c = settle(w, ag)
    assert_allclose(ag.pos, [[10, 10], [20.05, 10]])
    assert c.last_passes == 1


def test_out_of_an_obstacle_to_its_contact_distance() -> None:
    """Obstacle at (50,50) radius 10, agent radius 5 at (53,54): 5 from the centre, out along
    (3,4)/5 to 15 * 1.02 = 15.3: (59.18, 62.24). One on the very centre goes out along +x to
    (65.3, 50); one at (150,150) is far away. An obstacle push is exact (not over-relaxed)."""
    w = World(width=200, height=200, edges="contain")
    w.obstacle_pos = np.array([[50.0, 50.0]])
    w.obstacle_radius = np.array([10.0])
    ag = make_agents([[53, 54], [150, 150]], radius=5.0)
    settle(w, ag, passes=3)
    assert_allclose(ag.pos, [[50 + 3 * 3.06, 50 + 4 * 3.06], [150, 150]])
    ag = make_agents([[50, 50]], radius=5.0)
    settle(w, ag)
    assert_allclose(ag.pos, [[65.3, 50.0]])


def test_pairs_first_then_obstacles_in_each_pass() -> None:
    """(52,50) and (50,50), radii 5, inside the obstacle of radius 10 at (50,50). Pass 1: the
    pair (distance 2) is pushed 1.6 * (10.2 - 2) = 13.12, 6.56 each: x 58.56 and 43.44;
    then each goes out of the obstacle to 15.3 from its centre: 65.3 and 34.7. Pass 2 moves
    nothing (30.6 apart, both at 15.3 > 15)."""
    w = World(width=200, height=200, edges="contain")
    w.obstacle_pos = np.array([[50.0, 50.0]])
    w.obstacle_radius = np.array([10.0])
    ag = make_agents([[52, 50], [50, 50]], radius=5.0)
    c = settle(w, ag, passes=3)
    assert_allclose(ag.pos, [[65.3, 50.0], [34.7, 50.0]])
    assert c.last_passes == 2


def test_off_a_wall_and_back_across_one_crossed_this_tick() -> None:
    """Wall (0,50)-(100,50). Agent at (50,53), radius 5: 3 from the wall, out to 5.1 (y 55.1).
    An agent that moved from (30,52) to (30,47) crossed it: back to the side it came from,
    y = 50 + 5.1. One near the end (105,52) is 5.39 from the end point (100,50): left alone."""
    w = World(width=200, height=200, edges="contain")
    a, b, n = wall_geometry([_Wall((0, 50), (100, 50))])
    w.wall_a, w.wall_b, w.wall_normal = a, b, n
    ag = make_agents([[50, 53], [30, 47], [105, 52]], radius=5.0)
    before = np.array([[50, 53], [30, 52], [105, 52]], dtype=float)
    settle(w, ag, before=before, passes=2)
    assert_allclose(ag.pos, [[50, 55.1], [30, 55.1], [105, 52]])


def test_near_a_wall_end_the_push_is_away_from_the_end_point() -> None:
    """Wall (0,50)-(100,50); agent (102.7,53.6) radius 5: the closest point is the end
    (100,50), at distance 4.5 < 5: out along (3,4)/5 to 5.1, (103.06, 54.08)."""
    w = World(width=200, height=200, edges="contain")
    w.wall_a, w.wall_b, w.wall_normal = wall_geometry([_Wall((0, 50), (100, 50))])
    ag = make_agents([[102.7, 53.6]], radius=5.0)
    settle(w, ag, before=ag.pos.copy())
    assert_allclose(ag.pos, [[100 + 3 * 5.1 / 5, 50 + 4 * 5.1 / 5]])


class _Wall:
    def __init__(self, start: tuple[float, float], to: tuple[float, float]) -> None:
        self.start, self.to, self.inside = start, to, "left"


def test_bounded_worlds_keep_pushed_agents_inside() -> None:
    """(1,50) and (4,50) in a contained world: (1 - 5.44) would leave it; clamped at 0."""
    w = World(width=100, height=100, edges="contain")
    ag = make_agents([[1, 50], [4, 50]], radius=5.0)
    settle(w, ag, passes=DEFAULT_PASSES)
    assert ag.pos[0, 0] == 0.0
    assert ag.pos[1, 0] - ag.pos[0, 0] >= 10.0


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 40),
    edges=st.sampled_from(["wrap", "contain"]),
)
def test_enough_passes_leave_no_pair_overlapping_whatever_the_row_order(
    seed: int, n: int, edges: str
) -> None:
    """Random agents of radii 2-6 in a 120 x 120 world; the constraint with 200 passes leaves
    no pair closer than the sum of radii, and permuting the rows permutes the result."""
    rng = np.random.default_rng(seed)
    w = World(width=120, height=120, edges=edges)
    pos = rng.random((n, 2)) * 120
    radius = rng.uniform(2, 6, n)
    mass = rng.uniform(0.5, 2, n)
    ag = make_agents(pos, radius=radius, mass=mass)
    settle(w, ag, passes=200, fixed=np.zeros(n, dtype=bool))
    assert not overlapping(w, ag.pos, ag.radius).any()
    perm = rng.permutation(n)
    other = make_agents(pos[perm], radius=radius[perm], mass=mass[perm])
    settle(w, other, passes=200, fixed=np.zeros(n, dtype=bool))
    assert_allclose(other.pos, ag.pos[perm], atol=1e-6)


def test_over_relaxation_settles_a_packed_cluster_in_far_fewer_passes() -> None:
    """60 agents of radius 5 dropped into a 40 x 40 square (3.7 times over-packed): about 25
    passes with over-relaxation 1.6, about 70 without (the docstring's figures)."""
    w = World(width=100, height=100, edges="wrap")
    pos = np.random.default_rng(0).random((60, 2)) * 40 + 30
    counts = {}
    for factor in (1.0, OVER_RELAXATION):
        ag = make_agents(pos, radius=5.0)
        fixed = np.zeros(60, bool)
        counts[factor] = settle(w, ag, passes=200, fixed=fixed, over_relaxation=factor).last_passes
        assert not overlapping(w, ag.pos, ag.radius).any()
    assert counts[OVER_RELAXATION] <= 35 < 55 <= counts[1.0]


def test_candidate_lists_are_reused_until_an_agent_moves_far_enough() -> None:
    """Two agents 40 apart close in 1 unit each per tick (radius 5: skin 3 * 5 = 15; lists
    rebuilt before the passes once an agent moved 0.375 * 15 = 5.625): built at ticks 0, 6
    and 12; from tick 15 they touch and the pushes hold them near where they met, so the
    lists are not built again. They never overlap."""
    w = World(width=200, height=200, edges="contain")
    ag = make_agents([[80, 100], [120, 100]], radius=5.0)
    c = NonPenetration(DEFAULT_PASSES, skin_radii=3.0)
    for _ in range(30):
        before = ag.pos.copy()
        ag.pos = ag.pos + np.array([[1.0, 0.0], [-1.0, 0.0]])
        c.apply(w, ag, before, np.zeros(2, bool))
        assert np.hypot(*(ag.pos[1] - ag.pos[0])) >= 10.0
    assert c.builds == 3


def test_the_lists_follow_spawns_and_moved_obstacles() -> None:
    data = {
        "name": "np",
        "world": {"width": 200, "height": 200, "edges": "contain", "non_penetration": True},
        "obstacles": [{"at": [100, 100], "radius": 20}],
        "groups": [
            {
                "name": "a",
                "count": 5,
                "spawn": {"kind": "area", "min": [90, 90], "max": [110, 110]},
                "tree": "t",
                "radius": 4,
            }
        ],
        "trees": {"t": {"root": {"type": "seek", "target": {"kind": "point", "at": [100, 100]}}}},
    }
    sim = Simulation(behaviortk.load_text(json.dumps(data), "np.json"), engine="batch")
    sim.step()
    assert np.hypot(*(sim.agents.pos - 100).T).min() >= 24.0
    sim.spawn("a", 3, pos=[100, 100])
    sim.step()
    assert sim.agents.n == 8 and np.hypot(*(sim.agents.pos - 100).T).min() >= 24.0
    sim.world.obstacle_pos = sim.agents.pos[:1].copy()  # dragged onto an agent in the viewer
    sim.step()
    assert np.hypot(*(sim.agents.pos - sim.world.obstacle_pos).T).min() >= 24.0
    assert not overlapping(sim.world, sim.agents.pos, sim.agents.radius).any()


def test_external_agents_are_not_pushed() -> None:
    data = {
        "name": "np",
        "world": {"width": 200, "height": 200, "edges": "wrap", "non_penetration": True},
        "groups": [
            {
                "name": "player",
                "count": 1,
                "control": "external",
                "spawn": {"kind": "positions", "points": [[100, 100]]},
                "radius": 10,
            },
            {
                "name": "crowd",
                "count": 4,
                "spawn": {
                    "kind": "positions",
                    "points": [[104, 100], [96, 100], [100, 105], [104, 100]],
                },
                "tree": "t",
                "radius": 4,
                "speed": 0,
            },
        ],
        "trees": {"t": {"root": {"type": "seek", "target": {"kind": "point", "at": [100, 100]}}}},
    }
    for engine in ("py_trees", "batch"):
        sim = Simulation(behaviortk.load_text(json.dumps(data), "np.json"), engine=engine)
        for _ in range(5):
            sim.move(0, [100, 100])
            sim.step()
            assert_allclose(sim.agents.pos[0], [100, 100])
        assert not overlapping(sim.world, sim.agents.pos, sim.agents.radius).any()


# ------------------------------------------------------------------ the overlap figure


def test_overlap_figure_by_hand() -> None:
    """100-wide torus: A (0.5,50) and B (99,50) are 1.5 apart (< 10): both overlap. C (20,50)
    and D (30.5,50) are 10.5 apart (> 10); E (40,50) radius 6 is 9.5 from D (< 11): D and E
    overlap. 4 of 5 agents: 0.8. Exactly touching (distance = sum) does not count."""
    w = World(width=100, height=100, edges="wrap")
    ag = make_agents(
        [[0.5, 50], [99, 50], [20, 50], [30.5, 50], [40, 50]],
        radius=np.array([5.0, 5, 5, 5, 6]),
    )
    assert overlapping(w, ag.pos, ag.radius).tolist() == [True, True, False, True, True]
    assert overlap_fraction(w, ag) == pytest.approx(0.8)
    touching = make_agents([[10, 10], [20, 10]], radius=5.0)
    assert overlap_fraction(w, touching) == 0.0
    i, j = close_pairs(w, touching.pos, touching.radius, reach=0.5)
    assert (i.tolist(), j.tolist()) == ([0], [1])
    assert overlap_fraction(w, make_agents(np.zeros((0, 2)))) == 0.0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 60), wrap=st.booleans())
def test_overlapping_matches_every_pair_measured(seed: int, n: int, wrap: bool) -> None:
    rng = np.random.default_rng(seed)
    w = World(width=90, height=70, edges="wrap" if wrap else "bounce")
    pos = rng.random((n, 2)) * [90, 70]
    radius = rng.uniform(1, 8, n)
    d = pos[None, :, :] - pos[:, None, :]
    if wrap:
        d -= np.array([90, 70]) * np.round(d / [90, 70])
    close = np.hypot(d[..., 0], d[..., 1]) < radius[:, None] + radius[None, :]
    np.fill_diagonal(close, False)
    assert overlapping(w, pos, radius).tolist() == close.any(axis=1).tolist()


def test_overlap_log_summary() -> None:
    """Fractions 0.5, 0.25, 0: last 0, max 0.5, mean 0.25."""
    log = OverlapLog()
    assert log.summary() == {"ticks": 0, "last": 0.0, "max": 0.0, "mean": 0.0}
    for f in (0.5, 0.25, 0.0):
        log.add(f)
    assert log.summary() == {"ticks": 3, "last": 0.0, "max": 0.5, "mean": 0.25}
    assert "50% at most, 25% mean, 0% after the last of 3 ticks" in log.describe()
    log.add(2 / 50_003)  # one pair among 50,003 agents still shows
    assert "0.004% after the last of 4 ticks" in log.describe()


def test_distinct_by_sort_and_by_table() -> None:
    values = np.array([5, 3, 5, 0, 3], dtype=np.int64)
    assert distinct(values, 1000).tolist() == [0, 3, 5]  # few: sorted
    assert distinct(values, 6).tolist() == [0, 3, 5]  # many: a mark table
