"""``behaviortk bench``: scaling at constant density (hand-worked), the report, bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from behaviortk.cli import main
from behaviortk.commands.bench import scale_definition
from behaviortk.format.loader import load

EVADE = str(Path(__file__).resolve().parent.parent / "definitions" / "evade_or_flock.json")


def raw(extra: dict | None = None) -> dict:
    data = {
        "name": "s",
        "world": {"width": 400, "height": 100},
        "groups": [
            {
                "name": "few",
                "count": 10,
                "spawn": {"kind": "ring", "center": [50, 50], "radius": 10},
            },
            {
                "name": "many",
                "count": 90,
                "spawn": {"kind": "area", "min": [0, 0], "max": [400, 100]},
            },
        ],
        "trees": {"t": {"root": {"type": "seek", "target": {"kind": "point", "at": [40, 20]}}}},
        "obstacles": [{"at": [100, 50], "radius": 5}],
    }
    data.update(extra or {})
    return data


def test_scale_keeps_density() -> None:
    """Largest group 90 -> 990: total 100 -> 1000, so s = sqrt(10); area grows 10 times
    with 10 times the agents. Positions scale by s, radii do not."""
    data, s = scale_definition(raw(), 990)
    assert s == pytest.approx(math.sqrt(10.0))
    assert [g["count"] for g in data["groups"]] == [10, 990]
    w, h = data["world"]["width"], data["world"]["height"]
    assert (10 + 990) / (w * h) == pytest.approx(100 / (400 * 100))
    assert data["groups"][1]["spawn"]["max"] == pytest.approx([400 * s, 100 * s])
    assert data["groups"][0]["spawn"]["center"] == pytest.approx([50 * s, 50 * s])
    assert data["groups"][0]["spawn"]["radius"] == pytest.approx(10 * s)
    assert data["obstacles"][0] == {"at": pytest.approx([100 * s, 50 * s]), "radius": 5}
    assert data["trees"]["t"]["root"]["target"]["at"] == pytest.approx([40 * s, 20 * s])
    assert raw()["groups"][1]["count"] == 90  # the input is not modified


def test_scale_positions_spawn_becomes_their_area() -> None:
    data = raw()
    data["groups"][1]["spawn"] = {"kind": "positions", "points": [[0, 0], [10, 20]]}
    data["groups"][1]["count"] = 2
    data["groups"][0]["count"] = 1
    out, s = scale_definition(data, 5)  # total 3 -> 6: s = sqrt(2)
    assert out["groups"][1]["spawn"] == {
        "kind": "area",
        "min": [0, 0],
        "max": pytest.approx([10 * s, 20 * s]),
    }


def test_bench_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", EVADE, "--scale", "300", "--ticks", "3", "--warmup", "1", "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    report = json.loads(out[-1])
    base = load(EVADE).definition
    small = min(g.count for g in base.groups)
    assert report["agents"] == 300 + small
    assert (report["engine"], report["engine_requested"]) == ("py_trees", "auto")  # 303 < 2,000
    assert report["ms_per_tick"] > 0
    assert set(report["phases_ms"]) == {"sense", "decide", "act", "integrate"}
    assert "median" in out[0]


def test_bench_auto_says_which_engine(capsys: pytest.CaptureFixture[str]) -> None:
    """auto is the default: 63 agents run on py_trees, 2,003 on batch; the report says so."""
    assert main(["bench", EVADE, "--ticks", "1", "--warmup", "0"]) == 0
    out = capsys.readouterr().out
    assert "63 agents, engine py_trees (auto: 63 agents, batch from 2,000)," in out
    assert main(["bench", EVADE, "--scale", "2000", "--ticks", "1", "--warmup", "0"]) == 0
    out = capsys.readouterr().out
    assert "2,003 agents, engine batch (auto: 2,003 agents, batch from 2,000)," in out
    assert main(["bench", EVADE, "--engine", "batch", "--ticks", "1", "--warmup", "0"]) == 0
    assert "63 agents, engine batch, " in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,code",
    [
        (["bench", "no/such/file.json"], 1),
        (["bench", EVADE, "--scale", "0"], 2),
        (["bench", EVADE, "--ticks", "many"], 2),
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
