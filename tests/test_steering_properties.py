"""Property test (issue 3, robustness): random states and parameters never give NaN/Inf.

States include zero velocities, coincident agents, agents on their targets and
on obstacle centres (d -> 0 in the Lennard-Jones potential), empty neighbour
sets; every force is finite and, after truncation, no longer than max_force.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from steering_support import node, run, world

from behaviortk.steering.combiners import accumulate
from behaviortk.vec import EPS, EPS_SQUARED, length, normalize_xy, truncate, unit_or
from behaviortk.world.factory import make_agents
from behaviortk.world.state import Path

SPOTS = [(0.0, 0.0), (10.0, 0.0), (0.0, 10.0), (50.0, 50.0), (99.5, 0.25)]
coord = st.one_of(st.sampled_from(SPOTS), st.tuples(st.floats(0, 200), st.floats(0, 200)))
velocity = st.one_of(st.just((0.0, 0.0)), st.tuples(st.floats(-100, 100), st.floats(-100, 100)))
positive = st.floats(0.001, 500)
nonneg = st.floats(0, 500)
degrees = st.floats(0, 360)
predictor = st.sampled_from(
    [{"type": "linear"}, {"type": "capped", "max_prediction": 0.5}, {"type": "intercept"}]
)


def targets(n: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        coord.map(lambda p: {"kind": "point", "at": list(p)}),
        st.integers(0, n - 1).map(lambda i: {"kind": "agent", "id": f"a{i}"}),
        st.just({"kind": "nearest", "group": "agents"}),
        st.just({"kind": "self"}),
    )


def specs(n: int) -> st.SearchStrategy[dict[str, Any]]:
    t = targets(n)
    return st.one_of(
        st.builds(lambda t: {"type": "seek", "target": t}, t),
        st.builds(lambda t, f: {"type": "flee", "target": t, "fear_distance": f}, t, nonneg),
        st.builds(
            lambda t, d, r, tol, ttt: {
                "type": "arrive",
                "target": t,
                "deceleration": d,
                "slowing_radius": r,
                "tolerance": tol,
                "time_to_target": ttt,
            },
            t,
            st.sampled_from([None, "slow", "normal", "fast"]),
            nonneg,
            nonneg,
            positive,
        ),
        st.builds(
            lambda t, p, f, c: {
                "type": "pursuit",
                "target": t,
                "predictor": p,
                "facing_test": f,
                "facing_threshold": c,
            },
            t,
            predictor,
            st.sampled_from(["heading", "velocity", "none"]),
            st.floats(-1, 1),
        ),
        st.builds(lambda t, p: {"type": "evade", "target": t, "predictor": p}, t, predictor),
        st.builds(
            lambda r, d, j, u, m, rate, s: {
                "type": "wander",
                "radius": r,
                "distance": d,
                "jitter": j,
                "units": u,
                "method": m,
                "rate": rate,
                "steer": s,
            },
            nonneg,
            nonneg,
            nonneg,
            st.sampled_from(["world", "agent_radius"]),
            st.sampled_from(["jitter", "orientation"]),
            st.floats(0, 5000),
            st.sampled_from([None, "seek", "displacement", "face"]),
        ),
        st.builds(
            lambda kind, t, a, b, c: {
                "type": kind,
                "target": t,
                "target_radius": a,
                "slow_radius": b,
                "time_to_target": c,
            },
            st.sampled_from(["face", "align"]),
            t,
            degrees,
            degrees,
            positive,
        ),
        st.builds(
            lambda a, b: {"type": "look_where_you_are_going", "target_radius": a, "slow_radius": b},
            degrees,
            degrees,
        ),
        st.builds(
            lambda t, c: {"type": "velocity_match", "target": t, "time_to_target": c}, t, positive
        ),
        st.sampled_from(
            [
                {"type": "separation"},
                {"type": "alignment"},
                {"type": "cohesion", "of": "any"},
                {"type": "cohesion", "normalize": False},
                {"type": "follow", "of": "any"},
            ]
        ),
        st.builds(
            lambda m, b: {
                "type": "obstacle_avoidance",
                "min_detection_length": m,
                "braking_weight": b,
            },
            nonneg,
            nonneg,
        ),
        st.builds(
            lambda a, n_, b, m, c, u, s: {
                "type": "lj_avoidance",
                "a": a,
                "n": n_,
                "b": b,
                "m": m,
                "cutoff": c,
                "update": u,
                "speed": s,
            },
            nonneg,
            st.floats(0.1, 6),
            nonneg,
            st.floats(0.1, 6),
            nonneg,
            st.sampled_from(["force", "velocity"]),
            st.one_of(st.none(), positive),
        ),
        st.builds(
            lambda f, a: {"type": "wall_avoidance", "feeler_length": f, "side_angle": a},
            nonneg,
            degrees,
        ),
        st.builds(
            lambda t, d: {"type": "hide", "target": t, "distance_from_boundary": d}, t, nonneg
        ),
        st.builds(
            lambda a, b, p: {"type": "interpose", "target": a, "other": b, "predictor": p},
            t,
            t,
            predictor,
        ),
        st.builds(
            lambda t, o, p: {
                "type": "offset_pursuit",
                "target": t,
                "offset": list(o),
                "predictor": p,
            },
            t,
            st.tuples(st.floats(-50, 50), st.floats(-50, 50)),
            predictor,
        ),
        st.builds(
            lambda d, lp: {
                "type": "path_following",
                "target": {"kind": "path", "path": "p"},
                "waypoint_seek_distance": d,
                "looped": lp,
            },
            nonneg,
            st.sampled_from([None, True, False]),
        ),
        st.builds(
            lambda m, la: {"type": "containment", "margin": m, "look_ahead": la}, nonneg, positive
        ),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_force_finite_and_truncated(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 5), label="agents")
    pos = data.draw(st.lists(coord, min_size=n, max_size=n), label="pos")
    vel = data.draw(st.lists(velocity, min_size=n, max_size=n), label="vel")
    max_speed = data.draw(st.floats(0, 200), label="max_speed")
    max_force = data.draw(st.floats(0, 300), label="max_force")
    ag = make_agents(
        pos,
        vel,
        names=[f"a{i}" for i in range(n)],
        max_speed=max_speed,
        max_force=max_force,
        radius=data.draw(st.floats(0, 20)),
        view_distance=data.draw(st.floats(0, 100)),
        fov=data.draw(st.floats(0, 2 * np.pi)),
        max_rotation=data.draw(st.sampled_from([0.0, 1.0, np.inf])),
        max_angular_accel=data.draw(st.sampled_from([0.0, 3.0, np.inf])),
    )
    obstacles = data.draw(st.lists(coord, max_size=3), label="obstacles")
    radii = data.draw(st.lists(st.floats(0, 30), min_size=len(obstacles), max_size=len(obstacles)))
    w = world(
        200,
        200,
        obstacle_pos=np.array(obstacles, dtype=float).reshape(-1, 2),
        obstacle_radius=np.array(radii, dtype=float),
        wall_a=np.array([[10.0, -50.0], [0.0, 0.0]]),
        wall_b=np.array([[10.0, 50.0], [0.0, 0.0]]),  # the second wall is degenerate
        wall_normal=np.array([[-1.0, 0.0], [0.0, 1.0]]),
        paths={"p": Path("p", np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 0.0]]), False)},
    )
    spec = data.draw(specs(n), label="spec")
    spec["weight"] = data.draw(st.floats(0, 10), label="weight")
    if data.draw(st.booleans(), label="in a combiner"):
        kind = data.draw(st.sampled_from(["blend", "prioritized_sum", "first_nonzero"]))
        spec = {"type": kind, "children": [spec, data.draw(specs(n))]}
    rand = data.draw(st.lists(st.floats(0, 0.999), min_size=8 * n, max_size=8 * n))
    out = run(node(spec), ag, w, rand=rand, with_weight=True)
    assert np.isfinite(out.linear).all()
    assert out.linear.shape == (n, 2)
    if out.angular is not None:
        assert np.isfinite(out.angular).all()
    total = accumulate(np.zeros((n, 2)), out.linear, ag.max_force)
    assert (length(total) <= ag.max_force * (1 + 1e-9) + 1e-9).all()
    assert (length(truncate(out.linear, ag.max_force)) <= ag.max_force * (1 + 1e-9) + 1e-9).all()


def test_eps_squared_is_exactly_the_squares_whose_root_is_above_eps() -> None:
    assert np.sqrt(EPS_SQUARED) <= EPS < np.sqrt(np.nextafter(EPS_SQUARED, np.inf))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(-2e-12, 2e-12) | st.floats(-1e3, 1e3), min_size=4, max_size=4),
)
def test_unit_or_is_the_normalised_vector_it_chooses(xs: list[float]) -> None:
    """The same bits as ``normalize_xy`` of ``a``, or of ``b`` where ``|a| <= EPS``, near EPS too."""
    ax, ay, bx, by = (np.float64(x) for x in xs)
    first = np.sqrt(ax * ax + ay * ay) > EPS
    want = normalize_xy(ax, ay) if first else normalize_xy(bx, by)
    got = unit_or(ax, ay, bx, by)
    assert np.array_equal(np.asarray(got), np.asarray(want))
