"""``behaviortk bench``: the report (table and JSON line) at a scale, bad input.

How a definition is scaled is tested in ``test_bench_scaling.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from behaviortk.cli import main

EVADE = str(Path(__file__).resolve().parent.parent / "definitions" / "evade_or_flock.json")


def last_json(out: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return report


def test_bench_report_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    """--scale 630: 60 + 3 agents in proportion = 600 + 30 (x10 each), world sides x sqrt(10):
    800 x 600 -> 2529.8 x 1897.4. The table and the JSON last line say so."""
    code = main(["bench", EVADE, "--scale", "630", "--ticks", "2", "--warmup", "1", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    report = last_json(out)
    assert {"agents", "ms_per_tick", "compile_s", "peak_rss_mb", "overlap"} <= set(report)
    assert report["agents"] == 630
    assert report["groups"] == {"prey": 600, "predator": 30}
    assert (report["scale"], report["grow"]) == (630, None)
    assert report["world_factor"] == pytest.approx(math.sqrt(10.0))
    assert report["world"] == pytest.approx([800 * math.sqrt(10.0), 600 * math.sqrt(10.0)])
    assert (report["engine"], report["engine_requested"]) == ("py_trees", "auto")  # < 2,000
    assert report["ms_per_tick"] > 0 and report["ticks_per_s"] > 0
    assert report["compile_s"] == 0.0 and report["kernels"] == "numpy"  # py_trees: no numba
    assert report["peak_rss_mb"] >= report["baseline_rss_mb"] > 0
    # bytes per agent = (peak - resident before the simulation) / agents, rounded
    share = (report["peak_rss_mb"] - report["baseline_rss_mb"]) * 1024 * 1024 / 630
    assert report["bytes_per_agent"] == pytest.approx(share, abs=0.1 * 1024 * 1024 / 630 + 1)
    assert set(report["phases_ms"]) == {"sense", "decide", "act", "integrate"}
    assert 0 < report["overlap_mean"] <= report["overlap"] <= 1  # evade_or_flock's prey overlap
    lines = out.splitlines()
    assert lines[0].startswith("evade_or_flock: 630 agents, engine py_trees")
    rows = {line.split()[0]: line for line in lines[1:-1]}
    assert rows["agents"].endswith("prey 600, predator 30 (630 in all)")
    assert "--scale 630, every group in proportion; world 2,529.8 x 1,897.4" in rows["scaled"]
    assert f"{report['ms_per_tick']:,.3f} median" in rows["ms/tick"]
    assert f"{report['ticks_per_s']:,.1f}" in rows["ticks/s"]
    assert "sense " in rows["per"] and "integrate " in rows["per"]
    assert f"{report['compile_s']:.2f} s" in rows["compile"]
    assert f"{report['peak_rss_mb']:,.0f} MB resident " in rows["peak"]
    assert f"~{report['bytes_per_agent']:,} bytes per agent" in rows["peak"]
    assert "(agents closer to another than the sum of their radii)" in rows["overlap"]


def test_bench_grow_prey(capsys: pytest.CaptureFixture[str]) -> None:
    """--grow prey --scale 1003: the 3 predators stay, prey 1003 - 3 = 1000."""
    argv = ["bench", EVADE, "--grow", "prey", "--scale", "1003", "--ticks", "1", "--warmup", "0"]
    assert main([*argv, "--json"]) == 0
    out = capsys.readouterr().out
    report = last_json(out)
    assert (report["agents"], report["groups"]) == (1003, {"prey": 1000, "predator": 3})
    assert report["grow"] == "prey"
    assert report["world_factor"] == pytest.approx(math.sqrt(1003 / 63))
    assert "--scale 1,003, only prey; world 3,192.1 x 2,394.0" in out


def test_bench_auto_says_which_engine(capsys: pytest.CaptureFixture[str]) -> None:
    """auto is the default: 63 agents run on py_trees, 2,000 on batch; the report says so."""
    assert main(["bench", EVADE, "--ticks", "1", "--warmup", "0"]) == 0
    out = capsys.readouterr().out
    assert "63 agents, engine py_trees (auto: 63 agents, batch from 2,000)," in out
    argv = ["bench", EVADE, "--grow", "prey", "--scale", "2000", "--ticks", "1", "--warmup", "0"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "2,000 agents, engine batch (auto: 2,000 agents, batch from 2,000)," in out
    assert main(["bench", EVADE, "--engine", "batch", "--ticks", "1", "--warmup", "0"]) == 0
    assert "63 agents, engine batch, " in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,code",
    [
        (["bench", "no/such/file.json"], 1),
        (["bench", EVADE, "--scale", "0"], 2),
        (["bench", EVADE, "--ticks", "many"], 2),
        (["bench", EVADE, "--scale", "1"], 2),  # 2 groups, each keeps at least 1
        (["bench", EVADE, "--grow", "prey"], 2),  # --grow needs --scale
        (["bench", EVADE, "--grow", "prey", "--scale", "3"], 2),  # nothing left for prey
        (["bench", EVADE, "--engine", "fast"], 2),
    ],
)
def test_bench_bad_input_is_one_line(
    argv: list[str], code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == code
    err = capsys.readouterr().err.strip()
    assert err and "Traceback" not in err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--grow", "wolf", "--scale", "100"],
            "no group 'wolf' to grow; the groups are: prey, predator",
        ),
        (["--grow", "prey"], "--grow prey needs --scale N (the agents in all"),
        (
            ["--grow", "prey", "--scale", "3"],
            "--scale 3 leaves no agent for 'prey': the other groups have 3 agents, so "
            "--scale must be at least 4",
        ),
        (["--scale", "1"], "--scale 1 is too few: 2 groups have agents and each keeps at least 1"),
    ],
)
def test_bench_bad_scaling_says_why(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", EVADE, *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("behaviortk bench: error: ")
    assert message in captured.err and "Traceback" not in captured.err
