"""The replay controller: which recorded tick is shown, playing or paused, at what speed.

Independent of arcade, like ``session.Session``: the window maps keys and
mouse to these methods and draws ``sim`` (a ``RecordedView`` of the shown
tick). Playing advances simulated time by ``real seconds * speed`` and shows
the last recorded tick at or before it, so a trace recorded ``--every 4`` plays
at the run's own pace. The selection is an agent id, kept across ticks.
A tick that cannot be decoded (a damaged row group) becomes a banner line and
the last good tick stays on screen.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.record.reader import Recording, TraceError
from behaviortk.viewer.recorded import RecordedView, RecordedWorld
from behaviortk.viewer.scene import ViewOptions
from behaviortk.viewer.watching import Watching

MIN_SPEED, MAX_SPEED = 1.0 / 16.0, 64.0


class ReplaySession(Watching):
    """A recording and the tick on screen."""

    def __init__(self, recording: Recording, tick: int | None = None) -> None:
        if recording.ticks.size == 0:
            raise TraceError(f"{recording.path}: no tick was recorded; nothing to replay")
        self.rec = recording
        self.fixed = RecordedWorld(recording)
        self.opts = ViewOptions()
        self.playing = False
        self.speed = 1.0
        self.errors: list[str] = []  # (a cut last line is said once, on stderr)
        self.selected_id: int | None = None
        self._times = (recording.ticks + 1) * recording.dt  # simulated time of each state
        self._view: RecordedView | None = None
        self.index = 0
        self._clock = 0.0
        self.seek_index(recording.index_of(tick) if tick is not None else 0)

    # ------------------------------------------------------------- position
    @property
    def count(self) -> int:
        return int(self.rec.ticks.size)

    @property
    def tick(self) -> int:
        return int(self.rec.ticks[self.index])

    @property
    def sim(self) -> RecordedView:
        assert self._view is not None
        return self._view

    def seek_index(self, index: int) -> None:
        """Show recorded tick number ``index`` (clamped); a decode error keeps the last view."""
        index = min(max(int(index), 0), self.count - 1)
        try:
            state = self.rec.state(int(self.rec.ticks[index]))
            view = RecordedView(self.rec, self.fixed, state)
        except TraceError as exc:
            self.errors = [str(exc)]
            self.playing = False
            if self._view is None:
                raise
            return
        self.index = index
        self._view = view
        self.errors = []
        self._clock = float(self._times[index])
        self._follow_selection()

    def seek(self, tick: int) -> None:
        """Show the last recorded tick at or before ``tick`` (the first one if none is)."""
        i = int(np.searchsorted(self.rec.ticks, tick, side="right")) - 1
        self.seek_index(max(i, 0))

    def step(self, delta: int) -> None:
        """Pause and move ``delta`` recorded ticks (the arrow keys)."""
        self.playing = False
        self.seek_index(self.index + delta)

    def first(self) -> None:
        self.step(-self.count)

    def last(self) -> None:
        self.step(self.count)

    # -------------------------------------------------------------- playing
    def toggle_pause(self) -> None:
        if not self.playing and self.index == self.count - 1:
            self.seek_index(0)  # play again from the start
        self.playing = not self.playing

    def faster(self) -> None:
        self.speed = min(self.speed * 2.0, MAX_SPEED)

    def slower(self) -> None:
        self.speed = max(self.speed / 2.0, MIN_SPEED)

    def advance(self, real_dt: float) -> bool:
        """Move the clock by ``real_dt * speed`` while playing; True when the tick changed."""
        if not self.playing:
            return False
        self._clock += real_dt * self.speed
        i = int(np.searchsorted(self._times, self._clock + 1e-9, side="right")) - 1
        i = min(max(i, 0), self.count - 1)
        if i == self.count - 1:
            self.playing = False  # stop on the last recorded tick
        if i == self.index:
            return False
        clock = self._clock
        self.seek_index(i)
        self._clock = clock  # keep the fraction of a tick already played
        return True

    # ------------------------------------------------------------ selection
    def _follow_selection(self) -> None:
        """``opts.selected`` is the row of ``selected_id`` in the shown tick (None if absent)."""
        if self.selected_id is None:
            self.opts.selected = None
            return
        rows = np.flatnonzero(self.sim.ids == self.selected_id)
        self.opts.selected = int(rows[0]) if rows.size else None

    def select_row(self, row: int | None) -> None:
        self.selected_id = None if row is None else int(self.sim.ids[row])
        self._follow_selection()

    def select_id(self, agent: int | None) -> None:
        self.selected_id = agent
        self._follow_selection()

    def describe(self) -> dict[str, Any]:
        """Facts for the timeline label."""
        return {
            "tick": self.tick,
            "index": self.index,
            "count": self.count,
            "time": float(self._times[self.index]),
            "playing": self.playing,
            "speed": self.speed,
        }
