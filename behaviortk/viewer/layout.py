"""Where each part of a frame goes (pixels, y up): HUD band, side panel, world.

The side panel holds, top to bottom, the legend (one row per swatch), the tab
bar (Tree, Tune, Info, History) and the tab's content. Everything is a ``Rect`` computed
from the window size alone, so drawing and mouse hit-testing agree.
"""

from __future__ import annotations

from dataclasses import dataclass

HUD_HEIGHT = 26
PANEL_WIDTH = 430
MIN_WINDOW_SIZE = (900, 560)
"""The smallest a viewer window may be resized to: the side panel and a world beside it."""
LEGEND_ONLY_WIDTH = 210  # renders without a selected agent: the legend alone
MARGIN = 8
LEGEND_ROW = 18
LEGEND_TOP = 26  # the "Legend" heading
TAB_HEIGHT = 26
TABS = ("tree", "tune", "info", "history")


@dataclass(frozen=True)
class Rect:
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    def contains(self, x: float, y: float) -> bool:
        return self.x0 <= x < self.x1 and self.y0 <= y < self.y1

    def inset(self, d: float) -> Rect:
        return Rect(self.x0 + d, self.y0 + d, self.x1 - d, self.y1 - d)

    def lrbt(self) -> tuple[float, float, float, float]:
        """Left, right, bottom, top: arcade's ``draw_lrbt_*`` order."""
        return (self.x0, self.x1, self.y0, self.y1)

    def as_tuple(self) -> tuple[float, float, float, float]:
        return (self.x0, self.y0, self.x1, self.y1)


@dataclass(frozen=True)
class Layout:
    window: Rect
    hud: Rect
    panel: Rect
    legend: Rect
    tabs: Rect
    content: Rect
    world: Rect
    tab_names: tuple[str, ...] = TABS  # the tabs offered (renders and replays: no "tune")

    def legend_row_y(self, i: int) -> float:
        """Centre line of legend row ``i``: the swatch and its label share it."""
        return self.legend.y1 - LEGEND_TOP - (i + 0.5) * LEGEND_ROW

    def tab_rect(self, i: int) -> Rect:
        w = self.tabs.width / len(self.tab_names)
        return Rect(self.tabs.x0 + i * w, self.tabs.y0, self.tabs.x0 + (i + 1) * w, self.tabs.y1)

    def tab_at(self, x: float, y: float) -> str | None:
        for i, name in enumerate(self.tab_names):
            if self.tab_rect(i).contains(x, y):
                return name
        return None


def make_layout(
    width: float,
    height: float,
    legend_rows: int,
    panel_width: float,
    tab_names: tuple[str, ...] = TABS,
) -> Layout:
    """The regions of a ``width`` x ``height`` frame whose legend has ``legend_rows`` rows."""
    top = height - HUD_HEIGHT
    panel = Rect(width - panel_width, 0.0, width, top)
    legend_h = LEGEND_TOP + legend_rows * LEGEND_ROW + 6
    legend = Rect(panel.x0, top - legend_h, panel.x1, top)
    tabs = Rect(panel.x0, legend.y0 - TAB_HEIGHT, panel.x1, legend.y0)
    content = Rect(panel.x0, 0.0, panel.x1, max(tabs.y0, 0.0))
    world = Rect(MARGIN, MARGIN, width - panel_width - MARGIN, top - MARGIN)
    return Layout(
        window=Rect(0.0, 0.0, width, height),
        hud=Rect(0.0, top, width, height),
        panel=panel,
        legend=legend,
        tabs=tabs,
        content=content,
        world=world,
        tab_names=tab_names,
    )
