"""Draws one complete frame, into the window or an offscreen image; shared by window and renders.

Layout (``layout.py``): the HUD band (a render's caption) along the top, the
side panel on the right (legend, tabs, the tab's content), the world fitted in
the rest. Shapes go through GpuBatch draws (world picture, then UI), the heat
map through one textured quad, texts through label pools (one pyglet batch
each) and a few ``arcade.Text`` objects whose strings are updated.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from behaviortk.viewer import geometry as geo
from behaviortk.viewer import palette
from behaviortk.viewer.agent_notes import AgentNotes, history_text
from behaviortk.viewer.bodies import BodyBatch
from behaviortk.viewer.canvas import Canvas, WindowCanvas
from behaviortk.viewer.gpu import GpuBatch, TriangleSoup
from behaviortk.viewer.heatmap import HeatmapLayer, params_from_trees
from behaviortk.viewer.hud import HudInfo, help_text, hud_text, legend, legend_title
from behaviortk.viewer.labels import MONO, Label, LabelPool
from behaviortk.viewer.layout import (
    LEGEND_ONLY_WIDTH,
    MARGIN,
    PANEL_WIDTH,
    TABS,
    Layout,
    Rect,
    make_layout,
)
from behaviortk.viewer.overlays import overlay_legend
from behaviortk.viewer.panel import panel_text, scenario_text
from behaviortk.viewer.remembered import remembered_labels
from behaviortk.viewer.scene import ViewOptions, build_scene, path_labels
from behaviortk.viewer.status_history import HistoryList
from behaviortk.viewer.text_scroll import TextScroll
from behaviortk.viewer.tree_frame import TreeFrame, frame_from_sim, status_row
from behaviortk.viewer.tree_panel import MONO_ADVANCE, Picture, TreeView
from behaviortk.viewer.tuning_panel import TuningPanel
from behaviortk.viewer.viewport import Viewport, view_region
from behaviortk.viewer.zones import name_plates, zone_labels

# kept for callers that imported them from here
HUD_HEIGHT = 26
NOTE_HEIGHT = 24  # the status line at the bottom of the world (why the run paused)
HELP_WIDTH = 640.0  # the help box at its widest; narrower windows wrap its lines
HELP_GAP = 20.0  # between the help box and the world's left edge
BOX_PAD = 8.0  # inside the help box and the error banner, round their text
KEY_ROW = 16.0  # a row of the overlays' key
KEY_FONT = 9.0
ZONE_FONT = 10.0  # a zone's name
__all__ = ["HUD_HEIGHT", "MARGIN", "PANEL_WIDTH", "Overlay2D", "Painter", "PanelState"]


@dataclass
class PanelState:
    """The side panel's state: the tab shown and the widgets that keep state between frames."""

    tab: str = "tree"  # "tree" | "tune" | "info" | "history"
    tree: TreeView = field(default_factory=TreeView)
    tuning: TuningPanel = field(default_factory=TuningPanel)
    info: TextScroll = field(default_factory=TextScroll)  # the Info tab's text, scrolled
    history: HistoryList = field(default_factory=HistoryList)  # the History tab's list
    session: Any = None  # the live Session (the tune tab needs it); None in renders
    frame: Any = None  # a TreeFrame to show instead of the selected agent's (replays)

    @property
    def tabs(self) -> tuple[str, ...]:
        return TABS if self.session is not None else ("tree", "info", "history")

    def cycle(self, step: int) -> None:
        tabs = self.tabs
        i = tabs.index(self.tab) if self.tab in tabs else 0
        self.tab = tabs[(i + step) % len(tabs)]

    def page_history(self, pages: int) -> None:
        """PgDn (1) / PgUp (-1): the History tab, a page older / newer once it shows."""
        if self.tab == "history":
            self.history.page(pages)
        self.tab = "history"


@dataclass
class Overlay2D:
    """Non-simulation things shown on the frame."""

    errors: list[str] = field(default_factory=list)  # banner lines (reload / step errors)
    show_help: bool = False
    trails: Any = None  # viewer/trails.Trails, when kept
    panel: PanelState | None = None
    note: str = ""  # a status line above the banner: why the run paused (a breakpoint)
    help: str = ""  # the help box's text; "": the live viewer's keys


