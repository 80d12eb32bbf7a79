"""Every steering primitive against numbers worked out by hand from its source formula."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from steering_support import node, point, run, world

from behaviortk.steering.debug import DebugBuffer
from behaviortk.world.factory import make_agents
from behaviortk.world.state import Path


def agent(pos, vel=(0.0, 0.0), **kw):
    return make_agents([pos], [vel], **kw)


# ------------------------------------------------------------------ seek/flee
def test_seek_desired_minus_velocity():
    """Buckland 3 Seek: normalize((30,40)) * 50 - (10,0) = (30,40) - (10,0) = (20,40)."""
    out = run(node({"type": "seek", "target": point(30, 40)}), agent((0, 0), (10, 0), max_speed=50))
    assert_allclose(out.linear, [[20.0, 40.0]])
    assert out.angular is None


def test_seek_on_target_brakes():
    """On the target the desired velocity is zero: force = -v, never NaN."""
    out = run(node({"type": "seek", "target": point(5, 5)}), agent((5, 5), (3, -4)))
    assert_allclose(out.linear, [[-3.0, 4.0]])


def test_flee_within_and_beyond_fear_distance():
    """Seed 004: threat at (3,4), distance 5; max speed 10 -> (-6,-8); zero beyond fear distance 4."""
    a = agent((0, 0), max_speed=10)
    near = run(node({"type": "flee", "target": point(3, 4), "fear_distance": 10}), a)
    assert_allclose(near.linear, [[-6.0, -8.0]])
    far = run(node({"type": "flee", "target": point(3, 4), "fear_distance": 4}), a)
    assert_allclose(far.linear, [[0.0, 0.0]])
    always = run(node({"type": "flee", "target": point(300, 400), "fear_distance": None}), a)
    assert_allclose(always.linear, [[-6.0, -8.0]])


def test_flee_on_the_threat_runs_along_heading():
    a = agent((3, 4), heading=[[0.0, 1.0]], max_speed=10)
    out = run(node({"type": "flee", "target": point(3, 4)}), a)
    assert_allclose(out.linear, [[0.0, 10.0]])


# --------------------------------------------------------------------- arrive
def test_arrive_buckland_presets():
    """Buckland 3 Arrive: speed = dist / (decel * 0.3): 6 / 0.6 = 10 (normal), 6 / 0.9 (slow), 6 / 0.3 (fast)."""
    a = agent((0, 0), max_speed=100)
    for preset, speed in (("normal", 10.0), ("slow", 6.0 / 0.9), ("fast", 20.0)):
        out = run(node({"type": "arrive", "target": point(6, 0), "deceleration": preset}), a)
        assert_allclose(out.linear, [[speed, 0.0]])
    far = run(node({"type": "arrive", "target": point(600, 0), "deceleration": "normal"}), a)
    assert_allclose(far.linear, [[100.0, 0.0]])  # 600 / 0.6 = 1000, capped at max speed


def test_arrive_millington_slowing_radius_and_time_to_target():
    """Millington 3.3.4: inside r=40 at d=10 speed 20*10/40 = 5; accel (5-0)/0.1 = 50; force m*a = 100."""
    a = agent((0, 0), max_speed=20, mass=2.0)
    spec = {"type": "arrive", "target": point(10, 0), "slowing_radius": 40, "time_to_target": 0.1}
    assert_allclose(run(node(spec), a).linear, [[100.0, 0.0]])
    outside = {**spec, "target": point(50, 0)}  # full speed: (20 - 0) / 0.1 * 2 = 400
    assert_allclose(run(node(outside), a).linear, [[400.0, 0.0]])


def test_arrive_within_tolerance_brakes_to_stop():
    """Within tolerance the target speed is 0: accel = (0 - 3) / 0.1 = -30 (mass 1)."""
    a = agent((0, 0), (3, 0))
    out = run(node({"type": "arrive", "target": point(0.5, 0), "tolerance": 1.0}), a)
    assert_allclose(out.linear, [[-30.0, 0.0]])


# -------------------------------------------------------------------- pursuit
def two(pursuer, evader, **kw):
    """Agent 0 chases agent 1 (both in group 'agents')."""
    return make_agents(
        [pursuer[0], evader[0]],
        [pursuer[1], evader[1]],
        heading=[pursuer[2], evader[2]],
        names=["p", "e"],
        **kw,
    )


AT_E = {"kind": "agent", "id": "e"}
AT_P = {"kind": "agent", "id": "p"}


def test_pursuit_ahead_and_facing_seeks_current_position():
    """Seed 000: evader ahead and headings' dot -1 < -0.95 -> seek (100,0): (20,0) - (10,0)."""
    ag = two(((0, 0), (10, 0), (1, 0)), ((100, 0), (-5, 0), (-1, 0)), max_speed=20)
    out = run(node({"type": "pursuit", "target": AT_E}), ag, rows=[0])
    assert_allclose(out.linear, [[10.0, 0.0]])


