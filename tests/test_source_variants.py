"""The sources' own variants (issue 13, part 6), against numbers worked out by hand.

Lennard-Jones avoidance as a velocity update, follow, Millington's plain
pursue and the facing threshold, Buckland's normalised cohesion, Millington's
orientation wander; then both engines on a small definition using each.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from engine_support import definition
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from steering_support import node, run, world

import behaviortk
from behaviortk.registry import default
from behaviortk.sim.simulation import Simulation
from behaviortk.steering import kernels
from behaviortk.steering.debug import DebugBuffer
from behaviortk.steering.primitives import following
from behaviortk.steering.requests import Requests
from behaviortk.tree.flat import Decision, flatten
from behaviortk.world.factory import make_agents

# U(d = 2) = B / d^m = 20 / 2^2.5 = 20 / 5.656854 = 3.535534
U2 = 20 / 2**2.5


# ------------------------------------------------- lj_avoidance, update: velocity
def test_lj_velocity_update_one_obstacle():
    """Obstacle (0,0) R 10; agent (20,0), v (0,5), mass 2, dt 0.1, speed 5.

    r = (20,0), d = 20/10 = 2, u = U r/|r| = (3.535534, 0); v + u = (3.535534, 5),
    |.| = sqrt(12.5 + 25) = 6.123724; v_new = 5 (0.577350, 0.816497) = (2.886751, 4.082483).
    Force m (v_new - v) / dt = 2 (2.886751, -0.917517) / 0.1 = (57.735027, -18.350342).
    """
    w = world(obstacle_pos=np.array([[0.0, 0.0]]), obstacle_radius=np.array([10.0]))
    a = make_agents([[20, 0]], [[0, 5]], mass=2.0)
    out = run(node({"type": "lj_avoidance", "update": "velocity"}), a, w, dt=0.1)
    assert_allclose(out.linear, [[57.735027, -18.350342]], atol=1e-6)
    # the same force really gives v_new after one step: v + F/m dt = (0,5) + (2.886751, -0.917517)
    assert_allclose(a.vel + out.linear / 2.0 * 0.1, [[2.886751, 4.082483]], atol=1e-6)


def test_lj_velocity_update_goes_obstacle_by_obstacle():
    """A second obstacle (20,20) R 10 acts on the velocity the first one left (the source's loop).

    After obstacle 1: v1 = (2.886751, 4.082483). Obstacle 2: r = (0,-20), d = 2,
    u = (0, -3.535534); v1 + u = (2.886751, 0.546949), |.| = 2.938109;
    v2 = 5 (2.886751, 0.546949) / 2.938109 = (4.912600, 0.930784).
    Summing both pushes first would give 5 normalize((3.535534, 1.464466)) instead.
    Force with mass 1, dt 1: v2 - v = (4.912600, -4.069216).
    """
    w = world(
        obstacle_pos=np.array([[0.0, 0.0], [20.0, 20.0]]), obstacle_radius=np.array([10.0, 10.0])
    )
    a = make_agents([[20, 0]], [[0, 5]])
    out = run(node({"type": "lj_avoidance", "update": "velocity"}), a, w, dt=1.0)
    assert_allclose(out.linear, [[4.912600, 0.930784 - 5.0]], atol=1e-6)


def test_lj_velocity_update_cutoff_and_speed():
    """Beyond the cut-off (41 > 40) the velocity is kept: zero force. ``speed: null`` sets
    max speed 8 instead of 5: v_new = 8 (0.577350, 0.816497) = (4.618802, 6.531973);
    mass 1, dt 1 -> force (4.618802, 1.531973)."""
    w = world(obstacle_pos=np.array([[0.0, 0.0]]), obstacle_radius=np.array([10.0]))
    a = make_agents([[41, 0], [20, 0]], [[0, 5], [0, 5]], max_speed=8.0)
    spec = {"type": "lj_avoidance", "update": "velocity", "speed": None}
    out = run(node(spec), a, w, dt=1.0)
    assert_allclose(out.linear, [[0.0, 0.0], [4.618802, 1.531973]], atol=1e-6)


def test_lj_force_form_unchanged_by_default():
    """Default update 'force': U r/|r| = (3.535534, 0), whatever the velocity."""
    w = world(obstacle_pos=np.array([[0.0, 0.0]]), obstacle_radius=np.array([10.0]))
    a = make_agents([[20, 0]], [[0, 5]])
    assert_allclose(run(node({"type": "lj_avoidance"}), a, w).linear, [[U2, 0.0]])


# ------------------------------------------------------------------- follow
def followers() -> Any:
    """Agent 0 at the origin, v (1,0); in view: 1 at (10,0) v (4,0), 2 at (0,10) v (0,2);
    3 at (500,500) is out of view (50)."""
    return make_agents(
        [[0, 0], [10, 0], [0, 10], [500, 500]],
        [[1, 0], [4, 0], [0, 2], [7, 7]],
        view_distance=50.0,
    )


def requests_for(spec: dict[str, Any], agents: Any, emitted: list[bool]) -> Requests:
    """This tick's requests when only the rows in ``emitted`` ticked the leaf ``spec``."""
    tree = flatten(node(spec), default())
    decision = Decision(
        emitted=np.array(emitted, dtype=bool)[:, None],
        status=np.zeros((len(emitted), len(tree)), dtype=np.int8),
    )
    return Requests({"agents": tree}, {"agents": decision}, agents.slices)


def test_follow_takes_mean_velocity_of_those_not_following():
    """Nobody else follows: mean of (4,0) and (0,2) = (2,1); mass 1, dt 0.1:
    force (v_new - v) / dt = ((2,1) - (1,0)) / 0.1 = (10, 10).
    Agent 2 also follows (it asked and sees agents 0 and 1): left out, mean (4,0),
    force ((4,0) - (1,0)) / 0.1 = (30, 0). Agent 3 sees nobody: zero force."""
    ag = followers()
    spec = {"type": "follow"}
    alone = requests_for(spec, ag, [True, False, False, True])
    out = run(node(spec), ag, dt=0.1, rows=[0, 3], requests=alone)
    assert_allclose(out.linear, [[10.0, 10.0], [0.0, 0.0]])
    both = requests_for(spec, ag, [True, False, True, True])
    out = run(node(spec), ag, dt=0.1, rows=[0], requests=both)
    assert_allclose(out.linear, [[30.0, 0.0]])


def test_following_means_asked_and_sees_someone():
    """Rows 0 and 2 asked and see neighbours; row 3 asked but sees nobody; row 1 did not ask."""
    ag = followers()
    spec = {"type": "follow"}
    req = requests_for(spec, ag, [True, False, True, True])
    ctx_run = run(node(spec), ag, requests=req)  # computes and memoises the mask
    assert ctx_run.linear.shape == (4, 2)
    assert following_of(ag, req).tolist() == [True, False, True, False]


def following_of(agents: Any, req: Requests) -> np.ndarray:
    from behaviortk.sense.sensing import Sense
    from behaviortk.steering.act import make_context

    sense = Sense(world(), agents, rand=np.zeros((agents.n, 1)), tick=0, time=0.0)
    model = node({"type": "follow"})
    ctx = make_context(
        model,
        group="agents",
        rows=np.arange(agents.n),
        agents=agents,
        world=world(),
        sense=sense,
        dt=0.1,
        rand_slot=-1,
        memory={},
        debug=DebugBuffer(),
        requests=req,
    )
    return following(ctx)


def test_follow_inside_a_combiner_counts_as_following():
    """A follow that is a blend's child marks its rows as following too."""
    ag = followers()
    spec = {
        "type": "blend",
        "children": [
            {"type": "follow"},
            {"type": "seek", "target": {"kind": "point", "at": [0, 0]}},
        ],
    }
    req = requests_for(spec, ag, [False, False, True, False])
    assert following_of(ag, req).tolist() == [False, False, True, False]


def test_follow_without_requests_takes_nobody_as_following():
    """Without the tick's requests (a leaf run on its own) nobody counts as following."""
    ag = followers()
    out = run(node({"type": "follow"}), ag, dt=0.1, rows=[0])
    assert_allclose(out.linear, [[10.0, 10.0]])


# ------------------------------------------------------------------ pursuit
def two(evader_vel: tuple[float, float], evader_heading: tuple[float, float]) -> Any:
    """Pursuer p at (0,0), v (10,0), heading +x; evader e at (100,0); max speed 20."""
    return make_agents(
        [[0, 0], [100, 0]],
        [[10, 0], list(evader_vel)],
        heading=[[1, 0], list(evader_heading)],
        names=["p", "e"],
        max_speed=20.0,
    )


AT_E = {"kind": "agent", "id": "e"}


def test_plain_pursue_has_no_early_out():
    """Head-on (headings' dot -1): Buckland seeks the current position, (20,0) - (10,0) = (10,0).

    Millington's pursue (facing_test none) aims at the prediction: linear look-ahead
    T = 100 / (20 + 5) = 4, evader at (100,0) + 4 (-4,3) = (84,12), |.| = 84.852814;
    desired = 20 (84,12) / 84.852814 = (19.798990, 2.828427); force (9.798990, 2.828427).
    """
    ag = two((-4, 3), (-1, 0))
    buckland = run(node({"type": "pursuit", "target": AT_E}), ag, rows=[0])
    assert_allclose(buckland.linear, [[10.0, 0.0]])
    spec = {"type": "pursuit", "target": AT_E, "facing_test": "none"}
    assert_allclose(run(node(spec), ag, rows=[0]).linear, [[9.798990, 2.828427]], atol=1e-6)


def test_millington_pursue_with_capped_prediction():
    """Millington: own speed 10 <= 100 / 1, so prediction = max_prediction 1 s:
    (100,0) + (-4,3) = (96,3), |.| = 96.046864; desired 20 (96,3)/96.046864 =
    (19.990242, 0.624695); force (9.990242, 0.624695)."""
    ag = two((-4, 3), (-1, 0))
    spec = {
        "type": "pursuit",
        "target": AT_E,
        "facing_test": "none",
        "predictor": {"type": "capped", "max_prediction": 1.0},
    }
    assert_allclose(run(node(spec), ag, rows=[0]).linear, [[9.990242, 0.624695]], atol=1e-6)


def test_facing_threshold():
    """Evader heading (-0.6, 0.8): dot with +x is -0.6. Not below Buckland's -0.95: predict,
    T = 4, (100,0) + 4 (-3,4) = (88,16), |.| = 89.442719, desired (19.677398, 3.577709),
    force (9.677398, 3.577709). Below a threshold of -0.5: seek (100,0) -> (10,0)."""
    ag = two((-3, 4), (-0.6, 0.8))
    spec: dict[str, Any] = {"type": "pursuit", "target": AT_E}
    assert_allclose(run(node(spec), ag, rows=[0]).linear, [[9.677398, 3.577709]], atol=1e-6)
    loose = run(node({**spec, "facing_threshold": -0.5}), ag, rows=[0])
    assert_allclose(loose.linear, [[10.0, 0.0]])


@pytest.mark.parametrize("bad", [-1.5, 1.01])
def test_facing_threshold_is_a_cosine(bad: float) -> None:
    with pytest.raises(Exception, match="facing_threshold"):
        node({"type": "pursuit", "target": AT_E, "facing_threshold": bad})


# ------------------------------------------------------------------- wander
def test_orientation_wander_seek():
    """Millington's wander, steer seek, world units: radius 2, distance 4, rate 120 deg/s, dt 0.5.

    u = (0.75, 0.25): randomBinomial = 0.5; angle 0 + 0.5 * 120 * 0.5 = 30 deg.
    Heading (0,1), facing 90 deg: centre (0,4); target = (0,4) + 2 (cos 120, sin 120) =
    (-1, 5.732051); |.| = 5.818626; seek at 10 from rest: (-1.718619, 9.851211).
    """
    a = make_agents([[0, 0]], heading=[[0, 1]], max_speed=10.0)
    spec = {
        "type": "wander",
        "method": "orientation",
        "steer": "seek",
        "units": "world",
        "radius": 2,
        "distance": 4,
        "rate": 120,
    }
    memory: dict[str, np.ndarray] = {}
    debug = DebugBuffer(enabled=True)
    out = run(node(spec), a, dt=0.5, rand=[[0.75, 0.25]], memory=memory, debug=debug)
    assert_allclose(out.linear, [[-1.718619, 9.851211]], atol=1e-6)
    assert_allclose(memory["wander_angle"], [math.radians(30)])
    (rec,) = debug.of_kind("wander")
    assert_allclose(rec.arrays["center"], [[0.0, 4.0]], atol=1e-12)
    assert_allclose(rec.arrays["target"], [[-1.0, 5.732051]], atol=1e-6)
    # u = (0.5, 0.5): binomial 0, the angle stays at 30 deg
    run(node(spec), a, dt=0.5, rand=[[0.5, 0.5]], memory=memory)
    assert_allclose(memory["wander_angle"], [math.radians(30)])


def test_orientation_wander_faces_by_default():
    """steer null with method orientation is Millington's face: orientation 0, the same 30 deg
    step -> centre (4,0), target (4 + 1.732051, 1) = (5.732051, 1); face angle
    atan2(1, 5.732051) = 0.172719 rad (9.896 deg), inside the 30 deg slow radius:
    goal rotation = pi * 0.172719 / 0.523599 = 1.036316 rad/s; angular (1.036316 - 0) / 0.1 =
    10.363162 (max angular accel 100). Linear: max force 50 along the orientation, (50, 0)."""
    a = make_agents([[0, 0]], orientation=[0.0], max_force=50.0, max_angular_accel=100.0)
    spec = {"type": "wander", "method": "orientation", "units": "world", "radius": 2}
    spec |= {"distance": 4, "rate": 120}
    out = run(node(spec), a, dt=0.5, rand=[[0.75, 0.25]])
    assert_allclose(out.linear, [[50.0, 0.0]])
    assert out.angular is not None
    assert_allclose(out.angular, [10.363162], atol=1e-6)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1, exclude_max=True), st.floats(0, 1, exclude_max=True)),
        min_size=1,
        max_size=5,
    ),
    st.floats(0, 3000),
    st.floats(0.001, 1),
)
def test_orientation_step_is_a_binomial_within_rate_dt(
    rand: list[tuple[float, float]], rate_deg: float, dt: float
) -> None:
    """|randomBinomial()| < 1, so one tick turns the wander angle by less than rate * dt."""
    u = np.array(rand)
    step = kernels.wander_orientation_step(np.zeros(len(rand)), u, math.radians(rate_deg), dt)
    assert np.all(np.abs(step) <= min(math.radians(rate_deg) * dt, math.pi) + 1e-12)
    assert_allclose(kernels.random_binomial(u), u[:, 0] - u[:, 1])


