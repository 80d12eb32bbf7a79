"""``orca``: hand-worked ORCA lines and linear programs, RVO2's own velocities (a test-only
transcription, ``rvo2_reference.py``), RVO2's Circle and Blocks examples, and the two
kernel paths giving the same bits.

The head-on case by hand: A at (-2.5, 0) moving (1, 0), B at (2.5, 0) moving (-1, 0),
radii 1 (combined 2), time horizon 2. For A: relative position (5, 0), relative velocity
(2, 0); w = (2, 0) - (5, 0) / 2 = (-0.5, 0); w . p = -2.5 < 0 and 2.5^2 > 2^2 * 0.5^2, so
the velocity is projected on the cut-off circle: |w| = 0.5, u = (2 / 2 - 0.5) (-1, 0) =
(-0.5, 0), direction (0, 1). Reciprocal, A takes half: the line passes through
(1, 0) + u / 2 = (0.75, 0), permitted x <= 0.75. The preferred (1, 0) is outside;
linear program 1 on the line: t = (0, 1) . ((1, 0) - (0.75, 0)) = 0 within the speed
circle's bounds, so the new velocity is (0.75, 0), and the force m (v_new - v) / dt =
(-0.25, 0) / 0.1 = (-2.5, 0).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
import rvo2_reference as rvo
from numpy.testing import assert_allclose
from scipy.spatial import cKDTree
from steering_support import node, run, world

from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation
from behaviortk.world.factory import make_agents

DT = 0.1


def orca(target: tuple[float, float], **fields: Any) -> Any:
    spec = {"type": "orca", "target": {"kind": "point", "at": list(target)}}
    spec |= {"slowing_radius": 0, "tolerance": 0} | fields
    return node(spec)


def test_head_on_each_takes_half_the_avoidance() -> None:
    """The module docstring's case: both slow to 0.75, forces (-2.5, 0) and (2.5, 0)."""
    ag = make_agents(
        [[497.5, 500], [502.5, 500]], [[1, 0], [-1, 0]], radius=1.0, max_speed=1.0,
        view_distance=100.0,
    )  # fmt: skip
    out = run(orca((500, 500)), ag, dt=DT).linear
    assert_allclose(out, [[-2.5, 0], [2.5, 0]], atol=1e-12)


def test_an_agent_that_does_not_run_orca_is_avoided_without_reciprocity() -> None:
    """B (another group, not running orca) moves (-1, 0): A takes all of u: the line passes
    through (1, 0) + (-0.5, 0) = (0.5, 0), new velocity (0.5, 0), force (-5, 0)."""
    ag = make_agents(
        [[497.5, 500], [502.5, 500]], [[1, 0], [-1, 0]], radius=1.0, max_speed=1.0,
        view_distance=100.0, groups=[("a", 1), ("b", 1)],
    )  # fmt: skip
    out = run(orca((600, 500)), ag, dt=DT, group="a").linear
    assert_allclose(out, [[-5.0, 0]], atol=1e-12)


def test_passing_to_the_side_projects_on_a_leg() -> None:
    """A at the origin moving (10, 0) at max speed 10, B at (10, 1) still (not running orca),
    combined radius 2, horizon 2: w = (10, 0) - (5, 0.5) = (5, -0.5), w . p = 49.5 > 0: a
    leg. det(p, w) = -10 < 0: the right leg, direction -(10 leg + 2, -20 + leg) / 101 with
    leg = sqrt(101 - 4); u = (v . d) d - v, all of it A's: the line passes through v + u.
    The preferred (10, 0) is outside it; program 1 puts the new velocity at its projection
    on the line (inside the max-speed circle)."""
    ag = make_agents(
        [[500, 500], [510, 501]], [[10, 0], [0, 0]], radius=1.0, max_speed=10.0,
        view_distance=100.0, groups=[("a", 1), ("b", 1)],
    )  # fmt: skip
    out = run(orca((900, 500)), ag, dt=DT, group="a").linear
    v, pref, leg = np.array([10.0, 0.0]), np.array([10.0, 0.0]), np.sqrt(97.0)
    d = -np.array([10 * leg + 2, -20 + leg]) / 101
    point = v + ((v @ d) * d - v)
    new = point + (d @ (pref - point)) * d
    assert np.linalg.norm(new) < 10
    assert_allclose(out[0], (new - v) / DT, atol=1e-9)


