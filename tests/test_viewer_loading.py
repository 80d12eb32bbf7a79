"""The viewer's window while its Simulation is built: the build on a thread, its compile's
count on screen, the hand-off to the viewer (``viewer/loading.py``).

The compile is faked: steps that wait until the notice is out, so the count is
read while compiling is under way, without compiling anything.
"""

from __future__ import annotations

import threading
from typing import Any

import arcade
import numpy as np
import pytest

from behaviortk.sim import choice, compile_notice
from behaviortk.viewer import palette
from behaviortk.viewer.loading import BAR_WIDTH, Loading, LoadingView
from tests.viewer_support import count_color, window


class Gate:
    """Compile steps that hold until let go; the first one waits for the notice too."""

    def __init__(self) -> None:
        self.go = threading.Event()

    def steps(self, loading: Loading) -> list[choice.Step]:
        def first() -> None:
            while not loading.total:  # the watch is made with the notice
                threading.Event().wait(0.01)
            assert self.go.wait(10)

        return [(None, first), (None, lambda: None)]


def loading_of(gate: Gate, result: Any = "the simulation") -> Loading:
    holder: list[Loading] = []

    def build() -> Any:
        while not holder:
            threading.Event().wait(0.01)
        choice.run(gate.steps(holder[0]), "evacuation", 31)
        return result

    holder.append(Loading("evacuation", build))
    return holder[0]


def test_the_count_of_a_compile_under_way_then_the_result(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(compile_notice, "NOTICE_AFTER", 0.01)
    gate = Gate()
    loading = loading_of(gate)
    while not loading.total:
        threading.Event().wait(0.01)
    assert loading.text == "compiling kernels… 0 of 2"
    assert loading.note.startswith("evacuation: first run only, cached after (")
    assert not loading.finished
    gate.go.set()
    assert loading.wait(10)
    assert loading.result == "the simulation" and loading.error is None
    assert loading.text == "compiling kernels… 2 of 2"
    assert "compiling kernels for evacuation: 2 of 31" in capsys.readouterr().err


def test_a_quick_build_shows_loading_and_keeps_its_error() -> None:
    def build() -> Any:
        raise ValueError("no such group")

    loading = Loading("wander", build)
    assert loading.wait(10)
    assert loading.text == "loading wander…" and loading.total == 0
    assert isinstance(loading.error, ValueError)


def test_the_window_draws_the_bar_then_hands_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """Half done: half the bar in the fill colour; once built, ``ready`` gets the result."""
    monkeypatch.setattr(compile_notice, "NOTICE_AFTER", 0.01)
    gate = Gate()
    loading = loading_of(gate, result="built")
    while not loading.total:
        threading.Event().wait(0.01)
    loading.done = 1  # as the watch hears it, halfway
    handed: list[Any] = []
    win = window()
    view = LoadingView(win, loading, handed.append)
    win.show_view(view)
    view.on_update(1 / 60)
    assert handed == []  # still compiling
    view.on_draw()
    img = np.asarray(arcade.get_image(0, 0, win.width, win.height).convert("RGB"))
    filled = count_color(img, palette.SLIDER_FILL[:3])
    assert filled == pytest.approx(BAR_WIDTH / 2 * 10, rel=0.1)  # 10 px high
    gate.go.set()
    assert loading.wait(10)
    view.on_update(1 / 60)
    assert handed == ["built"]
