"""Applying an accepted tuning change to the running simulation, without restarting it.

- A physics field (``max_speed``, ``view_distance``, ``fov``, ...) rewrites that
  group's per-agent constants, converted exactly as a fresh build converts them
  (``world.build.group_agents``: degrees to radians, null to unlimited); the
  agents keep their positions, velocities, trees and blackboards.
- A tree parameter is substituted when a tree is expanded, so the group's tree is
  expanded again and rebuilt by the engine; its agents keep their positions,
  velocities, steering memory (same leaves, same order) and blackboard values,
  and their trees start again from the root (a running ``wait`` starts over).
  Other groups are untouched.

Either way ``sim.scenario`` becomes the edited definition, so a restart (``r``)
runs the tuned values.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _group_spec(scenario: Any, name: str) -> Any:
    return next(g for g in scenario.definition.groups if g.name == name)


def apply_physics(sim: Any, scenario: Any, group: str) -> None:
    """Write the group's constants from the edited definition into the running agents."""
    from behaviortk.world.build import GROUP_CONSTANTS, group_agents

    rows = sim.agents.slices[group]
    if rows.stop <= rows.start:
        return
    ids = sim.agents.ids[rows]
    names = sim.agents.names[rows.start : rows.stop]
    fresh = group_agents(_group_spec(scenario, group), ids, names, sim.seed)
    for field in GROUP_CONSTANTS:
        getattr(sim.agents, field)[rows] = getattr(fresh, field)


def same_shape(a: Any, b: Any) -> bool:
    """Two flat trees with the same nodes in the same places (only values differ)."""
    return len(a) == len(b) and all(
        x.path == y.path and x.kind == y.kind and x.rand_slot == y.rand_slot
        for x, y in zip(a.nodes, b.nodes, strict=True)
    )


def apply_params(sim: Any, scenario: Any, group: str) -> bool:
    """Rebuild ``group``'s tree from the edited definition, keeping its agents' state.

    Returns False (nothing changed) when the edited tree has another shape, which
    a parameter value cannot give today; the caller then asks for a restart.
    """
    from behaviortk.tree.flat import flatten

    old = sim.trees.get(group)
    if old is None:
        return False
    new = flatten(scenario.trees[group], scenario.registries)
    if not same_shape(old, new):
        return False
    engine = sim.engine
    before = engine.groups[group]
    rows = before.rows
    sim.scenario = scenario  # the engine reads declared blackboard keys from it
    sim.trees[group] = new
    after = engine.build_group(group, rows, new)
    n = rows.stop - rows.start
    for key in before.board.stored_keys():
        if key not in after.board.stored_keys():
            continue
        values: dict[Any, list[int]] = {}
        unset: list[int] = []
        for local in range(n):  # a rare event (a tuning change), not a tick
            value = before.board.get(key, local)
            if value is None:
                unset.append(local)
            else:
                hashable = tuple(value) if isinstance(value, list | tuple | np.ndarray) else value
                values.setdefault(hashable, []).append(local)
        for value, where in values.items():
            after.board.set(key, np.array(where, dtype=np.int64), value)
        if unset:
            after.board.unset(key, np.array(unset, dtype=np.int64))
    engine.groups[group] = after
    engine._prepared = None
    return True


def apply_change(sim: Any, scenario: Any, group: str, source: str) -> str:
    """Apply an accepted change of ``source`` ("physics" or "param"); one line for the panel."""
    if source == "physics":
        apply_physics(sim, scenario, group)
        sim.scenario = scenario
        return f"applied to {group}"
    if apply_params(sim, scenario, group):
        return f"applied: {group}'s trees start again from the root (blackboards kept)"
    sim.scenario = scenario
    return "saved in the definition; restart (r) to run it"