def test_a_wall_ahead_caps_the_speed_toward_it() -> None:
    """Wall from (-10, 2.5) to (10, 2.5) ahead of an agent at the origin moving (0, 1) to a
    target beyond; radius 1, obstacle horizon 2 (1 / 2 = 0.5). The agent is right of the edge
    a -> b; s = 0.5, the line's distance 2.5 > 1: no collision. Cut-off centres 0.5 a and
    0.5 b: (-5, 1.25), (5, 1.25); t = 0.5 and both legs point away (t_left, t_right < 0), so
    the velocity projects on the cut-off line: direction -(1, 0), point (-5, 1.25) + 1 * 0.5
    * (0, -1) = (-5, 0.75): permitted v_y <= 0.75 = (2.5 - 1) / 2. Program 1 on that line:
    t = (-1, 0) . ((0, 1) - (-5, 0.75)) = -5 within its bounds, new velocity (0, 0.75),
    force (0, -0.25) / 0.1 = (0, -2.5)."""
    ag = make_agents([[500, 500]], [[0, 1]], radius=1.0, max_speed=1.0, view_distance=100.0)
    w = world(wall_a=np.array([[490.0, 502.5]]), wall_b=np.array([[510.0, 502.5]]))
    out = run(orca((500, 600)), ag, w, dt=DT).linear
    assert_allclose(out, [[0.0, -2.5]], atol=1e-12)


def test_touching_a_wall_forbids_moving_into_it() -> None:
    """The wall y = 2.5 at distance 0.5 from an agent of radius 1 (0 <= s = 0.5 <= 1, the
    line's squared distance 0.25 <= 1): RVO2's "collision with obstacle segment", a line
    through the origin along -(1, 0): permitted v_y <= 0. The preferred (0, 1) projects to
    (0, 0): force (0, -1) / 0.1 = (0, -10)."""
    ag = make_agents([[500, 502]], [[0, 1]], radius=1.0, max_speed=1.0, view_distance=100.0)
    w = world(wall_a=np.array([[490.0, 502.5]]), wall_b=np.array([[510.0, 502.5]]))
    out = run(orca((500, 600)), ag, w, dt=DT).linear
    assert_allclose(out, [[0.0, -10.0]], atol=1e-12)


def test_a_wall_is_avoided_from_either_side() -> None:
    """The same wall seen from above (the agent at y = 505, heading down at it): the edge
    b -> a has the agent on its right; by symmetry the new velocity is (0, -0.75) from
    (0, -1), force (0, 2.5)."""
    ag = make_agents([[500, 505]], [[0, -1]], radius=1.0, max_speed=1.0, view_distance=100.0)
    w = world(wall_a=np.array([[490.0, 502.5]]), wall_b=np.array([[510.0, 502.5]]))
    out = run(orca((500, 400)), ag, w, dt=DT).linear
    assert_allclose(out, [[0.0, 2.5]], atol=1e-12)


def test_a_circle_obstacle_is_a_still_agent_avoided_alone() -> None:
    """A circle of radius 1 at (0, 3.5), the agent (radius 1) at the origin moving (0, 1):
    relative position (0, 3.5), relative velocity (0, 1), combined 2, horizon 2:
    w = (0, 1) - (0, 1.75) = (0, -0.75), projected on the cut-off circle: u = (1 - 0.75)
    (0, -1) = (0, -0.25), all of it taken: line through (0, 0.75), direction (-1, 0): new
    velocity (0, 0.75), force (0, -2.5)."""
    ag = make_agents([[500, 500]], [[0, 1]], radius=1.0, max_speed=1.0, view_distance=100.0)
    w = world(obstacle_pos=np.array([[500.0, 503.5]]), obstacle_radius=np.array([1.0]))
    out = run(orca((500, 600)), ag, w, dt=DT).linear
    assert_allclose(out, [[0.0, -2.5]], atol=1e-12)


