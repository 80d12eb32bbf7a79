"""The attached viewer's controller: a running game's last frame, the selection, the breakpoints.

Independent of arcade, like ``session.Session`` (a live run) and ``replay.ReplaySession``
(a trace): the window (``attach_app.py``) maps keys and mouse to these methods and draws
``sim``, the ``RecordedView`` of the game's last frame (``viewer/remote.py``), with the
same painter and panels. It runs nothing: the game steps. Space, ``.`` and breakpoints
go to the game, which holds inside ``sim.step()`` (``sim/serve.py``) while the viewer
pauses it or one of its breakpoints hit. Selecting an agent tells the game whose why,
blackboard and leaf forces to send. ``b`` moves a node's breakpoint through the
statuses the live viewer's does (``session.next_break_status``), set in the game with
``sim.break_on``'s arguments; the marks drawn are the game's own list. When the game
goes (it stopped serving, or fell silent) ``errors`` says so and the last frame stays.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from behaviortk.viewer.recorded import RecordedView
from behaviortk.viewer.remote import Remote, RemoteHit
from behaviortk.viewer.scene import ViewOptions
from behaviortk.viewer.session import STATUS_CODES, next_break_status
from behaviortk.viewer.trails import Trails
from behaviortk.viewer.watching import Watching

ERROR_S = 6.0
"""Seconds a game's refusal (a breakpoint it could not set) stays in the banner."""


class AttachSession(Watching):
    """A connection to a served game, as the window shows and drives it."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self.opts = ViewOptions()
        self.trails = Trails()
        self.speed = 1.0  # the game keeps its own pace: + and - change nothing
        self.selected_id: int | None = None
        self.hit: RemoteHit | None = None  # the hit the game is held at
        self._view = RecordedView(remote.recording, remote.fixed, remote.empty_state(), {})
        self._shown: Any = None  # the TickState ``_view`` shows
        self._errors_seen = 0
        self._error_until = 0.0
        self.poll()

    # ------------------------------------------------------------- frames
    @property
    def sim(self) -> RecordedView:
        return self._view

    def poll(self) -> bool:
        """Take what the game sent; True when the shown state changed."""
        new = self.remote.frames()
        if len(self.remote.errors) > self._errors_seen:
            self._errors_seen = len(self.remote.errors)
            self._error_until = time.monotonic() + ERROR_S
        latest = self.remote.latest
        if latest is None or latest is self._shown:
            return False
        self._shown = latest
        self._view = self.remote.latest_view() or self._view
        if new:
            self.trails.record(self._view)
        hit = self.remote.hit if self.paused else None
        if hit is not None and hit != self.hit and hit.agent is not None:
            self.select_id(hit.agent)  # where it hit, as the live viewer does
        self.hit = hit
        self._follow_selection()
        return True

    @property
    def paused(self) -> bool:
        """Whether the game is held (its last frame or pong said so; not once it has gone)."""
        return bool(self.remote.last.get("paused")) and not self.remote.gone

    @property
    def break_note(self) -> str:
        """The status line: why the game is held."""
        if not self.paused:
            return ""
        return self.hit.reason if self.hit is not None else "paused by a viewer"

    @property
    def source(self) -> str:
        """The HUD's words: the game's state, where it is, the frames it dropped."""
        dropped = int(self.remote.last.get("dropped") or 0)
        if self.remote.gone:
            return f"GONE   was attached to {self.remote.where}, {dropped} frames dropped"
        state = "PAUSED" if self.paused else "running"
        return f"{state}   attached to {self.remote.where}, {dropped} frames dropped"

    @property
    def errors(self) -> list[str]:
        out = []
        if self.remote.gone:
            out.append(f"the game at {self.remote.where} has gone; its last frame stays")
        if self.remote.errors and time.monotonic() < self._error_until:
            out.append(f"the game refused: {self.remote.errors[-1]}")
        return out

    # ------------------------------------------------------------- the game
    def toggle_pause(self) -> None:
        if self.paused:
            self.remote.resume()
        else:
            self.remote.pause()

    def step_once(self) -> None:
        """One step of the game, then held (the '.' key)."""
        self.remote.step()

    def faster(self) -> None:
        """The game keeps its own pace."""

    def slower(self) -> None:
        """The game keeps its own pace."""

    # ------------------------------------------------------------ breakpoints
    def _break_on(self, group: str, path: str) -> tuple[int, str] | None:
        """The game's number and status of this viewer's breakpoint on ``path`` of ``group``."""
        for number, point in self.remote.breaks.items():
            if point.get("group") == group and point.get("node") == path:
                return number, str(point.get("status"))
        return None

    def cycle_break(self, group: str, node: int) -> str:
        """Set, change or remove the breakpoint on node ``node`` of ``group``'s tree in the
        game (as ``Session.cycle_break`` does locally); returns the status asked for."""
        flat = self.sim.trees[group].nodes[node]
        now = self._break_on(group, flat.path)
        if now is not None:
            self.remote.unbreak(now[0])
        status = next_break_status(flat, None if now is None else now[1])
        if status:
            self.remote.break_on(node=flat.path, status=status, group=group)
        return status

    def break_marks(self, group: str) -> dict[int, int]:
        """The nodes of ``group``'s tree with a breakpoint in the game -> its status code."""
        tree = self.sim.trees.get(group)
        if tree is None:
            return {}
        index = {n.path: n.index for n in tree.nodes}
        return {
            index[p["node"]]: STATUS_CODES[p["status"]]
            for p in self.remote.breaks.values()
            if p.get("group") == group
            and p.get("node") in index
            and p.get("status") in STATUS_CODES
        }

    # ------------------------------------------------------------ selection
    def _follow_selection(self) -> None:
        """``opts.selected`` is the row of ``selected_id`` in the shown frame (None if absent)."""
        if self.selected_id is None:
            self.opts.selected = None
            return
        rows = np.flatnonzero(self.sim.ids == self.selected_id)
        self.opts.selected = int(rows[0]) if rows.size else None

    def select_id(self, agent: int | None) -> None:
        """Select agent ``agent`` (an id); the game then sends its facts."""
        if agent != self.selected_id:
            self.remote.select([] if agent is None else [agent])
        self.selected_id = agent
        self._follow_selection()

    def select_row(self, row: int | None) -> None:
        self.select_id(None if row is None else int(self.sim.ids[row]))
