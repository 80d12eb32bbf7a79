"""Overlays: each a key, a name and a builder of triangles from the last tick's state.

Builders only read: agent arrays, the steering DebugBuffer (what primitives
recorded: crosshair, wander, box, feelers, hiding spots, waypoints) and the
neighbour sets. ``rows`` is a boolean mask of the agents to annotate: all
agents when the overlay is on, else only the selected agent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.vec import Array, from_angle, normalize
from behaviortk.viewer import geometry as geo
from behaviortk.viewer import palette
from behaviortk.viewer.gpu import TriangleSoup
from behaviortk.viewer.sight_cones import sight_shapes
from behaviortk.viewer.viewport import Viewport

LINE = 2.0  # stroke width in pixels
ARROW = 50.0  # pixels of a vector at its limit


@dataclass
class OverlayInput:
    """What an overlay may read: the simulation-like object, the mapping, the rows to mark."""

    sim: Any  # needs .world and .agents; .debug used when present
    vp: Viewport
    rows: np.ndarray  # (N,) bool
    trails: Any = None  # viewer/trails.Trails kept by the window or the renderer


def debug_records(debug: Any, kind: str) -> Iterator[tuple[np.ndarray, dict[str, Array]]]:
    """``(rows, arrays)`` recorded in the DebugBuffer under ``kind`` this tick."""
    if debug is None:
        return
    for record in debug.of_kind(kind):
        yield record.rows, record.arrays


def _masked(inp: OverlayInput, kind: str) -> Iterator[tuple[np.ndarray, dict[str, Array]]]:
    """Debug records of ``kind`` restricted to the rows being annotated."""
    for rows, arrays in debug_records(getattr(inp.sim, "debug", None), kind):
        keep = inp.rows[rows] if rows.size else np.zeros(0, bool)
        if keep.any():
            yield rows[keep], {k: np.asarray(v)[keep] for k, v in arrays.items()}


def _scaled_vectors(
    inp: OverlayInput, vec: Array, limit: Array, soup: TriangleSoup, color: palette.Color
) -> None:
    """Arrows from each agent, ``ARROW`` pixels long at the limit (max speed / max force)."""
    ag = inp.sim.agents
    m = inp.rows
    if not m.any():
        return
    safe = np.where(limit[m] > 0.0, limit[m], 1.0)
    start = inp.vp.to_screen(ag.pos[m])
    tip = start + vec[m] * (ARROW / safe)[:, None]
    soup.add(geo.segments(start, tip, LINE), color)


def velocity(inp: OverlayInput, soup: TriangleSoup) -> None:
    ag = inp.sim.agents
    _scaled_vectors(inp, ag.vel, ag.max_speed, soup, palette.VELOCITY)


def force(inp: OverlayInput, soup: TriangleSoup) -> None:
    ag = inp.sim.agents
    _scaled_vectors(inp, ag.force, ag.max_force, soup, palette.FORCE)


def crosshair(inp: OverlayInput, soup: TriangleSoup) -> None:
    for _, arr in _masked(inp, "crosshair"):
        soup.add(geo.crosshairs(inp.vp.to_screen(arr["point"]), 9.0, LINE), palette.CROSSHAIR)


def wander(inp: OverlayInput, soup: TriangleSoup) -> None:
    s = inp.vp.scale
    for _, arr in _masked(inp, "wander"):
        radius = np.broadcast_to(np.asarray(arr["radius"], float), arr["center"].shape[:1])
        soup.add(geo.rings(inp.vp.to_screen(arr["center"]), radius * s, LINE), palette.WANDER)
        target = inp.vp.to_screen(arr["target"])
        soup.add(geo.discs(target, np.full(target.shape[0], 4.0), 10), palette.WANDER)


def view(inp: OverlayInput, soup: TriangleSoup) -> None:
    ag = inp.sim.agents
    m = inp.rows
    if not m.any():
        return
    center = inp.vp.to_screen(ag.pos[m])
    radius = ag.view_distance[m] * inp.vp.scale
    fov = ag.fov[m]
    full = fov >= 2.0 * np.pi - 1e-9
    soup.add(geo.rings(center[full], radius[full], LINE), palette.VIEW)
    facing = normalize(ag.heading[m][~full])
    soup.add(geo.arcs(center[~full], radius[~full], facing, fov[~full], LINE), palette.VIEW)


def _few_neighbours(inp: OverlayInput, marked: np.ndarray) -> tuple[Array, Array]:
    """Links of a few marked agents, by direct distances (no spatial index to build).

    Same rule as Sense.neighbours(group, "same"): same group, not oneself,
    within view distance, inside the field of view of the observer's heading.
    """
    from behaviortk.world.spatial import displacement

    ag = inp.sim.agents
    starts, ends = [], []
    for i in marked:  # only the selected agent(s): a handful of rows
        rows = ag.slices[ag.group_names[int(ag.group[i])]]
        j = np.arange(rows.start, rows.stop)
        j = j[j != i]
        d = displacement(np.broadcast_to(ag.pos[i], (j.size, 2)), ag.pos[j], inp.sim.world)
        dist = np.hypot(d[:, 0], d[:, 1])
        keep = dist <= ag.view_distance[i]
        if ag.fov[i] < 2.0 * np.pi:
            along = d @ ag.heading[i]
            keep &= along >= dist * np.cos(0.5 * ag.fov[i]) - 1e-9
        starts.append(np.broadcast_to(ag.pos[i], (int(keep.sum()), 2)))
        ends.append(ag.pos[i] + d[keep])
    return np.concatenate(starts), np.concatenate(ends)


def neighbours(inp: OverlayInput, soup: TriangleSoup) -> None:
    ag = inp.sim.agents
    marked = np.flatnonzero(inp.rows)
    if marked.size <= 8:
        a, b = _few_neighbours(inp, marked)
    else:
        from behaviortk.sense.sensing import Sense

        # A fresh Sense of the current state (Simulation.sense() would draw random numbers).
        sense = Sense(inp.sim.world, ag, np.zeros((ag.n, 1)), 0, 0.0)
        a_parts, b_parts = [], []
        for group in ag.slices:
            nb = sense.neighbours(group, "same")
            keep = inp.rows[nb.i]
            a_parts.append(ag.pos[nb.i[keep]])
            b_parts.append(ag.pos[nb.i[keep]] + nb.d[keep])
        a, b = np.concatenate(a_parts), np.concatenate(b_parts)
    soup.add(geo.segments(inp.vp.to_screen(a), inp.vp.to_screen(b), 1.5), palette.NEIGHBOUR)


def feelers(inp: OverlayInput, soup: TriangleSoup) -> None:
    """Detection boxes (obstacle avoidance) and feelers (wall avoidance)."""
    ag = inp.sim.agents
    for _, arr in _masked(inp, "box"):
        corners = inp.vp.to_screen(arr["corners"])  # (n, 4, 2)
        a = corners.reshape(-1, 2)
        b = np.roll(corners, -1, axis=1).reshape(-1, 2)
        soup.add(geo.segments(a, b, LINE), palette.BOX)
    for rows, arr in _masked(inp, "feelers"):
        ends = arr["ends"]  # (n, k, 2)
        k = ends.shape[1]
        start = np.repeat(ag.pos[rows], k, axis=0)
        soup.add(
            geo.segments(inp.vp.to_screen(start), inp.vp.to_screen(ends.reshape(-1, 2)), LINE),
            palette.FEELER,
        )


def hiding(inp: OverlayInput, soup: TriangleSoup) -> None:
    for _, arr in _masked(inp, "hiding_spot"):
        pts = inp.vp.to_screen(arr["point"])
        soup.add(geo.discs(pts, np.full(pts.shape[0], 5.0), 12), palette.HIDING)


def waypoints(inp: OverlayInput, soup: TriangleSoup) -> None:
    """Every path's waypoints as dots, and each follower's current waypoint ringed."""
    if inp.rows.any():
        for path in inp.sim.world.paths.values():
            pts = inp.vp.to_screen(path.points)
            soup.add(geo.discs(pts, np.full(pts.shape[0], 3.5), 10), palette.WAYPOINT)
    for _, arr in _masked(inp, "waypoint"):
        pts = inp.vp.to_screen(arr["point"])
        soup.add(geo.rings(pts, np.full(pts.shape[0], 8.0), LINE, 16), palette.WAYPOINT)


def sight(inp: OverlayInput, soup: TriangleSoup) -> None:
    """can_see agents' cones and line-of-sight rays (``viewer/sight_cones.py``)."""
    sight_shapes(inp.sim, inp.vp, inp.rows, soup)


