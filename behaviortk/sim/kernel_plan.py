"""Which compiled kernels a Simulation needs: worked out from its trees, world and groups.

Compiling every kernel on a cold cache takes about a minute; a scenario calls a
few of them. :func:`plan` walks each group's nodes (and the models inside them:
a combiner's children, a condition's target, an offset's inner target) and
names what a tick on compiled kernels will call, in the order a tick first
calls it (the names of ``sim/backend.WARM``, in its order):

- every target of kind ``self`` or ``agent``: ``agent_facts``; ``nearest``:
  ``nearest_small`` too when one side has at most ``SMALL_SIDE`` agents (the
  brute-force search), else ``nearest_grid`` (a grid searched in rings), a
  ``visible`` nearest ``visible_grid``, then ``agent_facts``; a ``centroid`` of ``neighbours``:
  the neighbour query;
- conditions: ``in_range``; ``neighbours`` and a `utility`'s ``neighbours`` input (the
  neighbour query); any node
  drawing random numbers: ``uniforms`` (the whole table);
- steering leaves on kernels (``steering/jobs.py``): their own kernel
  (``wander`` with ``uniforms_rows``, flocking leaves with the neighbour query
  and ``flock_sums``, or ``flock_blend`` for a blend of one ``of``'s flocking,
  the shape and path kernels, ``orca`` with the neighbour query of any group, each
  combiner's), a ``ROWS`` leaf its generated
  loop (:attr:`Plan.row_leaves`), and the act phase's own (``request_rows``,
  ``accumulate_acted``; ``accumulate_rows`` where a leaf runs on NumPy and may
  turn). A leaf on NumPy (a plugin's, an option no kernel reads, or every leaf
  when debug geometry is on: the viewer) still senses through the kernels:
  its targets, neighbours and random numbers;
- the world: ``integrate`` (and ``heading_smoothing`` over 1 tick), large
  groups' ``cell_order`` (and ``renumbered`` under non-penetration, whose
  lists follow the rows), ``non_penetration`` (``close_pairs`` from 2 agents,
  ``fold`` on wrapped worlds); the batch engine's fused decide (:attr:`Plan.fused`);
- think-rate LOD (a group that does not think every tick): who thinks
  (``think_due``), the held requests (``held_requests``), the batch engine's held
  statuses (``held_statuses``) and the held perception's ``held_offsets``, ``held_targets``, ``held_merge`` and
  ``held_sums`` (``sense/held.py``).

A plugin's node or target kind that calls a kernel itself is not known here:
that kernel compiles on its first call, as every kernel did before plans.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from behaviortk.leaves import conditions as cond
from behaviortk.leaves.utility_inputs import NeighboursInput
from behaviortk.registry import STEERING
from behaviortk.sense import derived_targets as derived
from behaviortk.sense import target_kinds as tk
from behaviortk.sim.backend import WARM
from behaviortk.sim.cell_order import SORT_MIN
from behaviortk.steering import combiners as cb
from behaviortk.steering import jobs
from behaviortk.steering import orca as oc
from behaviortk.steering import primitives as pm
from behaviortk.steering.context import random_numbers
from behaviortk.world.integrate_loops import unknown_world_options
from behaviortk.world.spatial import SMALL_SIDE

SHAPES: dict[type, str] = {
    pm.ObstacleAvoidance: "obstacle_avoidance",
    pm.LJAvoidance: "lj_avoidance",
    pm.WallAvoidance: "wall_avoidance",
    pm.PathFollowing: "path_following",
}
COMBINERS: dict[type, str] = {
    cb.Blend: "blend",
    cb.PrioritizedSum: "prioritized_sum",
    cb.FirstNonzero: "first_nonzero",
    cb.PrioritizedDither: "prioritized_dither",
}
FLOCKING = (pm.Separation, pm.Alignment, pm.Cohesion)


@dataclass(frozen=True)
class Plan:
    """What a Simulation compiles before its first tick."""

    kernels: tuple[str, ...]
    """Hand-written kernels (``backend.WARM`` names), in the order a tick first calls them."""
    row_leaves: tuple[Any, ...]
    """Leaf models whose generated ``ROWS`` loop runs (``steering/row_loops.py``), in
    request order; leaves sharing a loop are all listed."""
    fused: bool
    """The batch engine ticks reactive trees as one compiled function (``batch/fused.py``)."""


class _Walk:
    """The kernels one Simulation's nodes call (see the module docstring)."""

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.slices: dict[str, slice] = sim.agents.slices
        self.n = int(sim.agents.n)
        self.kinds = sim.registries
        self.found: set[str] = set()
        self.row_leaves: list[Any] = []

    def size(self, group: str, of: str = "same") -> int:
        """Agents in ``of`` as seen from ``group`` ("same", "any" or a group name)."""
        if of == "any":
            return self.n
        rows = self.slices.get(group if of == "same" else of)
        return 0 if rows is None else rows.stop - rows.start

    def neighbours(self, group: str, of: str) -> bool:
        """The neighbour query runs (both sides have agents); False: the plain empty answer."""
        if self.size(group) and self.size(group, of):
            self.found.add("neighbour_query")
            return True
        return False

    # ---------------------------------------------------------------- nodes
    def node(self, model: Any, kind: str, group: str, compiled_act: bool) -> None:
        for inner in _models(model):
            self.sensed(inner, group)
        if kind == STEERING:
            if compiled_act:
                self.found.add("accumulate_acted")
            self.steer(model, group, compiled_act, top=True)
        elif random_numbers(model):
            self.found.add("uniforms")

    def sensed(self, model: Any, group: str) -> None:
        """A target or a condition anywhere in a node."""
        if isinstance(model, tk.SelfTarget | tk.AgentTarget) and self.n:
            self.found.add("agent_facts")
        elif isinstance(model, tk.NearestTarget) and self.n:
            sides = (self.size(group), self.size(group, model.group))
            if model.visible and min(sides) > 0:  # a grid searched in rings, sight tested
                self.found.add("visible_grid")
            elif min(sides) > 0:  # brute force when one side is small, else a grid
                self.found.add("nearest_small" if min(sides) <= SMALL_SIDE else "nearest_grid")
            self.found.add("agent_facts")
        elif isinstance(model, derived.CentroidTarget) and model.group == derived.NEIGHBOURS:
            self.neighbours(group, "same")
        elif isinstance(model, cond.InRange):
            self.found.add("in_range")
        elif isinstance(model, cond.NeighboursCond | NeighboursInput):
            self.neighbours(group, model.of)

    def steer(self, model: Any, group: str, compiled_act: bool, top: bool) -> None:
        """A steering leaf, or a combiner's child (``top`` False)."""
        if not (compiled_act and jobs.supports(model)):  # its NumPy implementation
            for inner in _models(model):  # a combiner's flocking children too
                if isinstance(inner, pm.FlockModel):
                    self.neighbours(group, inner.of)
                elif isinstance(inner, oc.Orca):
                    self.neighbours(group, oc.NEIGHBOURS_OF)
            if random_numbers(model):
                self.found.add("uniforms")
            if compiled_act and top:
                self.found.add("accumulate_rows")  # it may turn
            return
        if jobs.declared(model) is not None:
            self.row_leaves.append(model)
        elif isinstance(model, pm.Wander):
            self.found.add("uniforms_rows")
            self.found.add("wander")
        elif isinstance(model, FLOCKING):
            self.found.add("flock_sums" if self.neighbours(group, model.of) else "flock")
        elif type(model) in SHAPES:
            self.found.add(SHAPES[type(model)])
        elif isinstance(model, oc.Orca):
            self.neighbours(group, oc.NEIGHBOURS_OF)
            self.found.add("orca")
        elif type(model) in COMBINERS:
            self.combiner(model, group)

    def combiner(self, model: Any, group: str) -> None:
        children = list(model.children)
        ofs = {getattr(c, "of", None) for c in children}
        flocking = len(ofs) == 1 and all(isinstance(c, FLOCKING) for c in children)
        if isinstance(model, cb.Blend) and flocking and self.neighbours(group, children[0].of):
            self.found.add("flock_blend")  # one pass from the query's sums
            return
        self.found.add(COMBINERS[type(model)])
        if isinstance(model, cb.PrioritizedDither):
            self.found.add("uniforms")
        for child in children:
            self.steer(child, group, True, top=False)

    # ---------------------------------------------------------------- world
    def world(self) -> None:
        sim = self.sim
        if not unknown_world_options(sim.world):
            self.found.add("integrate")
            if sim.heading_smoothing > 1:
                self.found.add("heading_smoothing")
        sorted_rows = not sim.debug.enabled and any(
            self.size(group) >= SORT_MIN for group in sim.trees
        )
        if sorted_rows:
            self.found.add("cell_order")
        if sim.non_penetration is not None and self.n:
            self.found.add("non_penetration")
            if self.n >= 2:
                self.found.add("close_pairs")
            if sim.world.edges == "wrap":
                self.found.add("fold")
            if sorted_rows:
                self.found.add("renumbered")


