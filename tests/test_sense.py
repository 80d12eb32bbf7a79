"""Sense: neighbour sets (view distance, field of view, wrap), nearest and targets.

Neighbour rule (seed 003, "inView": distance <= view distance and the angle
between the heading and the offset <= fov / 2), worked by hand below.
"""

from __future__ import annotations

import numpy as np

from behaviortk.sense.sensing import Sense
from behaviortk.sense.target_kinds import (
    AgentTarget,
    BlackboardTarget,
    NearestTarget,
    PathTarget,
    PointerTarget,
    PointTarget,
    SelfTarget,
)
from behaviortk.world.factory import make_agents
from behaviortk.world.state import Agents, Path, World


def sense_of(world: World, agents: Agents, **kw: object) -> Sense:
    return Sense(world, agents, rand=np.zeros((agents.n, 0)), tick=0, time=0.0, **kw)  # type: ignore[arg-type]


def observer_world() -> tuple[World, Agents]:
    """Agent 0 at (100,100) heading +x, view 10, fov 180 degrees. Others:
    1 ahead at distance 5; 2 at exactly 90 degrees and exactly the view distance;
    3 behind; 4 at 90 degrees but 10.1 away; 5 coincident."""
    pos = [[100, 100], [105, 100], [100, 110], [95, 100], [100, 89.9], [100, 100]]
    a = make_agents(pos, heading=[[1, 0]] * 6, view_distance=10.0, fov=np.pi)
    return World(width=200, height=200, edges="bounce"), a


def test_neighbours_view_distance_fov_boundary_and_coincident() -> None:
    w, a = observer_world()
    nb = sense_of(w, a).neighbours("agents", "same")
    rows = slice(nb.offsets[0], nb.offsets[1])
    assert nb.j[rows].tolist() == [1, 2, 5]
    np.testing.assert_allclose(nb.d[rows], [[5, 0], [0, 10], [0, 0]])
    np.testing.assert_allclose(nb.dist[rows], [5, 10, 0])
    # global properties: sorted by (i, j), never oneself, CSR offsets
    keys = nb.i * a.n + nb.j
    assert (np.diff(keys) > 0).all()
    assert (nb.i != nb.j).all()
    assert nb.offsets.tolist()[0] == 0 and nb.offsets[-1] == nb.i.size
    for k in range(a.n):
        assert (nb.i[nb.offsets[k] : nb.offsets[k + 1]] == k).all()


def test_fov_all_round_sees_behind() -> None:
    w, a = observer_world()
    a.fov[:] = 2 * np.pi
    nb = sense_of(w, a).neighbours("agents")
    assert nb.j[nb.offsets[0] : nb.offsets[1]].tolist() == [1, 2, 3, 5]


def test_narrow_fov_boundary() -> None:
    """fov 90 degrees: a neighbour at exactly 45 degrees, (3,3) away, is seen; one at 46 is not."""
    ang = np.radians(46.0)
    pos = [[0, 0], [3, 3], [4 * np.cos(ang), 4 * np.sin(ang)]]
    a = make_agents(pos, heading=[[1, 0]] * 3, view_distance=10.0, fov=np.pi / 2)
    nb = sense_of(World(100, 100, "contain"), a).neighbours("agents")
    assert nb.j[nb.offsets[0] : nb.offsets[1]].tolist() == [1]


def test_neighbours_across_the_wrap_edge() -> None:
    """(1,50) and (99,50) on a 100 torus are 2 apart: d = (-2,0) and (2,0)."""
    a = make_agents([[1, 50], [99, 50]], view_distance=5.0)
    nb = sense_of(World(100, 100, "wrap"), a).neighbours("agents")
    assert nb.i.tolist() == [0, 1] and nb.j.tolist() == [1, 0]
    np.testing.assert_allclose(nb.d, [[-2, 0], [2, 0]])
    np.testing.assert_allclose(nb.dist, [2, 2])


def test_empty_neighbour_sets() -> None:
    a = make_agents([[10, 10]])
    s = sense_of(World(100, 100, "wrap"), a)
    nb = s.neighbours("agents")
    assert nb.i.size == 0 and nb.offsets.tolist() == [0, 0]
    assert s.neighbour_count("agents").tolist() == [0]


def two_groups() -> tuple[World, Agents]:
    pos = [[10, 10], [12, 10], [11, 10], [40, 40]]
    a = make_agents(pos, groups=[("a", 2), ("b", 2)], view_distance=5.0)
    return World(100, 100, "contain"), a


def test_neighbours_of_other_group_and_any() -> None:
    w, a = two_groups()
    s = sense_of(w, a)
    nb = s.neighbours("a", "b")
    assert list(zip(nb.i.tolist(), nb.j.tolist(), strict=True)) == [(0, 2), (1, 2)]
    assert nb.offsets.tolist() == [0, 1, 2]
    nb = s.neighbours("a", "any")
    assert list(zip(nb.i.tolist(), nb.j.tolist(), strict=True)) == [(0, 1), (0, 2), (1, 0), (1, 2)]
    assert s.neighbour_count("b", "same").tolist() == [0, 0]
    assert s.neighbours("a", "any") is nb  # cached per tick by what was asked


