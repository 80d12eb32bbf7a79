"""Integration step: hand-worked numbers from Buckland ch. 3 ("Vehicle::Update")
and Millington ch. 3 (kinematic update), plus a hypothesis property test."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from behaviortk.world.factory import make_agents
from behaviortk.world.integrate import integrate
from behaviortk.world.state import World


def world(edges: str = "contain", w: float = 100.0, h: float = 100.0) -> World:
    return World(width=w, height=h, edges=edges)


def test_force_truncated_then_divided_by_mass() -> None:
    """Buckland Vehicle::Update: F=(30,40) |F|=50 -> truncated to max_force 10 = (6,8);
    a = F/m = (3,4) with m=2; v = a dt = (1.5,2) for dt=0.5; x = (10,10) + v dt = (10.75,11)."""
    a = make_agents([[10, 10]], mass=2.0, max_force=10.0, max_speed=100.0)
    integrate(world(), a, np.array([[30.0, 40.0]]), None, 0.5)
    np.testing.assert_allclose(a.force, [[6.0, 8.0]])
    np.testing.assert_allclose(a.vel, [[1.5, 2.0]])
    np.testing.assert_allclose(a.pos, [[10.75, 11.0]])
    np.testing.assert_allclose(a.heading, [[0.6, 0.8]])


def test_speed_capped_before_moving() -> None:
    """|v| = 50 with max_speed 10 -> v = (6,8); x += v dt with dt 0.1 -> +(0.6,0.8)."""
    a = make_agents([[50, 50]], [[30, 40]], max_speed=10.0)
    integrate(world(), a, np.zeros((1, 2)), None, 0.1)
    np.testing.assert_allclose(a.vel, [[6.0, 8.0]])
    np.testing.assert_allclose(a.pos, [[50.6, 50.8]])


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_turn_rate_limits_heading_change(sign: float) -> None:
    """v=(10,0) plus a dt=(0,±100) wants to turn 84.3 degrees; max_turn_rate pi/2 rad/s
    allows pi/20 in dt=0.1, so v = |(10,±100)| (cos pi/20, ±sin pi/20)."""
    a = make_agents([[50, 50]], [[10, 0]], max_turn_rate=np.pi / 2, max_force=1e4, max_speed=1e3)
    integrate(world(), a, np.array([[0.0, sign * 1000.0]]), None, 0.1)
    speed = np.sqrt(10.0**2 + 100.0**2)
    expected = speed * np.array([np.cos(np.pi / 20), sign * np.sin(np.pi / 20)])
    np.testing.assert_allclose(a.vel[0], expected)
    np.testing.assert_allclose(a.heading[0], expected / speed)


def test_unlimited_turn_rate_turns_freely() -> None:
    a = make_agents([[50, 50]], [[10, 0]], max_force=1e4, max_speed=1e3)
    integrate(world(), a, np.array([[0.0, 1000.0]]), None, 0.1)
    np.testing.assert_allclose(a.vel, [[10.0, 100.0]])


def test_wrap_edges_reenter_opposite_side() -> None:
    """x = 99 + 20*0.1 = 101 -> 1 ; x = 1 - 2 = -1 -> 99 on a 100 wide torus."""
    a = make_agents([[99, 50], [1, 50]], [[20, 0], [-20, 0]])
    integrate(world("wrap"), a, np.zeros((2, 2)), None, 0.1)
    np.testing.assert_allclose(a.pos, [[1.0, 50.0], [99.0, 50.0]])
    np.testing.assert_allclose(a.vel, [[20, 0], [-20, 0]])


def test_bounce_reflects_position_and_velocity() -> None:
    """(99,50)+(20,5)*0.1 = (101,50.5) -> x mirrored to 2*100-101 = 99, vx -> -20;
    (1,1)+(-20,-30)*0.1 = (-1,-2) -> (1,2), v -> (20,30)."""
    a = make_agents([[99, 50], [1, 1]], [[20, 5], [-20, -30]])
    integrate(world("bounce"), a, np.zeros((2, 2)), None, 0.1)
    np.testing.assert_allclose(a.pos, [[99.0, 50.5], [1.0, 2.0]])
    np.testing.assert_allclose(a.vel, [[-20.0, 5.0], [20.0, 30.0]])
    np.testing.assert_allclose(a.heading[0], np.array([-20.0, 5.0]) / np.hypot(20, 5))


def test_contain_clamps_and_drops_outward_velocity() -> None:
    """(101,50.5) clamps to (100,50.5); the outward vx=20 becomes 0, vy=5 stays; heading (0,1)."""
    a = make_agents([[99, 50]], [[20, 5]])
    integrate(world("contain"), a, np.zeros((1, 2)), None, 0.1)
    np.testing.assert_allclose(a.pos, [[100.0, 50.5]])
    np.testing.assert_allclose(a.vel, [[0.0, 5.0]])
    np.testing.assert_allclose(a.heading, [[0.0, 1.0]])


def test_heading_kept_at_zero_speed() -> None:
    """A stopped vehicle keeps its heading; braking to exactly zero keeps the last heading."""
    a = make_agents([[50, 50], [50, 50]], [[0, 0], [1, 0]], heading=[[0, 1], [1, 0]])
    # force -1 with m=1, dt=1 cancels v=(1,0) exactly
    integrate(world(), a, np.array([[0.0, 0.0], [-1.0, 0.0]]), None, 1.0)
    np.testing.assert_array_equal(a.vel, [[0, 0], [0, 0]])
    np.testing.assert_array_equal(a.heading, [[0, 1], [1, 0]])


def test_heading_smoothing_averages_last_k() -> None:
    """Buckland's Smoother with k=2: buffer [(1,0),(1,0)]; a heading (0,1) gives the mean
    (0.5,0.5) -> (sqrt(1/2), sqrt(1/2)); one more tick of (0,1) gives (0,1)."""
    a = make_agents([[50, 50]], [[0, 10]], heading=[[1, 0]], max_turn_rate=np.inf)
    integrate(world(), a, np.zeros((1, 2)), None, 0.01, heading_smoothing=2)
    np.testing.assert_allclose(a.heading, [[0.0, 1.0]])
    np.testing.assert_allclose(a.smoothed_heading, [[np.sqrt(0.5), np.sqrt(0.5)]])
    integrate(world(), a, np.zeros((1, 2)), None, 0.01, heading_smoothing=2)
    np.testing.assert_allclose(a.smoothed_heading, [[0.0, 1.0]], atol=1e-15)


def test_no_smoothing_follows_heading() -> None:
    a = make_agents([[50, 50]], [[0, 10]], heading=[[1, 0]])
    integrate(world(), a, np.zeros((1, 2)), None, 0.01, heading_smoothing=1)
    np.testing.assert_allclose(a.smoothed_heading, [[0.0, 1.0]])


def test_orientation_and_rotation_millington() -> None:
    """orientation += rotation dt = 0 + 1*0.25; rotation += angular dt = 1 + 4*0.25 = 2,
    clamped to max_rotation 1.5. Angular 100 clamps to max_angular_accel 10: 1 + 2.5 = 3.5."""
    a = make_agents([[50, 50], [50, 50]], orientation=[0.0, 0.0], max_rotation=[1.5, 5.0])
    a.rotation = np.array([1.0, 1.0])
    a.max_angular_accel = np.array([10.0, 10.0])
    integrate(world(), a, np.zeros((2, 2)), np.array([4.0, 100.0]), 0.25)
    np.testing.assert_allclose(a.orientation, [0.25, 0.25])
    np.testing.assert_allclose(a.rotation, [1.5, 3.5])


def test_orientation_wraps_to_pi_range() -> None:
    a = make_agents([[50, 50]], orientation=[3.0])
    a.rotation = np.array([1.0])
    integrate(world(), a, np.zeros((1, 2)), np.zeros(1), 0.5)
    np.testing.assert_allclose(a.orientation, [3.5 - 2 * np.pi])


def test_non_finite_force_counts_as_zero() -> None:
    a = make_agents([[50, 50], [50, 50]], [[1, 0], [1, 0]])
    integrate(world(), a, np.array([[np.nan, 1.0], [np.inf, 0.0]]), np.array([np.nan, 0]), 1.0)
    np.testing.assert_allclose(a.force, [[0.0, 1.0], [0.0, 0.0]])
    assert np.isfinite(a.pos).all() and np.isfinite(a.rotation).all()


finite = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=150, deadline=None)
@given(
    edges=st.sampled_from(["wrap", "bounce", "contain"]),
    n=st.integers(1, 6),
    data=st.data(),
)
def test_property_state_stays_finite_and_bounded(edges: str, n: int, data: st.DataObject) -> None:
    """Random states and forces: everything finite, |v| <= max_speed, |F| <= max_force,
    positions inside the world, headings unit length."""
    w = data.draw(st.floats(1.0, 1e4))
    h = data.draw(st.floats(1.0, 1e4))
    arr = lambda lo, hi, k: np.array(  # noqa: E731
        data.draw(st.lists(st.floats(lo, hi), min_size=k, max_size=k)), dtype=float
    )
    pos = np.stack([arr(0, w, n), arr(0, h, n)], axis=1)
    vel = arr(-1e4, 1e4, 2 * n).reshape(n, 2)
    force = np.array(data.draw(st.lists(finite, min_size=2 * n, max_size=2 * n))).reshape(n, 2)
    max_speed = arr(0, 1e3, n)
    max_force = arr(0, 1e4, n)
    turn = data.draw(st.sampled_from([np.inf, 0.0, 1.0, 10.0]))
    a = make_agents(
        pos,
        vel,
        mass=arr(1e-3, 100, n),
        max_speed=max_speed,
        max_force=max_force,
        max_turn_rate=turn,
    )
    dt = data.draw(st.floats(1e-4, 1.0))
    ang = arr(-1e6, 1e6, n)
    wd = World(width=w, height=h, edges=edges)
    for _ in range(3):
        integrate(wd, a, force, ang, dt, heading_smoothing=data.draw(st.integers(1, 4)))
        for field in (a.pos, a.vel, a.heading, a.smoothed_heading, a.orientation, a.rotation):
            assert np.isfinite(field).all()
        speed = np.hypot(a.vel[:, 0], a.vel[:, 1])
        assert (speed <= max_speed * (1 + 1e-9) + 1e-12).all()
        assert (np.hypot(a.force[:, 0], a.force[:, 1]) <= max_force * (1 + 1e-9) + 1e-12).all()
        np.testing.assert_allclose(np.hypot(a.heading[:, 0], a.heading[:, 1]), 1.0)
        assert (a.pos >= 0).all()
        if edges == "wrap":
            assert (a.pos[:, 0] < w).all() and (a.pos[:, 1] < h).all()
        else:
            assert (a.pos[:, 0] <= w).all() and (a.pos[:, 1] <= h).all()


def test_tiny_velocity_keeps_a_unit_heading() -> None:
    """A speed of 7.9e-160 (found by the property above): its square is denormal, so the
    direction would come out 0.9999984 long; such an agent counts as still (heading +x)."""
    a = make_agents(np.zeros((2, 2)), [[0.0, 7.899135388263173e-160], [0.0, 2.0]])
    np.testing.assert_array_equal(a.heading, [[1.0, 0.0], [0.0, 1.0]])
    integrate(World(width=1.0, height=1.0, edges="wrap"), a, np.zeros((2, 2)), np.zeros(2), 1.0)
    np.testing.assert_allclose(np.hypot(a.heading[:, 0], a.heading[:, 1]), 1.0)