def _models(model: Any) -> Iterator[Any]:
    """``model`` and every model inside it (fields, lists, dicts), depth first."""
    stack = [model]
    while stack:
        found = stack.pop()
        if isinstance(found, BaseModel):
            yield found
            stack.extend(getattr(found, name) for name in type(found).model_fields)
        elif isinstance(found, list | tuple):
            stack.extend(found)
        elif isinstance(found, dict):
            stack.extend(found.values())


def plan(sim: Any) -> Plan:
    """The kernels ``sim`` calls on compiled kernels (see the module docstring); compiles
    nothing. Steering runs on kernels unless debug geometry is on (the NumPy act draws)."""
    walk = _Walk(sim)
    compiled_act = not sim.debug.enabled
    for group, tree in sim.trees.items():
        if compiled_act:
            walk.found.add("request_rows")
        for index in tree.steering:  # request order: the order act runs them
            node = tree.nodes[index]
            walk.node(node.model, node.kind, group, compiled_act)
        for node in tree.nodes:
            if node.kind != STEERING:
                walk.node(node.model, node.kind, group, compiled_act)
    walk.world()
    if sim._think.rates:  # some agents skip ticks: held perception (sense/held.py)
        walk.found.update(("think_due", "held_offsets", "held_targets", "held_merge", "held_sums"))
        walk.found.add("held_requests")
        if "nearest_grid" in walk.found:  # a few thinkers: a small side, brute force
            walk.found.add("nearest_small")
        if hasattr(sim.engine, "compile_trees"):  # the batch engine keeps held statuses
            walk.found.add("held_statuses")
    kernels = tuple(name for name in WARM if name in walk.found)
    return Plan(kernels, tuple(walk.row_leaves), fused=hasattr(sim.engine, "compile_trees"))
