"""One frame's shapes, built on the CPU from the simulation's arrays (drawing only reads).

``build_scene`` returns the world picture in drawing order (``Scene``): zones, paths,
obstacles, walls and trails as triangles; every agent as one point (one draw call for
all agents, ``bodies.py``); then the selection ring and the enabled overlays on top.
Text (HUD, panel, help) is drawn by the painter on top.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from behaviortk.vec import Array
from behaviortk.viewer import geometry as geo
from behaviortk.viewer import palette
from behaviortk.viewer.bodies import Bodies
from behaviortk.viewer.gpu import TriangleSoup
from behaviortk.viewer.overlays import PER_AGENT, OverlayInput, facing_of
from behaviortk.viewer.viewport import Region, Viewport
from behaviortk.viewer.zones import zone_shapes

MIN_AGENT_PIXELS = 3.0  # radius: tiny agents stay visible and clickable

ACTION_COLORS: tuple[palette.Color, ...] = (
    (255, 99, 71, 255),  # tomato
    (100, 221, 23, 255),  # green
    (41, 182, 246, 255),  # light blue
    (255, 214, 0, 255),  # yellow
    (224, 64, 251, 255),  # magenta
    (0, 229, 255, 255),  # cyan
    (255, 145, 0, 255),  # orange
    (158, 157, 36, 255),  # olive
    (141, 110, 99, 255),  # brown
    (240, 98, 146, 255),  # pink
)


@dataclass
class ViewOptions:
    """What the user asked to see; the scene never changes the simulation."""

    overlays: set[str] = field(default_factory=set)
    color_by: str = "group"  # "group" | "action"
    selected: int | None = None
    region: Region | None = None  # world rectangle shown (None: the whole world)
    zoom: float = 1.0  # the region shrunk around its centre by this factor


def action_names(sim: Any) -> list[str]:
    """Trace names of every steering leaf of every group, in first-seen order (legend order)."""
    names: list[str] = []
    for tree in getattr(sim, "trees", {}).values():
        for i in tree.steering:
            name = tree.nodes[i].name
            if name not in names:
                names.append(name)
    return names


def action_index(sim: Any, names: list[str]) -> np.ndarray:
    """Per agent, the index in ``names`` of the first request that gave a force (-1: none).

    The first request is the highest-priority one in AccumulateForce order, so
    it names the action that mostly drove the agent this tick; requests of zero
    force (``Decision.acted``) are skipped, they drove nothing.
    """
    ag = sim.agents
    out = np.full(ag.n, -1, dtype=np.int64)
    trees = getattr(sim, "trees", {})
    for group, dec in (getattr(sim, "decisions", None) or {}).items():
        tree = trees.get(group)
        acted = getattr(dec, "acted", None)  # requests of zero force do not count
        emitted = np.asarray(dec.emitted if acted is None else acted, dtype=bool)
        if tree is None or emitted.size == 0:
            continue
        lut = np.array([names.index(tree.nodes[i].name) for i in tree.steering], dtype=np.int64)
        first = emitted.argmax(axis=1)
        rows = ag.slices[group]
        out[rows] = np.where(emitted.any(axis=1), lut[first], -1)
    return out


def action_color(index: int) -> palette.Color:
    return ACTION_COLORS[index % len(ACTION_COLORS)]


def agent_colors(sim: Any, opts: ViewOptions) -> np.ndarray:
    """``(N, 4) uint8``: by group, or by the action that ran (grey when none)."""
    ag = sim.agents
    if opts.color_by == "action":
        names = action_names(sim)
        idx = action_index(sim, names)
        table = np.array([*ACTION_COLORS, palette.IDLE], dtype=np.uint8)
        return table[np.where(idx >= 0, idx % len(ACTION_COLORS), len(ACTION_COLORS))]
    return palette.group_table(sim)[np.asarray(ag.group)]


def world_shapes(world: Any, vp: Viewport, soup: TriangleSoup) -> None:
    """Zones (underneath), paths, obstacles and walls."""
    zone_shapes(world, vp, soup)
    for path in world.paths.values():
        soup.add(geo.polylines(vp.to_screen(path.points), path.looped, 2.0), palette.PATH)
    if world.obstacle_pos.shape[0]:
        soup.add(
            geo.discs(vp.to_screen(world.obstacle_pos), world.obstacle_radius * vp.scale, 28),
            palette.OBSTACLE,
        )
    if world.wall_a.shape[0]:
        soup.add(
            geo.segments(vp.to_screen(world.wall_a), vp.to_screen(world.wall_b), 3.0),
            palette.WALL,
        )


UNDER_AGENTS = frozenset({"trails", "thinking"})  # drawn before the agents, the rest after


def overlay_shapes(
    sim: Any,
    vp: Viewport,
    opts: ViewOptions,
    soup: TriangleSoup,
    trails: Any = None,
    under: bool = False,
) -> None:
    """Each per-agent overlay for all agents when on, else for the selected agent only
    (``under``: the overlays drawn beneath the agents, else those above them)."""
    n = sim.agents.n
    selected = np.zeros(n, dtype=bool)
    if opts.selected is not None and 0 <= opts.selected < n:
        selected[opts.selected] = True
    every = np.ones(n, dtype=bool)
    for overlay in PER_AGENT:
        if (overlay.name in UNDER_AGENTS) != under:
            continue
        rows = every if overlay.name in opts.overlays else selected
        if rows.any() and overlay.build is not None:
            overlay.build(OverlayInput(sim, vp, rows, trails), soup)


def agent_bodies(sim: Any, vp: Viewport, opts: ViewOptions) -> Bodies:
    """Every agent as a body of its radius (at least MIN_AGENT_PIXELS) facing its heading."""
    ag = sim.agents
    if ag.n == 0:
        return Bodies.empty()
    size = np.maximum(ag.radius * vp.scale, MIN_AGENT_PIXELS)
    return Bodies(vp.to_screen(ag.pos), size, facing_of(ag), agent_colors(sim, opts))


def selection_ring(sim: Any, vp: Viewport, opts: ViewOptions, soup: TriangleSoup) -> None:
    ag = sim.agents
    sel = opts.selected
    if sel is not None and 0 <= sel < ag.n:
        center = vp.to_screen(ag.pos[sel : sel + 1])
        r = np.array([max(ag.radius[sel] * vp.scale * 1.6, 8.0)])
        soup.add(geo.rings(center, r, 2.0), palette.SELECTED)


@dataclass
class Scene:
    """A frame's world picture in drawing order: ``under`` (zones, paths, obstacles, walls,
    trails), the agents' ``bodies`` (one point each, ``bodies.py``), ``over`` (the selection
    ring and the overlays)."""

    under: TriangleSoup
    bodies: Bodies
    over: TriangleSoup

    def build(self) -> tuple[Any, Any, Any]:
        """All the CPU arrays of the frame (what the benchmark times)."""
        return self.under.build(), self.bodies.packed(), self.over.build()


def build_scene(sim: Any, vp: Viewport, opts: ViewOptions, trails: Any = None) -> Scene:
    under, over = TriangleSoup(), TriangleSoup()
    world_shapes(sim.world, vp, under)
    overlay_shapes(sim, vp, opts, under, trails, under=True)
    selection_ring(sim, vp, opts, over)
    overlay_shapes(sim, vp, opts, over, trails)  # on top: vectors start inside the bodies
    return Scene(under, agent_bodies(sim, vp, opts), over)


def pick_agent(agents: Any, world_point: Array, slack: float) -> int | None:
    """The agent nearest to a clicked world point, if within its radius plus ``slack``."""
    if agents.n == 0:
        return None
    d = np.hypot(*(agents.pos - world_point).T)
    i = int(np.argmin(d))
    return i if d[i] <= agents.radius[i] + slack else None


def pick_obstacle(world: Any, world_point: Array) -> int | None:
    """The obstacle under a world point, if any."""
    if world.obstacle_pos.shape[0] == 0:
        return None
    d = np.hypot(*(world.obstacle_pos - world_point).T)
    i = int(np.argmin(d))
    return i if d[i] <= world.obstacle_radius[i] else None
