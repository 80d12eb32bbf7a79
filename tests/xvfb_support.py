"""Driving the real viewer window as a person would: Xvfb, xdotool, and ImageMagick screenshots.

``xvfb_missing()`` names the tool that is not installed (tests skip then); ``XServer``
starts ``Xvfb`` on a free display; ``ViewerProcess`` runs ``behaviortk run FILE`` (or
another window command: ``attach HOST:PORT``) against it from this checkout, finds its window, and offers ``click``, ``drag``,
``key``, ``wheel`` in the viewer's own pixel coordinates (y up, as arcade
draws) and ``screenshot()``. ``wait_for`` polls screenshots until a condition
holds: it bounds the wait so a broken viewer fails instead of hanging, it never
asserts on time. Every process started here is stopped by its own id.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("Xvfb", "xdotool", "import")
SCREEN = (1400, 900)
PATIENCE = 60.0  # seconds a condition may take on a loaded 2-core machine before failing


def window_env(display: str) -> dict[str, str]:
    """This process's environment for a windowed child on ``display``: not headless, and
    without the ``LD_LIBRARY_PATH`` entry arcade adds when imported headless (its bundled
    EGL libraries: a child loading them draws nothing in a real X window)."""
    env = {k: v for k, v in os.environ.items() if k != "ARCADE_HEADLESS"}
    paths = [p for p in env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]
    kept = [p for p in paths if not Path(p).as_posix().endswith("arcade/lib")]
    if kept:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(kept)
    else:
        env.pop("LD_LIBRARY_PATH", None)
    env["DISPLAY"] = display
    return env


def xvfb_missing() -> str | None:
    for tool in TOOLS:
        if shutil.which(tool) is None:
            return tool
    return None


def free_display() -> int:
    for n in range(90, 200):
        if not Path(f"/tmp/.X{n}-lock").exists() and not Path(f"/tmp/.X11-unix/X{n}").exists():
            return n
    raise RuntimeError("no free X display number in 90..199")


class XServer:
    def __init__(self) -> None:
        self.number = free_display()
        self.display = f":{self.number}"
        w, h = SCREEN
        self.log = Path(f"/tmp/behaviortk-xvfb-{self.number}.log")
        self.proc = subprocess.Popen(
            ["Xvfb", self.display, "-screen", "0", f"{w}x{h}x24", "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("w"),
        )
        env = {**os.environ, "DISPLAY": self.display}
        deadline = time.monotonic() + PATIENCE
        while True:  # until a client can connect and query the screen
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Xvfb {self.display} did not start: {self.log.read_text()}")
            probe = subprocess.run(
                ["xdotool", "getdisplaygeometry"], env=env, capture_output=True, text=True
            )
            if probe.returncode == 0 and probe.stdout.strip() == f"{w} {h}":
                break
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class ViewerProcess:
    def __init__(
        self,
        server: XServer,
        definition: Path | str,
        *args: str,
        command: str = "run",
        log: Path | None = None,
        script: Path | None = None,
    ) -> None:
        """``behaviortk COMMAND DEFINITION ARGS`` (or ``python SCRIPT ARGS``, a game, with
        ``definition`` naming the log); its output goes to ``log`` (default: the
        definition's path with ``.log``)."""
        env = window_env(server.display)
        env["PYTHONPATH"] = str(ROOT)
        self.env = env
        self.log = log if log is not None else Path(definition).with_suffix(".log")
        argv = [sys.executable, "-m", "behaviortk", command, str(definition), *args]
        if script is not None:
            argv = [sys.executable, str(script), *args]
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
        )
        self.window = self._find_window()
        geometry = self.xdotool("getwindowgeometry", "--shell", self.window)
        fields = dict(line.split("=", 1) for line in geometry.split())
        self.x, self.y = int(fields["X"]), int(fields["Y"])
        self.width, self.height = int(fields["WIDTH"]), int(fields["HEIGHT"])

    def xdotool(self, *args: str) -> str:
        out = subprocess.run(
            ["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=PATIENCE
        )
        return out.stdout.strip()

    def _find_window(self) -> str:
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the viewer exited: {self.log.read_text()[-2000:]}")
            found = self.xdotool("search", "--name", "behaviortk")
            if found:
                return found.split()[0]
            time.sleep(0.2)
        raise RuntimeError(f"no viewer window: {self.log.read_text()[-2000:]}")

    def _root(self, x: float, y: float) -> tuple[str, str]:
        """Viewer pixels (y up) -> X screen pixels (y down)."""
        return str(round(self.x + x)), str(round(self.y + self.height - y))

    def focus(self) -> None:
        self.xdotool("windowfocus", "--sync", self.window)

    def click(self, x: float, y: float, button: int = 1) -> None:
        self.xdotool("mousemove", *self._root(x, y), "click", str(button))

    def drag(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.xdotool("mousemove", *self._root(x0, y0), "mousedown", "1")
        for t in np.linspace(0.0, 1.0, 6)[1:]:
            self.xdotool("mousemove", *self._root(x0 + t * (x1 - x0), y0 + t * (y1 - y0)))
        self.xdotool("mouseup", "1")

    def wheel(self, x: float, y: float, clicks: int) -> None:
        button = "4" if clicks > 0 else "5"
        self.xdotool("mousemove", *self._root(x, y), "click", "--repeat", str(abs(clicks)), button)

    def key(self, *names: str) -> None:
        """Type ``names`` into the focused window, as a person does (a ``--window`` event is
        a sent one, which X servers may refuse or windows ignore)."""
        self.focus()
        self.xdotool("key", *names)

    def screenshot(self) -> np.ndarray:
        """The viewer's pixels ``(H, W, 3)``, row 0 at the top (as the window shows them)."""
        from PIL import Image

        png = subprocess.run(
            ["import", "-window", "root", "png:-"],
            env=self.env,
            capture_output=True,
            timeout=PATIENCE,
        ).stdout
        img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
        return img[self.y : self.y + self.height, self.x : self.x + self.width]

    def wait_for(self, condition: Callable[[np.ndarray], bool], what: str) -> np.ndarray:
        """Screenshots until ``condition(img)`` holds; RuntimeError naming ``what`` if it never does."""
        deadline = time.monotonic() + PATIENCE
        while True:
            img = self.screenshot()
            if condition(img):
                return img
            if self.proc.poll() is not None:
                raise RuntimeError(f"the viewer exited: {self.log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"never saw: {what}")
            time.sleep(0.3)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
