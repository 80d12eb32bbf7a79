"""The History tab: every status change kept of the selected agent (the last 200, issue 26),
newest first, one line each (tick, node, from -> to), scrolled a line at a time.

Its head stays put: the agent, since when its history runs (the tick it was selected:
``agent_notes.since_text``), which changes are in view ("changes 31-60 of 200") and the
columns. The list under it scrolls with the wheel (three lines a notch), PgUp / PgDn (a
page) and a scrollbar as the Tune tab's: a press on the track puts the thumb's middle
there, a press on the thumb drags it. Scrolled down, the lines in view stay in view while
new changes come in above them; at the top, the newest show as they come.

Drawn as one ``Picture`` (a triangle soup and a pool of labels, one per line in view).
"""

from __future__ import annotations

import numpy as np

from behaviortk.tree.status import STATUS_NAMES
from behaviortk.viewer import geometry as geo
from behaviortk.viewer import palette
from behaviortk.viewer.agent_notes import HISTORY, AgentNotes, since_text
from behaviortk.viewer.labels import Label
from behaviortk.viewer.layout import Rect
from behaviortk.viewer.tree_panel import MONO_ADVANCE, Picture

FONT = 9.0
LINE = 14.0
"""Pixels a line of the list takes."""
HEAD_LINES = 4  # the agent, since when, the changes in view, the columns
PAD = 8.0
SCROLL_W = 6.0
"""The scrollbar's width, at the list's right edge."""
MIN_THUMB = 16.0
WHEEL_LINES = 3.0
"""Lines one notch of the wheel scrolls."""
STATUS_W = max(len(name) for name in STATUS_NAMES)


def fit_node(path: str, width: int) -> str:
    """``path`` in ``width`` characters: cut at the front (the leaf's end is what tells)."""
    return path if len(path) <= width else "…" + path[len(path) - width + 1 :]


class HistoryList:
    """Which changes the History tab shows (``first``: lines from the newest) and its
    scrollbar, kept between frames."""

    def __init__(self) -> None:
        self.first = 0.0  # lines scrolled past (fractions from a smooth wheel add up)
        self.rows = 0  # lines the list had room for at the last frame
        self.total = 0  # changes it had to show
        self.dragging = False
        self.bar: tuple[Rect, Rect] | None = None  # track, thumb (None: all of it fits)
        self._grab = 0.0  # where on the thumb it was pressed, from its middle
        self._about: tuple[int | None, int] = (None, -1)  # (agent id, its start) followed
        self._count = 0  # the notes' change count at the last frame

    # ------------------------------------------------------------ scrolling
    @property
    def most(self) -> int:
        """The furthest ``first`` goes: the oldest change on the last line."""
        return max(self.total - self.rows, 0)

    def _clamp(self) -> None:
        self.first = float(np.clip(self.first, 0.0, self.most))

    def wheel(self, notches: float) -> None:
        """The wheel turned (up: positive): toward the newest."""
        self.first -= notches * WHEEL_LINES
        self._clamp()

    def page(self, pages: int) -> None:
        """PgDn (1) / PgUp (-1): a page toward the oldest / the newest (a line kept)."""
        self.first += pages * max(self.rows - 1, 1)
        self._clamp()

    def press(self, x: float, y: float) -> bool:
        """A press on the scrollbar: on the thumb it drags it, on the track the thumb's
        middle goes there (and drags from there)."""
        if self.bar is None or not self.bar[0].inset(-4).contains(x, y):
            return False
        thumb = self.bar[1]
        middle = 0.5 * (thumb.y0 + thumb.y1)
        self._grab = y - middle if thumb.y0 <= y <= thumb.y1 else 0.0
        self.dragging = True
        self.drag(y)
        return True

    def drag(self, y: float) -> None:
        if not self.dragging or self.bar is None:
            return
        track, thumb = self.bar
        span = track.height - thumb.height
        middle = y - self._grab
        frac = (track.y1 - 0.5 * thumb.height - middle) / span if span > 0 else 0.0
        self.first = round(float(np.clip(frac, 0.0, 1.0)) * self.most)

    def release(self) -> None:
        self.dragging = False

    def _follow(self, notes: AgentNotes) -> None:
        """Back to the newest for another agent (or its history started again); scrolled
        down, the lines in view stay in view as new changes come in above them."""
        about = (notes.agent, notes.start)
        if about != self._about:
            self._about, self.first = about, 0.0
        elif self.first > 0.0:
            self.first += notes.count - self._count
        self._count = notes.count

    # -------------------------------------------------------------- drawing
    def build(self, notes: AgentNotes, rect: Rect, name: str) -> list[Picture]:
        """The tab in ``rect`` for the agent called ``name``, whose notes are ``notes``."""
        self._follow(notes)
        changes = list(reversed(notes.history))  # newest first
        head_h = HEAD_LINES * LINE + 2 * PAD
        body = Rect(rect.x0, rect.y0 + PAD / 2, rect.x1, rect.y1 - head_h)
        self.total, self.rows = len(changes), max(int(body.height // LINE), 1)
        self._clamp()
        first = int(self.first)
        shown = changes[first : first + self.rows]
        pic = Picture("history", rect)
        chars = int((body.width - 2 * PAD - SCROLL_W - 4) / (MONO_ADVANCE * FONT))
        tick_w = max(len("tick"), len(str(changes[0].step)) if changes else 0)
        node_w = max(chars - tick_w - 2 - 2 - (2 * STATUS_W + 4), 8)
        node_w = min(node_w, max([len(c.node) for c in changes] + [len("node")]))
        x, top = rect.x0 + PAD, rect.y1 - PAD - 0.5 * LINE
        dropped = notes.count - len(changes)
        if shown:
            seen = f"changes {first + 1}-{first + len(shown)} of {len(changes)}, newest first"
        else:
            seen = "no status changes yet"
        head = [
            (f"Status history: {name}", palette.TEXT, True),
            (f"{since_text(notes)}; the last {HISTORY} kept", palette.DIM_TEXT, False),
            (seen + (f" ({dropped} older dropped)" if dropped > 0 else ""), palette.TEXT, False),
            (f"{'tick':>{tick_w}}  {'node':<{node_w}}  from -> to", palette.DIM_TEXT, False),
        ]
        for i, (text, ink, bold) in enumerate(head):
            pic.labels.append(Label(text, x, top - i * LINE, ink, FONT, bold=bold))
        for j, c in enumerate(shown):
            node = fit_node(c.node, node_w)
            was, now = STATUS_NAMES[c.was], STATUS_NAMES[c.now]
            text = f"{c.step:>{tick_w}}  {node:<{node_w}}  {was} -> {now}"
            pic.labels.append(Label(text, x, body.y1 - (j + 0.5) * LINE, palette.TEXT, FONT))
        self.bar = None
        if self.total > self.rows:
            track = Rect(body.x1 - SCROLL_W - 2, body.y0 + 2, body.x1 - 2, body.y1 - 2)
            thumb_h = max(track.height * self.rows / self.total, MIN_THUMB)
            y1 = track.y1 - (track.height - thumb_h) * first / self.most
            thumb = Rect(track.x0, y1 - thumb_h, track.x1, y1)
            pic.soup.add(geo.quads(*track.as_tuple()), palette.SLIDER_TRACK)
            pic.soup.add(geo.quads(*thumb.as_tuple()), palette.SLIDER_FILL)
            self.bar = (track, thumb)
        return [pic]