def test_view_distance_is_the_observers() -> None:
    """i's view distance decides: 0 sees 1 at distance 3 (view 5), 1 does not see 0 (view 2)."""
    a = make_agents([[10, 10], [13, 10]], view_distance=[5.0, 2.0])
    nb = sense_of(World(100, 100, "contain"), a).neighbours("agents")
    assert nb.i.tolist() == [0] and nb.j.tolist() == [1]


def test_nearest_with_radius_and_cache() -> None:
    w, a = two_groups()
    s = sense_of(w, a)
    k, d = s.nearest("a", "b")
    assert k.tolist() == [2, 2]
    np.testing.assert_allclose(d, [1, 1])
    k, _ = s.nearest("b", "a", radius=1.0)
    assert k.tolist() == [0, -1] or k.tolist() == [1, -1]
    assert s.nearest("a", "b") is s.nearest("a", "b")


def test_target_point_is_nearest_image_on_torus() -> None:
    """Agent at (1,50), point (99,50) on a 100 torus: seen at (-1,50)."""
    a = make_agents([[1, 50]])
    t = sense_of(World(100, 100, "wrap"), a).target(PointTarget(at=(99, 50)), "agents")
    np.testing.assert_allclose(t.pos, [[-1, 50]])
    assert t.valid.tolist() == [True] and t.agent.tolist() == [-1]
    np.testing.assert_allclose(t.vel, [[0, 0]])


def test_target_agent_nearest_and_self() -> None:
    w, a = two_groups()
    a.vel[2] = [3.0, 4.0]
    s = sense_of(w, a)
    t = s.target(AgentTarget(id="b-0"), "a")
    assert t.agent.tolist() == [2, 2] and t.valid.all()
    np.testing.assert_allclose(t.pos, [[11, 10], [11, 10]])
    np.testing.assert_allclose(t.vel, [[3, 4], [3, 4]])
    t = s.target(NearestTarget(group="a", radius=1.5), "b")
    assert t.valid.tolist() == [True, False] and t.agent.tolist()[1] == -1
    t = s.target(SelfTarget(), "b")
    assert t.agent.tolist() == [2, 3]
    np.testing.assert_allclose(t.pos, a.pos[2:4])
    assert s.target(SelfTarget(), "b") is t


def test_target_unknown_agent_is_invalid() -> None:
    w, a = two_groups()
    t = sense_of(w, a).target(AgentTarget(id="nobody"), "a")
    assert not t.valid.any() and t.agent.tolist() == [-1, -1]


def test_target_path_first_point() -> None:
    w, a = two_groups()
    w.paths["loop"] = Path("loop", np.array([[20.0, 30], [40, 30]]), looped=True)
    s = sense_of(w, a)
    t = s.target(PathTarget(path="loop"), "a")
    np.testing.assert_allclose(t.pos, [[20, 30], [20, 30]])
    assert t.valid.all()
    assert not s.target(PathTarget(path="missing"), "a").valid.any()


def test_target_pointer_headless_and_viewer() -> None:
    w, a = two_groups()
    s = sense_of(w, a)
    np.testing.assert_allclose(s.target(PointerTarget(at=(5, 6)), "a").pos, [[5, 6], [5, 6]])
    s2 = sense_of(w, a, pointer=np.array([70.0, 80.0]))
    np.testing.assert_allclose(s2.target(PointerTarget(at=(5, 6)), "a").pos, [[70, 80], [70, 80]])


def test_target_blackboard_callback_and_missing_rows() -> None:
    w, a = two_groups()
    asked: list[tuple[str, str, list[int]]] = []

    def points(group: str, key: str, rows: np.ndarray) -> np.ndarray:
        asked.append((group, key, rows.tolist()))
        return np.array([[1.0, 2.0], [np.nan, np.nan]])

    s = sense_of(w, a, blackboard_points=points)
    t = s.target(BlackboardTarget(key="goal"), "b")
    assert asked == [("b", "goal", [2, 3])]
    assert t.valid.tolist() == [True, False]
    np.testing.assert_allclose(t.pos, [[1, 2], [0, 0]])
    assert not sense_of(w, a).target(BlackboardTarget(key="goal"), "b").valid.any()


def test_mixed_fields_of_view_use_the_observers() -> None:
    """Both agents face +x, 4 apart on the x axis: agent 0 (fov 90 degrees) sees 1 ahead;
    agent 1 (fov 90 degrees) does not see 0 behind it, agent 2 (all round) sees both."""
    a = make_agents(
        [[0, 0], [4, 0], [2, 1]],
        heading=[[1, 0]] * 3,
        view_distance=10.0,
        fov=[np.pi / 2, np.pi / 2, 2 * np.pi],
    )
    nb = sense_of(World(100, 100, "contain"), a).neighbours("agents")
    pairs = list(zip(nb.i.tolist(), nb.j.tolist(), strict=True))
    # 0 -> 2 at (2,1): 26.6 degrees, inside 45; 1 -> 2 at (-2,1): behind
    assert pairs == [(0, 1), (0, 2), (2, 0), (2, 1)]
    assert nb.count.tolist() == [2, 0, 2]


def test_nearest_target_unlimited_radius_and_velocity() -> None:
    w, a = two_groups()
    a.vel[3] = [1.0, -1.0]
    t = sense_of(w, a).target(NearestTarget(group="b"), "b")
    assert t.agent.tolist() == [3, 2] and t.valid.all()
    np.testing.assert_allclose(t.vel[0], [1, -1])
    np.testing.assert_allclose(t.pos, [[40, 40], [11, 10]])
