"""Metrics worked by hand on placed agents, checks judged by hand, the check command end to end."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from engine_support import definition

from behaviortk.format.checks import check_model
from behaviortk.format.issues import DefinitionError
from behaviortk.format.loader import load_text
from behaviortk.registry import default
from behaviortk.sim.simulation import Simulation
from behaviortk.studies import metrics
from behaviortk.studies.check_runs import aggregate, judge, junit_xml, run_checks

ROOT = Path(__file__).resolve().parent.parent


def placed(
    a: list[list[float]], b: list[list[float]], edges: str = "contain", **extra: Any
) -> Simulation:
    """Group ``a`` (radius 5) and group ``b`` (radius 8) at the given points, at rest."""
    data = definition(
        {"type": "seek", "name": "go", "target": {"kind": "point", "at": [200, 200]}},
        count=len(a),
        positions=a,
        others=[
            {
                "name": "b",
                "count": len(b),
                "spawn": {"kind": "positions", "points": b},
                "tree": "idle",
                "radius": 8,
            }
        ],
    )
    data["groups"][0]["radius"] = 5
    data["world"]["edges"] = edges
    data.update(extra)
    return Simulation(load_text(json.dumps(data), "placed"), engine="batch")


def value(sim: Simulation, spec: dict[str, Any], memory: dict[str, Any] | None = None) -> float:
    model = default().metrics[spec["metric"]].model.model_validate(spec)
    fn = default().metrics.impl(spec["metric"])
    return float(fn(model, sim, {} if memory is None else memory))


def test_distances_between_groups() -> None:
    sim = placed([[0, 0], [100, 0]], [[30, 40], [100, 10]])
    # a0 -> b0: |(30, 40)| = 50; a0 -> b1: |(100, 10)| = 100.5; a1 -> b1: 10; a1 -> b0: |(-70, 40)| = 80.6
    assert value(sim, {"metric": "min_distance", "groups": ["a", "b"]}) == pytest.approx(10.0)
    # mean of nearest: (50 + 10) / 2 = 30
    assert value(sim, {"metric": "mean_distance", "groups": ["a", "b"]}) == pytest.approx(30.0)
    # within one group: a0 and a1 are 100 apart, each other's nearest
    assert value(sim, {"metric": "mean_distance", "groups": ["a", "a"]}) == pytest.approx(100.0)


def test_distances_wrap_around_the_world() -> None:
    # 400-wide wrapped world: x 5 and x 395 are 10 apart through the edge
    sim = placed([[5, 200]], [[395, 200]], edges="wrap")
    assert value(sim, {"metric": "min_distance", "groups": ["a", "b"]}) == pytest.approx(10.0)


def test_speed_and_polarisation() -> None:
    sim = placed([[0, 0], [100, 0], [200, 0]], [[300, 300]])
    sim.agents.vel[:3] = [[3.0, 4.0], [0.0, 10.0], [0.0, 0.0]]
    # speeds 5, 10, 0: mean 5
    assert value(sim, {"metric": "mean_speed", "group": "a"}) == pytest.approx(5.0)
    # unit velocities (0.6, 0.8), (0, 1), (0, 0): mean (0.2, 0.6), |.| = sqrt(0.4) = 0.63246
    assert value(sim, {"metric": "polarisation", "group": "a"}) == pytest.approx(math.sqrt(0.4))
    sim.agents.vel[:3] = [[2.0, 0.0], [7.0, 0.0], [0.1, 0.0]]
    assert value(sim, {"metric": "polarisation", "group": "a"}) == pytest.approx(1.0)


def test_overlap_uses_the_sum_of_radii() -> None:
    # a0-a1 12 apart < 5 + 5? no (12 > 10). a1-b0: 12 apart < 5 + 8 = 13: both overlap.
    sim = placed([[0, 0], [12, 0], [200, 200]], [[24, 0]])
    assert value(sim, {"metric": "overlap"}) == pytest.approx(2 / 4)
    assert value(sim, {"metric": "overlap", "group": "a"}) == pytest.approx(1 / 3)
    assert value(sim, {"metric": "overlap", "group": "b"}) == pytest.approx(1.0)


def test_survival_remembers_who_was_caught() -> None:
    sim = placed([[0, 0], [100, 0], [200, 0], [300, 0]], [[0, 5]])
    spec = {"metric": "survival", "groups": ["a", "b"], "radius": 10}
    memory: dict[str, Any] = {}
    assert value(sim, spec, memory) == pytest.approx(0.75)  # a0 within 5 <= 10: caught
    sim.agents.pos[4] = [100, 10]  # b moves to a1; a0 stays caught
    assert value(sim, spec, memory) == pytest.approx(0.5)
    sim.agents.pos[4] = [399, 399]
    assert value(sim, spec, memory) == pytest.approx(0.5)


def test_in_zone_counts_and_fractions() -> None:
    zones = [{"name": "yard", "kind": "rect", "min": [0, 0], "max": [150, 50]}]
    sim = placed([[0, 0], [100, 0], [200, 0], [300, 0]], [[10, 10]], zones=zones)
    assert value(sim, {"metric": "in_zone", "group": "a", "zone": "yard"}) == 2.0
    spec = {"metric": "in_zone", "group": "a", "zone": "yard", "fraction": True}
    assert value(sim, spec) == pytest.approx(0.5)


def test_active_fraction_reads_the_leaves_that_asked() -> None:
    sim = placed([[0, 0], [100, 0]], [[300, 300]])
    sim.step()
    assert value(sim, {"metric": "active_fraction", "group": "a", "node": "go"}) == 1.0
    assert value(sim, {"metric": "active_fraction", "group": "b", "node": "wait"}) == 0.0


def check(**fields: Any) -> Any:
    base = {"name": "c", "metric": "mean_speed", "group": "a", "op": ">=", "value": 2}
    return check_model(metrics.MeanSpeed).model_validate({**base, **fields})


def test_aggregates_over_the_window() -> None:
    column, ticks = np.array([5.0, 1.0, 3.0, 4.0, 2.0]), np.arange(5)
    assert aggregate(column, ticks, "min") == 1.0
    assert aggregate(column, ticks, "min", from_tick=2) == 2.0
    assert aggregate(column, ticks, "max", 1, 3) == 4.0
    assert aggregate(column, ticks, "mean", to_tick=2) == pytest.approx(3.0)  # (5 + 1 + 3) / 3
    assert aggregate(column, ticks, "final") == 2.0
    assert aggregate(column, ticks, "final", to_tick=1) == 1.0
    assert math.isnan(aggregate(column, ticks, "final", from_tick=9))


def test_verdicts_compare_and_fail_on_nan() -> None:
    table = {"tick": np.array([0, 1]), "time": np.array([0.1, 0.2]), "c": np.array([1.0, 3.0])}
    assert judge(check(), table, "d", 1).passed  # final 3 >= 2
    assert not judge(check(op="<"), table, "d", 1).passed
    assert not judge(check(over="min"), table, "d", 1).passed  # 1 < 2
    nan = {"tick": np.array([0]), "time": np.array([0.1]), "c": np.array([np.nan])}
    assert not judge(check(op="<="), nan, "d", 1).passed
    xml = junit_xml([judge(check(over="min"), table, "d", 1)])
    assert 'failures="1"' in xml and "min = 1, expected &gt;= 2" in xml


def with_checks(checks: list[dict[str, Any]], zones: Any = None) -> str:
    data = definition(
        {"type": "seek", "name": "go", "target": {"kind": "point", "at": [390, 200]}},
        positions=[[10, 200]],
    )
    data["checks"] = checks
    if zones:
        data["zones"] = zones
    return json.dumps(data)


def test_check_mistakes_are_located() -> None:
    bad = [
        {"name": "x", "metric": "mean_sped", "group": "a", "op": ">", "value": 1},
        {"name": "y", "metric": "mean_speed", "group": "aa", "op": ">", "value": 1},
        {
            "name": "z",
            "metric": "active_fraction",
            "group": "a",
            "node": "og",
            "op": ">",
            "value": 0,
        },
        {"name": "z", "metric": "min_distance", "groups": ["a", "q"], "op": "=>", "value": 1},
    ]
    with pytest.raises(DefinitionError) as caught:
        load_text(with_checks(bad), "bad.json")
    text = "\n".join(str(i) for i in caught.value.issues)
    assert "/checks/0: unknown metric 'mean_sped'; did you mean 'mean_speed'?" in text
    assert "/checks/3/op" in text
    bad[3]["op"] = ">="
    with pytest.raises(DefinitionError) as caught:
        load_text(with_checks(bad[1:]), "bad.json")
    assert "/checks/2/name: check name 'z' is used twice" in str(caught.value)
    bad[3]["name"] = "w"
    with pytest.raises(DefinitionError) as caught:
        load_text(with_checks(bad[1:]), "bad.json")
    text = "\n".join(str(i) for i in caught.value.issues)
    assert "/checks/0/group: unknown group 'aa'; did you mean 'a'?" in text
    assert "/checks/1/node: group 'a' has no node named 'og'" in text
    assert "/checks/2/groups/1: unknown group 'q'" in text


def test_run_checks_on_a_seek() -> None:
    """A seeker (max speed 100 by default) from x 10 to x 390 at dt 0.1."""
    checks = [
        {
            "name": "moves",
            "metric": "mean_speed",
            "group": "a",
            "over": "max",
            "op": ">",
            "value": 1,
        },
        {
            "name": "arrives",
            "metric": "in_zone",
            "group": "a",
            "zone": "goal",
            "op": "==",
            "value": 1,
        },
        {
            "name": "never",
            "metric": "in_zone",
            "group": "a",
            "zone": "goal",
            "to_tick": 5,
            "op": "==",
            "value": 1,
        },
    ]
    zones = [{"name": "goal", "kind": "circle", "at": [390, 200], "radius": 40}]
    scenario = load_text(with_checks(checks, zones), "seek.json")
    for engine in ("py_trees", "batch"):
        verdicts, table = run_checks(scenario, seed=3, ticks=80, engine=engine)
        assert [v.passed for v in verdicts] == [True, True, False]
        assert list(table) == ["tick", "time", "moves", "arrives", "never", "engine"]
        assert verdicts[0].engine == engine
        assert table["tick"].tolist() == list(range(80)) and set(table["engine"]) == {engine}


def test_check_command_exit_codes_and_reports(tmp_path: Path) -> None:
    checks = [
        {
            "name": "moves",
            "metric": "mean_speed",
            "group": "a",
            "over": "max",
            "op": ">",
            "value": 1,
        }
    ]
    good = tmp_path / "good.json"
    good.write_text(with_checks(checks))
    failing = tmp_path / "failing.json"
    failing.write_text(with_checks([{**checks[0], "op": "<"}]))
    cmd = [sys.executable, "-m", "behaviortk", "check", "--ticks", "20", "--seeds", "2"]
    ok = subprocess.run([*cmd, str(good)], capture_output=True, text=True, cwd=ROOT)
    assert ok.returncode == 0, ok.stderr
    assert "2 passed, 0 failed" in ok.stdout
    junit, table = tmp_path / "out.xml", tmp_path / "t.parquet"
    bad = subprocess.run(
        [*cmd, str(good), str(failing), "--junit", str(junit), "--table", str(table)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert bad.returncode == 1
    assert "2 passed, 2 failed" in bad.stdout and "FAIL" in bad.stdout
    assert junit.read_text().count("<testcase") == 4
    frame = pl.read_parquet(table)
    assert frame.height == 2 * 2 * 20 and set(frame["seed"].to_list()) == {3, 4}
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    fails = subprocess.run([*cmd, str(broken)], capture_output=True, text=True, cwd=ROOT)
    assert fails.returncode == 1 and "Traceback" not in fails.stderr


def test_shipped_checks_pass() -> None:
    """The checks shipped in definitions/ hold on the file's own seed (`behaviortk check`)."""
    shipped = [p for p in sorted((ROOT / "definitions").glob("*.json")) if "schema" not in p.name]
    with_checks = [p for p in shipped if json.loads(p.read_text()).get("checks")]
    assert len(with_checks) >= 5
    done = subprocess.run(
        [sys.executable, "-m", "behaviortk", "check", "--engine", "batch", *map(str, with_checks)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 failed" in done.stdout


def test_count_follows_spawns_and_despawns_and_is_zero_when_all_are_gone() -> None:
    sim = placed([[0, 0], [100, 0], [200, 0], [300, 0]], [[10, 10]])
    spec = {"metric": "count", "group": "a"}
    assert value(sim, spec) == 4.0
    sim.despawn(sim.ids[:2])
    assert value(sim, spec) == 2.0
    sim.despawn(sim.ids[sim.agents.slices["a"]])
    assert value(sim, spec) == 0.0
    assert value(sim, {"metric": "count", "group": "b"}) == 1.0