def test_pursuit_predicts_with_linear_look_ahead():
    """Seed 000: T = 100 / (20 + 5) = 4, predicted (100, 20); desired = (100,20)/|.|*20."""
    ag = two(((0, 0), (10, 0), (1, 0)), ((100, 0), (0, 5), (0, 1)), max_speed=20)
    debug = DebugBuffer(enabled=True)
    out = run(node({"type": "pursuit", "target": AT_E}), ag, rows=[0], debug=debug)
    desired = np.array([100.0, 20.0]) / math.hypot(100, 20) * 20
    assert_allclose(out.linear, [desired - [10.0, 0.0]])
    _, aim = debug.gather("crosshair", "point")
    assert_allclose(aim, [[100.0, 20.0]])


def test_pursuit_seed002_velocity_variant():
    """Seed 002 compares raw velocities: dot(v, v_e) = 0 < 0.95 -> seek directly, unlike seed 000."""
    ag = two(((0, 0), (10, 0), (1, 0)), ((100, 0), (0, 5), (0, 1)), max_speed=20)
    out = run(node({"type": "pursuit", "target": AT_E, "facing_test": "velocity"}), ag, rows=[0])
    assert_allclose(out.linear, [[10.0, 0.0]])


def test_evade_flees_predicted_position_inside_threat_range():
    """Seed 000: T = 50 / (30 + 10) = 1.25 -> pursuer predicted at (37.5, 0); flee -> (-30, 0)."""
    ag = two(((0, 0), (0, 0), (1, 0)), ((50, 0), (-10, 0), (-1, 0)), max_speed=30)
    out = run(node({"type": "evade", "target": AT_E}), ag, rows=[0])
    assert_allclose(out.linear, [[-30.0, 0.0]])
    far = two(((0, 0), (0, 0), (1, 0)), ((150, 0), (-10, 0), (-1, 0)), max_speed=30)
    assert_allclose(run(node({"type": "evade", "target": AT_E}), far, rows=[0]).linear, [[0, 0]])


# --------------------------------------------------------------------- wander
def test_wander_jitter_and_world_target():
    """Buckland 3 Wander, world units, r=1.2, d=2, jitter 80/s, dt 0.01 (step 0.8).

    Start (1.2, 0); u = (0.5, 1.0) -> (2u-1)*0.8 = (0, 0.8) -> (1.2, 0.8) re-projected:
    (1.2, 0.8) / 1.44222 * 1.2 = (0.99846, 0.66564); + 2 ahead -> (2.99846, 0.66564).
    """
    a = agent((0, 0), radius=5.0)
    spec = {"type": "wander", "units": "world", "steer": "displacement"}
    memory: dict[str, np.ndarray] = {}
    debug = DebugBuffer(enabled=True)
    out = run(node(spec), a, rand=[[0.5, 1.0]], memory=memory, debug=debug)
    assert_allclose(out.linear, [[2.99846, 0.66564]], atol=1e-5)
    assert_allclose(memory["wander_target"], [[0.99846, 0.66564]], atol=1e-5)
    (rec,) = debug.of_kind("wander")
    assert_allclose(rec.arrays["center"], [[2.0, 0.0]])
    # the target persists: no jitter (u = 0.5) keeps it where it was
    again = run(node(spec), a, rand=[[0.5, 0.5]], memory=memory)
    assert_allclose(again.linear, out.linear, atol=1e-12)


