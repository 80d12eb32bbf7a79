"""The tuning panel's widgets: one row per knob of the shown group, a group switcher, Save.

Each knob (``tuning.Knob``) gets its name, value and unit, the schema's
description, and a slider over its bounds with - and + steps (a toggle for
true/false; a value that is not a number is shown, not edited). A slider is
applied when it is released, a step at once; both go through
``Session.tune``, which validates the whole definition first: a refused value
leaves the simulation untouched and shows the loader's message in red on that
row. Save writes the file (``Tuner.save``). The panel follows the selected
agent's group; the arrows in its header show the other groups.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.format.limits import MAX_MAGNITUDE, MIN_POSITIVE
from behaviortk.viewer import geometry as geo
from behaviortk.viewer import palette
from behaviortk.viewer.labels import Label
from behaviortk.viewer.layout import Rect
from behaviortk.viewer.tree_panel import Picture
from behaviortk.viewer.tuning import Knob

HEADER = 30.0
FOOTER = 52.0
ROW_H = 64.0  # a row with a one-line description; each further line adds LINE_H
LINE_H = 12.0
SCROLL_W = 6.0  # the scrollbar at the body's right edge, when the rows overflow it
PAD = 10.0
BUTTON_W = 20.0
CHAR_W = 7.0  # one character of the 8 pt mono font (measured: pyglet snaps to whole pixels)


def chars_across(width: float) -> int:
    """Characters of a description line in a body ``width`` pixels wide (scrollbar kept)."""
    return int((width - 2 * PAD - SCROLL_W) / CHAR_W)


def row_height(lines: list[str]) -> float:
    """A knob's row: its name, ``lines`` of description, its slider."""
    return ROW_H + (len(lines) - 1) * LINE_H


def slider_y(top: float, lines: list[str]) -> float:
    """A row's slider, below its name and ``lines`` of description."""
    return top - 45 - (len(lines) - 1) * LINE_H


def nice_step(span: float, integer: bool) -> float:
    """A round step near 1/50 of the slider's span (1, 2 or 5 times a power of ten)."""
    raw = max(span / 50.0, 1e-9)
    base = 10.0 ** math.floor(math.log10(raw))
    step = next(m * base for m in (1.0, 2.0, 5.0, 10.0) if m * base >= raw)
    return max(step, 1.0) if integer else step


def fmt(value: Any, step: float = 0.01) -> str:
    if value is None:
        return "unlimited"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        digits = max(0, -math.floor(math.log10(step))) if step < 1 else 0
        return f"{float(value):.{digits}f}"
    return str(value)


@dataclass
class Row:
    """Where one knob's widgets are on screen this frame (hit-testing reads it)."""

    knob: Knob
    track: Rect
    minus: Rect
    plus: Rect
    lo: float
    hi: float
    step: float