THOUGHT_HALO = 1.8  # the halo's radius, in body radii


def thinking(inp: OverlayInput, soup: TriangleSoup) -> None:
    """A halo under each agent that ticked its tree in the last step (think-rate LOD,
    ``sim/think.py``; a replay's recorded ``thought``). Without LOD every agent of a tree
    thinks every tick."""
    from behaviortk.record.tick_state import thought_of

    ag = inp.sim.agents
    thought = thought_of(inp.sim)
    if thought is None:
        thought = np.zeros(ag.n, dtype=bool)
        for name in getattr(inp.sim, "trees", {}):
            thought[ag.slices[name]] = True
    m = inp.rows & thought
    if not m.any():
        return
    radius = np.maximum(ag.radius[m] * inp.vp.scale, 3.0) * THOUGHT_HALO
    soup.add(geo.discs(inp.vp.to_screen(ag.pos[m]), radius, 16), palette.THOUGHT)


def trails(inp: OverlayInput, soup: TriangleSoup) -> None:
    """Where the agents have been (``viewer/trails.py``), fading with age."""
    if inp.trails is not None:
        inp.trails.shapes(inp.sim, inp.vp, inp.rows, soup)


@dataclass(frozen=True)
class Overlay:
    name: str
    key: str  # the character that toggles it
    label: str  # for the help overlay
    build: Callable[[OverlayInput, TriangleSoup], None] | None  # None: drawn elsewhere


