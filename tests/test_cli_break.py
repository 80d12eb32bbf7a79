"""``behaviortk run FILE --headless --break SPEC``: where it stops, what it prints, the trace's end.

guard_patrol on py_trees (auto: 3 agents): guard 0 first runs ``chase`` on tick 106
(``tests/test_breakpoints.py`` checks that against the trace's statuses).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from behaviortk.cli import main
from behaviortk.commands.breaks import break_spec
from behaviortk.record.reader import open_recording

ROOT = Path(__file__).resolve().parent.parent
GUARDS = str(ROOT / "definitions" / "guard_patrol.json")
CHASE = "guard/decide[2]/chase[0]"
REASON = f"breakpoint: {CHASE} became RUNNING for agent 0 at tick 106"


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_run_stops_at_the_breakpoint_prints_where_and_ends_the_trace_interrupted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    out = tmp_path / f"t{suffix}"
    code = main(["run", GUARDS, "--headless", "--break", "chase=running", "--trace", str(out)])
    printed = capsys.readouterr().out.splitlines()
    assert code == 0
    assert printed[0] == f"break: tick 106, agent 0, node {CHASE}, RUNNING"
    assert printed[1] == "guard_patrol: 107 ticks headless"
    rec = open_recording(out)  # the replay reads it
    assert rec.ticks.tolist() == list(range(107))
    end = dict(rec.end or {})
    assert end.pop("overlap")["ticks"] == 107
    assert end == {
        "end": "interrupted",
        "tick": 107,
        "reason": REASON,
        "breakpoint": f"{CHASE}=RUNNING",
    }
    node = rec.trees["guards"].nodes
    index = [n.path for n in node].index(CHASE)
    before, last = rec.state(105), rec.state(106)
    assert last.status["guards"][0, index] == 1 and before.status["guards"][0, index] != 1


def test_the_first_of_several_breakpoints_to_hit_stops_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t.jsonl"
    args = ["run", GUARDS, "--headless", "--trace", str(out), "--break", "event=despawn"]
    code = main([*args, "--break", "blackboard=last_seen != [0, 0]", "--break", "give up=SUCCESS"])
    printed = capsys.readouterr().out.splitlines()
    assert code == 0
    assert printed[0].startswith("break: tick 106, agent 0, blackboard last_seen != [0.0, 0.0], ")
    end = json.loads(out.read_text().splitlines()[-1])
    assert end["breakpoint"] == "blackboard=last_seen!=[0.0, 0.0]"


def test_a_breakpoint_that_never_hits_lets_the_run_complete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t.jsonl"
    code = main(["run", GUARDS, "--headless", "--ticks", "50", "--break", "chase=RUNNING"])
    printed = capsys.readouterr().out
    assert code == 0 and "break:" not in printed
    assert printed.startswith("guard_patrol: 50 ticks headless")
    args = ["run", GUARDS, "--headless", "--ticks", "50", "--trace", str(out)]
    assert main([*args, "--break", "chase=RUNNING"]) == 0
    end = json.loads(out.read_text().splitlines()[-1])
    assert end["end"] == "complete" and end["ticks"] == 50


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("chase", "argument --break: expected PATH=STATUS (RUNNING, SUCCESS, FAILURE), event=NAME"),
        ("chase=DONE", "argument --break: expected PATH=STATUS"),
        ("event=", "argument --break: event= needs an event name, got 'event='"),
        ("blackboard=last_seen", "expected blackboard=KEY OP VALUE (OP one of == != < <= > >=)"),
        ("chse=RUNNING", "--break chse=RUNNING: unknown node 'chse'; closest paths: " + CHASE),
        ("event=boom", "--break event=boom: no node raises event 'boom'; choose one of spawn"),
        ("blackboard=last_seen>3", "'>' compares numbers only (use == or !=)"),
    ],
)
def test_a_bad_break_is_one_line_and_exit_2(
    spec: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", GUARDS, "--headless", "--ticks", "5", "--break", spec])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_break_needs_headless(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", GUARDS, "--break", "chase=RUNNING"]) == 2
    assert "--break needs --headless (in the viewer, select a node" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "kwargs"),
    [
        ("a/b[1]=success", {"node": "a/b[1]", "status": "SUCCESS"}),
        ("x=y=FAILURE", {"node": "x=y", "status": "FAILURE"}),
        ("event=caught", {"event": "caught"}),
        ("blackboard=alarm==true", {"blackboard": ("alarm", "==", True)}),
        ("blackboard= hunger >= 80.5", {"blackboard": ("hunger", ">=", 80.5)}),
        ('blackboard=mood!="idle"', {"blackboard": ("mood", "!=", "idle")}),
        ("blackboard=mood==idle", {"blackboard": ("mood", "==", "idle")}),
        ("blackboard=home==[1, 2]", {"blackboard": ("home", "==", [1, 2])}),
    ],
)
def test_break_specs_parse(text: str, kwargs: dict[str, object]) -> None:
    assert break_spec(text) == kwargs
