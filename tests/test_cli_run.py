"""CLI ``run --headless`` and ``tree``: outputs, trace file, and clear one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_support import headlines

from behaviortk.cli import main

REFERENCE = str(Path(__file__).resolve().parent.parent / "definitions" / "evade_or_flock.json")


def test_run_headless_writes_trace_and_summary(tmp_path: Path, capsys) -> None:
    out = tmp_path / "t.jsonl"
    code = main(
        ["run", REFERENCE, "--headless", "--ticks", "6", "--trace", str(out), "--every", "2"]
    )
    captured = capsys.readouterr()
    assert code == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["tick"] for x in lines[1:-1]] == [0, 2, 4]
    end = json.loads(lines[-1])
    overlap = end.pop("overlap")
    assert end == {"end": "complete", "ticks": 6}
    assert overlap["ticks"] == 6 and 0 < overlap["max"] <= 1
    table = summary_rows(captured.out)
    assert captured.out.startswith("evade_or_flock: 6 ticks headless\n")
    assert table["engine"] == "py_trees (auto: 63 agents, batch from 2,000)"
    assert table["ticks"] == "6 (seed 7)"
    # 6 ticks of dt = 1/60 s: 0.1 s; the file's dt printed to 4 significant digits
    assert table["simulated"] == "0.10 s (dt 0.01667 s)"
    assert table["wall"].endswith(" ticks/s")
    assert table["agents"] == "prey 60, predator 3 (63 in all)"
    assert table["events"] == "none"
    assert table["per tick"].startswith("sense ") and "integrate" in table["per tick"]
    assert table["overlap"].startswith(f"{100 * overlap['max']:.3g}% at most, ")
    size = out.stat().st_size
    kb = f"{size / 1024:,.1f} KB"
    assert table["trace"] == f"{out} ({kb}, 5 lines)"
    assert captured.err == ""  # not a terminal: no progress bar


def summary_rows(out: str) -> dict[str, str]:
    """The summary table's rows: two columns, indented by two spaces."""
    rows = {}
    for line in out.splitlines()[1:]:
        assert line.startswith("  "), line
        key, value = re.split(r"\s{2,}", line.strip(), maxsplit=1)
        rows[key] = value
    return rows


def test_run_summary_counts_events_and_agents_at_the_end(capsys) -> None:
    """chase_game: the hunters emit "caught" while touching the player (3 agents, batch)."""
    game = REFERENCE.replace("definitions/evade_or_flock.json", "examples/chase_game.json")
    from behaviortk import Simulation, load

    sim = Simulation(load(game), engine="batch")
    caught = 0
    for _ in range(300):
        sim.step()
        caught += sum(e.name == "caught" for e in sim.events)
    assert caught > 0  # the count below is not vacuous
    assert main(["run", game, "--headless", "--ticks", "300", "--engine", "batch"]) == 0
    table = summary_rows(capsys.readouterr().out)
    assert table["engine"] == "batch"
    assert table["events"] == f"caught {caught:,}"
    assert table["agents"] == "player 1, hunters 2 (3 in all)"
    assert "trace" not in table


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
        assert summary_rows(captured.out)["engine"] == "batch"
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
    err = capsys.readouterr().err
    assert headlines(err) == [
        f"{bad}:1:1: /: unexpected word 'not' (strings need double quotes) [json_syntax]"
    ]
    assert "1 | not json" in err


def stop_at_tick(monkeypatch, tick: int, error: BaseException) -> None:
    """Make ``Simulation.step`` raise ``error`` when it is about to run tick ``tick``."""
    from behaviortk.sim.simulation import Simulation

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
    from behaviortk.record.jsonl import read

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


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--trace", "out.jsonl"], "--trace needs --headless"),
        (["--no-leaf-forces"], "--no-leaf-forces needs --headless"),
        (["--every", "3"], "--every needs --headless"),
        (["--break", "chase=RUNNING"], "--break needs --headless"),
        (["--trace", "t.parquet", "--every", "2"], "--trace and --every need --headless"),
    ],
)
def test_headless_only_flags_for_a_window_are_an_error_not_ignored(
    flags: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The viewer would ignore them: exit 2 naming them, no window, no file written."""
    from behaviortk.cli import main

    path = Path(__file__).resolve().parents[1] / "definitions" / "wander.json"
    flags = [str(tmp_path / f) if "." in f else f for f in flags]  # outputs into tmp_path
    code = main(["run", str(path), *flags])
    assert code == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
