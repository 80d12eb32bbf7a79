"""The replay window as a person uses it: a real X server (Xvfb), xdotool, screenshots.

``behaviortk replay TRACE`` runs as a subprocess on a private Xvfb display. xdotool
drags the timeline's handle, clicks an agent, presses keys; each screenshot
(ImageMagick ``import``) is checked for the expected pixels: the handle drawn at
the tick the drag ended on, the selection ring around the clicked agent, the
handle moving while playing. Skipped where Xvfb, xdotool or import is missing.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import behaviortk
from behaviortk.record.parquet import ParquetTraceWriter
from behaviortk.record.reader import open_recording
from behaviortk.sim.simulation import Simulation
from behaviortk.viewer import palette
from behaviortk.viewer.painter import MARGIN, PANEL_WIDTH
from behaviortk.viewer.replay_app import WINDOW_SIZE, replay_viewport
from behaviortk.viewer.timeline import HANDLE, Timeline
from tests.xvfb_support import window_env

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("Xvfb", "xdotool", "import")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        any(shutil.which(t) is None for t in TOOLS), reason="needs Xvfb, xdotool, import"
    ),
]
W, H = WINDOW_SIZE


@pytest.fixture
def display() -> Iterator[str]:
    """A private Xvfb display; ``-displayfd`` picks a free number and prints it."""
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", "1", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        number = proc.stdout.readline().strip()
        assert number.isdigit(), "Xvfb did not start"
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def x(display: str, *args: str) -> str:
    done = subprocess.run(
        ["xdotool", *args],
        env={**os.environ, "DISPLAY": display},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def screenshot(display: str, window: str) -> np.ndarray:
    """The window's pixels ``(H, W, 3)``, row 0 at the top."""
    done = subprocess.run(
        ["import", "-window", window, "png:-"],
        env={**os.environ, "DISPLAY": display},
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return np.asarray(Image.open(io.BytesIO(done.stdout)).convert("RGB"))


def wait_for(display: str, window: str, test: Callable[[np.ndarray], bool]) -> np.ndarray:
    """Screenshots until ``test`` holds (the window draws at its own pace), at most 20 s."""
    deadline = time.monotonic() + 20.0
    while True:
        img = screenshot(display, window)
        if test(img) or time.monotonic() > deadline:
            return img
        time.sleep(0.2)


def px(img: np.ndarray, x_up: float, y_up: float) -> tuple[int, ...]:
    """The pixel at window coordinates with y up (arcade's), from a top-down screenshot."""
    return tuple(int(v) for v in img[H - 1 - round(y_up), round(x_up)])


def handle_at(line: Timeline, index: int) -> Callable[[np.ndarray], bool]:
    return lambda img: px(img, line.x_of(index), line.y) == HANDLE[:3]


def test_scrub_click_and_play_in_a_real_window(tmp_path: Path, display: str) -> None:
    trace = tmp_path / "run.parquet"
    sim = Simulation(behaviortk.load(ROOT / "definitions" / "evade_or_flock.json"))
    with trace.open("wb") as fh:
        writer = ParquetTraceWriter(fh, sim)
        sim.run(40, writer.on_tick)
        writer.finish(sim)
    rec = open_recording(trace)
    line = Timeline.of_window(W, PANEL_WIDTH, MARGIN, rec.ticks)
    app = subprocess.Popen(
        [sys.executable, "-m", "behaviortk", "replay", str(trace)],
        cwd=ROOT,
        env=window_env(display),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        win = x(display, "search", "--sync", "--name", "behaviortk replay: run.parquet")
        win = win.splitlines()[0]
        img = wait_for(display, win, handle_at(line, 0))
        assert px(img, line.x_of(0), line.y) == HANDLE[:3]  # opens on the first tick

        # drag the handle from tick 0 to tick 25 (screen y is down: H - y)
        y = str(H - round(line.y))
        x(display, "mousemove", "--window", win, str(round(line.x_of(0))), y)
        x(display, "mousedown", "1")
        x(display, "mousemove", "--window", win, str(round(line.x_of(12))), y)
        x(display, "mousemove", "--window", win, str(round(line.x_of(25))), y)
        x(display, "mouseup", "1")
        img = wait_for(display, win, handle_at(line, 25))
        assert px(img, line.x_of(25), line.y) == HANDLE[:3]
        assert px(img, line.x_of(0), line.y - 8) != HANDLE[:3]  # the handle left tick 0

        # click prey 10 where tick 25 recorded it: the selection ring appears around it
        state = rec.state(25)
        vp = replay_viewport(W, H, rec.scenario.definition.world)
        ax, ay = vp.to_screen(state.pos[10])
        ring = max(5 * vp.scale * 1.6, 8.0)  # prey radius 5 (scene.agent_shapes)

        def ringed(img: np.ndarray) -> bool:
            return any(
                px(img, ax + dx, ay + dy) == palette.SELECTED[:3]
                for dx, dy in ((ring, 0), (-ring, 0), (0, ring), (0, -ring))
            )

        assert not ringed(img)
        x(display, "mousemove", "--window", win, str(round(ax)), str(H - round(ay)), "click", "1")
        img = wait_for(display, win, ringed)
        assert ringed(img)

        # left arrow: one recorded tick back; space: play to the end (40 ticks = 0.67 s)
        x(display, "key", "--window", win, "Left")
        img = wait_for(display, win, handle_at(line, 24))
        assert px(img, line.x_of(24), line.y) == HANDLE[:3]
        x(display, "key", "--window", win, "space")
        img = wait_for(display, win, handle_at(line, 39))
        assert px(img, line.x_of(39), line.y) == HANDLE[:3]

        x(display, "windowfocus", "--sync", win)  # to the focused window, as a person types
        x(display, "key", "Escape")
        assert app.wait(timeout=20) == 0
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    assert app.stderr is not None
    assert "Traceback" not in app.stderr.read()