OVERLAYS: tuple[Overlay, ...] = (
    Overlay("trails", "t", "trails (where agents have been)", trails),
    Overlay("velocity", "v", "velocity vectors", velocity),
    Overlay("force", "f", "steering force vectors", force),
    Overlay("crosshair", "c", "predicted point (pursuit/evade crosshair)", crosshair),
    Overlay("wander", "w", "wander circle and target", wander),
    Overlay("view", "o", "view radius and field-of-view cone", view),
    Overlay("sight", "s", "can_see cone and line of sight (green clear, red blocked)", sight),
    Overlay("neighbours", "n", "neighbour links", neighbours),
    Overlay("feelers", "e", "detection box and wall feelers", feelers),
    Overlay("hiding", "i", "hiding spots", hiding),
    Overlay("waypoints", "p", "path waypoints", waypoints),
    Overlay("potential", "l", "Lennard-Jones potential heat map", None),
    Overlay("thinking", "d", "agents that decided (ticked their tree) this tick", thinking),
)

BY_NAME = {o.name: o for o in OVERLAYS}
BY_KEY = {o.key: o for o in OVERLAYS}
PER_AGENT = tuple(o for o in OVERLAYS if o.build is not None)


def facing_of(agents: Any) -> Array:
    """Heading, or the orientation's direction where the heading is zero."""
    h = normalize(agents.heading)
    still = ~np.any(h != 0.0, axis=1)
    if still.any():
        h[still] = from_angle(agents.orientation[still])
    return h
