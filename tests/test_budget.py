"""``format/budget.py``: memory and time of a tick estimated from a definition, and
``validate``'s warnings when they exceed the machine."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from behaviortk.cli import main
from behaviortk.format import budget
from behaviortk.format.budget import (
    BYTES_PER_AGENT,
    BYTES_PER_CANDIDATE,
    BYTES_PER_OBSERVER,
    BYTES_PER_PAIR,
    SECONDS_PER_AGENT,
    SECONDS_PER_CANDIDATE,
    SECONDS_PER_CLOSE,
    SECONDS_PER_PAIR,
    estimate,
    machine_memory,
    warnings,
)
from behaviortk.format.loader import Scenario, load_text

ROOT = Path(__file__).parent.parent
FLOCK = {"type": "blend", "children": [{"type": "separation"}, {"type": "cohesion"}]}


def scenario(groups: list[dict[str, Any]], trees: dict[str, Any], **world: Any) -> Scenario:
    data = {
        "name": "budget",
        "world": {"width": 100, "height": 100, "edges": "wrap", **world},
        "groups": groups,
        "trees": {name: {"root": root} for name, root in trees.items()},
    }
    return load_text(json.dumps(data), "budget.json", max_agents=10**7)


def crowd(count: int, lo: list[float], hi: list[float], **extra: Any) -> dict[str, Any]:
    spawn = {"kind": "area", "min": lo, "max": hi}
    return {"name": "prey", "count": count, "spawn": spawn, "tree": "flock", **extra}


def test_estimate_of_a_tiny_definition_by_hand() -> None:
    """10 agents over an 80 x 60 area of a 100 x 100 world, view 10, fov 180, cap 2.

    Grid: at most 4 x 10 = 40 cells at least 10 wide: sqrt(10000 / 40) = 15.8, so 6 x 6
    cells of 16.67; the 3 x 3 cells around an agent, 50 x 50, hold 9 x (50/80) x (50/60)
    = 4.6875 of the 9 others. Within the view: 9 x (20/80) x (20/60) x pi/4 = 0.589, of
    which half in the field of view: 0.2945 kept each (below the cap). The shortcut is
    not taken: 4.6875 x 0.5 x pi 10^2 / 50^2 / (2 x 2) = 0.074 < 4.
    """
    s = scenario(
        [crowd(10, [0, 0], [80, 60], view_distance=10, fov=180, max_neighbours=2)],
        {"flock": FLOCK},
    )
    est = estimate(s.definition, s.trees)
    (q,) = est.queries
    assert (q.group, q.of, q.observers, q.max_neighbours) == ("prey", "same", 10, 2)
    assert q.candidates == pytest.approx(4.6875)
    close = 9 * 0.25 * (1 / 3) * math.pi / 4
    assert q.close == pytest.approx(close) and close == pytest.approx(0.58905, abs=1e-5)
    assert q.expected == pytest.approx(0.5 * close)
    assert q.kept == pytest.approx(0.5 * close)
    pairs = 10 * 0.5 * close
    assert est.memory == pytest.approx(
        pairs * BYTES_PER_PAIR
        + 10 * (4.6875 * BYTES_PER_CANDIDATE + BYTES_PER_OBSERVER)
        + 10 * BYTES_PER_AGENT
    )
    assert est.seconds == pytest.approx(
        10 * (4.6875 * SECONDS_PER_CANDIDATE + close * SECONDS_PER_CLOSE)
        + pairs * SECONDS_PER_PAIR
        + 10 * SECONDS_PER_AGENT
    )


def test_estimate_of_a_dense_crowd_by_hand() -> None:
    """200,000 agents over 800 x 600, view 60, fov 270 (defaults), cap 64.

    Full grid: cells of max(60, sqrt(480000 / 65535)) = 60: 13 x 10 cells of 61.5 x 60;
    expected in view 199,999 x pi 60^2 / 480,000 x 3/4 = 3,534, so the cap binds. The
    cap is 2 x 64 = 128 at most a sixteenth of that, so the shortcut goes two levels down
    (radius 15: 53 x 40 cells, the longest side 800/53 = 15.09, taken square): the 3 x 3
    cells hold 199,999 x (45.28/800) x (45.28/600) = 854 candidates each.
    """
    s = scenario([crowd(200_000, [0, 0], [800, 600])], {"flock": FLOCK}, width=800, height=600)
    est = estimate(s.definition, s.trees)
    (q,) = est.queries
    assert q.expected == pytest.approx(199_999 * math.pi * 3600 / 480_000 * 0.75)
    assert q.kept == 64
    side = 800 / 53
    assert q.candidates == pytest.approx(199_999 * (3 * side / 800) * (3 * side / 600))
    assert round(q.candidates) == 854
    assert q.close == pytest.approx(199_999 * math.pi * 225 / 480_000)
    assert q.pairs == 200_000 * 64
    assert est.seconds > 1.0


def test_a_crowd_on_one_point_measures_everyone() -> None:
    s = scenario([crowd(20_000, [50, 50], [50, 50])], {"flock": FLOCK})
    (q,) = estimate(s.definition, s.trees).queries
    assert q.candidates == q.close == 19_999
    assert q.kept == 64


def test_queries_follow_the_trees() -> None:
    """One query per distinct (group, of) read by flocking nodes or neighbours conditions."""
    groups = [
        crowd(50, [0, 0], [100, 100]),
        {
            "name": "wolves",
            "count": 3,
            "spawn": {"kind": "ring", "center": [50, 50], "radius": 10},
            "tree": "hunt",
        },
    ]
    hunt = {
        "type": "selector",
        "memory": False,
        "children": [
            {
                "type": "eternal_guard",
                "condition": {"type": "neighbours", "of": "prey", "min_count": 2},
                "child": {"type": "cohesion", "of": "prey"},
            },
            {"type": "separation", "of": "any"},
        ],
    }
    s = scenario(groups, {"flock": FLOCK, "hunt": hunt})
    got = {(q.group, q.of, q.observers) for q in estimate(s.definition, s.trees).queries}
    assert got == {("prey", "same", 50), ("wolves", "prey", 3), ("wolves", "any", 3)}
    quiet = scenario([crowd(50, [0, 0], [100, 100])], {"flock": {"type": "wander"}})
    assert estimate(quiet.definition, quiet.trees).queries == ()


def test_machine_memory_is_read() -> None:
    total = machine_memory()
    assert total is not None and total > 100 * 2**20


def test_warnings_name_the_number_and_the_knob() -> None:
    s = scenario([crowd(200_000, [0, 0], [800, 600])], {"flock": FLOCK}, width=800, height=600)
    lines = warnings("big.json", s.definition, s.trees, memory=2**30)
    assert len(lines) == 2
    memory, time = lines
    assert memory.startswith("big.json: warning: one tick needs about ")
    assert "more than this machine's 1.0 GiB" in memory
    assert "group 'prey' keeps about 200,000 x 64 neighbour pairs" in memory
    assert "max_neighbours (now 64)" in memory
    assert time.startswith("big.json: warning: one tick takes about ")
    assert "view_distance" in time and "count" in time
    small = scenario([crowd(100, [0, 0], [100, 100])], {"flock": FLOCK})
    assert warnings("small.json", small.definition, small.trees) == []


def test_validate_warns_on_200000_agents_and_still_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "crowd.json"
    data = {
        "name": "crowd",
        "world": {"width": 800, "height": 600, "edges": "wrap"},
        "groups": [crowd(200_000, [0, 0], [800, 600])],
        "trees": {"flock": {"root": FLOCK}},
    }
    path.write_text(json.dumps(data))
    code = main(["validate", str(path)])
    out, err = capsys.readouterr()
    assert code == 0 and out == ""
    warned = [line for line in err.splitlines() if "warning" in line]
    assert len(warned) >= 1
    assert warned[0].startswith(f"{path}: warning: one tick ")
    assert "view_distance" in err
    assert err.splitlines()[-1] == f"{path}: ok"


def test_validate_warns_about_memory_beyond_the_machine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(budget, "machine_memory", lambda: 256 * 2**20)
    path = tmp_path / "crowd.json"
    data = {
        "name": "crowd",
        "world": {"width": 800, "height": 600, "edges": "wrap"},
        "groups": [crowd(50_000, [0, 0], [800, 600])],
        "trees": {"flock": {"root": FLOCK}},
    }
    path.write_text(json.dumps(data))
    assert main(["validate", str(path)]) == 0
    err = capsys.readouterr().err
    assert "more than this machine's 0.2 GiB" in err
    assert "max_neighbours" in err


def test_shipped_definitions_do_not_warn(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(str(p) for p in (ROOT / "definitions").glob("*.json"))
    assert main(["validate", *files]) == 0
    assert "warning" not in capsys.readouterr().err