class TuningPanel:
    def __init__(self) -> None:
        self.group = 0
        self.scroll = 0.0
        self.ranges: dict[str, tuple[float, float]] = {}  # pointer -> slider span, fixed once shown
        self.notes: dict[str, tuple[str, bool]] = {}  # pointer -> (message, accepted)
        self.status = ""
        self.dragging: Row | None = None
        self.scrolling = False  # the scrollbar is being dragged
        self.pending: float | None = None
        self._rows: list[Row] = []
        self._buttons: dict[str, Rect] = {}
        self._scrollbar: tuple[Rect, float] | None = None  # its track and the scroll it spans
        self._tuner: Any = None
        self._followed: int | None = None  # the selected agent's group last followed

    # ----------------------------------------------------------- helpers
    def follow(self, tuner: Any, group: int | None) -> None:
        """A new definition resets ranges and notes; a selected agent picks the group."""
        if tuner is not self._tuner:
            self._tuner = tuner
            self.ranges.clear()
            self.notes.clear()
            self.scroll = 0.0
        if group is not None and group != self._followed:
            self.group = group
            self.scroll = 0.0
        self._followed = group

    def _span(self, knob: Knob, value: Any) -> tuple[float, float]:
        if knob.pointer in self.ranges:
            return self.ranges[knob.pointer]
        v = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
        d = float(knob.default) if isinstance(knob.default, int | float) else 0.0
        # the format's safety bounds (1e9, 1e-6: format/limits.py) are no design range: a
        # slider spans twice the value, and starts just above 0 for a positive number
        low, high = knob.low, knob.high
        just_above = knob.low_open or low == MIN_POSITIVE
        low = 0.0 if low == MIN_POSITIVE else low
        high = None if high is not None and high >= MAX_MAGNITUDE else high
        lo = low if low is not None else min(0.0, v, d)
        hi = high if high is not None else max(2.0 * abs(v), 2.0 * abs(d), lo + 1.0)
        if just_above:
            lo = lo + (hi - lo) / 500.0
        self.ranges[knob.pointer] = (lo, hi)
        return lo, hi

    # ----------------------------------------------------------- drawing
    def build(self, session: Any, rect: Rect) -> list[Picture]:
        tuner = session.tuner
        names = tuner.groups()
        self.group = min(max(self.group, 0), max(len(names) - 1, 0))
        head = Rect(rect.x0, rect.y1 - HEADER, rect.x1, rect.y1)
        foot = Rect(rect.x0, rect.y0, rect.x1, rect.y0 + FOOTER)
        body = Rect(rect.x0, foot.y1, rect.x1, head.y0)
        return [
            self._header(names, head),
            self._body(tuner, body),
            self._footer(tuner, foot),
        ]

    def _button(self, pic: Picture, key: str, r: Rect, text: str, hot: bool = False) -> None:
        pic.soup.add(geo.quads(*r.as_tuple()), palette.BUTTON_HOT if hot else palette.BUTTON)
        cx, cy = 0.5 * (r.x0 + r.x1), 0.5 * (r.y0 + r.y1)
        pic.labels.append(Label(text, cx, cy, palette.TEXT, 9, anchor_x="center"))
        self._buttons[key] = r

    def _header(self, names: list[str], r: Rect) -> Picture:
        pic = Picture("tune.header", r)
        self._buttons = {}
        y = 0.5 * (r.y0 + r.y1)
        name = names[self.group] if names else "(no groups)"
        pic.labels.append(Label(f"Tune group: {name}", r.x0 + PAD, y, palette.TEXT, 10, bold=True))
        self._button(
            pic, "prev", Rect(r.x1 - 2 * BUTTON_W - 14, y - 9, r.x1 - BUTTON_W - 14, y + 9), "<"
        )
        self._button(pic, "next", Rect(r.x1 - BUTTON_W - 8, y - 9, r.x1 - 8, y + 9), ">")
        return pic

    def _body(self, tuner: Any, r: Rect) -> Picture:
        pic = Picture("tune.body", r)
        self._rows = []
        self._scrollbar = None
        knobs = tuner.knobs(self.group)
        width_chars = chars_across(r.width)
        texts = [self._text(knob, width_chars) for knob in knobs]
        heights = [row_height(lines) for lines, _ in texts]
        total = float(sum(heights))
        self.scroll = float(np.clip(self.scroll, 0.0, max(total - r.height, 0.0)))
        top = r.y1 + self.scroll
        for knob, text, height in zip(knobs, texts, heights, strict=True):
            if top - height <= r.y1 and top >= r.y0:
                value = tuner.value(knob)
                if self.dragging is not None and self.dragging.knob.pointer == knob.pointer:
                    value = self.pending
                self._knob_row(pic, knob, value, r, top, text)
            top -= height
        if total > r.height:
            self._draw_scrollbar(pic, r, total)
        return pic

    def slider_ys(self, knobs: list[Knob], body: Rect) -> list[float]:
        """Where each knob's slider is (y up) in ``body`` at the current scroll: rows grow
        with their wrapped descriptions (what a test clicks)."""
        width_chars = chars_across(body.width)
        lines = [self._text(knob, width_chars)[0] for knob in knobs]
        tops = body.y1 + self.scroll - np.cumsum([0.0] + [row_height(n) for n in lines])
        return [slider_y(float(top), n) for top, n in zip(tops, lines, strict=False)]

    def _text(self, knob: Knob, width_chars: int) -> tuple[list[str], palette.Color]:
        """The lines under a knob's name: its description, or the note of its last change."""
        note = self.notes.get(knob.pointer)
        if note is not None:
            text, ok = note
            ink = palette.OK_TEXT if ok else palette.REFUSED
        else:
            text, ink = knob.description, palette.DIM_TEXT
        # every line, never cut with "…": the rows grow and the panel scrolls (issue 28)
        lines = textwrap.wrap(text, max(width_chars, 10), break_on_hyphens=False) or [""]
        return lines, ink

    def _draw_scrollbar(self, pic: Picture, r: Rect, total: float) -> None:
        """A track down the body's right edge and a thumb as tall as the share shown."""
        track = Rect(r.x1 - SCROLL_W - 2, r.y0 + 2, r.x1 - 2, r.y1 - 2)
        shown = r.height / total
        thumb_h = max(track.height * shown, 16.0)
        y1 = track.y1 - (track.height - thumb_h) * self.scroll / max(total - r.height, 1e-9)
        pic.soup.add(geo.quads(*track.as_tuple()), palette.SLIDER_TRACK)
        pic.soup.add(geo.quads(track.x0, y1 - thumb_h, track.x1, y1), palette.SLIDER_FILL)
        self._scrollbar = (track, total - r.height)

    def _knob_row(
        self,
        pic: Picture,
        knob: Knob,
        value: Any,
        r: Rect,
        top: float,
        text: tuple[list[str], palette.Color],
    ) -> None:
        lines, ink = text
        x0, x1 = r.x0 + PAD, r.x1 - PAD - SCROLL_W
        y_name, y_text = top - 11, top - 27
        y_slider = slider_y(top, lines)
        lo, hi = self._span(knob, value)
        step = nice_step(hi - lo, knob.kind == "integer")
        unit = f" {knob.unit}" if knob.unit and value is not None else ""
        tag = " (tree parameter)" if knob.source == "param" else ""
        pic.labels.append(Label(knob.name + tag, x0, y_name, palette.TEXT, 9, bold=True))
        pic.labels.append(
            Label(fmt(value, step) + unit, x1, y_name, palette.SLIDER_FILL, 9, anchor_x="right")
        )
        for i, line in enumerate(lines):
            pic.labels.append(Label(line, x0, y_text - i * LINE_H, ink, 8))
        minus = Rect(x0, y_slider - 9, x0 + BUTTON_W, y_slider + 9)
        plus = Rect(x1 - BUTTON_W, y_slider - 9, x1, y_slider + 9)
        track = Rect(minus.x1 + 10, y_slider - 3, plus.x0 - 10, y_slider + 3)
        row = Row(knob, track, minus, plus, lo, hi, step)
        self._rows.append(row)
        if knob.kind == "bool":
            on = bool(value)
            box = Rect(x0, y_slider - 9, x0 + 70, y_slider + 9)
            pic.soup.add(geo.quads(*box.as_tuple()), palette.BUTTON_HOT if on else palette.BUTTON)
            pic.labels.append(
                Label(
                    "on" if on else "off",
                    0.5 * (box.x0 + box.x1),
                    y_slider,
                    palette.TEXT,
                    9,
                    "center",
                )
            )
            row.track = box
            return
        if knob.kind == "fixed":
            return
        for b, t in ((minus, "-"), (plus, "+")):
            pic.soup.add(geo.quads(*b.as_tuple()), palette.BUTTON)
            pic.labels.append(Label(t, 0.5 * (b.x0 + b.x1), y_slider, palette.TEXT, 10, "center"))
        pic.soup.add(geo.quads(*track.as_tuple()), palette.SLIDER_TRACK)
        frac = (
            1.0
            if value is None
            else float(np.clip((float(value) - lo) / max(hi - lo, 1e-12), 0, 1))
        )
        kx = track.x0 + frac * track.width
        pic.soup.add(geo.quads(track.x0, track.y0, kx, track.y1), palette.SLIDER_FILL)
        pic.soup.add(
            geo.discs(np.array([[kx, y_slider]]), np.array([7.0]), 16), palette.SLIDER_KNOB
        )

    def _footer(self, tuner: Any, r: Rect) -> Picture:
        pic = Picture("tune.footer", r)
        y = r.y1 - 16
        self._button(
            pic, "save", Rect(r.x0 + PAD, y - 10, r.x0 + PAD + 70, y + 10), "Save", tuner.dirty
        )
        state = "unsaved changes" if tuner.dirty else "file up to date"
        pic.labels.append(Label(state, r.x0 + PAD + 82, y, palette.DIM_TEXT, 8.5))
        ink = palette.REFUSED if self.status.startswith("not saved") else palette.OK_TEXT
        pic.labels.append(Label(self.status, r.x0 + PAD, r.y0 + 12, ink, 8.5))
        return pic

    # ------------------------------------------------------------- input
    def _value_at(self, row: Row, x: float) -> float:
        frac = float(np.clip((x - row.track.x0) / max(row.track.width, 1e-9), 0.0, 1.0))
        v = row.lo + frac * (row.hi - row.lo)
        return round(v / row.step) * row.step

    def _tune(self, session: Any, knob: Knob, value: Any) -> None:
        ok, message = session.tune(knob, value)
        self.notes[knob.pointer] = (message, ok)

    def press(self, session: Any, x: float, y: float) -> bool:
        """A click in the panel; True when it hit a widget."""
        if self._scrollbar is not None and self._scrollbar[0].contains(x, y):
            self.scrolling = True
            self._scroll_to(y)
            return True
        for key, b in self._buttons.items():
            if b.contains(x, y):
                if key == "prev":
                    self.group = max(self.group - 1, 0)
                elif key == "next":
                    self.group = min(self.group + 1, len(session.tuner.groups()) - 1)
                elif key == "save":
                    self.status = session.save_tuning()
                return True
        for row in self._rows:
            knob = row.knob
            value = session.tuner.value(knob)
            if knob.kind == "bool" and row.track.contains(x, y):
                self._tune(session, knob, not bool(value))
                return True
            if knob.kind not in ("number", "integer"):
                continue
            for b, sign in ((row.minus, -1.0), (row.plus, 1.0)):
                if b.contains(x, y):
                    if value is None and sign > 0:
                        return True  # already unlimited
                    base = float(value) if value is not None else row.hi
                    new = round((base + sign * row.step) / row.step) * row.step
                    self._tune(session, knob, None if knob.nullable and new > row.hi else new)
                    return True
            hit = Rect(row.track.x0 - 8, row.track.y0 - 8, row.track.x1 + 8, row.track.y1 + 8)
            if hit.contains(x, y):
                self.dragging = row
                self.pending = self._value_at(row, x)
                return True
        return False

    def _scroll_to(self, y: float) -> None:
        """The scrollbar pressed or dragged at ``y``: the rows there in proportion."""
        if self._scrollbar is not None:
            track, most = self._scrollbar
            self.scroll = float(np.clip((track.y1 - y) / max(track.height, 1e-9), 0, 1)) * most

    def drag(self, x: float, y: float) -> None:
        if self.scrolling:
            self._scroll_to(y)
        if self.dragging is not None:
            self.pending = self._value_at(self.dragging, x)

    def release(self, session: Any, x: float, y: float) -> None:
        """A slider is applied when let go."""
        self.scrolling = False
        row, self.dragging = self.dragging, None
        if row is not None and self.pending is not None:
            value: float | None = self.pending
            if row.knob.nullable and self.pending >= row.hi:
                value = None  # the right end of a nullable knob: unlimited
            self._tune(session, row.knob, value)
        self.pending = None

    def wheel(self, clicks: float) -> None:
        self.scroll = max(self.scroll - 30.0 * clicks, 0.0)
