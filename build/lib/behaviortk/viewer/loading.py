"""The window while its Simulation is built: kernels compile on another thread, the window
keeps drawing "compiling kernels… N of M" instead of freezing.

On a cold cache a crowd's kernels take tens of seconds to compile
(``sim/choice.py``); built on the window's thread, that is a frozen, blank
window. :class:`Loading` builds the Simulation on a thread of its own and is
the watch of its compile (``compile_notice.watching``): the count it shows is the
count compiled. :class:`LoadingView` draws it until the Simulation is ready,
then hands the window to the viewer. numba's compiler releases the GIL to
Python threads every few milliseconds, so the window keeps redrawing (slower
than usual) while it works.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import arcade

from behaviortk.sim import compile_notice
from behaviortk.viewer import palette

BAR_WIDTH, BAR_HEIGHT = 420, 10


class Loading:
    """``build()`` run on a thread, and how far its compile has come (arcade-free)."""

    def __init__(self, name: str, build: Callable[[], Any]) -> None:
        self.name = name
        self.done = 0
        self.total = 0
        """Kernels compiled so far, of ``total`` (0: not compiling, or not for a second yet)."""
        self.start = time.perf_counter()
        self.result: Any = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(build,), name="behaviortk-load", daemon=True
        )
        self._thread.start()

    def _run(self, build: Callable[[], Any]) -> None:
        try:
            with compile_notice.watching(self._watch):
                self.result = build()
        except BaseException as exc:  # shown by the window's thread, which re-raises it
            self.error = exc

    def _watch(self, total: int, description: str) -> Loading:
        self.total = total
        return self

    def update(self, done: int) -> None:
        self.done = done

    def close(self) -> None:
        """The compile is over (the Simulation may still be finishing its build)."""

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the build; True once it is over."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def finished(self) -> bool:
        return not self._thread.is_alive()

    @property
    def text(self) -> str:
        if self.total:
            return f"compiling kernels… {self.done} of {self.total}"
        return f"loading {self.name}…"

    @property
    def note(self) -> str:
        """What the compile is for, and how long it has taken (a window that redraws counts)."""
        seconds = time.perf_counter() - self.start
        if self.total:
            return f"{self.name}: first run only, cached after ({seconds:.0f} s)"
        return f"{seconds:.0f} s"


class LoadingView(arcade.View):
    """The window while :class:`Loading` works; ``ready(result)`` once it is done."""

    def __init__(
        self, window: arcade.Window, loading: Loading, ready: Callable[[Any], None]
    ) -> None:
        super().__init__(window)
        self.loading = loading
        self.ready = ready
        self._title = arcade.Text("", 0, 0, palette.TEXT, 18, anchor_x="center")
        self._note = arcade.Text("", 0, 0, palette.DIM_TEXT, 12, anchor_x="center")

    def on_key_press(self, symbol: int, modifiers: int) -> None:
        if symbol == arcade.key.ESCAPE:  # as in the viewer (keys.shared_key)
            self.window.close()

    def on_update(self, delta_time: float) -> None:
        if not self.loading.finished:
            return
        if self.loading.error is not None:
            arcade.exit()  # run_viewer re-raises it once the window is closed
            return
        self.ready(self.loading.result)

    def on_draw(self) -> None:
        self.clear(palette.BACKGROUND)
        cx, cy = self.window.width / 2, self.window.height / 2
        self._title.text, self._title.position = self.loading.text, (cx, cy + 24)
        self._note.text, self._note.position = self.loading.note, (cx, cy - 36)
        self._title.draw()
        self._note.draw()
        total = self.loading.total
        if total:
            left, bottom = cx - BAR_WIDTH / 2, cy - 8
            arcade.draw_lbwh_rectangle_filled(
                left, bottom, BAR_WIDTH, BAR_HEIGHT, palette.SLIDER_TRACK
            )
            filled = BAR_WIDTH * min(self.loading.done, total) / total
            if filled > 0:
                arcade.draw_lbwh_rectangle_filled(
                    left, bottom, filled, BAR_HEIGHT, palette.SLIDER_FILL
                )
