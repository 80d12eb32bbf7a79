"""What think-rate LOD adds to a snapshot (``sim/think.py``, ``sense/held.py``).

* ``think/last``: per agent id, the last tick it thought (``ThinkSchedule.last``), and
  the game's focus (``Simulation.focus``) when it set one;
* what the agents that do not think hold (``HeldPerception``): per nearest-agent query,
  each observer id's target id; per neighbour query, the pairs its last thinks found:
  each observer's neighbour rows, the ids of the rows then, the group's first row then,
  and whether the rows are still those (the next tick reads the pairs in their query
  order while the rows stay, re-sorted by row once they moved: ``held._current``).

The engines' held requests and ``Decision.thought`` are saved with the trees
(``snapshot.py``, ``engines/base.SavedGroup``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.errors import SimulationError
from behaviortk.sense.held import HeldPairs
from behaviortk.sim.snapshot_file import SnapshotFile
from behaviortk.sim.think import focus_points


def gather(sim: Any, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """The manifest's ``lod`` part; its arrays go into ``arrays``."""
    think, held, bound = sim._think, sim._held, int(sim._next_id)
    arrays["think/last"] = think.last[:bound]
    targets = []
    for i, (key, store) in enumerate(held.targets.items()):
        arrays[f"held/target{i}"] = store[:bound]
        targets.append([v.item() if isinstance(v, np.generic) else v for v in key])
    pairs = []
    ids = sim.agents.ids
    for i, ((group, of), p) in enumerate(held.pairs.items()):
        arrays[f"held/pairs{i}.offsets"] = p.offsets
        arrays[f"held/pairs{i}.j"] = p.identities()
        arrays[f"held/pairs{i}.ids"] = p.ids
        pairs.append({"group": group, "of": of, "start": int(p.start), "current": p.under is ids})
    focus = None if think.override is None else think.override.tolist()
    return {"focus": focus, "targets": targets, "pairs": pairs}


def restore(f: SnapshotFile, sim: Any) -> None:
    """Set ``sim``'s think schedule and held perception from ``f`` (checked first)."""
    part = f.key("lod", dict)
    bound = int(sim._next_id)
    last = _ids_array(f, "think/last", bound, lowest=None)
    focus = f.key("focus", (list, type(None)), part)
    try:
        override = None if focus is None else focus_points(focus)
    except SimulationError as exc:
        raise f.error(f"its LOD focus: {exc}") from None
    targets = {}
    for i, key in enumerate(f.key("targets", list, part)):
        if not (
            isinstance(key, list) and key and all(isinstance(v, str | int | float) for v in key)
        ):
            raise f.error(f"a held target's query is not a list of names and numbers: {key!r}")
        store = _ids_array(f, f"held/target{i}", bound, lowest=-1)
        if store.size and int(store.max()) >= bound:
            raise f.error(f"the array held/target{i} names ids never handed out")
        targets[tuple(key)] = store
    pairs = {}
    for i, entry in enumerate(f.key("pairs", list, part)):
        group, of = f.key("group", str, entry), f.key("of", str, entry)
        pairs[(group, of)] = _pairs(f, sim, i, group, entry)
    think = sim._think
    think.last, think.override = last, override
    sim._held.targets, sim._held.pairs = targets, pairs


def _ints(f: SnapshotFile, name: str) -> np.ndarray:
    """A 1-D int64 array of any length."""
    values: np.ndarray = f.array(name)
    if values.dtype != np.int64 or values.ndim != 1:
        raise f.error(
            f"the array {name} is {values.dtype} {list(values.shape)}, expected int64 [n]"
        )
    return values


def _ids_array(f: SnapshotFile, name: str, bound: int, lowest: int | None) -> np.ndarray:
    """A 1-D int64 array of at most ``bound`` entries (one per id), none below ``lowest``."""
    values = _ints(f, name)
    if values.size > bound:
        raise f.error(f"the array {name} has {values.size} entries, more than the {bound} ids")
    if lowest is not None and values.size and int(values.min()) < lowest:
        raise f.error(f"the array {name} holds values below {lowest}")
    return values


def _pairs(f: SnapshotFile, sim: Any, i: int, group: str, entry: Any) -> HeldPairs:
    start, current = f.key("start", int, entry), f.key("current", bool, entry)
    offsets, ids, j = (_ints(f, f"held/pairs{i}.{part}") for part in ("offsets", "ids", "j"))
    ok = (
        group in sim.trees
        and offsets.size >= 1
        and offsets[0] == 0
        and bool((np.diff(offsets) >= 0).all())
        and offsets[-1] == j.size
        and start >= 0
        and start + offsets.size - 1 <= ids.size
        and (j.size == 0 or (int(j.min()) >= 0 and int(j.max()) < ids.size))
    )
    rows = sim.agents.slices.get(group)
    if ok and current:
        ok = (
            rows is not None
            and start == rows.start
            and offsets.size == rows.stop - rows.start + 1
            and np.array_equal(ids, sim.agents.ids)
        )
    if not ok:
        raise f.error(f"the held neighbour pairs of group {group!r} do not fit its agents")
    return HeldPairs.restored(start, offsets, j, ids, sim.agents.ids if current else ids)
