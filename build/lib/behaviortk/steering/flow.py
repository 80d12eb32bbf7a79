"""The ``flow`` steering primitive: follow a distance field to a goal around obstacles and walls.

Model, implementation, where it is done, and the checks of a definition that
only the world's geometry shows (a goal inside an obstacle, a grid too large,
a goal out of reach of the group's spawn). The field itself, computed once per
goal and cached, is ``world/flow_field.py``; every agent reads it by bilinear
lookup, all rows at once. Both engines run this one implementation.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pydantic import field_validator

from behaviortk.format.fields import PNonNeg, PPositive, doc
from behaviortk.format.nodes import DefinitionFinding, Target
from behaviortk.registry import Registries
from behaviortk.sense.sensing import Sense
from behaviortk.steering.context import Steering, SteeringContext
from behaviortk.steering.primitives import TargetedModel
from behaviortk.vec import Array, normalize
from behaviortk.world.flow_field import FlowField, FlowFieldError, Goal, field_for, too_many_cells
from behaviortk.world.state import World

GOAL_KINDS = ("point", "zone")
"""Target kinds a flow field can lead to: goals that do not move, so one field serves all ticks."""


class Flow(TargetedModel):
    """Follow a distance field to the target around obstacles and walls (a flow field).

    After Elijah Emerson, "Crowd Pathfinding and Steering Using Flow Field Tiles"
    (*Game AI Pro*, 2013) and Treuille, Cooper & Popovic, "Continuum Crowds"
    (SIGGRAPH 2006): one field per goal, shared by every agent, which moves
    against its gradient. The world is cut into square cells of `cell_size`; a
    cell is blocked where an obstacle's disc or a wall segment, grown by the
    group's agent radius (so agents are led around corners, not onto them),
    touches it. The distance to the goal's cells (a `point` target's cell, or
    the cells whose centre is inside a `zone`) is Dijkstra's over the
    8-connected grid of free cells (steps of one cell and sqrt(2) cells, no
    corner cutting), computed once per goal, cell size, radius and world
    geometry. Where Treuille et al. solve the Eikonal equation (fast
    marching), we depart: Dijkstra on the grid (a grid search, as Emerson's
    integration field) is up to about 8 % long off the axes and diagonals. Each agent reads the gradient by bilinear interpolation
    between the four cell centres around it: desired velocity = max_speed along
    minus the gradient (normalised), force = desired - velocity (Reynolds' seek
    form). In a goal cell the desired velocity is zero (the agent brakes) and
    the leaf reports SUCCESS (where no field can be made, say an obstacle dragged onto
    the goal in the viewer, the force is zero). With a `clearance`, cells near obstacles and walls cost more
    to cross (Treuille et al.'s discomfort), so the field keeps crowds off door jambs and
    walls where there is room. An agent in a blocked cell, or one the goal cannot
    be reached from, heads for the nearest cell that can; outside the grid it
    reads the nearest edge cells. The grid does not wrap on a wrapped world.
    Validation rejects a goal inside an obstacle, more than 100,000,000 cells
    and a goal no cell of the group's spawn can reach.
    """

    type: Literal["flow"] = "flow"
    target: Target = doc(
        "The goal: a `point` target (its cell) or a `zone` target (the cells whose centre is "
        "inside the zone), goals that do not move, so one field serves every tick"
    )
    cell_size: PPositive = doc(
        "Side of the grid's square cells: smaller follows the geometry more closely, costs "
        "more cells (width / cell_size x height / cell_size, at most 100,000,000)",
        10.0,
        unit="world units",
    )
    clearance: PNonNeg = doc(
        "Keep this far from obstacles and walls where there is room: cells within it of a "
        "blocked cell cost up to twice as much to cross (Treuille et al.'s discomfort), so "
        "crowds take the middle of a door instead of hugging its jambs; 0 = shortest paths",
        0.0,
        unit="world units",
    )

    @field_validator("target")
    @classmethod
    def _fixed_goal(cls, target: Any) -> Any:
        kind = getattr(target, "kind", None)
        if kind not in GOAL_KINDS:
            raise ValueError(
                f"flow needs a target of kind 'point' or 'zone' (a goal that does not move, "
                f"so its field is computed once), got {kind!r}"
            )
        return target

    def definition_findings(self, definition: Any, group: Any) -> list[DefinitionFinding]:
        return definition_findings(self, definition, group)


def goal_of(p: Flow, world: World) -> Goal:
    """The field's goal: the target's point, or its zone."""
    target: Any = p.target
    if target.kind == "zone":
        return Goal(zone=world.zones[target.zone])
    return Goal(point=(float(target.at[0]), float(target.at[1])))


def group_field(p: Flow, world: World, radius: float) -> FlowField:
    return field_for(world, goal_of(p, world), float(p.cell_size), radius, float(p.clearance))


def flow_force(field: FlowField, pos: Array, vel: Array, max_speed: Array) -> Array:
    """``desired - vel`` with ``desired = max_speed * -normalize(gradient at pos)``, zero desired
    velocity in a goal cell."""
    desired = -normalize(field.lookup(pos)) * max_speed[:, None]
    desired[field.at_goal(pos)] = 0.0
    return np.asarray(desired - vel, dtype=np.float64)


def flow(p: Flow, ctx: SteeringContext) -> Steering:
    try:
        field = group_field(p, ctx.world, float(ctx.per_agent("radius").max()))
    except FlowFieldError:  # an obstacle dragged onto the goal in the viewer: no way to go
        return Steering(np.zeros((ctx.n, 2)))
    return Steering(flow_force(field, ctx.pos, ctx.vel, ctx.per_agent("max_speed")))


def flow_done(p: Any, sense: Sense, group: str, memory: Any) -> np.ndarray:
    """SUCCESS where the agent stands in a goal cell."""
    rows = sense.rows(group)
    if rows.stop <= rows.start:
        return np.zeros(0, dtype=bool)
    try:
        field = group_field(p, sense.world, float(sense.agents.radius[rows].max()))
    except FlowFieldError:
        return np.zeros(rows.stop - rows.start, dtype=bool)
    return field.at_goal(sense.agents.pos[rows])


# ------------------------------------------------------------------ validation
def _inside_obstacle(p: Flow, definition: Any, world: World) -> DefinitionFinding | None:
    """A goal no agent can stand on: a point inside an obstacle, a zone entirely inside one."""
    target: Any = p.target
    for k, ob in enumerate(definition.obstacles):
        cx, cy, r = float(ob.at[0]), float(ob.at[1]), float(ob.radius)
        where = f"obstacle {k} (centre [{cx:g}, {cy:g}], radius {r:g})"
        if target.kind == "point":
            x, y = float(target.at[0]), float(target.at[1])
            if math.hypot(x - cx, y - cy) < r:
                return (
                    ["target", "at"],
                    f"flow's goal [{x:g}, {y:g}] is inside {where}; move the goal out of it",
                    "flow_goal_in_obstacle",
                )
            continue
        zone = world.zones[target.zone]
        if zone.kind == "circle":
            covered = math.hypot(*(zone.center - (cx, cy))) + zone.radius <= r
        else:
            corners = [
                (x, y) for x in (zone.low[0], zone.high[0]) for y in (zone.low[1], zone.high[1])
            ]
            covered = all(math.hypot(x - cx, y - cy) <= r for x, y in corners)
        if covered:
            return (
                ["target", "zone"],
                f"flow's goal, zone {target.zone!r}, is inside {where}; move the zone out of it",
                "flow_goal_in_obstacle",
            )
    return None


def spawn_cells(group: Any, field: FlowField) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of the cells the group spawns in: those an area overlaps, those of
    listed positions, those of a ring's positions."""
    spawn = group.spawn
    if spawn.kind == "area":
        (j0, j1), (i0, i1) = field.cells_of(np.array([spawn.min, spawn.max], dtype=np.float64))
        jj, ii = np.mgrid[j0 : j1 + 1, i0 : i1 + 1]
        return jj.ravel(), ii.ravel()
    if spawn.kind == "positions":
        pos = np.array(spawn.points, dtype=np.float64).reshape(-1, 2)
    else:
        angles = 2.0 * np.pi * np.arange(group.count) / max(group.count, 1)
        pos = np.array(spawn.center, dtype=np.float64) + spawn.radius * np.stack(
            [np.cos(angles), np.sin(angles)], axis=1
        )
    return field.cells_of(pos)


def definition_findings(p: Flow, definition: Any, group: Any) -> list[DefinitionFinding]:
    """The grid's size, a goal inside an obstacle, a goal the group's spawn cannot reach."""
    from behaviortk.world.build import build_world

    w = definition.world
    too_large = too_many_cells(float(w.width), float(w.height), float(p.cell_size))
    if too_large:
        return [(["cell_size"], too_large, "flow_grid_too_large")]
    world = build_world(w, definition.obstacles, definition.walls, (), definition.zones)
    inside = _inside_obstacle(p, definition, world)
    if inside is not None:
        return [inside]
    try:
        field = group_field(p, world, float(group.radius))
    except FlowFieldError as exc:
        where = "cell_size" if exc.kind == "flow_grid_too_large" else "target"
        return [([where], f"flow: {exc}", exc.kind)]
    if group.count == 0:
        return []
    j, i = spawn_cells(group, field)
    if not np.isfinite(field.distance[j, i]).any():
        where = "spawn area" if group.spawn.kind == "area" else "spawn positions"
        return [
            (
                ["target"],
                f"flow's goal cannot be reached from the group's {where}: none of its "
                f"{j.size:,} cells (cell_size {p.cell_size:g}) has a way to the goal around the "
                "obstacles and walls (grown by the agents' radius); open a gap of a few cells, "
                "move the goal or the spawn",
                "flow_unreachable",
            )
        ]
    return []


def register(registries: Registries) -> None:
    registries.primitives.register(Flow, flow, done=flow_done)
