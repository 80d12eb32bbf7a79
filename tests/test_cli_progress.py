"""Progress bars: drawn on a terminal for long work (run, render, bench), never into a pipe.

A terminal is faked with a StringIO that says it is one (rich then draws as it
would on a TTY); ``progress.DELAY`` is set to 0 so a short run counts as long.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from behaviortk.cli import main
from behaviortk.commands import progress as progress_module
from behaviortk.commands.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = str(ROOT / "definitions" / "evade_or_flock.json")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_on_a_terminal_counts_to_the_total() -> None:
    term = FakeTerminal()
    with Progress(40, "counting", unit="ticks", stream=term, delay=0) as bar:
        for done in range(1, 41):
            bar.update(done)
        assert bar.shown
    text = term.getvalue()
    assert "counting" in text and "40/40" in text and "100%" in text
    assert not bar.shown  # closed: erased


def test_nothing_into_a_pipe_or_before_the_delay() -> None:
    pipe = io.StringIO()
    with Progress(10, "quiet", stream=pipe, delay=0) as bar:
        for done in range(1, 11):
            bar.update(done)
        assert not bar.shown
    assert pipe.getvalue() == ""
    term = FakeTerminal()
    with Progress(10, "quick", stream=term, delay=60) as bar:
        bar.advance(10)
        assert not bar.shown and bar.done == 10
    assert term.getvalue() == ""


def test_dumb_terminal_gets_no_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "dumb")
    term = FakeTerminal()
    with Progress(5, "dumb", stream=term, delay=0) as bar:
        bar.update(5)
    assert term.getvalue() == ""


def use_terminal(monkeypatch: pytest.MonkeyPatch) -> FakeTerminal:
    """stderr is a terminal and any work is long enough for a bar. Called in the test body:
    pytest's capture (capsys) replaces sys.stderr again once fixtures are set up."""
    term = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    monkeypatch.delenv("TERM", raising=False)
    return term


def test_headless_run_shows_a_bar_then_the_summary(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = use_terminal(monkeypatch)
    assert main(["run", REFERENCE, "--headless", "--ticks", "12"]) == 0
    assert "evade_or_flock (py_trees)" in terminal.getvalue()
    assert "12/12" in terminal.getvalue()
    out = capsys.readouterr().out
    assert out.startswith("evade_or_flock: 12 ticks headless\n")


def test_render_shows_a_bar(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = use_terminal(monkeypatch)
    png = tmp_path / "f.png"
    assert main(["render", REFERENCE, "--ticks", "4", "--out", str(png)]) == 0
    assert "rendering f.png" in terminal.getvalue() and "4/4" in terminal.getvalue()
    assert capsys.readouterr().out.startswith(f"wrote {png}: 4 ticks, engine py_trees")


def test_bench_counts_warm_up_and_timed_ticks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = use_terminal(monkeypatch)
    assert main(["bench", REFERENCE, "--ticks", "3", "--warmup", "2"]) == 0
    assert "bench evade_or_flock (py_trees)" in terminal.getvalue()
    assert "5/5" in terminal.getvalue()
    assert "median" in capsys.readouterr().out
