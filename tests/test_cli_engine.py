"""One default engine, ``auto``, for every command that runs a simulation, and every summary
says which engine ran: py_trees below ``AUTO_BATCH_AGENTS`` agents, batch from there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from behaviortk.cli import build_parser, main
from behaviortk.engines.names import AUTO_BATCH_AGENTS

ROOT = Path(__file__).resolve().parents[1]
SMALL = str(ROOT / "definitions" / "evade_or_flock.json")  # 63 agents
CROWD = str(ROOT / "behaviortk" / "templates" / "crowd.json")  # 2,000 agents
ENGINE_COMMANDS = ("run", "render", "bench", "demo")


def test_every_engine_option_defaults_to_auto() -> None:
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    with_engine = {
        name
        for name, command in commands.items()
        if any("--engine" in a.option_strings for a in command._actions)
    }
    assert set(ENGINE_COMMANDS) <= with_engine
    for name in with_engine:
        [option] = [a for a in commands[name]._actions if "--engine" in a.option_strings]
        assert option.default == "auto", name
        assert f"batch from {AUTO_BATCH_AGENTS:,} agents" in option.help, name


def argv(command: str, file: str, tmp_path: Path) -> list[str]:
    return {
        "run": ["run", file, "--headless", "--ticks", "1"],
        "render": ["render", file, "--ticks", "1", "--out", str(tmp_path / "f.png")],
        "bench": ["bench", file, "--ticks", "1", "--warmup", "0"],
        "demo": [
            "demo",
            "--headless",
            "--ticks",
            "1",
            "--every",
            "1",
            "--out",
            str(tmp_path / "d.gif"),
        ],
    }[command]


@pytest.mark.parametrize("command", ENGINE_COMMANDS)
@pytest.mark.parametrize(
    ("file", "note"),
    [
        (SMALL, "py_trees (auto: 63 agents, batch from 2,000)"),
        (CROWD, "batch (auto: 2,000 agents, batch from 2,000)"),
    ],
    ids=["small", "crowd"],
)
def test_summary_says_which_engine_ran(
    command: str, file: str, note: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if command == "demo" and file == CROWD:
        pytest.skip("demo always runs evade_or_flock")
    assert main(argv(command, file, tmp_path)) == 0
    out = capsys.readouterr().out
    expected = {
        "run": f"  engine     {note}\n",
        "render": f": 1 ticks, engine {note}\n",
        "bench": f" agents, engine {note}, 1 ticks after 0 warm-up",
        "demo": f": 1 ticks, engine {note}\n",
    }[command]
    assert expected in out


@pytest.mark.parametrize("command", ["run", "render", "bench"])
def test_a_chosen_engine_is_named_plainly(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv(command, SMALL, tmp_path), "--engine", "batch"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"engine +batch[,\n]", out) and "auto" not in out
