"""Colours: one per group, one per action (trace name), overlay inks."""

from __future__ import annotations

import numpy as np

Color = tuple[int, int, int, int]

BACKGROUND: Color = (18, 20, 28, 255)
WORLD_FLOOR: Color = (28, 31, 42, 255)
OBSTACLE: Color = (92, 98, 118, 255)
WALL: Color = (200, 200, 210, 255)
PATH: Color = (70, 110, 160, 255)
SELECTED: Color = (255, 255, 255, 255)
TEXT: Color = (230, 232, 240, 255)
DIM_TEXT: Color = (150, 155, 170, 255)
ERROR_BG: Color = (150, 20, 30, 255)
PANEL_BG: Color = (12, 14, 20, 230)
IDLE: Color = (120, 120, 120, 255)  # agents whose tree emitted nothing

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
SIGHT_CONE: Color = (255, 236, 150, 150)
SIGHT_CLEAR: Color = (40, 230, 140, 255)  # line of sight free
SIGHT_BLOCKED: Color = (255, 40, 110, 255)  # an obstacle or wall crosses it

# Zones: a translucent fill under everything, an opaque rim, the name in ZONE_TEXT.
ZONE_FILL: Color = (70, 190, 150, 40)
ZONE_EDGE: Color = (70, 190, 150, 255)
ZONE_TEXT: Color = (150, 235, 200, 255)

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


def group_table() -> np.ndarray:
    """``(n_colors, 4) uint8`` lookup, indexed by ``group % n``."""
    return np.array(GROUP_COLORS, dtype=np.uint8)
