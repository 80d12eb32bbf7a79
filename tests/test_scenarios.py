"""The shipped scenarios in ``definitions/`` behave as their descriptions say.

Every scenario runs 600 ticks headless on the py_trees engine (once per test
session, cached) with finite state and speeds within max_speed; then one
behaviour-level property of each is checked with numbers: the formulas are the
seeds' (``shared/seeds``) and Buckland's (Programming Game AI by Example, ch. 3).
Variants (pursuit replaced by seek, evasion switched off) are built by editing
the loaded JSON and re-validating it through ``behaviortk.load_text``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from behaviortk import load, load_text
from behaviortk.cli import main
from behaviortk.engines.names import AUTO_BATCH_AGENTS
from behaviortk.format.loader import Scenario
from behaviortk.sim.simulation import Simulation
from behaviortk.vec import Array, length
from behaviortk.world.spatial import displacement

DEFINITIONS = Path(__file__).resolve().parent.parent / "definitions"
TICKS = 600
SPEED_EPS = 1e-6


def scenario_paths() -> list[Path]:
    """Shipped scenario files (the JSON Schema and tree libraries have no world/groups)."""
    out = []
    for path in sorted(DEFINITIONS.glob("*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, dict) and "world" in data and "groups" in data:
            out.append(path)
    return out


@dataclass
class Run:
    """A finished run: the simulation and the state before every tick and after the last."""

    sim: Simulation
    pos: Array  # (ticks + 1, N, 2); empty when agents despawned on the way (see ``frames``)
    vel: Array  # (ticks + 1, N, 2); likewise
    contributions: list[dict[str, dict[int, tuple[Array, Array]]]] = field(default_factory=list)
    frames: list[tuple[Array, Array, Array]] = field(default_factory=list)
    """Every tick's (pos, vel, max_speed) of the agents there then."""

    def rows(self, group: str) -> slice:
        return self.sim.agents.slices[group]

    def row(self, agent_id: str) -> int:
        return self.sim.agents.names.index(agent_id)

    def distance(self, a: Array, b: Array) -> Array:
        """Distance from ``a`` to ``b`` (shortest image on wrapped worlds), broadcasting."""
        return np.asarray(length(displacement(a, b, self.sim.world)))


def record(scenario: Scenario, *, seed: int | None = None, ticks: int = TICKS) -> Run:
    """Run ``ticks`` ticks on the py_trees engine (a crowd of ``AUTO_BATCH_AGENTS`` or more,
    evacuation's 3,000, on the batch engine, which test_equivalence proves identical),
    keeping positions, velocities and forces."""
    crowd = sum(g.count for g in scenario.definition.groups) >= AUTO_BATCH_AGENTS
    sim = Simulation(scenario, engine="batch" if crowd else "py_trees", seed=seed)
    ag = sim.agents
    frames = [(ag.pos.copy(), ag.vel.copy(), ag.max_speed.copy())]
    forces: list[dict[str, dict[int, tuple[Array, Array]]]] = []
    for _ in range(ticks):
        sim.step()
        ag = sim.agents
        frames.append((ag.pos.copy(), ag.vel.copy(), ag.max_speed.copy()))
        forces.append(
            {
                g: {k: (r.copy(), f.copy()) for k, (r, f) in by_leaf.items()}
                for g, by_leaf in sim.contributions.items()
            }
        )
    same = len({f[0].shape for f in frames}) == 1  # nobody despawned (a despawn leaf)
    pos = np.array([f[0] for f in frames]) if same else np.zeros((0, 0, 2))
    vel = np.array([f[1] for f in frames]) if same else np.zeros((0, 0, 2))
    return Run(sim, pos, vel, forces, frames)


@cache
def shipped(stem: str) -> Run:
    """The 600-tick run of ``definitions/<stem>.json`` with its own seed (computed once)."""
    return record(load(DEFINITIONS / f"{stem}.json"))


def raw(stem: str) -> dict[str, Any]:
    return copy.deepcopy(load(DEFINITIONS / f"{stem}.json").raw)