def test_jitter_wander_keeps_seek_by_default():
    """method jitter with steer null seeks, as before: target straight ahead at (1.2 + 2) * 5."""
    a = make_agents([[0, 0]], heading=[[0.0, 1.0]], max_speed=10, radius=5.0)
    out = run(node({"type": "wander"}), a, rand=[[0.5, 0.5]])
    assert_allclose(out.linear, [[0.0, 10.0]], atol=1e-12)
    assert node({"type": "wander"}).steering == "seek"
    assert node({"type": "wander", "method": "orientation"}).steering == "face"


# ---------------------------------------------------------- both engines
FOLLOW_TREE = {
    "type": "prioritized_sum",
    "children": [{"type": "follow", "of": "any"}, {"type": "wander", "weight": 0.5}],
}
VARIANTS: dict[str, dict[str, Any]] = {
    "lj_velocity": {
        "type": "blend",
        "children": [
            {"type": "lj_avoidance", "update": "velocity", "speed": 40},
            {"type": "wander", "weight": 0.3},
        ],
    },
    "follow": FOLLOW_TREE,
    "plain_pursue": {
        "type": "pursuit",
        "target": {"kind": "nearest", "group": "b"},
        "facing_test": "none",
        "predictor": {"type": "capped"},
    },
    "facing_threshold": {
        "type": "pursuit",
        "target": {"kind": "nearest", "group": "b"},
        "facing_threshold": -0.2,
    },
    "cohesion": {
        "type": "blend",
        "children": [
            {"type": "cohesion", "weight": 300},
            {"type": "separation", "weight": 200},
            {"type": "wander"},
        ],
    },
    "orientation_wander": {
        "type": "blend",
        "children": [
            {"type": "wander", "method": "orientation"},
            {"type": "wander", "method": "orientation", "steer": "seek", "weight": 0.5},
        ],
    },
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_both_engines_agree_on_each_variant(name: str) -> None:
    """A dozen agents (and 3 wandering in group b), 60 ticks: the same decisions and state."""
    data = definition(
        VARIANTS[name],
        count=12,
        others=[
            {
                "name": "b",
                "count": 3,
                "tree": "roam",
                "spawn": {"kind": "area", "min": [100, 100], "max": [300, 300]},
            }
        ],
    )
    data["trees"]["roam"] = {"root": {"type": "wander", "method": "orientation"}}
    data["groups"][0]["fov"] = 120
    data["obstacles"] = [{"at": [200, 200], "radius": 25}, {"at": [150, 250], "radius": 15}]
    scenario = behaviortk.load_text(json.dumps(data), f"{name}.json")
    ref, batch = (Simulation(scenario, engine=e) for e in ("py_trees", "batch"))
    start = ref.agents.pos.copy()
    for _ in range(60):
        ref.step()
        batch.step()
        for group in ("a", "b"):
            assert np.array_equal(ref.decisions[group].status, batch.decisions[group].status)
            assert np.array_equal(ref.decisions[group].emitted, batch.decisions[group].emitted)
        assert np.array_equal(ref.agents.pos, batch.agents.pos)
        assert np.array_equal(ref.agents.vel, batch.agents.vel)
        assert np.array_equal(ref.agents.orientation, batch.agents.orientation)
    assert np.abs(ref.agents.pos - start).max() > 1.0  # something moved


def test_followers_take_the_leaders_velocity_on_both_engines() -> None:
    """Two followers behind two leaders seeking east. Each tick a follower's new velocity is
    the mean velocity the leaders had when the tick began: the other follower is left out
    (it is following), and max force 1e6 lets F = m (v_new - v) / dt act in full."""
    data = definition(
        {"type": "follow", "of": "any"},
        count=2,
        positions=[[100, 100], [100, 120]],
        others=[
            {
                "name": "lead",
                "count": 2,
                "tree": "east",
                "spawn": {"kind": "positions", "points": [[130, 100], [130, 120]]},
                "max_speed": 60,
            }
        ],
    )
    data["groups"][0] |= {"max_force": 1e6, "max_speed": 500, "fov": 360}
    data["trees"]["east"] = {"root": {"type": "seek", "target": {"kind": "point", "at": [390, 90]}}}
    scenario = behaviortk.load_text(json.dumps(data), "follow.json")
    sims = [Simulation(scenario, engine=e) for e in ("py_trees", "batch")]
    lead = scenario_rows(sims[0], "lead")
    for tick in range(30):
        before = sims[0].agents.vel[lead].mean(axis=0)
        for sim in sims:
            sim.step()
        assert np.array_equal(sims[0].agents.vel, sims[1].agents.vel)
        assert_allclose(sims[0].agents.vel[:2], [before, before], atol=1e-9, err_msg=str(tick))
    assert np.linalg.norm(sims[0].agents.vel[0]) > 10.0


def scenario_rows(sim: Simulation, group: str) -> slice:
    return sim.agents.slices[group]
