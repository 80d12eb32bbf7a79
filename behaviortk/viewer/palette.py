"""Colours: one per group (the definition's `colour`, else the palette), overlay inks."""

from __future__ import annotations

from typing import Any

import numpy as np

Color = tuple[int, int, int, int]

BACKGROUND: Color = (18, 20, 28, 255)
WORLD_FLOOR: Color = (28, 31, 42, 255)
OBSTACLE: Color = (92, 98, 118, 255)
WALL: Color = (200, 200, 210, 255)
PATH: Color = (70, 110, 160, 255)
PATH_TEXT: Color = (125, 165, 215, 255)  # a path's name, beside its first point
SELECTED: Color = (255, 255, 255, 255)
TEXT: Color = (230, 232, 240, 255)
DIM_TEXT: Color = (150, 155, 170, 255)
ERROR_BG: Color = (150, 20, 30, 255)
NOTE_BG: Color = (40, 46, 70, 255)  # the status line saying why the run paused
PANEL_BG: Color = (12, 14, 20, 230)
IDLE: Color = (120, 120, 120, 255)  # agents whose tree emitted nothing

# Tree panel: box fills by status, edges, the path to the running leaves.
NODE_IDLE: Color = (62, 66, 80, 255)  # not ticked this tick
NODE_RUNNING: Color = (240, 180, 40, 255)
NODE_SUCCESS: Color = (46, 140, 70, 255)
NODE_FAILURE: Color = (180, 50, 55, 255)
NODE_EDGE: Color = (16, 18, 26, 255)
NODE_TEXT: Color = (240, 240, 245, 255)
NODE_TEXT_DARK: Color = (24, 22, 18, 255)
TREE_EDGE: Color = (110, 115, 135, 255)
TREE_PATH: Color = (255, 255, 255, 255)
NODE_SELECTED: Color = (90, 200, 255, 255)  # the tree panel's selected node (``b`` acts on it)
BREAKPOINT: Color = (235, 30, 30, 255)  # the red dot of a node with a breakpoint
FORCE_DIAL: Color = (44, 48, 64, 255)

# Side panel and widgets.
TAB_BG: Color = (30, 33, 45, 255)
TAB_ACTIVE: Color = (58, 64, 86, 255)
SLIDER_TRACK: Color = (60, 64, 80, 255)
SLIDER_FILL: Color = (74, 163, 255, 255)
SLIDER_KNOB: Color = (235, 238, 245, 255)
BUTTON: Color = (52, 58, 78, 255)
BUTTON_HOT: Color = (74, 120, 200, 255)
REFUSED: Color = (255, 110, 110, 255)
OK_TEXT: Color = (130, 220, 150, 255)

# Overlay inks: distinct from every group colour so pixel tests can find them.
VELOCITY: Color = (0, 255, 0, 255)
FORCE: Color = (255, 0, 0, 255)
CROSSHAIR: Color = (255, 0, 255, 255)
WANDER: Color = (0, 255, 255, 255)
VIEW: Color = (255, 255, 0, 110)
NEIGHBOUR: Color = (255, 128, 0, 160)
BOX: Color = (128, 0, 255, 255)
FEELER: Color = (190, 255, 60, 255)
HIDING: Color = (0, 128, 255, 255)
WAYPOINT: Color = (255, 200, 120, 255)
TRAIL: Color = (210, 215, 235, 220)  # alpha fades with age
SIGHT_CONE: Color = (255, 236, 150, 150)
SIGHT_CLEAR: Color = (40, 230, 140, 255)  # line of sight free
SIGHT_BLOCKED: Color = (255, 40, 110, 255)  # an obstacle or wall crosses it
SIGHT_OUT_OF_RANGE: Color = (120, 150, 255, 255)  # farther than the view distance
SIGHT_OUTSIDE_CONE: Color = (255, 165, 30, 255)  # off the field of view
THOUGHT: Color = (255, 255, 255, 200)  # a halo under agents that ticked their tree (LOD)
REMEMBERED: Color = (255, 120, 220, 255)  # the selected agent's remembered points (pink)

# Zones: a translucent fill under everything, an opaque rim, the name in ZONE_TEXT on a plate.
ZONE_FILL: Color = (70, 190, 150, 40)
ZONE_EDGE: Color = (70, 190, 150, 255)
ZONE_TEXT: Color = (150, 235, 200, 255)
ZONE_PLATE: Color = (16, 30, 26, 235)  # behind a zone's name, over the agents

GROUP_COLORS: tuple[Color, ...] = (
    (66, 165, 245, 255),  # blue
    (239, 83, 80, 255),  # red
    (102, 187, 106, 255),  # green
    (255, 202, 40, 255),  # amber
    (171, 71, 188, 255),  # purple
    (38, 198, 218, 255),  # cyan
    (255, 138, 101, 255),  # orange
    (212, 225, 87, 255),  # lime
)


def group_color(index: int) -> Color:
    return GROUP_COLORS[index % len(GROUP_COLORS)]


def parse_colour(value: Any) -> Color | None:
    """A group's `colour` as RGBA: ``"#rrggbb"`` or ``[r, g, b]``; None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        h = value.lstrip("#")
        return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16), 255)
    r, g, b = (int(v) for v in value)
    return (r, g, b, 255)


def group_colours(sim: Any) -> list[Color]:
    """One colour per group of ``sim.agents.group_names``: the definition's `colour` where
    the group sets one, else the palette's by the group's index (agents, legend, GIFs)."""
    names = list(sim.agents.group_names)
    specs: dict[str, Any] = {}
    scenario = getattr(sim, "scenario", None)
    for g in getattr(getattr(scenario, "definition", None), "groups", ()):
        specs[g.name] = parse_colour(getattr(g, "colour", None))
    out = []
    for i, name in enumerate(names):
        given = specs.get(name)
        out.append(given if given is not None else group_color(i))
    return out


def group_table(sim: Any) -> np.ndarray:
    """``(groups, 4) uint8``, indexed by ``agents.group``."""
    return np.array(group_colours(sim), dtype=np.uint8).reshape(-1, 4)


def shade(color: Color, factor: float) -> Color:
    """``color`` darkened (factor < 1) or lightened towards white (factor > 1)."""
    r, g, b, a = color
    if factor <= 1.0:
        return (round(r * factor), round(g * factor), round(b * factor), a)
    t = min(factor - 1.0, 1.0)
    return (round(r + (255 - r) * t), round(g + (255 - g) * t), round(b + (255 - b) * t), a)