def emit_index(sim: Simulation, group: str, leaf_name: str) -> int:
    """Request column of the steering leaf named ``leaf_name`` in ``group``'s tree."""
    tree = sim.trees[group]
    found = [n.emit_index for n in tree.nodes if n.name == leaf_name and n.emit_index >= 0]
    assert len(found) == 1, f"{group}: expected one steering leaf named {leaf_name!r}"
    return found[0]


def segment_point_distance(a: Array, b: Array, p: Array) -> Array:
    """Distance from points ``p`` to segments ``a``-``b`` (all broadcasting over leading axes)."""
    ab = b - a
    ap = p - a
    den = np.maximum((ab * ab).sum(-1), 1e-12)
    t = np.clip((ap * ab).sum(-1) / den, 0.0, 1.0)
    return np.asarray(length(ap - t[..., None] * ab))


def cross(u: Array, v: Array) -> Array:
    return np.asarray(u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0])


def segments_cross(p0: Array, p1: Array, a: Array, b: Array) -> Array:
    """Whether segment ``p0``-``p1`` meets segment ``a``-``b`` (broadcasting)."""
    r, s, qp = p1 - p0, b - a, a - p0
    den = cross(r, s)
    ok = np.abs(den) > 1e-12
    safe = np.where(ok, den, 1.0)
    t, u = cross(qp, s) / safe, cross(qp, r) / safe
    return np.asarray(ok & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1))


def polarisation(vel: Array) -> Array:
    """Order parameter |mean of unit velocities| over the agents (axis -2): 1 aligned, ~0 random."""
    unit = vel / np.maximum(length(vel), 1e-12)[..., None]
    return np.asarray(length(unit.mean(axis=-2)))


# ------------------------------------------------------------------ every file


def test_there_are_at_least_eleven_scenarios() -> None:
    assert len(scenario_paths()) >= 11


