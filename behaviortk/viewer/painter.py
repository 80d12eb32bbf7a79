"""Draws one complete frame into the current arcade window; shared by the window and headless render.

Layout (pixels, y up): the HUD band along the top, the side panel on the
right, the world fitted in the rest. Shapes go through two GpuBatch draws
(world picture, then UI backgrounds), the heat map through one textured quad,
text through persistent ``arcade.Text`` objects whose strings are updated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from behaviortk.viewer import geometry as geo
from behaviortk.viewer import palette
from behaviortk.viewer.batch import GpuBatch, TriangleSoup
from behaviortk.viewer.heatmap import HeatmapLayer, params_from_trees
from behaviortk.viewer.hud import HudInfo, help_text, hud_text, legend
from behaviortk.viewer.panel import panel_text
from behaviortk.viewer.scene import ViewOptions, build_scene
from behaviortk.viewer.viewport import Viewport
from behaviortk.viewer.zones import zone_labels

HUD_HEIGHT = 26
PANEL_WIDTH = 360
MARGIN = 8
MONO = ("DejaVu Sans Mono", "Liberation Mono", "Courier New")


def layout(width: int, height: int, world: Any) -> Viewport:
    """Where the world goes in a window of this size."""
    return Viewport(
        world.width,
        world.height,
        MARGIN,
        MARGIN,
        width - PANEL_WIDTH - 2 * MARGIN,
        height - HUD_HEIGHT - 2 * MARGIN,
    )


@dataclass
class Overlay2D:
    """Non-simulation things shown on the frame."""

    errors: list[str] = field(default_factory=list)  # banner lines (reload / step errors)
    show_help: bool = False


class Painter:
    def __init__(self, window: Any) -> None:
        import arcade

        self._arcade = arcade
        self.window = window
        ctx = window.ctx
        self.world_batch = GpuBatch(ctx)
        self.ui_batch = GpuBatch(ctx)
        self.heatmap = HeatmapLayer(ctx)
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
        self.legend = t(
            "", 0, 0, palette.TEXT, 10, font_name=MONO, multiline=True, width=220, anchor_y="top"
        )
        self.help = t(
            "", 0, 0, palette.TEXT, 11, font_name=MONO, multiline=True, width=560, anchor_y="top"
        )
        self.zone_labels: list[Any] = []  # one Text per zone name, grown on demand
        self.banner = t(
            "", 0, 0, palette.TEXT, 11, font_name=MONO, multiline=True, width=800, anchor_y="bottom"
        )

    def viewport(self, world: Any) -> Viewport:
        return layout(self.window.width, self.window.height, world)

    def ui_soup(self, sim: Any, opts: ViewOptions, extra: Overlay2D, vp: Viewport) -> TriangleSoup:
        """Backgrounds for panel, HUD band, legend swatches, help box and error banner."""
        w, h = self.window.width, self.window.height
        soup = TriangleSoup()
        soup.add(geo.quads(w - PANEL_WIDTH, 0, w, h - HUD_HEIGHT), palette.PANEL_BG)
        soup.add(geo.quads(0, h - HUD_HEIGHT, w, h), palette.PANEL_BG)
        x0, _, _, y1 = vp.world_rect()
        for i, (_, color) in enumerate(legend(sim, opts)):
            y = y1 - 10 - i * 15
            soup.add(geo.quads(x0 + 8, y - 10, x0 + 20, y + 2), color)
        if extra.show_help:
            rows = help_text(opts).count("\n") + 1
            soup.add(geo.quads(x0 + 240, y1 - 24 - 17 * rows, x0 + 820, y1 - 8), palette.PANEL_BG)
        if extra.errors:
            soup.add(
                geo.quads(0, 0, w - PANEL_WIDTH, 18 + 15 * min(len(extra.errors), 8)),
                palette.ERROR_BG,
            )
        return soup

    def draw(self, sim: Any, opts: ViewOptions, info: HudInfo, extra: Overlay2D) -> None:
        """Clear and draw the whole frame (reads the simulation, never changes it)."""
        win = self.window
        win.clear(color=palette.BACKGROUND)
        vp = self.viewport(sim.world)
        floor = TriangleSoup()
        floor.add(geo.quads(*vp.world_rect()), palette.WORLD_FLOOR)
        v, c = floor.build()
        self.world_batch.draw(v, c)
        if "potential" in opts.overlays and sim.world.obstacle_pos.shape[0]:
            self.heatmap.update(sim.world, params_from_trees(getattr(sim, "trees", {})))
            self.heatmap.draw(vp.world_rect())
        v, c = build_scene(sim, vp, opts).build()
        x0, y0, x1, y1 = vp.world_rect()
        ctx = win.ctx
        ctx.scissor = (int(x0), int(y0), int(np.ceil(x1 - x0)), int(np.ceil(y1 - y0)))
        try:  # overlays (view cones, links) stay inside the world rectangle
            self.world_batch.draw(v, c)
        finally:
            ctx.scissor = None
        v, c = self.ui_soup(sim, opts, extra, vp).build()
        self.ui_batch.draw(v, c)
        self._texts(sim, opts, info, extra, vp)

    def _texts(
        self, sim: Any, opts: ViewOptions, info: HudInfo, extra: Overlay2D, vp: Viewport
    ) -> None:
        w, h = self.window.width, self.window.height
        self.hud.text = hud_text(sim, info)
        self.hud.position = (MARGIN, h - HUD_HEIGHT / 2)
        self.hud.draw()
        sel = opts.selected
        if sel is not None and 0 <= sel < sim.agents.n:
            self.panel.text = panel_text(sim, sel)
        else:
            self.panel.text = (
                "Click an agent (or press Tab) to inspect its tree, blackboard and requests."
            )
        self.panel.position = (w - PANEL_WIDTH + 8, h - HUD_HEIGHT - 8)
        self.panel.draw()
        self._zone_labels(sim, vp)
        x0, _, _, y1 = vp.world_rect()
        self.legend.text = "\n".join(name for name, _ in legend(sim, opts))
        self.legend.position = (x0 + 26, y1 - 6)
        self.legend.draw()
        if extra.show_help:
            self.help.text = help_text(opts)
            self.help.position = (x0 + 250, y1 - 16)
            self.help.draw()
        if extra.errors:
            lines = extra.errors[:8]
            self.banner.text = "\n".join(lines)
            self.banner.position = (MARGIN, 8)
            self.banner.draw()

    def _zone_labels(self, sim: Any, vp: Viewport) -> None:
        labels = zone_labels(sim.world, vp)
        while len(self.zone_labels) < len(labels):
            self.zone_labels.append(
                self._arcade.Text(
                    "",
                    0,
                    0,
                    palette.ZONE_TEXT,
                    10,
                    font_name=MONO,
                    anchor_x="center",
                    anchor_y="center",
                )
            )
        for text, (name, x, y) in zip(self.zone_labels, labels, strict=False):
            text.text = name
            text.position = (x, y)
            text.draw()

    def snapshot(self) -> np.ndarray:
        """The window's pixels as ``(H, W, 3) uint8``, row 0 at the top."""
        img = self._arcade.get_image(0, 0, self.window.width, self.window.height)
        return np.asarray(img.convert("RGB"))
