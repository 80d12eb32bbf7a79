"""Predictors (seed 002: pluggable look-ahead) and the race that shows why they matter."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from steering_support import node, run, world

from behaviortk.steering.formulas import intercept_time
from behaviortk.steering.predictors import Capped, Intercept, Linear, look_ahead
from behaviortk.world.factory import make_agents
from behaviortk.world.integrate import integrate


def t_of(p, d, own_vel, max_speed, target_vel):
    return look_ahead(
        p,
        np.array([d], float),
        np.array([own_vel], float),
        np.array([max_speed], float),
        np.array([target_vel], float),
    )[0]


def test_linear_is_distance_over_speed_sum():
    """Seed 000: T = |d| / (max_speed + target speed) = 100 / (20 + 5) = 4."""
    assert t_of(Linear(), (100, 0), (10, 0), 20, (0, 5)) == 4.0
    assert t_of(Linear(), (100, 0), (0, 0), 0, (0, 0)) == 0.0  # nobody moves: no NaN


def test_capped_is_distance_over_own_speed_at_most_max_prediction():
    """Seed 001: speed 10 <= 100 / 1 -> max_prediction 1; speed 200 -> 100 / 200 = 0.5."""
    assert t_of(Capped(), (100, 0), (10, 0), 20, (0, 5)) == 1.0
    assert t_of(Capped(), (100, 0), (200, 0), 20, (0, 5)) == 0.5
    assert t_of(Capped(max_prediction=3.0), (100, 0), (0, 0), 20, (0, 5)) == 3.0


def test_intercept_exact_meeting_time():
    """|d + v t| = s t with d=(100,0), v=(0,5), s=20: (25 - 400) t^2 + 10000 = 0 -> t = sqrt(10000/375)."""
    t = t_of(Intercept(), (100, 0), (0, 0), 20, (0, 5))
    assert_allclose(t, math.sqrt(10000 / 375))
    assert_allclose(math.hypot(100, 5 * t), 20 * t)


def test_intercept_equal_speeds_head_on():
    """a = 0: b t + c = 0 with b = 2 d.v = -4000, c = 10000 -> t = 2.5 (closing at 40)."""
    assert_allclose(t_of(Intercept(), (100, 0), (0, 0), 20, (-20, 0)), 2.5)


def test_intercept_falls_back_to_linear_when_uncatchable():
    """Target running away at 30 > 20: roots -2 and -10 -> linear 100 / (20 + 30) = 2."""
    assert np.isnan(intercept_time(100.0, 0.0, 20.0, 30.0, 0.0))
    assert_allclose(t_of(Intercept(), (100, 0), (0, 0), 20, (30, 0)), 2.0)


def test_intercept_zero_distance():
    assert t_of(Intercept(), (0, 0), (0, 0), 20, (3, 4)) == 0.0


@settings(max_examples=200, deadline=None)
@given(
    st.tuples(st.floats(-500, 500), st.floats(-500, 500)),
    st.tuples(st.floats(-50, 50), st.floats(-50, 50)),
    st.floats(1, 100),
)
def test_intercept_root_meets_target(d, v, s):
    """Whenever a root is reported, pursuer and target are really at the same distance then."""
    t = float(intercept_time(d[0], d[1], s, v[0], v[1]))
    if np.isnan(t):
        return
    assert t >= 0
    gap = math.hypot(d[0] + v[0] * t, d[1] + v[1] * t)
    assert math.isclose(gap, s * t, rel_tol=1e-6, abs_tol=1e-6)


def race(spec: dict, dt: float = 0.02) -> int:
    """Ticks until a max-speed-50 pursuer at the origin is within 2 of a target
    starting 200 ahead and crossing at 30 per second (integrated with world.integrate)."""
    ag = make_agents(
        [[500, 500], [700, 500]], [[0, 0], [0, 30]], names=["p", "e"], max_speed=[50, 30]
    )
    w = world(2000, 2000)
    zero = np.zeros(2)
    for tick in range(3000):
        if np.linalg.norm(ag.pos[0] - ag.pos[1]) < 2.0:
            return tick
        force = np.zeros((2, 2))
        force[0] = run(node(spec), ag, w, rows=[0]).linear[0]
        integrate(w, ag, force, zero, dt)
    raise AssertionError("never caught")


def test_intercept_catches_sooner_than_linear_sooner_than_seek():
    """Issue 3: intercept < linear < plain seek in time to catch a straight-moving target."""
    target = {"kind": "agent", "id": "e"}
    seek = race({"type": "seek", "target": target})
    linear = race({"type": "pursuit", "target": target})
    intercept = race({"type": "pursuit", "target": target, "predictor": {"type": "intercept"}})
    assert intercept < linear < seek
