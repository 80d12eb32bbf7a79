"""The selected agent's remembered points: its point keys, drawn where they are, with their age.

A guard that lost sight of an intruder goes where it last saw it (``remember`` stores the
point, Buckland's sensory memory, ch. 7: the last sensed position and when). The viewer
draws every point-typed blackboard key of the selected agent that holds a value: a ring
at the point, a thin line from the agent to it, and a label with the key and its age in
ticks (now minus the tick it was stored on: ``BlackboardView.stored_tick``). One agent's
few keys, gathered into arrays and drawn as one shape list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.engines.base import as_point
from behaviortk.vec import normalize
from behaviortk.viewer import geometry as geo
from behaviortk.viewer import palette
from behaviortk.viewer.gpu import TriangleSoup
from behaviortk.viewer.labels import Label
from behaviortk.viewer.viewport import Viewport

RING = 7.0  # pixels: the ring's radius at a remembered point
LEGEND = "remembered point (age in ticks)"


@dataclass(frozen=True)
class Remembered:
    """One agent's remembered points: key names, ``(K, 2)`` world points, ``(K,)`` ages."""

    row: int
    keys: tuple[str, ...]
    points: np.ndarray
    ages: np.ndarray


def remembered(sim: Any, row: int | None) -> Remembered | None:
    """The point keys of the agent in ``row`` (the selected one) that hold a value; None
    without any (or no selection, or a recording: its blackboards are not traced)."""
    engine: Any = getattr(sim, "engine", None)
    if row is None or not 0 <= row < sim.agents.n or not hasattr(engine, "blackboard_view"):
        return None
    group = sim.agents.group_names[int(sim.agents.group[row])]
    if group not in getattr(sim, "trees", {}):
        return None
    view = engine.blackboard_view(row)
    tick = int(sim.tick)
    keys, points, ages = [], [], []
    for key, spec in view.declared.specs.items():
        point = as_point(view.get(key)) if spec.type == "point" else None
        stored = view.stored_tick(key) if point is not None else None
        if point is not None and stored is not None:
            keys.append(key)
            points.append(point)
            ages.append(tick - stored)
    if not keys:
        return None
    return Remembered(row, tuple(keys), np.array(points, float), np.array(ages, np.int64))


def remembered_shapes(sim: Any, vp: Viewport, memory: Remembered, soup: TriangleSoup) -> None:
    """Rings at the points and lines from the agent to the rings."""
    at = vp.to_screen(memory.points)
    agent = np.broadcast_to(vp.to_screen(sim.agents.pos[memory.row : memory.row + 1]), at.shape)
    far = np.hypot(*(at - agent).T) > RING
    rim = at - normalize(at - agent) * RING
    soup.add(geo.segments(agent[far], rim[far], 1.0), palette.REMEMBERED)
    soup.add(geo.rings(at, np.full(at.shape[0], RING), 2.0), palette.REMEMBERED)


def remembered_labels(vp: Viewport, memory: Remembered) -> list[Label]:
    """``key  N ticks`` beside each ring."""
    at = vp.to_screen(memory.points)
    return [
        Label(f"{key}  {age} ticks", x + RING + 4, y, palette.REMEMBERED, 9.5)
        for key, age, (x, y) in zip(memory.keys, memory.ages.tolist(), at.tolist(), strict=True)
    ]
