"""The interactive window: arcade events -> Session methods; the simulation steps in on_fixed_update.

``run_viewer(path)`` is what ``behaviortk run`` and ``behaviortk demo`` call.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import arcade
import numpy as np

from behaviortk.viewer.hud import HudInfo
from behaviortk.viewer.overlays import BY_KEY, OVERLAYS
from behaviortk.viewer.painter import Overlay2D, Painter
from behaviortk.viewer.reload import FileWatcher
from behaviortk.viewer.session import Session

WINDOW_SIZE = (1280, 760)
CLICK_SLACK_PX = 6.0


class ViewerView(arcade.View):
    def __init__(self, session: Session, window: arcade.Window, watch: bool = True) -> None:
        super().__init__(window)
        self.session = session
        self.painter = Painter(window)
        self.show_help = False
        self.watcher = FileWatcher(session.path) if watch else None
        self._fps = 0.0
        self._last_draw = time.perf_counter()

    # ----------------------------------------------------------- updates
    def on_fixed_update(self, delta_time: float) -> None:
        self.session.advance(delta_time)

    def on_update(self, delta_time: float) -> None:
        if self.watcher is not None and self.watcher.poll():
            self.session.reload()

    def on_draw(self) -> None:
        now = time.perf_counter()
        frame = now - self._last_draw
        self._last_draw = now
        if frame > 0.0:
            self._fps = 0.9 * self._fps + 0.1 / frame if self._fps else 1.0 / frame
        s = self.session
        info = HudInfo(fps=self._fps, paused=s.paused, speed=s.speed)
        self.painter.draw(s.sim, s.opts, info, Overlay2D(errors=s.errors, show_help=self.show_help))

    def on_hide_view(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()

    # ------------------------------------------------------------- input
    def on_key_press(self, symbol: int, modifiers: int) -> None:
        k = arcade.key
        s = self.session
        if symbol == k.SPACE:
            s.toggle_pause()
        elif symbol in (k.PERIOD, k.NUM_DECIMAL):
            s.step_once()
        elif symbol in (k.PLUS, k.EQUAL, k.NUM_ADD):
            s.faster()
        elif symbol in (k.MINUS, k.NUM_SUBTRACT):
            s.slower()
        elif symbol == k.R:
            s.restart()
        elif symbol == k.TAB:
            s.cycle_selection()
        elif symbol == k.H:
            self.show_help = not self.show_help
        elif symbol == k.G:
            s.opts.color_by = "action" if s.opts.color_by == "group" else "group"
        elif symbol == k.A:
            every = {o.name for o in OVERLAYS}
            s.opts.overlays = set() if s.opts.overlays >= every else every
        elif symbol == k.ESCAPE:
            self.window.close()
        elif 0 < symbol < 128 and chr(symbol) in BY_KEY:
            s.toggle_overlay(BY_KEY[chr(symbol)].name)

    def _world_point(self, x: float, y: float) -> np.ndarray:
        return self.painter.viewport(self.session.sim.world).to_world(np.array([x, y], float))

    def on_mouse_press(self, x: int, y: int, button: int, modifiers: int) -> None:
        if button == arcade.MOUSE_BUTTON_LEFT:
            vp = self.painter.viewport(self.session.sim.world)
            self.session.press(self._world_point(x, y), CLICK_SLACK_PX / vp.scale)

    def on_mouse_drag(self, x: int, y: int, dx: int, dy: int, buttons: int, modifiers: int) -> None:
        self.session.drag(self._world_point(x, y))

    def on_mouse_motion(self, x: int, y: int, dx: int, dy: int) -> None:
        self.session.set_pointer(self._world_point(x, y))

    def on_mouse_release(self, x: int, y: int, button: int, modifiers: int) -> None:
        self.session.release()


def run_viewer(
    path: str | Path, engine: str = "py_trees", seed: int | None = None, overlays: Any = ()
) -> int:
    """Open the window on ``path`` and run until it is closed (raises DefinitionError first)."""
    session = Session(path, engine=engine, seed=seed)
    session.opts.overlays = set(overlays)
    window = arcade.Window(
        *WINDOW_SIZE,
        f"behaviortk: {Path(path).name}",
        fixed_rate=float(session.sim.dt),
        resizable=True,
    )
    view = ViewerView(session, window)
    window.show_view(view)
    try:
        arcade.run()
    finally:
        if view.watcher is not None:
            view.watcher.stop()
    return 0