def test_wander_in_agent_radii_seeks_target():
    """Default units are agent radii (radius 5): target straight ahead at (1.2 + 2) * 5 = 16 -> seek."""
    a = agent((0, 0), max_speed=10, radius=5.0, heading=[[0.0, 1.0]])
    out = run(node({"type": "wander"}), a, rand=[[0.5, 0.5]])
    assert_allclose(out.linear, [[0.0, 10.0]], atol=1e-12)


# -------------------------------------------------------------------- rotation
def rot_agent(orientation=0.0, rotation=0.0, **kw):
    a = agent(
        (0, 0), orientation=[orientation], max_rotation=math.pi, max_angular_accel=100.0, **kw
    )
    a.rotation[:] = rotation
    return a


def test_face_outside_slow_radius_full_rotation():
    """Millington Align: 90 deg > 30 deg -> target rotation pi; (pi - 0) / 0.1 = 31.4159."""
    out = run(node({"type": "face", "target": point(0, 10)}), rot_agent())
    assert_allclose(out.angular, [math.pi / 0.1])
    assert_allclose(out.linear, [[0.0, 0.0]])


def test_align_inside_slow_radius_and_target_radius():
    """15 deg inside 30 deg: target rotation pi * 15/30 = pi/2 -> accel 15.708; within 2 deg: -rot/0.1."""
    ag = make_agents(
        [[0, 0], [5, 5]],
        orientation=[0.0, math.radians(15)],
        names=["me", "other"],
        max_rotation=math.pi,
        max_angular_accel=100.0,
    )
    out = run(node({"type": "align", "target": {"kind": "agent", "id": "other"}}), ag, rows=[0])
    assert_allclose(out.angular, [math.pi / 2 / 0.1])
    ag.orientation[1] = math.radians(1.0)
    ag.rotation[0] = 0.5
    out = run(node({"type": "align", "target": {"kind": "agent", "id": "other"}}), ag, rows=[0])
    assert_allclose(out.angular, [-5.0])


def test_align_clamped_at_max_angular_acceleration():
    a = rot_agent()
    a.max_angular_accel[:] = 3.0
    out = run(node({"type": "face", "target": point(0, -10)}), a)
    assert_allclose(out.angular, [-3.0])


def test_look_where_you_are_going():
    """Velocity (0,-5): goal -90 deg -> target rotation -pi -> accel -31.4159; still -> unchanged."""
    out = run(node({"type": "look_where_you_are_going"}), _moving())
    assert_allclose(out.angular, [-math.pi / 0.1])
    still = run(node({"type": "look_where_you_are_going"}), rot_agent(orientation=1.0))
    assert_allclose(still.angular, [0.0])


def _moving():
    a = make_agents(
        [[0, 0]], [[0, -5]], orientation=[0.0], max_rotation=math.pi, max_angular_accel=100.0
    )
    return a


def test_velocity_match():
    """Millington: (v_t - v) / 0.5 = ((3,-2) - (1,2)) / 0.5 = (4,-8); mass 2 -> force (8,-16)."""
    ag = make_agents([[0, 0], [9, 9]], [[1, 2], [3, -2]], names=["me", "t"], mass=2.0)
    spec = {"type": "velocity_match", "target": {"kind": "agent", "id": "t"}, "time_to_target": 0.5}
    assert_allclose(run(node(spec), ag, rows=[0]).linear, [[8.0, -16.0]])


# -------------------------------------------------------------------- flocking
def flock():
    """Agent 0 at the origin; neighbours at (2,0) and (0,-4); one far away (not in view 50)."""
    return make_agents(
        [[0, 0], [2, 0], [0, -4], [500, 500]],
        [[1, 0], [2, 0], [0, 4], [7, 7]],
        max_speed=10,
        view_distance=50.0,
    )


def test_separation_inverse_distance():
    """Buckland: (-1,0)/2 + (0,1)/4 = (-0.5, 0.25)."""
    out = run(node({"type": "separation"}), flock(), rows=[0])
    assert_allclose(out.linear, [[-0.5, 0.25]])


def test_alignment_average_neighbour_velocity():
    """Seed 003: avg of (2,0), (0,4) = (1,2); minus own (1,0) -> (0,2). No neighbours -> 0."""
    out = run(node({"type": "alignment"}), flock(), rows=[0, 3])
    assert_allclose(out.linear, [[0.0, 2.0], [0.0, 0.0]])