class Painter:
    def __init__(self, window: Any, size: tuple[int, int] | None = None) -> None:
        """Draw into ``window``, or with ``size`` into an offscreen image of that size."""
        import arcade

        self._arcade = arcade
        self.window = window
        ctx = window.ctx
        self.canvas: WindowCanvas = WindowCanvas(window) if size is None else Canvas(ctx, size)
        self.world_batch = GpuBatch(ctx)
        self.body_batch = BodyBatch(ctx)
        self.ui_batch = GpuBatch(ctx)
        self.heatmap = HeatmapLayer(ctx)
        self.pools: dict[str, LabelPool] = {}
        self.notes = AgentNotes()  # the selected agent's why, status history, since-ticks
        self.layout: Layout | None = None
        t = arcade.Text
        self.hud = t("", MARGIN, 0, palette.TEXT, 11, font_name=MONO, anchor_y="center")
        self.panel = t(
            "",
            0,
            0,
            palette.TEXT,
            9,
            font_name=MONO,
            multiline=True,
            width=PANEL_WIDTH - 16,
            anchor_y="top",
        )
        self.help = t(
            "", 0, 0, palette.TEXT, 11, font_name=MONO, multiline=True, width=600, anchor_y="top"
        )
        self.banner = t(
            "", 0, 0, palette.TEXT, 11, font_name=MONO, multiline=True, width=800, anchor_y="bottom"
        )
        self.note = t("", 0, 0, palette.TEXT, 11, font_name=MONO, anchor_y="center")
        self._panel_width = PANEL_WIDTH

    # ------------------------------------------------------------ geometry
    @property
    def width(self) -> int:
        return int(self.canvas.width)

    @property
    def height(self) -> int:
        return int(self.canvas.height)

    def viewport(self, world: Any, opts: ViewOptions | None = None) -> Viewport:
        """Where the world goes (the last frame's panel width; ``opts`` region and zoom)."""
        lay = make_layout(self.width, self.height, 0, self._panel_width)
        r = lay.world
        region = None
        if opts is not None and (opts.region is not None or opts.zoom != 1.0):
            region = view_region(world.width, world.height, opts.region, opts.zoom)
        return Viewport(world.width, world.height, r.x0, r.y0, r.width, r.height, region)

    def pool(self, name: str) -> LabelPool:
        if name not in self.pools:
            self.pools[name] = LabelPool()
        return self.pools[name]

    # -------------------------------------------------------------- frame
    def draw(self, sim: Any, opts: ViewOptions, info: HudInfo, extra: Overlay2D) -> None:
        """Clear and draw the whole frame (reads the simulation, never changes it)."""
        with self.canvas.drawing():
            self._draw(sim, opts, info, extra)

    def _draw(self, sim: Any, opts: ViewOptions, info: HudInfo, extra: Overlay2D) -> None:
        panel = extra.panel
        selected = opts.selected is not None and 0 <= opts.selected < sim.agents.n
        showing = selected or (panel is not None and panel.frame is not None)
        self._panel_width = PANEL_WIDTH if (not info.caption or showing) else LEGEND_ONLY_WIDTH
        entries = legend(sim, opts)
        tabs = panel.tabs if panel is not None else TABS
        lay = make_layout(self.width, self.height, len(entries), self._panel_width, tabs)
        self.layout = lay
        vp = self.viewport(sim.world, opts)
        self.canvas.clear(palette.BACKGROUND)
        world_clip = Rect(*vp.world_rect())
        floor = TriangleSoup()
        floor.add(geo.quads(*world_clip.as_tuple()), palette.WORLD_FLOOR)
        self.world_batch.draw(*floor.build())
        if "potential" in opts.overlays and sim.world.obstacle_pos.shape[0]:
            self.heatmap.update(sim.world, params_from_trees(getattr(sim, "trees", {})))
            self.heatmap.draw(world_clip.as_tuple(), vp.uv_rect())
        scene = build_scene(sim, vp, opts, extra.trails)
        points, big = scene.bodies.split(self.body_batch.max_radius)
        big.fallback(scene.under)
        with self.canvas.clipped(world_clip):  # overlays (cones, links) stay in the world
            self.world_batch.draw(*scene.under.build())
            self.body_batch.draw(points)
            self.world_batch.draw(*scene.over.build())
            names = self.pool("world")
            zones = zone_labels(sim.world, vp)
            plates = TriangleSoup()
            plates.add(name_plates(zones, MONO_ADVANCE * ZONE_FONT), palette.ZONE_PLATE)
            self.world_batch.draw(*plates.build())
            texts = [Label(n, x, y, palette.ZONE_TEXT, ZONE_FONT, "center") for n, x, y in zones]
            texts += [
                Label(n, x, y, palette.PATH_TEXT, 9) for n, x, y in path_labels(sim.world, vp)
            ]
            if scene.memory is not None:
                texts += remembered_labels(vp, scene.memory)
            names.show(texts)
            names.draw()
        self._chrome(sim, opts, info, extra, lay, entries)
        if not info.caption and panel is not None:
            self._tabs(panel, lay)
        self._content(sim, opts, info, panel, lay)
        self._overlay_key(overlay_legend(sim, opts.selected, opts.overlays), lay)
        self._overlay_texts(opts, extra, lay)

    def _chrome(
        self,
        sim: Any,
        opts: ViewOptions,
        info: HudInfo,
        extra: Overlay2D,
        lay: Layout,
        entries: list[tuple[str, palette.Color]],
    ) -> None:
        """Panel and HUD backgrounds, the legend (swatch and label on one centre line)."""
        soup = TriangleSoup()
        soup.add(geo.quads(*lay.panel.as_tuple()), palette.PANEL_BG)
        soup.add(geo.quads(*lay.hud.as_tuple()), palette.PANEL_BG)
        labels = [
            Label(
                legend_title(opts),
                lay.legend.x0 + 10,
                lay.legend.y1 - 13,
                palette.DIM_TEXT,
                9,
                bold=True,
            )
        ]
        for i, (name, color) in enumerate(entries):
            y = lay.legend_row_y(i)
            x = lay.legend.x0 + 12
            soup.add(geo.quads(x, y - 6, x + 12, y + 6), color)
            labels.append(Label(name, x + 20, y, palette.TEXT, 9.5))
        self.ui_batch.draw(*soup.build())
        pool = self.pool("ui")
        pool.show(labels)
        pool.draw()
        self.hud.text = hud_text(sim, info)
        self.hud.position = (MARGIN, self.height - HUD_HEIGHT / 2)
        self.hud.draw()

    def _tabs(self, panel: PanelState, lay: Layout) -> None:
        soup = TriangleSoup()
        labels = []
        for i, name in enumerate(lay.tab_names):
            r = lay.tab_rect(i).inset(2)
            soup.add(
                geo.quads(*r.as_tuple()),
                palette.TAB_ACTIVE if panel.tab == name else palette.TAB_BG,
            )
            labels.append(
                Label(
                    name.capitalize(),
                    0.5 * (r.x0 + r.x1),
                    0.5 * (r.y0 + r.y1),
                    palette.TEXT,
                    9.5,
                    "center",
                )
            )
        self.ui_batch.draw(*soup.build())
        pool = self.pool("tabs")
        pool.show(labels)
        pool.draw()

    def _noted(self, sim: Any, frame: TreeFrame | None, sel: int) -> TreeFrame | None:
        """``frame`` with the selected agent's notes (why, time in status), history updated."""
        if frame is None:
            return None
        self.notes.observe(sim, sel, frame.tree, frame.status)
        return replace(frame, notes=self.notes.notes(int(getattr(sim, "tick", 0))))

    def record(self, sim: Any, row: int | None) -> None:
        """The status row of the agent in ``row`` (the selection) into its history, without
        drawing: the live viewer calls it after every step, so no tick between two frames
        is missed."""
        if row is None or not 0 <= row < sim.agents.n:
            return
        found = status_row(sim, row)
        if found is not None and found[1] is not None:
            self.notes.record(sim, row, found[0], found[1])

    def _content(
        self, sim: Any, opts: ViewOptions, info: HudInfo, panel: PanelState | None, lay: Layout
    ) -> None:
        tab = panel.tab if panel is not None else "info"
        if info.caption and tab == "tune":
            tab = "tree"
        sel = (
            opts.selected
            if opts.selected is not None and 0 <= opts.selected < sim.agents.n
            else None
        )
        # whichever tab shows, the selected agent's history goes on (one row read)
        noted = self._noted(sim, frame_from_sim(sim, sel), sel) if sel is not None else None
        pictures: list[Picture] = []
        text = ""
        if tab == "tree" and panel is not None:
            frame = panel.frame if panel.frame is not None else noted
            if frame is not None:
                pictures = panel.tree.build(frame, lay.content)
            elif sel is not None:
                text = "This agent has no tree: the game moves it."
            elif not info.caption:
                text = "Click an agent (or press Tab) to see its tree, live."
        elif tab == "tune" and panel is not None and panel.session is not None:
            group = int(sim.agents.group[sel]) if sel is not None else None
            panel.tuning.follow(panel.session.tuner, group)
            pictures = panel.tuning.build(panel.session, lay.content)
        elif tab == "history" and panel is not None:
            if noted is not None:
                assert sel is not None
                name = str(sim.agents.names[sel])
                pictures = panel.history.build(self.notes, lay.content, name)
            elif sel is not None:
                text = "This agent has no tree: the game moves it."
            else:
                text = "Click an agent (or press Tab) to see its status history."
        elif sel is not None:
            text = panel_text(sim, sel) + history_text(self.notes, noted)
        elif not info.caption:
            text = (
                scenario_text(sim)
                + "\n\nClick an agent (or press Tab) to inspect its tree, blackboard and requests."
            )
        for pic in pictures:
            with self.canvas.clipped(pic.clip):
                self.ui_batch.draw(*pic.soup.build())
                pool = self.pool(pic.name)
                pool.show(pic.labels)
                pool.draw()
        for name, pool in self.pools.items():  # pools of pictures not shown this frame
            if name not in ("world", "ui", "tabs") and name not in {p.name for p in pictures}:
                pool.show([])
        self.panel.text = text
        if not text:
            return
        x, top = lay.content.x0 + 8, lay.content.y1 - 8
        scroller = panel.info if panel is not None and tab == "info" else None
        if scroller is None:
            self.panel.position = (x, top)
            self.panel.draw()
            return
        scroller.follow(None if sel is None else int(sim.agents.ids[sel]))
        shift = scroller.place(lay.content, self.panel.content_height + 16.0)
        self.panel.position = (x, top + shift)
        with self.canvas.clipped(lay.content):
            self.panel.draw()
        if scroller.bar is not None:
            track, thumb, _ = scroller.bar
            self._arcade.draw_lrbt_rectangle_filled(*track.lrbt(), palette.SLIDER_TRACK)
            self._arcade.draw_lrbt_rectangle_filled(*thumb.lrbt(), palette.SLIDER_FILL)

    def _overlay_key(self, keys: list[tuple[str, palette.Color]], lay: Layout) -> None:
        """The overlays' key in the world's top-right corner (a box the side panel's layout
        does not depend on, so selecting an agent moves nothing): a swatch per overlay on
        screen, those switched on and those the selected agent draws."""
        if not keys:
            return
        width = 34.0 + max(len(name) for name, _ in keys) * MONO_ADVANCE * KEY_FONT
        top = lay.world.y1 - 8.0
        box = Rect(
            lay.world.x1 - 8.0 - width, top - 8.0 - KEY_ROW * len(keys), lay.world.x1 - 8.0, top
        )
        soup = TriangleSoup()
        soup.add(geo.quads(*box.as_tuple()), palette.PANEL_BG)
        labels = []
        for i, (name, ink) in enumerate(keys):
            y = top - 4.0 - KEY_ROW * (i + 0.5)
            soup.add(geo.quads(box.x0 + 8, y - 5, box.x0 + 18, y + 5), ink)
            labels.append(Label(name, box.x0 + 26, y, palette.TEXT, KEY_FONT))
        self.ui_batch.draw(*soup.build())
        pool = self.pool("overlay key")
        pool.show(labels)
        pool.draw()

    def _overlay_texts(self, opts: ViewOptions, extra: Overlay2D, lay: Layout) -> None:
        if extra.show_help:
            self.draw_help(extra.help or help_text(opts), lay.world)
        bottom = 0.0
        if extra.errors:
            wide = max(160.0, lay.panel.x0)
            box = self._boxed(self.banner, "\n".join(extra.errors[:8]), wide)
            bottom = min(box, lay.world.height / 2)  # never more than half the scene
            self._draw_boxed(self.banner, Rect(0.0, 0.0, wide, bottom), palette.ERROR_BG)
        if extra.note:
            soup = TriangleSoup()
            soup.add(geo.quads(0, bottom, lay.panel.x0, bottom + NOTE_HEIGHT), palette.NOTE_BG)
            self.ui_batch.draw(*soup.build())
            self.note.text = extra.note
            self.note.position = (MARGIN, bottom + NOTE_HEIGHT / 2)
            self.note.draw()

    def draw_help(self, content: str, world: Rect) -> None:
        """The help overlay: a box in the world's top-left corner, its lines wrapped to it."""
        width = max(160.0, min(HELP_WIDTH, world.width - 2 * HELP_GAP))
        height = self._boxed(self.help, content, width)
        left, top = world.x0 + HELP_GAP, world.y1 - 8
        self._draw_boxed(self.help, Rect(left, max(0.0, top - height), left + width, top))

    def _boxed(self, text: Any, content: str, width: float) -> float:
        """Wrap ``content`` to a box ``width`` wide (padding inside); the box's height."""
        text.width = max(40, int(width - 2 * BOX_PAD))
        text.text = content
        return float(text.content_height) + 2 * BOX_PAD

    def _draw_boxed(self, text: Any, box: Rect, ink: palette.Color = palette.PANEL_BG) -> None:
        """The box, then its wrapped text clipped to it: text never spills over the scene."""
        soup = TriangleSoup()
        soup.add(geo.quads(box.x0, box.y0, box.x1, box.y1), ink)
        self.ui_batch.draw(*soup.build())
        text.anchor_y = "top"
        text.position = (box.x0 + BOX_PAD, box.y1 - BOX_PAD)
        with self.canvas.clipped(box):
            text.draw()

    def snapshot(self) -> np.ndarray:
        """The frame's pixels as ``(H, W, 3) uint8``, row 0 at the top."""
        return self.canvas.snapshot()
