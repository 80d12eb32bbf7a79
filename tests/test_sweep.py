"""Sweeps and tuning: parameters parsed and applied by hand, resumable results, Dask end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from engine_support import definition

from behaviortk.registry import default
from behaviortk.studies.results import Results, ResultsError
from behaviortk.studies.sweep import (
    SweepError,
    Task,
    apply,
    parse_metric,
    parse_param,
    points,
    span,
)

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent


def test_values_lists_and_ranges() -> None:
    assert span("80:140:10") == (80, 90, 100, 110, 120, 130, 140)  # stop included
    assert span("0:1:0.25") == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert span("0:1:0.3") == (0.0, 0.3, 0.6, 0.9)  # 1.2 would pass the stop
    assert span("50,100, 150") == (50, 100, 150)
    assert span("wrap,contain") == ("wrap", "contain")
    for bad in ("1:2", "5:1:1", "0:1:0", "a:b:c", ","):
        with pytest.raises(SweepError):
            span(bad)


def test_paths() -> None:
    assert parse_param("groups.prey.max_speed=1,2").path == ("groups", "prey", "max_speed")
    assert parse_param("trees.prey.params.threat=1").values == (1,)
    for bad in ("groups.prey=1", "world=1", "trees.prey.threat.x=1", "max_speed", "foo.x=1"):
        with pytest.raises(SweepError):
            parse_param(bad)


def raw() -> dict[str, Any]:
    data = json.loads((ROOT / "definitions" / "evade_or_flock.json").read_text())
    assert isinstance(data, dict)
    return data


def test_apply_edits_world_groups_and_tree_parameters() -> None:
    data = raw()
    apply(data, ("world", "seed"), 99)
    apply(data, ("groups", "predator", "max_speed"), 120)
    apply(data, ("trees", "prey", "params", "threat"), 70)
    assert data["world"]["seed"] == 99
    assert data["groups"][1]["max_speed"] == 120
    # the tree's default and the prey group's own override both take the swept value
    assert data["trees"]["prey"]["params"]["threat"]["default"] == 70
    assert data["groups"][0]["params"] == {"threat": 70}
    with pytest.raises(SweepError, match="unknown group 'pray'; did you mean 'prey'"):
        apply(data, ("groups", "pray", "count"), 1)
    with pytest.raises(SweepError, match="has no parameter 'thret'; did you mean 'threat'"):
        apply(data, ("trees", "prey", "params", "thret"), 1)


def test_points_validate_every_edit() -> None:
    params = [parse_param("groups.prey.max_speed=80,100"), parse_param("world.edges=wrap,bounce")]
    grid = points(raw(), params, "e.json")
    assert [p.values for p in grid] == [
        {"groups.prey.max_speed": 80, "world.edges": "wrap"},
        {"groups.prey.max_speed": 80, "world.edges": "bounce"},
        {"groups.prey.max_speed": 100, "world.edges": "wrap"},
        {"groups.prey.max_speed": 100, "world.edges": "bounce"},
    ]
    assert json.loads(grid[1].text)["world"]["edges"] == "bounce"
    with pytest.raises(SweepError, match=r"at groups.prey.max_speed=-1: .* must be >= 1e-06"):
        points(raw(), [parse_param("groups.prey.max_speed=-1")], "e.json")


def test_metric_specs() -> None:
    regs = default()
    spec = parse_metric("min_distance:groups=prey+predator,over=min", regs)
    assert spec.model.groups == ["prey", "predator"] and spec.over == "min"
    assert spec.label == "min_distance:prey,predator:min"
    assert (
        parse_metric('{"metric": "mean_speed", "group": "prey"}', regs).label == "mean_speed:prey"
    )
    with pytest.raises(SweepError, match="did you mean 'polarisation'"):
        parse_metric("polarization:group=prey", regs)
    with pytest.raises(SweepError, match="over must be"):
        parse_metric("mean_speed:group=prey,over=median", regs)


def test_results_resume_and_refuse_other_sweeps(tmp_path: Path) -> None:
    out = str(tmp_path / "r.parquet")
    settings = {"definition": "abc", "ticks": 10, "engine": "batch", "params": ["p"], "metrics": []}
    results = Results(out, settings, inputs=[], every=3600.0)
    task = Task({"p": 1}, "{}", 7, 10, "batch")
    results.add(task.key, {"p": 1, "seed": 7, "v": 0.5})
    assert not os.path.exists(out)  # buffered until flush (or `every` seconds)
    results.flush()
    again = Results(out, settings, inputs=[])
    assert again.done == {task.key} and again.rows == [{"p": 1, "seed": 7, "v": 0.5}]
    with pytest.raises(ResultsError, match="different sweep"):
        Results(out, {**settings, "ticks": 11}, inputs=[])
    Path(out).write_text("not parquet")
    with pytest.raises(ResultsError, match="not a readable Parquet"):
        Results(out, settings, inputs=[])


def sweep_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "behaviortk", *args], capture_output=True, text=True, cwd=ROOT
    )


@pytest.mark.slow
def test_sweep_end_to_end_resumes_and_plots(tmp_path: Path) -> None:
    data = definition(
        {"type": "seek", "name": "go", "target": {"kind": "point", "at": [390, 200]}},
        positions=[[10, 200]],
    )
    data["checks"] = [
        {
            "name": "speed",
            "metric": "mean_speed",
            "group": "a",
            "over": "max",
            "op": ">",
            "value": 0,
        }
    ]
    src = tmp_path / "seek.json"
    src.write_text(json.dumps(data))
    out, png = tmp_path / "r.parquet", tmp_path / "r.png"
    common = ["sweep", str(src), "--param", "groups.a.max_speed=20:40:20", "--seeds", "2"]
    common += ["--ticks", "30", "--workers", "1", "--out", str(out)]
    first = sweep_cli(*common, "--metric", "mean_speed:group=a,over=final", "--plot", str(png))
    assert first.returncode == 0, first.stderr
    frame = pl.read_parquet(out).sort("groups.a.max_speed", "seed")
    assert frame["seed"].to_list() == [3, 4, 3, 4]
    # seek from rest, mass 1, force unclipped: v' = v + (max_speed - v) * dt with dt 0.1,
    # so after 30 ticks v = max_speed * (1 - 0.9 ** 30) = 0.957609 * max_speed
    expected = [s * (1 - 0.9**30) for s in (20, 20, 40, 40)]
    assert frame["speed"].to_list() == pytest.approx(expected)
    assert frame["mean_speed:a:final"].to_list() == pytest.approx(expected)
    assert frame["speed passed"].all()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = sweep_cli(*common, "--metric", "mean_speed:group=a,over=final")
    assert again.returncode == 0 and "0 to run, 4 already in" in again.stderr
    other = sweep_cli(*common)  # no --metric: a different sweep, refused
    assert other.returncode == 2 and "different sweep" in other.stderr


@pytest.mark.slow
def test_a_killed_worker_does_not_lose_the_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from behaviortk.studies.cluster import completed, connect
    from behaviortk.studies.sweep import MetricSpec, run_point

    marker = tmp_path / "marker"
    monkeypatch.setenv("BEHAVIORTK_TEST_MARKER", str(marker))
    paths = [str(TESTS / "sweep_support"), str(ROOT), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    monkeypatch.syspath_prepend(str(TESTS / "sweep_support"))
    from dies_once import DiesOnce  # registered in the workers only (task.plugins)

    spec = MetricSpec("dies_once", DiesOnce())
    text = json.dumps(definition({"type": "wait", "duration": 10}))
    tasks = [Task({"i": i}, text, 3, 5, "batch", [spec], ["dies_once"], "t") for i in range(4)]
    with connect(workers=2) as client:
        rows = [row for _task, row in completed(client, run_point, tasks)]
    assert marker.read_text() == "killed"  # one worker did die
    assert sorted(r["i"] for r in rows) == [0, 1, 2, 3]
    assert all(r["dies_once"] == 1.0 for r in rows)


@pytest.mark.slow
def test_tune_finds_the_faster_seeker_and_writes_a_valid_definition(tmp_path: Path) -> None:
    data = definition(
        {"type": "seek", "name": "go", "target": {"kind": "point", "at": [390, 200]}},
        positions=[[10, 200]],
    )
    src = tmp_path / "seek.json"
    src.write_text(json.dumps(data, indent=2))
    best = tmp_path / "best.json"
    done = sweep_cli(
        "tune", str(src), "--param", "groups.a.max_speed=10:50:10", "--ticks", "20",
        "--maximise", "mean_speed:group=a,over=final", "--trials", "8", "--workers", "1",
        "--out", str(best),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "groups.a.max_speed = 50" in done.stdout  # speed after 20 ticks grows with max_speed
    tuned = json.loads(best.read_text())
    assert tuned["groups"][0]["max_speed"] == 50
    check = sweep_cli("validate", str(best))
    assert check.returncode == 0, check.stdout + check.stderr
    assert json.loads(src.read_text()) == data  # the input is untouched


@pytest.mark.slow
def test_sweep_on_an_existing_scheduler(tmp_path: Path) -> None:
    """--scheduler tcp://host:port sends the tasks to a cluster that is already running."""
    from behaviortk.studies.cluster import connect

    src = tmp_path / "idle.json"
    src.write_text(json.dumps(definition({"type": "wait", "duration": 10})))
    out = tmp_path / "r.parquet"
    with connect(workers=1) as client:
        address = client.scheduler.address
        done = sweep_cli(
            "sweep", str(src), "--param", "world.seed=1,2", "--ticks", "3",
            "--metric", "mean_speed:group=a", "--scheduler", address, "--out", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert client.submit(sum, [1, 2]).result() == 3  # the cluster outlives the sweep
    assert sorted(pl.read_parquet(out)["world.seed"].to_list()) == [1, 2]
    unreachable = sweep_cli(
        "sweep", str(src), "--param", "world.seed=1", "--scheduler", "tcp://127.0.0.1:9",
        "--out", str(tmp_path / "x.parquet"),
    )  # fmt: skip
    assert unreachable.returncode == 1 and "cannot reach the scheduler" in unreachable.stderr
    assert "Traceback" not in unreachable.stderr


def test_a_swept_world_seed_is_the_seed_its_point_runs() -> None:
    """Runs pass their seed explicitly: a point that sets world.seed runs that seed and the
    next K-1 (not the file's seeds, which would make the column change nothing)."""
    import argparse

    from behaviortk.commands.sweep import SweepSetup
    from behaviortk.studies.sweep import point_seeds

    assert point_seeds({"groups.prey.max_speed": 80}, [7, 8]) == [7, 8]
    assert point_seeds({"world.seed": 40}, [7, 8]) == [40, 41]
    args = argparse.Namespace(
        file=str(ROOT / "definitions" / "evade_or_flock.json"),
        param=["world.seed=3,10"],
        seeds=2,
        ticks=5,
        engine="batch",
    )
    tasks = SweepSetup(args).tasks("batch")
    assert [(t.values["world.seed"], t.seed) for t in tasks] == [(3, 3), (3, 4), (10, 10), (10, 11)]