def test_cohesion_seeks_centre_of_mass():
    """Buckland: centre (1,-2); seek at 10 -> (1,-2)/sqrt(5)*10 - (1,0) (normalize: false)."""
    out = run(node({"type": "cohesion", "normalize": False}), flock(), rows=[0])
    assert_allclose(out.linear, [[10 / math.sqrt(5) - 1.0, -20 / math.sqrt(5)]])


def test_cohesion_normalized_by_default_as_buckland_code():
    """Buckland's code: Vec2DNormalize(Seek(centre)). Seek = (4.47214 - 1, -8.94427) =
    (3.47214, -8.94427); |.| = sqrt(12.05573 + 80) = 9.59457 -> (0.36189, -0.93222)."""
    out = run(node({"type": "cohesion"}), flock(), rows=[0, 3])
    assert_allclose(out.linear, [[0.36189, -0.93222], [0.0, 0.0]], atol=1e-5)


def test_flocking_respects_field_of_view():
    """FOV 90 deg facing +x: the neighbour at (0,-4) is out of view; (2,0) remains."""
    ag = flock()
    ag.fov[:] = math.radians(90)
    out = run(node({"type": "separation"}), ag, rows=[0])
    assert_allclose(out.linear, [[-0.5, 0.0]])


def test_coincident_agents_separate_finitely_and_opposite():
    ag = make_agents([[1, 1], [1, 1]], view_distance=10.0)
    out = run(node({"type": "separation"}), ag).linear
    assert np.isfinite(out).all()
    assert np.linalg.norm(out[0]) > 0
    assert_allclose(out[0], -out[1])


# ------------------------------------------------------------------ avoidance
def test_obstacle_avoidance_detection_box():
    """Buckland: box 40*(1+50/100)=60; obstacle (30,4) r10, own r5: mult 1+(60-30)/60=1.5;
    lateral (15-4)*1.5 = 16.5 away from +y side; braking (10-30)*0.2 = -4."""
    w = world(
        obstacle_pos=np.array([[30.0, 4.0], [-30.0, 0.0]]), obstacle_radius=np.array([10.0, 10.0])
    )
    a = agent((0, 0), (50, 0), max_speed=100, radius=5.0)
    debug = DebugBuffer(enabled=True)
    out = run(node({"type": "obstacle_avoidance"}), a, w, debug=debug)
    assert_allclose(out.linear, [[-4.0, -16.5]])
    (rec,) = debug.of_kind("box")
    assert_allclose(rec.arrays["corners"], [[[0, 5], [60, 5], [60, -5], [0, -5]]])


def test_obstacle_avoidance_ignores_obstacles_behind_and_aside():
    w = world(
        obstacle_pos=np.array([[-30.0, 0.0], [30.0, 40.0]]), obstacle_radius=np.array([10.0, 10.0])
    )
    out = run(node({"type": "obstacle_avoidance"}), agent((0, 0), (50, 0), max_speed=100), w)
    assert_allclose(out.linear, [[0.0, 0.0]])


def test_lj_avoidance_potential():
    """Seed 003: d = 20/10 = 2, U = 20 / 2^2.5 = 3.53553 along r; A=1,n=1 adds -1/2."""
    w = world(obstacle_pos=np.array([[0.0, 0.0]]), obstacle_radius=np.array([10.0]))
    a = make_agents([[20, 0], [41, 0], [0, 0]])
    out = run(node({"type": "lj_avoidance"}), a, w)
    assert_allclose(out.linear[0], [20 / 2**2.5, 0.0])
    assert_allclose(out.linear[1], [0.0, 0.0])  # beyond the cut-off 40
    assert np.isfinite(out.linear[2]).all() and out.linear[2, 0] < 0  # on the centre: pushed back
    attract = run(node({"type": "lj_avoidance", "a": 1.0}), a, w, rows=[0])
    assert_allclose(attract.linear, [[20 / 2**2.5 - 0.5, 0.0]])


def wall_world():
    return world(
        wall_a=np.array([[10.0, -50.0]]),
        wall_b=np.array([[10.0, 50.0]]),
        wall_normal=np.array([[-1.0, 0.0]]),
    )


