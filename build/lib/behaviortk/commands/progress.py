"""A progress bar for long work, on a terminal only: the one helper every command uses.

``run --headless``, ``render``, ``bench`` (and ``check``, ``sweep``) count their
work with it::

    with Progress(total, "running", unit="ticks") as progress:
        for done in range(1, total + 1):
            step()
            progress.update(done)  # or progress.advance()

Nothing is drawn, and rich is not even imported, unless stderr is a terminal
(``style.is_terminal``; not ``TERM=dumb``) and the work has already taken
``delay`` seconds: short runs and CI logs stay clean. Then a rich bar on
stderr shows the count, percentage, rate (``ticks/s``), elapsed and remaining
time; it is transient (erased when closed), so the summary that follows
stands alone. Updates reach rich at most ``PUSH_EVERY`` seconds apart, so a
fast loop pays a clock read per update.

Work counted from another thread (a sweep collecting results) may call
``update``/``advance`` from there: rich's task updates take a lock.

Compiling kernels counts with it too (:func:`compile_bar`): ``sim/choice.py`` makes
the bar once compiling has taken a second, right under its notice line.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import IO, Any

from behaviortk.commands.style import is_terminal

DELAY = 1.0
"""Seconds of work before the bar appears (quick commands never show one)."""
PUSH_EVERY = 0.05
"""Seconds between updates passed to rich (it redraws ten times a second)."""


def wanted(stream: IO[Any]) -> bool:
    """Draw progress on ``stream``: a terminal that can redraw a line."""
    return is_terminal(stream) and os.environ.get("TERM") != "dumb"


class Progress:
    """Counts ``total`` units of work; a bar on a terminal once ``delay`` has passed.

    ``total`` None: unknown (the bar pulses); ``enabled`` None: ``wanted(stream)``;
    ``delay`` None: ``DELAY``."""

    def __init__(
        self,
        total: int | None,
        description: str = "working",
        *,
        unit: str = "ticks",
        stream: IO[str] | None = None,
        enabled: bool | None = None,
        delay: float | None = None,
    ) -> None:
        self.total = total
        self.description = description
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        self.enabled = wanted(self.stream) if enabled is None else enabled
        self.delay = DELAY if delay is None else delay
        self.done = 0
        self.start = time.perf_counter()
        self._next_push = self.start + self.delay
        self._bar: Any = None
        self._task: Any = None

    # ------------------------------------------------------------------ counting
    def update(self, done: int) -> None:
        """``done`` units are complete."""
        self.done = done
        if not self.enabled:
            return
        now = time.perf_counter()
        if now < self._next_push:
            return
        self._next_push = now + PUSH_EVERY
        if self._bar is None:
            self._open()
        self._bar.update(self._task, completed=done)

    def advance(self, step: int = 1) -> None:
        """``step`` more units are complete."""
        self.update(self.done + step)

    @property
    def shown(self) -> bool:
        """The bar has been drawn (the work took longer than ``delay``)."""
        return self._bar is not None

    def close(self) -> None:
        """Erase the bar (if it was drawn); later updates draw nothing."""
        self.enabled = False
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
            self._bar.stop()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ drawing
    def _open(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._bar = _rich_progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            _rate_column(self.unit),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(file=self.stream),
        )
        self._task = self._bar.add_task(self.description, total=self.total, completed=self.done)
        self._bar.start()


def compile_bar(total: int, description: str) -> Progress:
    """The bar of a long compile of ``total`` kernels (``sim/choice.py``'s watch: made when
    compiling has already taken a second, so it shows at once on a terminal)."""
    return Progress(total, description, unit="kernels", delay=0.0)


def _rich_progress(*columns: Any, console: Any) -> Any:
    from rich.progress import Progress as RichProgress

    return RichProgress(
        *columns,
        console=console,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
    )


def _rate_column(unit: str) -> Any:
    """A rich column: ``1,234 ticks/s`` (blank until rich has a speed estimate)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text(
                "" if speed is None else f"{speed:,.0f} {unit}/s", style="progress.data.speed"
            )

    return Rate()
