"""Zones as the viewer draws them: a translucent fill, a rim, and the name on a plate.

The name sits just inside the zone's top rim, on an opaque plate drawn over the
agents: a zone's centre is where its agents gather (a goal, an exit), and a name
there was lost under them (issue 28, item 11).

Circles and rectangles are each built in one call over all zones of that kind
(``geometry`` is vectorised over shapes); the painter writes the names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.vec import Array
from behaviortk.viewer import geometry as geo
from behaviortk.viewer import palette
from behaviortk.viewer.gpu import TriangleSoup

RIM = 2.0


def zone_shapes(world: Any, vp: Any, soup: TriangleSoup) -> None:
    """Every zone's fill, then every zone's rim."""
    zones = list(getattr(world, "zones", {}).values())
    circles = [z for z in zones if z.kind == "circle"]
    rects = [z for z in zones if z.kind != "circle"]
    if circles:
        center = vp.to_screen(np.array([z.center for z in circles], dtype=np.float64))
        radius = np.array([z.radius for z in circles], dtype=np.float64) * vp.scale
        soup.add(geo.discs(center, radius, 40), palette.ZONE_FILL)
        soup.add(geo.rings(center, radius, RIM, 40), palette.ZONE_EDGE)
    if rects:
        low = vp.to_screen(np.array([z.low for z in rects], dtype=np.float64))
        high = vp.to_screen(np.array([z.high for z in rects], dtype=np.float64))
        soup.add(rect_fills(low, high), palette.ZONE_FILL)
        soup.add(rect_rims(low, high, RIM), palette.ZONE_EDGE)


def rect_fills(low: Array, high: Array) -> Array:
    """Axis-aligned rectangles ``(M, 2)`` corners as two triangles each."""
    x0, y0, x1, y1 = low[:, 0], low[:, 1], high[:, 0], high[:, 1]
    corners = np.stack(
        [np.stack(c, axis=1) for c in ((x0, y0), (x1, y0), (x1, y1), (x0, y0), (x1, y1), (x0, y1))],
        axis=1,
    )
    return corners.reshape(-1, 2)


def rect_rims(low: Array, high: Array, width: float) -> Array:
    """The four sides of each rectangle as thick segments."""
    x0, y0, x1, y1 = low[:, 0], low[:, 1], high[:, 0], high[:, 1]
    a = np.stack([np.stack(c, axis=1) for c in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))], axis=1)
    b = np.roll(a, -1, axis=1)
    return geo.segments(a.reshape(-1, 2), b.reshape(-1, 2), width)


#: Pixels from a zone's top rim down to its name's centre line (a 10-point name's half height
#: and the rim, clear of both).
NAME_DROP = 12.0


def zone_labels(world: Any, vp: Any) -> list[tuple[str, float, float]]:
    """``(name, x, y)``: each zone's name centred across it, just inside its top rim (at its
    centre when the zone is too low on screen for that), in screen pixels."""
    out = []
    for z in getattr(world, "zones", {}).values():
        x, y = vp.to_screen(np.asarray(z.center, dtype=np.float64))
        half = z.radius if z.kind == "circle" else 0.5 * float(z.high[1] - z.low[1])
        top = y + abs(half * vp.scale)
        out.append((z.name, float(x), float(max(y, top - NAME_DROP))))
    return out


def name_plates(labels: list[tuple[str, float, float]], advance: float) -> Array:
    """The plates behind zone names (``advance``: a glyph's width in pixels), as triangles:
    opaque, so a name reads over the agents beneath it."""
    if not labels:
        return np.zeros((0, 2))
    half_w = np.array([0.5 * len(n) * advance + 4.0 for n, _, _ in labels])
    x = np.array([x for _, x, _ in labels])
    y = np.array([y for _, _, y in labels])
    return rect_fills(np.stack([x - half_w, y - 8.0], 1), np.stack([x + half_w, y + 8.0], 1))