def test_wall_avoidance_front_feeler_overshoot():
    """Buckland: front feeler 40 crosses x=10 at 10, overshoot 30 -> (-30, 0); sides 20*(1-10/14.14)=5.86."""
    debug = DebugBuffer(enabled=True)
    out = run(node({"type": "wall_avoidance"}), agent((0, 0), (1, 0)), wall_world(), debug=debug)
    assert_allclose(out.linear, [[-30.0, 0.0]])
    (rec,) = debug.of_kind("feelers")
    s = 20 / math.sqrt(2)
    assert_allclose(rec.arrays["ends"], [[[40, 0], [s, s], [s, -s]]], atol=1e-12)


def test_wall_avoidance_side_feeler_and_normal_orientation():
    """From the wall's back side (x=20, heading -x) the normal is turned to face the agent: +x.

    Front overshoot 40 - 10 = 30 as before; an agent heading away sees no wall."""
    out = run(node({"type": "wall_avoidance"}), agent((20, 0), (-1, 0)), wall_world())
    assert_allclose(out.linear, [[30.0, 0.0]])
    clear = run(node({"type": "wall_avoidance"}), agent((-40, 0), (-1, 0)), wall_world())
    assert_allclose(clear.linear, [[0.0, 0.0]])


# ----------------------------------------------------------- hide, interpose
def test_hide_arrives_at_spot_behind_obstacle():
    """Buckland: spot = (50,0) + (1,0)*(10+30) = (90,0); arrive fast from (60,20): speed capped 100."""
    w = world(
        obstacle_pos=np.array([[50.0, 0.0], [500.0, 500.0]]), obstacle_radius=np.array([10.0, 10.0])
    )
    ag = make_agents([[60, 20], [0, 0]], names=["me", "hunter"], max_speed=100)
    debug = DebugBuffer(enabled=True)
    out = run(
        node({"type": "hide", "target": {"kind": "agent", "id": "hunter"}}),
        ag,
        w,
        rows=[0],
        debug=debug,
    )
    to = np.array([30.0, -20.0])
    assert_allclose(out.linear, [to / np.linalg.norm(to) * 100])
    _, spot = debug.gather("hiding_spot", "point")
    assert_allclose(spot, [[90.0, 0.0]])


def test_hide_without_obstacles_evades():
    ag = make_agents([[0, 0], [50, 0]], [[0, 0], [-10, 0]], names=["me", "hunter"], max_speed=30)
    out = run(node({"type": "hide", "target": {"kind": "agent", "id": "hunter"}}), ag, rows=[0])
    assert_allclose(out.linear, [[-30.0, 0.0]])


def test_interpose_midpoint():
    """Buckland: mid (50,0); still targets; arrive fast from (50,50): 50/0.3 capped 100 -> (0,-100).
    Moving (0,10) both: T = 50/(100+10), aim (50, 500/110)."""
    ag = make_agents([[50, 50], [0, 0], [100, 0]], names=["me", "a", "b"], max_speed=100)
    spec = {
        "type": "interpose",
        "target": {"kind": "agent", "id": "a"},
        "other": {"kind": "agent", "id": "b"},
    }
    assert_allclose(run(node(spec), ag, rows=[0]).linear, [[0.0, -100.0]], atol=1e-12)
    ag.vel[1:] = (0.0, 10.0)
    debug = DebugBuffer(enabled=True)
    run(node(spec), ag, rows=[0], debug=debug)
    _, aim = debug.gather("crosshair", "point")
    assert_allclose(aim, [[50.0, 500 / 110]])


def test_offset_pursuit_leader_frame():
    """Leader (100,100) heading +y: offset [-10 ahead, 5 left] -> (95, 90); arrive fast from (95,60)."""
    ag = make_agents(
        [[95, 60], [100, 100]], heading=[[1, 0], [0, 1]], names=["me", "lead"], max_speed=100
    )
    spec = {"type": "offset_pursuit", "target": {"kind": "agent", "id": "lead"}, "offset": [-10, 5]}
    assert_allclose(run(node(spec), ag, rows=[0]).linear, [[0.0, 100.0]], atol=1e-12)