@pytest.mark.parametrize("schema_only", [False, True], ids=["full", "schema-only"])
def test_cli_validates_every_scenario(
    schema_only: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = ["--schema-only"] if schema_only else []
    code = main(["validate", *flags, *map(str, scenario_paths())])
    assert code == 0, capsys.readouterr().out


def test_every_scenario_names_the_schema_and_runs_at_60_hz() -> None:
    for path in scenario_paths():
        data = json.loads(path.read_text())
        assert data["$schema"] == "behaviortk.schema.json", path.name
        assert data["description"].strip(), path.name
        assert data["world"]["dt"] == pytest.approx(1 / 60), path.name


@pytest.mark.parametrize("path", scenario_paths(), ids=lambda p: p.stem)
def test_runs_600_ticks_with_finite_state_and_speed_limits(path: Path) -> None:
    run = shipped(path.stem)
    assert len(run.frames) == TICKS + 1
    w = run.sim.world
    for pos, vel, top in run.frames:  # each tick's agents (despawn leaves remove some)
        assert np.isfinite(pos).all() and np.isfinite(vel).all()
        assert (length(vel) <= top * (1 + SPEED_EPS) + SPEED_EPS).all()
        assert (pos >= 0).all() and (pos[:, 0] <= w.width).all() and (pos[:, 1] <= w.height).all()


# --------------------------------------------------------------- seek, arrive


def test_arrivers_stop_on_their_marks_and_seekers_never_settle() -> None:
    """Millington's arrive: within the tolerance (2) the target speed is 0, so they stop there."""
    run = shipped("seek_and_arrive")
    marks = {"arriver_wide": (200, 300), "arriver_normal": (400, 300), "arriver_late": (600, 300)}
    for group, mark in marks.items():
        row = run.rows(group).start
        assert run.distance(run.pos[-1, row], np.array(mark, float)) <= 2.0
        assert length(run.vel[-1, row]) < 0.5
        # and they stay stopped: the last second barely moves them
        assert run.distance(run.pos[-60, row], run.pos[-1, row]) < 1.0
    seekers = run.rows("seekers")
    gap = run.distance(run.pos[300:, seekers], np.array([400.0, 120.0]))
    assert gap.max() > 20.0  # seek overshoots the beacon again and again
    assert length(run.vel[300:, seekers]).mean() > 20.0


# ----------------------------------------------------------------------- flee


def test_flee_force_is_seed_004_inside_the_fear_distance_and_zero_beyond() -> None:
    """Seed 004: beyond fearDistance the force is 0, else max_speed * normalize(pos - cat) - vel."""
    run = shipped("flee_fear_distance")
    cat, mice = run.rows("cat").start, run.rows("mice")
    leaf = emit_index(run.sim, "mice", "flee cat")
    top = run.sim.agents.max_speed[mice][:, None]
    inside_seen = outside_seen = 0
    for t, by_group in enumerate(run.contributions):
        rows, force = by_group["mice"][leaf]
        assert np.array_equal(rows, np.arange(mice.start, mice.stop))
        away = -displacement(run.pos[t, mice], run.pos[t, cat], run.sim.world)
        dist = length(away)
        beyond = dist > 150.0
        assert (force[beyond] == 0.0).all()
        expected = away / dist[:, None] * top - run.vel[t, mice]
        np.testing.assert_allclose(force[~beyond], expected[~beyond], rtol=1e-9, atol=1e-9)
        inside_seen += int((~beyond).sum())
        outside_seen += int(beyond.sum())
    assert inside_seen > 100 and outside_seen > 100  # both cases really happened


def test_mice_escape_the_fear_distance_and_keep_the_cat_at_bay() -> None:
    run = shipped("flee_fear_distance")
    cat, mice = run.rows("cat").start, run.rows("mice")
    dist = run.distance(run.pos[:, mice], run.pos[:, cat][:, None, :])
    assert (dist[0] < 150).all()  # they start on a ring of 90 around the cat
    assert (dist[120] > 150).all()  # within two seconds every mouse is out
    assert dist[120:].min() > 75.0  # strays are turned back well before the cat
    assert (dist[120:] > 150).mean() > 0.85


# ------------------------------------------------------------- pursuit, evade


def first_catch(run: Run, quarry: str, hunter: str, reach: float = 15.0) -> int | None:
    """First tick at which the hunter is within ``reach`` (the two radii) of the quarry."""
    gap = run.distance(run.pos[:, run.row(hunter)], run.pos[:, run.row(quarry)])
    hits = np.flatnonzero(gap <= reach)
    return int(hits[0]) if hits.size else None


def test_pursuer_catches_the_wanderer_and_the_dodger_escapes() -> None:
    run = shipped("pursuit_evade")
    caught = first_catch(run, "wanderer", "hunter")
    assert caught is not None and caught < TICKS
    # the evading dodger is never caught by the same pursuit in the same time
    assert first_catch(run, "dodger", "dodger hunter") is None


@pytest.mark.parametrize("seed", [None, 1, 2])
def test_pursuit_with_prediction_catches_sooner_than_seek(seed: int | None) -> None:
    """Seed 000: aiming at pos + vel * d / (max_speed + speed) beats aiming at pos."""
    variant = raw("pursuit_evade")
    variant["trees"]["pursue"]["root"] = {
        "type": "seek",
        "name": "seek quarry",
        "target": {"kind": "agent", "id": "$quarry"},
    }
    seek = load_text(json.dumps(variant), "pursuit_evade with seek")
    pursuit = load(DEFINITIONS / "pursuit_evade.json")
    with_prediction = first_catch(record(pursuit, seed=seed), "wanderer", "hunter")
    without = first_catch(record(seek, seed=seed), "wanderer", "hunter")
    assert with_prediction is not None and without is not None
    assert with_prediction < without


# --------------------------------------------------------------------- wander


def turn_rates(vel: Array, dt: float) -> Array:
    """Mean |heading change| per second of each agent (headings from velocities)."""
    angle = np.unwrap(np.arctan2(vel[..., 1], vel[..., 0]), axis=0)
    return np.asarray(np.abs(np.diff(angle, axis=0)).mean(axis=0) / dt)


def test_wanderers_turn_and_the_jittery_ones_turn_more() -> None:
    run = shipped("wander")
    for group in ("cruisers", "flies"):
        vel = run.vel[1:, run.rows(group)]
        assert (length(vel) > 1.0).all()  # always on the move, so the heading is defined
        heading = np.unwrap(np.arctan2(vel[..., 1], vel[..., 0]), axis=0)
        assert (heading.std(axis=0) > 0.1).all()  # every one of them turned
    calm = turn_rates(run.vel[1:, run.rows("cruisers")], run.sim.dt)
    jittery = turn_rates(run.vel[1:, run.rows("flies")], run.sim.dt)
    assert (calm > 0.05).all()
    assert jittery.mean() > 3 * calm.mean()


# ------------------------------------------------------------------- flocking


def test_flock_aligns_and_never_enters_a_rock() -> None:
    """Seed 003: alignment raises the polarisation; Lennard-Jones repulsion keeps boids off rocks."""
    run = shipped("flocking_lj_obstacles")
    order = polarisation(run.vel[1:])
    assert order[-60:].mean() > order[0] + 0.2
    w = run.sim.world
    gap = run.distance(run.pos[:, :, None, :], w.obstacle_pos[None, None, :, :])
    assert (gap >= w.obstacle_radius).all()


def test_cruisers_never_enter_a_rock() -> None:
    """Buckland's detection box: the lateral push keeps every centre outside every rock."""
    run = shipped("obstacle_avoidance")
    w = run.sim.world
    gap = run.distance(run.pos[:, :, None, :], w.obstacle_pos[None, None, :, :])
    assert (gap - w.obstacle_radius >= 1.0).all()


def test_roamers_never_cross_or_touch_a_wall() -> None:
    run = shipped("wall_avoidance")
    w = run.sim.world
    p0, p1 = run.pos[:-1, :, None, :], run.pos[1:, :, None, :]
    assert not segments_cross(p0, p1, w.wall_a, w.wall_b).any()
    inward = ((run.pos[:, :, None, :] - w.wall_a) * w.wall_normal).sum(-1)[..., :4]
    assert (inward > 0).all()  # on the inside of the four arena walls, all the time
    near = segment_point_distance(w.wall_a, w.wall_b, run.pos[:, :, None, :])
    assert (near >= run.sim.agents.radius[None, :, None]).all()


# -------------------------------------------------------------- path following


def visits(pos: Array, points: Array, reach: float) -> list[int]:
    """Waypoints an agent came within ``reach`` of, in order, repeats collapsed."""
    near = length(pos[:, None, :] - points[None, :, :]) < reach
    out: list[int] = []
    for t in np.flatnonzero(near.any(axis=1)):
        k = int(np.argmax(near[t]))
        if not out or out[-1] != k:
            out.append(k)
    return out


def test_buses_visit_the_circuit_in_order_and_stay_on_it() -> None:
    run = shipped("path_following")
    points = run.sim.world.paths["circuit"].points
    k = points.shape[0]
    laps = 0
    for row in range(run.rows("buses").start, run.rows("buses").stop):
        seen = visits(run.pos[:, row], points, 30.0)
        assert seen == [i % k for i in range(len(seen))]
        assert len(seen) >= k - 1
        laps += len(seen) > k
        start = int(np.argmax(length(run.pos[:, row] - points[0]) < 30.0))
        ends = np.roll(points, -1, axis=0)
        off = segment_point_distance(points, ends, run.pos[start:, row, None, :]).min(axis=1)
        assert off.max() < 45.0  # corners are cut: it turns only once within 30 of a waypoint
    assert laps >= 1


def test_courier_drives_the_route_then_parks_at_the_depot() -> None:
    run = shipped("path_following")
    points = run.sim.world.paths["delivery"].points
    row = run.rows("courier").start
    assert visits(run.pos[:, row], points, 20.0) == list(range(points.shape[0]))
    assert length(run.pos[-1, row] - np.array([700.0, 50.0])) <= 2.0
    assert length(run.vel[-1, row]) < 0.5


# ----------------------------------------------------------------------- hide


def test_rabbits_end_behind_a_pillar() -> None:
    """Buckland's hiding spot lies beyond the pillar on the line from the hunter: sight is blocked."""
    run = shipped("hide")
    w = run.sim.world
    hunter = run.pos[:, run.rows("hunter").start][:, None, None, :]
    rabbits = run.pos[:, run.rows("rabbits")][:, :, None, :]
    sight = segment_point_distance(hunter, rabbits, w.obstacle_pos)
    hidden: Array = np.any(sight < w.obstacle_radius, axis=-1)  # (ticks, rabbits)
    assert hidden[-1].all()
    assert hidden[240:].mean() > 0.95


# ------------------------------------------------------------------ interpose


def test_bodyguard_keeps_near_the_midpoint_of_king_and_assassin() -> None:
    run = shipped("interpose")
    mid = (run.pos[:, run.row("king")] + run.pos[:, run.row("assassin")]) / 2
    gap = length(run.pos[:, run.rows("bodyguard").start] - mid)
    apart = length(run.pos[:, run.row("king")] - run.pos[:, run.row("assassin")])
    assert gap[0] > 150  # starts well off the line
    assert gap[300:].mean() < 15.0
    assert gap[300:].max() < 30.0
    assert (gap[300:] < apart[300:] / 4).all()


# -------------------------------------------------------------- offset pursuit


def test_wingmen_hold_their_formation_offsets() -> None:
    """Offset [ahead, left] in the leader's frame (heading, its left perpendicular)."""
    run = shipped("offset_pursuit_formation")
    leader = run.row("leader")
    offsets = {g.name: g.params.get("offset") for g in run.sim.scenario.definition.groups}
    heading = run.vel[300:, leader] / length(run.vel[300:, leader])[:, None]
    left = np.stack([-heading[:, 1], heading[:, 0]], axis=1)
    for group, offset in offsets.items():
        if group == "leader":
            continue
        rel = run.pos[300:, run.rows(group).start] - run.pos[300:, leader]
        local = np.stack([(rel * heading).sum(1), (rel * left).sum(1)], axis=1)
        error = length(local - np.asarray(offset, float))
        assert error.max() < 20.0, group
        start = length(run.pos[0, run.rows(group).start] - run.pos[0, leader])
        assert error.mean() < start


# ------------------------------------------------------------- evade or flock


def near_predator_fraction(run: Run, within: float = 30.0) -> float:
    """Fraction of prey-ticks spent within ``within`` of the nearest predator."""
    prey, predators = run.rows("prey"), run.rows("predator")
    d = run.distance(run.pos[1:, prey, None, :], run.pos[1:, None, predators, :])
    return float((d.min(axis=2) < within).mean())


def test_evading_prey_keep_farther_from_predators_than_without_evasion() -> None:
    with_evasion = shipped("evade_or_flock")
    variant = raw("evade_or_flock")
    children = variant["trees"]["prey"]["root"]["children"]
    variant["trees"]["prey"]["root"]["children"] = [
        c for c in children if c.get("name") != "threatened"
    ]
    assert len(variant["trees"]["prey"]["root"]["children"]) == len(children) - 1
    without = record(load_text(json.dumps(variant), "evade_or_flock without evasion"))
    # the mean distance to predators is dominated by prey far away; contact is the signal
    # (measured over seeds 0-3: 0.3-0.9% of prey-ticks with evasion, 8-29% without)
    assert near_predator_fraction(with_evasion) * 5 < near_predator_fraction(without)


# ---------------------------------------------------------------- crowd_no_overlap


def test_crowd_agents_never_overlap_and_without_the_constraint_they_do() -> None:
    """Every tick of crowd_no_overlap (py_trees engine): no agent closer to another than the
    sum of their radii. The same file with non_penetration off: most ticks have overlaps
    (the soft separation and avoid_neighbours alone do not prevent them)."""
    from behaviortk.world.overlap import overlapping

    run = shipped("crowd_no_overlap")
    radius = run.sim.agents.radius
    for t in range(1, TICKS + 1):
        assert not overlapping(run.sim.world, run.pos[t], radius).any(), f"tick {t}"
    variant = raw("crowd_no_overlap")
    variant["world"]["non_penetration"] = False
    sim = Simulation(load_text(json.dumps(variant), "crowd without the constraint"), "batch")
    ticks_with_overlap = 0
    for _ in range(200):
        sim.step()
        ticks_with_overlap += bool(overlapping(sim.world, sim.agents.pos, radius).any())
    assert ticks_with_overlap > 150
    # and the prey still evade: rarely near a predator (evade_or_flock's own figure: < 1%)
    assert near_predator_fraction(run) < 0.02
