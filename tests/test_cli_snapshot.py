"""CLI ``run --resume SNAPSHOT`` and ``run --headless --save-every N --save-dir DIR``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from test_cli_run import summary_rows

from behaviortk.cli import main

ROOT = Path(__file__).resolve().parent.parent
GUARDS = str(ROOT / "definitions" / "guard_patrol.json")


def trace_ticks(path: Path) -> list[str]:
    """A trace's tick lines (header and end line left out)."""
    return path.read_text(encoding="utf-8").splitlines()[1:-1]


def test_save_every_then_resume_continues_the_run(tmp_path: Path, capsys: Any) -> None:
    full, snaps = tmp_path / "full.jsonl", tmp_path / "snaps"
    argv = ["run", GUARDS, "--headless", "--ticks", "30", "--trace", str(full)]
    assert main([*argv, "--save-every", "10", "--save-dir", str(snaps)]) == 0
    table = summary_rows(capsys.readouterr().out)
    assert sorted(os.listdir(snaps)) == [f"tick-0000{t}.btks" for t in (10, 20, 30)]
    size = (snaps / "tick-000030.btks").stat().st_size
    assert table["snapshots"] == f"3 in {snaps} (last tick-000030.btks, {size / 1024:,.1f} KB)"
    part = tmp_path / "part.jsonl"
    resume = ["--resume", str(snaps / "tick-000010.btks"), "--engine", "batch"]
    assert main(["run", GUARDS, "--headless", "--ticks", "20", "--trace", str(part), *resume]) == 0
    captured = capsys.readouterr()
    table = summary_rows(captured.out)
    assert captured.out.startswith("guard_patrol: 20 ticks headless\n")
    assert table["engine"] == "batch (resumed at tick 10)"
    assert table["ticks"] == "10 to 30 (seed 13)"
    assert trace_ticks(part) == trace_ticks(full)[10:]
    assert json.loads(part.read_text().splitlines()[0])["engine"] == "batch"


def test_save_every_never_overwrites(tmp_path: Path, capsys: Any) -> None:
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    (snaps / "tick-000004.btks").write_text("mine")
    argv = ["run", GUARDS, "--headless", "--ticks", "5", "--save-every", "2"]
    assert main([*argv, "--save-dir", str(snaps)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"behaviortk: error: refusing to overwrite snapshot {snaps}/tick-000004.btks: it exists "
        "(nothing was run; remove it or choose another --save-dir)"
    )
    assert sorted(os.listdir(snaps)) == ["tick-000004.btks"]
    assert (snaps / "tick-000004.btks").read_text() == "mine"
    assert main([*argv, "--save-dir", str(snaps / "tick-000004.btks")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_resume_runs_the_saved_definition_and_says_when_file_differs(
    tmp_path: Path, capsys: Any
) -> None:
    snaps = tmp_path / "snaps"
    argv = ["run", GUARDS, "--headless", "--ticks", "4"]
    assert main([*argv, "--save-every", "4", "--save-dir", str(snaps)]) == 0
    capsys.readouterr()
    snapshot = str(snaps / "tick-000004.btks")
    wander = str(ROOT / "definitions" / "wander.json")
    assert main(["run", wander, "--headless", "--ticks", "2", "--resume", snapshot]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        f"behaviortk run: warning: {snapshot} was saved from another definition than {wander}; "
        "continuing the saved one\n"
    )
    assert captured.out.startswith("guard_patrol: 2 ticks headless")
    resumed = ["run", GUARDS, "--headless", "--ticks", "5", "--resume", snapshot]
    assert main([*resumed, "--save-every", "3", "--save-dir", str(tmp_path / "more")]) == 0
    assert "warning" not in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path / "more")) == ["tick-000006.btks", "tick-000009.btks"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--resume", GUARDS], f"{GUARDS}: not a behaviortk snapshot (a JSON text)"),
        (["--resume", "missing.btks"], "missing.btks: no such file"),
        (["--resume", "x.btks", "--seed", "3"], "--seed cannot be used with --resume"),
        (["--save-every", "3"], "--save-every N and --save-dir DIR go together"),
        (["--save-dir", "d"], "--save-every N and --save-dir DIR go together"),
    ],
)
def test_errors_are_one_line(
    extra: list[str], message: str, capsys: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["run", GUARDS, "--headless", "--ticks", "2", *extra])
    err = capsys.readouterr().err
    assert code in (1, 2) and len(err.splitlines()) == 1, err
    assert message in err
    assert "Traceback" not in err


def test_a_damaged_snapshot_is_one_line(tmp_path: Path, capsys: Any) -> None:
    snaps = tmp_path / "snaps"
    main(
        ["run", GUARDS, "--headless", "--ticks", "2", "--save-every", "2", "--save-dir", str(snaps)]
    )
    capsys.readouterr()
    path = snaps / "tick-000002.btks"
    path.write_bytes(path.read_bytes()[:-300])
    assert main(["run", GUARDS, "--headless", "--resume", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"behaviortk run: error: {path}: damaged or truncated snapshot")
    assert len(err.splitlines()) == 1


def test_save_every_needs_headless(capsys: Any) -> None:
    assert main(["run", GUARDS, "--save-every", "3", "--save-dir", "d"]) == 2
    assert "--save-every needs --headless" in capsys.readouterr().err


def test_resume_in_the_viewer_opens_the_restored_run(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """Without --headless the viewer opens to restore the snapshot (on its loading thread:
    ``session.resume_simulation``, debug geometry on); its Session steps on from the saved
    tick. A file that is no snapshot stops before any window."""
    from behaviortk.commands import run
    from behaviortk.viewer.session import Session, resume_simulation

    snaps = tmp_path / "snaps"
    main(
        ["run", GUARDS, "--headless", "--ticks", "6", "--save-every", "6", "--save-dir", str(snaps)]
    )
    opened: dict[str, Any] = {}

    def opener(path: str, **options: Any) -> int:
        opened.update(options, path=path)
        return 0

    monkeypatch.setattr(run, "_viewer_opener", lambda: opener)
    snapshot = snaps / "tick-000006.btks"
    assert main(["run", GUARDS, "--resume", str(snapshot)]) == 0
    assert opened == {
        "path": GUARDS,
        "engine": "auto",
        "resume": str(snapshot),
        "history_seconds": 10.0,
    }
    sim = resume_simulation(opened["resume"], opened["engine"])
    assert (sim.engine.name, sim.tick, sim.debug.enabled) == ("py_trees", 6, True)
    session = Session(GUARDS, engine=opened["engine"], sim=sim)
    session.step_once()
    assert session.sim.tick == 7
    opened.clear()
    capsys.readouterr()
    assert main(["run", GUARDS, "--resume", GUARDS]) == 1
    assert "not a behaviortk snapshot" in capsys.readouterr().err and not opened