def test_the_velocity_is_free_when_nothing_is_near() -> None:
    """Nobody in view: the new velocity is the preferred one, (1, 0) at max speed 3 -> (3, 0):
    force (3 - 1, 0) / 0.1 = (20, 0)."""
    ag = make_agents([[100, 100]], [[1, 0]], radius=1.0, max_speed=3.0, view_distance=10.0)
    out = run(orca((900, 100)), ag, dt=DT).linear
    assert_allclose(out, [[20.0, 0.0]], atol=1e-12)


# ------------------------------------------------------------ RVO2's velocities
class EveryoneRunsOrca:
    """The tick's requests as ``orca`` reads them: every agent asked for an ``orca``."""

    def __init__(self, n: int) -> None:
        self.n = n

    def leaves(self, tag: str) -> Any:
        yield "agents", None, np.arange(self.n)

    def once(self, key: str, compute: Any) -> Any:
        return compute()


def _scene(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    pos = rng.uniform(480, 520, (n, 2))
    vel = rng.uniform(-1.5, 1.5, (n, 2))
    goal = rng.uniform(0, 1000, (n, 2))
    return pos, vel, goal


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("with_walls", [False, True])
def test_new_velocities_agree_with_rvo2(seed: int, with_walls: bool) -> None:
    """Crowded scenes (eight agents within 40 units, radius 2, max speed 2, some already
    overlapping, some walls): our new velocity (v + F dt / m) is RVO2's, computed by the
    transcription from the same state (linear program 3 included where the crowd leaves no
    permitted velocity)."""
    n = 8
    walls = [((470.0, 505.0), (530.0, 512.0)), ((495.0, 470.0), (495.0, 490.0))]
    walls = walls if with_walls else []
    pos, vel, goal = _scene(seed, n)
    ag = make_agents(pos, vel, radius=2.0, max_speed=2.0, view_distance=1000.0, max_neighbours=20)
    w = world(
        wall_a=np.array([a for a, _ in walls]).reshape(-1, 2),
        wall_b=np.array([b for _, b in walls]).reshape(-1, 2),
    )
    from behaviortk.steering.orca_formulas import preferred

    prefs = []
    agents = []
    obstacles: list[Any] = []
    for a, b in walls:
        rvo.add_obstacle(obstacles, [a, b])
    new = np.empty((n, 2))
    for i in range(n):
        model = orca(tuple(goal[i]), time_horizon=3.0, obstacle_time_horizon=1.5)
        out = run(model, ag, w, rows=[i], dt=DT, requests=EveryoneRunsOrca(n)).linear
        new[i] = vel[i] + out[0] * DT
        prefs.append(preferred(pos[i, 0], pos[i, 1], goal[i, 0], goal[i, 1], 2.0, 0.0, 0.0))
    for i in range(n):
        agents.append(
            rvo.Agent(tuple(pos[i]), tuple(vel[i]), tuple(map(float, prefs[i])), 2.0, 2.0,
                      1000.0, 20, 3.0, 1.5)
        )  # fmt: skip
    expected = [rvo.compute_new_velocity(a, agents, obstacles, DT) for a in agents]
    assert_allclose(new, np.array(expected), atol=1e-9)


# ---------------------------------------------------------- whole simulations
def _definition(
    count: int, points: list[list[float]], *, radius: float, max_speed: float, view: float,
    cap: int, horizon: float, obstacle_horizon: float, dt: float, size: float,
) -> dict[str, Any]:  # fmt: skip
    return {
        "name": "orca_example",
        "world": {"width": size, "height": size, "edges": "contain", "dt": dt, "seed": 1},
        "groups": [
            {
                "name": "a",
                "count": count,
                "spawn": {"kind": "positions", "points": points},
                "speed": 0,
                "max_speed": max_speed,
                "max_force": 1e9,
                "radius": radius,
                "view_distance": view,
                "fov": 360,
                "max_neighbours": cap,
                "tree": "go",
            }
        ],
        "trees": {
            "go": {
                "blackboard": {"goal": {"type": "point", "default": [0, 0]}},
                "root": {
                    "type": "orca",
                    "target": {"kind": "blackboard", "key": "goal"},
                    "time_horizon": horizon,
                    "obstacle_time_horizon": obstacle_horizon,
                    "preferred_speed": max_speed / 2,
                    "slowing_radius": 2 * max_speed * dt,
                    "tolerance": 0.01,
                },
            }
        },
    }


def _with_goals(data: dict[str, Any], goals: np.ndarray, engine: str, kernels: str) -> Simulation:
    sim = Simulation(load_text(json.dumps(data), "orca"), engine=engine, kernels=kernels)
    for agent, goal in zip(sim.ids[: len(goals)].tolist(), goals.tolist(), strict=True):
        sim.blackboard(agent)["goal"] = goal
    return sim


def _circle(count: int) -> tuple[dict[str, Any], np.ndarray]:
    """RVO2's Circle example (examples/Circle.cc): agents evenly on a circle of radius 200
    go to the antipodes; radius 1.5, max speed 2 (preferred 1), neighbour distance 15, 10
    neighbours, time horizons 10, time step 0.25."""
    angle = np.arange(count) * 2 * np.pi / count
    start = 250.0 + 200.0 * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    # RVO2 perturbs preferred velocities "to avoid deadlocks due to perfect symmetry"
    # (Blocks.cc); here the start positions, by at most 1e-3, seeded
    start += np.random.default_rng(7).uniform(-1e-3, 1e-3, start.shape)
    data = _definition(
        count, start.tolist(), radius=1.5, max_speed=2.0, view=15.0, cap=10, horizon=10.0,
        obstacle_horizon=10.0, dt=0.25, size=500.0,
    )  # fmt: skip
    return data, 500.0 - start


def _run_until_arrived(sim: Simulation, goals: np.ndarray, ticks: int) -> tuple[int, float]:
    """Steps until everyone is within 1 of its goal: the tick, and the deepest overlap of two
    bodies on the way (0: none)."""
    deepest = 0.0
    for tick in range(ticks):
        deepest = max(deepest, _deepest_overlap(sim))
        if (np.linalg.norm(sim.agents.pos - goals, axis=1) < 1.0).all():
            return tick, deepest
        sim.step()
    raise AssertionError(f"not everyone arrived in {ticks} ticks")


def _deepest_overlap(sim: Simulation) -> float:
    pos, radius = sim.agents.pos, sim.agents.radius
    pairs = cKDTree(pos).query_pairs(2 * float(radius.max()), output_type="ndarray")
    if not len(pairs):
        return 0.0
    gap = np.linalg.norm(pos[pairs[:, 0]] - pos[pairs[:, 1]], axis=1)
    return max(0.0, float((radius[pairs[:, 0]] + radius[pairs[:, 1]] - gap).max()))


def test_rvo2_circle_follows_rvo2_tick_by_tick() -> None:
    """24 agents of the Circle for 150 ticks: every position equals the RVO2 transcription's
    (``rvo2_reference.step``, the same preferred velocities), so the motion is RVO2's."""
    from behaviortk.steering.orca_formulas import preferred

    data, goals = _circle(24)
    sim = _with_goals(data, goals, "batch", "numpy")
    agents = [
        rvo.Agent(tuple(p), (0.0, 0.0), (0.0, 0.0), 1.5, 2.0, 15.0, 10, 10.0, 10.0)
        for p in sim.agents.pos.tolist()
    ]
    for _ in range(150):
        for a, g in zip(agents, goals, strict=True):
            pref = preferred(a.position[0], a.position[1], g[0], g[1], 1.0, 1.0, 0.01)
            a.pref = (float(pref[0]), float(pref[1]))
        rvo.step(agents, [], 0.25)
        sim.step()
        assert_allclose(sim.agents.pos, [a.position for a in agents], atol=1e-9)


CIRCLE_OVERLAP = {60: 0.35, 400: 0.8}
"""The deepest overlap allowed on the Circle. ORCA does not promise none where a crowd leaves
no permitted velocity (program 3 takes the least violation): RVO2 itself (its C++ built from
its sources, examples/Circle.cc's parameters, preferred speed 1) lets bodies overlap by up to
0.21 with 60 agents and 0.73 with 400 (radius 1.5); this implementation, RVO2's maths on
doubles, by 0.28 and 0.71."""


@pytest.mark.parametrize("count", [60, 400])
def test_rvo2_circle_everyone_swaps(count: int) -> None:
    """60 and 400 agents swap through the centre and all arrive; bodies overlap no deeper
    than in RVO2's own run of the example (``CIRCLE_OVERLAP``)."""
    data, goals = _circle(count)
    sim = _with_goals(data, goals, "batch", "numba")
    _, deepest = _run_until_arrived(sim, goals, 6000)
    assert deepest < CIRCLE_OVERLAP[count]


def test_rvo2_blocks_four_groups_cross_between_obstacles() -> None:
    """RVO2's Blocks example (examples/Blocks.cc): four 5 x 5 groups in the corners cross to
    the opposite corners between four square blocks (each side a wall); radius 2, max speed
    2 (preferred 1), neighbour distance 15, 10 neighbours, time horizons 5, time step 0.25.
    Each group's 25 share one goal; everyone arrives within 20 of it (Blocks.cc's
    ``reachedGoal``; RVO2's own run takes 1267 s, 5069 ticks; this one about 4,500), no centre ever enters a block, bodies overlap by less than a tenth of a
    radius. Blocks.cc perturbs preferred velocities against deadlocks of perfect symmetry;
    here the start positions, by at most 1e-3, seeded."""
    points, goals = [], []
    for i in range(5):
        for j in range(5):
            x, y = 55.0 + i * 10.0, 55.0 + j * 10.0
            for sx, sy in ((1, 1), (-1, 1), (1, -1), (-1, -1)):
                points.append([200 + sx * x, 200 + sy * y])
                goals.append([200 - sx * 75.0, 200 - sy * 75.0])
    jitter = np.random.default_rng(3).uniform(-1e-3, 1e-3, (100, 2))
    points = (np.array(points) + jitter).tolist()
    data = _definition(
        100, points, radius=2.0, max_speed=2.0, view=15.0, cap=10, horizon=5.0,
        obstacle_horizon=5.0, dt=0.25, size=400.0,
    )  # fmt: skip
    walls = []
    for sx in (-1, 1):
        for sy in (-1, 1):
            corners = [(10, 10), (40, 10), (40, 40), (10, 40)]
            ring = [(200 + sx * x, 200 + sy * y) for x, y in corners]
            walls += [{"from": list(ring[k]), "to": list(ring[(k + 1) % 4])} for k in range(4)]
    data["walls"] = walls
    sim = _with_goals(data, np.array(goals), "batch", "numba")
    target = np.array(goals)
    inside, deepest = 0, 0.0
    for _ in range(7000):
        offset = np.abs(sim.agents.pos - 200.0)
        inside += int(((offset > 10) & (offset < 40)).all(axis=1).sum())
        deepest = max(deepest, _deepest_overlap(sim))
        if (np.linalg.norm(sim.agents.pos - target, axis=1) < 20.0).all():
            break
        sim.step()
    assert (np.linalg.norm(sim.agents.pos - target, axis=1) < 20.0).all()
    assert inside == 0
    assert deepest < 0.1 * 2.0


@pytest.mark.parametrize("kernels", ["numpy", "numba"])
def test_engines_agree_on_a_small_circle(kernels: str) -> None:
    """py_trees and batch give the same bits on a 24-agent Circle, on either kernel path."""
    data, goals = _circle(24)
    a = _with_goals(data, goals, "py_trees", kernels)
    b = _with_goals(data, goals, "batch", kernels)
    for _ in range(40):
        a.step()
        b.step()
    assert np.array_equal(a.agents.pos, b.agents.pos)


@pytest.mark.parametrize("keep_apart", [False, True])
def test_numba_and_numpy_give_the_same_bits(keep_apart: bool) -> None:
    """Pillars, walls, a wanderer that does not run orca, crowded spawns: 60 ticks of the
    compiled act equal the NumPy reference bit for bit, with keep_apart's lines or not."""
    data, goals = _circle(30)
    data["trees"]["go"]["root"]["keep_apart"] = keep_apart
    data["groups"][0]["spawn"] = {"kind": "area", "min": [200, 200], "max": [300, 300]}
    data["groups"][0]["max_force"] = 3.0
    data["obstacles"] = [{"at": [250, 250], "radius": 8}, {"at": [230, 280], "radius": 4}]
    data["walls"] = [{"from": [210, 210], "to": [260, 215]}]
    data["groups"].append(
        {"name": "w", "count": 5, "spawn": {"kind": "area", "min": [220, 220], "max": [280, 280]},
         "tree": "walk", "max_speed": 2, "radius": 1.5}
    )  # fmt: skip
    data["trees"]["walk"] = {"root": {"type": "wander"}}
    a = _with_goals(data, goals, "batch", "numpy")
    b = _with_goals(data, goals, "batch", "numba")
    for _ in range(60):
        a.step()
        b.step()
        assert np.array_equal(a.agents.vel, b.agents.vel)
    assert np.array_equal(a.agents.pos, b.agents.pos)


# ---------------------------------------------------------------- bad input
BAD_FIELDS = {
    "time_horizon": (0, "/trees/main/root/time_horizon: must be >= 1e-06, got 0"),
    "obstacle_time_horizon": (-1, "/trees/main/root/obstacle_time_horizon: must be >= 1e-06"),
    "preferred_speed": ("fast", "/trees/main/root/preferred_speed: "),
    "slowing_radius": (-5, "/trees/main/root/slowing_radius: must be >= 0"),
    "tolerance": (1e300, "/trees/main/root/tolerance: must be <= 1000000000.0"),
    "horizon": (2, "/trees/main/root/horizon: unknown key 'horizon'; did you mean"),
    "keep_apart": ("yes", "/trees/main/root/keep_apart: expected true or false, got 'yes'"),
}


@pytest.mark.parametrize("field", list(BAD_FIELDS))
def test_bad_fields_are_located_errors(field: str) -> None:
    """Each of orca's fields, given a bad value (or misspelt), is one located issue: the
    file, its line, the JSON Pointer and what is wrong."""
    from engine_support import definition

    import behaviortk

    value, expected = BAD_FIELDS[field]
    root = {"type": "orca", "target": {"kind": "point", "at": [1, 1]}, field: value}
    with pytest.raises(behaviortk.DefinitionError) as err:
        behaviortk.load_text(json.dumps(definition(root), indent=1), "x.json")
    (issue,) = [str(i) for i in err.value.issues]
    assert issue.startswith("x.json:") and expected in issue, issue


def test_a_missing_target_is_a_located_error() -> None:
    from engine_support import definition

    import behaviortk

    with pytest.raises(behaviortk.DefinitionError) as err:
        behaviortk.load_text(json.dumps(definition({"type": "orca"}), indent=1), "x.json")
    assert "/trees/main/root/target" in str(err.value.issues[0])


def test_validate_budgets_orca_s_neighbour_query() -> None:
    """``validate``'s budget counts orca's query of every group's agents."""
    from behaviortk.format.budget import neighbour_ofs

    root = {"type": "sequence", "children": [{"type": "orca", "target": {"kind": "self"}}]}
    assert list(neighbour_ofs(root)) == ["any"]


# ---------------------------------------------------------------- keep_apart
def test_the_contact_line_by_hand() -> None:
    """Neighbour 3.2 ahead on +x, combined radius 3 (gap 0.2), dt 0.1, reciprocal (share
    1/2): close at most 0.1 this tick, u . v <= 0.5 * 0.2 / 0.1 = 1, so the line passes
    through (1, 0) with direction (0, 1) (permitted on its left: x <= 1). Not reciprocal:
    x <= 2. At max speed 1 the line could never bind; a deeper overlap than rounding
    leaves it to RVO2's collision case; bodies touching to rounding may not approach."""
    from behaviortk.steering.orca_formulas import contact_line, violated_by

    binds, x, y, dx, dy = contact_line(3.2, 0.0, 3.0, 0.5, 10.0, 2.0)
    assert binds and (x, y, dx, dy) == pytest.approx((1.0, 0.0, 0.0, 1.0))
    assert violated_by(dx, dy, x, y, 1.5, 0.7) > 0.0 and violated_by(dx, dy, x, y, 0.9, 5) < 0.0
    binds, x, y, _, _ = contact_line(0.0, 3.2, 3.0, 1.0, 10.0, 3.0)
    assert binds and (x, y) == pytest.approx((0.0, 2.0))
    assert not contact_line(3.2, 0.0, 3.0, 0.5, 10.0, 1.0)[0]  # reach 1 >= max speed 1
    assert not contact_line(2.9, 0.0, 3.0, 0.5, 10.0, 2.0)[0]  # overlapping by 0.1
    binds, x, y, _, _ = contact_line(3.0 - 1e-12, 0.0, 3.0, 0.5, 10.0, 2.0)
    assert binds and (x, y) == (0.0, 0.0)  # touching: no approach at all


def test_keep_apart_holds_a_pair_that_would_meet() -> None:
    """Head-on at 2 each, 3.2 apart (gap 0.2), dt 0.1, horizon 0.01 (ORCA itself barely
    reacts): without keep_apart A keeps (2, 0) and the pair closes 0.4, overlapping by 0.2;
    with it A closes exactly its half of the gap, 0.1: the new velocity is (1, 0), on the
    line x <= 0.5 * 0.2 / 0.1."""
    ag = make_agents([[0.0, 0.0], [3.2, 0.0]], [[2.0, 0.0], [-2.0, 0.0]], radius=1.5,
                     max_speed=2.0, view_distance=100.0)  # fmt: skip
    for keep, limit in ((False, None), (True, 1.0)):
        model = orca((100.0, 0.0), time_horizon=0.01, obstacle_time_horizon=0.01,
                     keep_apart=keep)  # fmt: skip
        out = run(model, ag, world(), rows=[0], dt=DT, requests=EveryoneRunsOrca(2)).linear
        new = np.array([2.0, 0.0]) + out[0] * DT
        if limit is None:
            assert new[0] == pytest.approx(2.0)  # ORCA alone keeps the preferred velocity
        else:
            assert new[0] <= limit + 1e-12 and new[0] == pytest.approx(limit)


@pytest.mark.parametrize("kernels", ["numpy", "numba"])
def test_keep_apart_circle_never_overlaps(kernels: str) -> None:
    """RVO2's Circle at 60 with keep_apart: in 2,400 ticks (past the jam at the centre) no
    two bodies ever overlap beyond rounding (RVO2: 0.21); the price, said in the docs:
    pressed from every side the crowd jams instead of slipping past."""
    data, goals = _circle(60)
    data["trees"]["go"]["root"]["keep_apart"] = True
    sim = _with_goals(data, goals, "batch", kernels)
    deepest = 0.0
    for _ in range(2400 if kernels == "numba" else 900):
        sim.step()
        deepest = max(deepest, _deepest_overlap(sim))
    assert deepest < 1e-9
