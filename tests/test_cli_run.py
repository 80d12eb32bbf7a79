"""CLI ``run --headless`` and ``tree``: outputs, trace file, and clear one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from behaviortk.cli import main

REFERENCE = str(Path(__file__).resolve().parent.parent / "definitions" / "evade_or_flock.json")


def test_run_headless_writes_trace_and_summary(tmp_path: Path, capsys) -> None:
    out = tmp_path / "t.jsonl"
    code = main(
        ["run", REFERENCE, "--headless", "--ticks", "6", "--trace", str(out), "--every", "2"]
    )
    captured = capsys.readouterr()
    assert code == 0
    assert "evade_or_flock: 6 ticks, 63 agents, engine py_trees, seed 7" in captured.out
    assert "ticks/s" in captured.out
    assert "per tick: sense" in captured.out and "integrate" in captured.out
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["tick"] for x in lines[1:-1]] == [0, 2, 4]
    end = json.loads(lines[-1])
    overlap = end.pop("overlap")
    assert end == {"end": "complete", "ticks": 6}
    assert overlap["ticks"] == 6 and 0 < overlap["max"] <= 1
    pct = 100 * overlap["max"]
    figure = f"overlap (agents closer to another than the sum of their radii): {pct:.3g}% at most"
    assert figure in captured.out
    assert f"trace: {out} (5 lines)" in captured.out


def test_run_seed_flag_changes_the_trace(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    for path, seed in ((a, "1"), (b, "1"), (c, "2")):
        assert (
            main(
                [
                    "run",
                    REFERENCE,
                    "--headless",
                    "--ticks",
                    "5",
                    "--seed",
                    seed,
                    "--trace",
                    str(path),
                ]
            )
            == 0
        )
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_run_invalid_file_prints_validator_lines(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x"}', encoding="utf-8")
    assert main(["run", str(bad), "--headless", "--ticks", "3"]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:1:1:" in err
    assert "Traceback" not in err


def test_run_usage_errors_and_missing_file(tmp_path: Path, capsys) -> None:
    assert main(["run", REFERENCE, "--headless", "--every", "0"]) == 2
    assert main(["run", REFERENCE, "--headless", "--engine", "fast"]) == 2
    assert main(["run", str(tmp_path / "nope.json"), "--headless"]) == 1
    assert main(["run", REFERENCE, "--headless", "--ticks", "2", "--trace", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "cannot write trace" in err
    assert "Traceback" not in err


def test_run_batch_engine_flag(capsys) -> None:
    code = main(["run", REFERENCE, "--headless", "--ticks", "3", "--engine", "batch"])
    captured = capsys.readouterr()
    if code == 0:
        assert "engine batch" in captured.out
    else:
        assert code == 1 and "batch engine is not available" in captured.err


def test_tree_prints_py_trees_unicode(capsys) -> None:
    assert main(["tree", REFERENCE, "--group", "prey"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "[o] prey",
        "    -^- threatened",
        "        --> evade",
        "    -^- social",
        "        --> flock",
        "    --> wander",
    ]
    assert main(["tree", REFERENCE]) == 0
    both = capsys.readouterr().out
    assert "group prey:" in both and "group predator:" in both and "--> pursue prey" in both


def test_tree_dot_and_errors(tmp_path: Path, capsys) -> None:
    dot = tmp_path / "prey.dot"
    assert main(["tree", REFERENCE, "--group", "prey", "--dot", str(dot)]) == 0
    text = dot.read_text(encoding="utf-8")
    assert text.startswith("digraph") and "label=evade" in text and "prey -> wander;" in text
    assert main(["tree", REFERENCE, "--group", "pray"]) == 1
    assert "did you mean 'prey'?" in capsys.readouterr().err
    assert main(["tree", REFERENCE, "--dot", str(dot)]) == 2


@pytest.mark.parametrize("command", ["run", "tree"])
def test_not_json_is_one_line(tmp_path: Path, capsys, command: str) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("not json", encoding="utf-8")
    args = [command, str(bad)] + (["--headless"] if command == "run" else [])
    assert main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(str(bad))


def stop_at_tick(monkeypatch, tick: int, error: BaseException) -> None:
    """Make ``Simulation.step`` raise ``error`` when it is about to run tick ``tick``."""
    from behaviortk.sim import Simulation

    real_step = Simulation.step

    def step(sim) -> None:
        if sim.tick == tick:
            raise error
        real_step(sim)

    monkeypatch.setattr(Simulation, "step", step)


@pytest.mark.parametrize(
    ("error", "code", "reason"),
    [
        (KeyboardInterrupt(), 130, "interrupted (SIGINT)"),
        (ZeroDivisionError("boom"), 1, "ZeroDivisionError: boom"),
    ],
)
def test_an_interrupted_run_keeps_its_trace_ending_with_why(
    tmp_path: Path, capsys, monkeypatch, error: BaseException, code: int, reason: str
) -> None:
    """The partial trace is the user's data: renamed into place, its last line says it stopped."""
    from behaviortk.trace import read

    out = tmp_path / "t.jsonl"
    out.write_text("an older trace\n")
    stop_at_tick(monkeypatch, 3, error)
    assert main(["run", REFERENCE, "--headless", "--ticks", "10", "--trace", str(out)]) == code
    err = capsys.readouterr().err
    assert f"trace: {out} (5 lines, interrupted at tick 3)" in err
    assert "Traceback" not in err
    with out.open(encoding="utf-8") as fh:
        head, records = read(fh)
        assert head["seed"] == 7
        assert [r["tick"] for r in records] == [0, 1, 2]
    end = dict(records.end or {})
    assert end.pop("overlap")["ticks"] == 3
    assert end == {"end": "interrupted", "tick": 3, "reason": reason}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]  # no temporary file left
