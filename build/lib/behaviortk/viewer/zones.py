"""Zones as the viewer draws them: a translucent fill, a rim, and the name at the centre.

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


def zone_labels(world: Any, vp: Any) -> list[tuple[str, float, float]]:
    """``(name, x, y)``: each zone's name at its centre, in screen pixels."""
    out = []
    for z in getattr(world, "zones", {}).values():
        x, y = vp.to_screen(np.asarray(z.center, dtype=np.float64))
        out.append((z.name, float(x), float(y)))
    return out