# ----------------------------------------------------------------- paths etc.
def path_world(looped: bool) -> object:
    pts = np.array([[0.0, 0.0], [100.0, 0.0], [100.0, 100.0]])
    return world(paths={"p": Path("p", pts, looped)})


def test_path_following_advances_and_seeks_next_waypoint():
    """Buckland FollowPath: within 20 of waypoint 0 -> waypoint 1 (100,0); seek at 10 -> (10,0)."""
    a = agent((5, 0), max_speed=10)
    memory: dict[str, np.ndarray] = {}
    spec = {"type": "path_following", "target": {"kind": "path", "path": "p"}}
    out = run(node(spec), a, path_world(False), memory=memory)
    assert_allclose(out.linear, [[10.0, 0.0]])
    assert memory["waypoint"].tolist() == [1]


def test_path_following_end_arrives_or_loops():
    """Open path: on the last point, arrive (normal): dist 10 / 0.6 = 16.7 capped 10 -> (0,10).
    Looped: the last point within 20 wraps to the first (0,0)."""
    spec = {"type": "path_following", "target": {"kind": "path", "path": "p"}}
    a = agent((100, 90), max_speed=10)
    memory = {"waypoint": np.array([2])}
    out = run(node(spec), a, path_world(False), memory=memory)
    assert memory["waypoint"].tolist() == [2]
    assert_allclose(out.linear, [[0.0, 10.0]])
    a = agent((100, 95), max_speed=10)
    memory = {"waypoint": np.array([2])}
    run(node(spec), a, path_world(True), memory=memory)
    assert memory["waypoint"].tolist() == [0]


def test_path_following_needs_a_path_target():
    with pytest.raises(Exception, match="path"):
        node({"type": "path_following", "target": point(0, 0)})


def test_containment_pushes_back_inside():
    """World 200x100, margin 20, look 0.5: probe (170+20, 50) = (190,50) -> clamp 180: (180-190)/0.5 = -20."""
    w = world(200, 100)
    a = make_agents([[170, 50], [100, 50]], [[40, 0], [40, 0]])
    out = run(node({"type": "containment"}), a, w)
    assert_allclose(out.linear, [[-20.0, 0.0], [0.0, 0.0]])
    rect = {"type": "containment", "rect": [[0, 0], [150, 100]], "margin": 0}
    assert_allclose(run(node(rect), a, w).linear, [[-80.0, 0.0], [0.0, 0.0]])


def test_weight_scales_force():
    a = agent((0, 0), (10, 0), max_speed=50)
    out = run(node({"type": "seek", "target": point(30, 40), "weight": 0.5}), a, with_weight=True)
    assert_allclose(out.linear, [[10.0, 20.0]])


def test_obstacle_avoidance_closest_intersection_wins():
    """Buckland: box 40 at rest; A (30,0) r5 meets the x axis at 25, B (20,3) r5 at 20 - 4 = 16: B.
    mult 1 + (40-20)/40 = 1.5; lateral (5-3)*1.5 away (-y) = -3; braking (5-20)*0.2 = -3."""
    w = world(
        obstacle_pos=np.array([[30.0, 0.0], [20.0, 3.0]]), obstacle_radius=np.array([5.0, 5.0])
    )
    out = run(node({"type": "obstacle_avoidance"}), agent((0, 0), radius=0.0), w)
    assert_allclose(out.linear, [[-3.0, -3.0]])


def test_path_following_reports_done_at_the_end_of_an_open_path():
    """On the last waypoint (cursor 2) within the seek distance 20: SUCCESS; looped paths never end."""
    from behaviortk.sense.sensing import Sense
    from behaviortk.steering.primitives import path_following_done

    spec = node({"type": "path_following", "target": {"kind": "path", "path": "p"}})
    a = make_agents([[100, 90], [0, 0]])
    memory = {"waypoint": np.array([2, 2])}
    for looped, expected in ((False, [True, False]), (True, [False, False])):
        sense = Sense(path_world(looped), a, rand=np.zeros((2, 1)), tick=0, time=0.0)
        assert path_following_done(spec, sense, "agents", memory).tolist() == expected
    sense = Sense(path_world(False), a, rand=np.zeros((2, 1)), tick=0, time=0.0)
    assert path_following_done(spec, sense, "agents", None).tolist() == [False, False]
