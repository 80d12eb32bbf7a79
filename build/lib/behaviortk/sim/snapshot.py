"""Save and restore: ``sim.save(path)`` and ``Simulation.restore(path, engine=None)``.

A restored Simulation continues byte-identically to the run it was saved from, on the
engine it was saved on or on the other one (save on py_trees, continue on batch), because
the snapshot holds every bit of state a tick reads and both engines read the same
engine-neutral tree state (``engines/base.SavedGroup``). The file is
``snapshot_file.py``'s: a zip of a JSON manifest and ``.npy`` arrays, never pickle.

Saved:

* the definition's JSON text (as running: a tuning change included), so a snapshot is
  self-contained; restoring validates it again with this behaviortk;
* the tick, seed, engine and kernels' names, the next id, ``time`` (recomputed as
  ``tick * dt``);
* every agent's per-agent arrays (``world/state.Agents``: ids, groups, state and
  constants, spare rows trimmed) and names; the id -> row map follows from the ids;
  spawns and despawns pending since the last step are applied first;
* the heading smoother's ring buffer and position, obstacle positions (the viewer
  drags them);
* per group with a tree: every node's status and current child, decorators' counters
  and clocks (``repeat``, ``retry``, ``one_shot``, ``timeout``, ``cooldown``), ops'
  per-agent arrays (``wait``'s start), sensed conditions' hysteresis, the typed
  blackboards with their write stamps, and last tick's requests (``Decision.emitted``
  and ``acted``; its statuses are the trees');
* steering memory (``LeafMemory``: wander targets, path indices, with their fills);
* spawn and despawn events recorded since the last step (they go out with the next),
  watched agents with the statuses they were last seen with, the fixed-step
  accumulator of ``advance`` and the pointer.

Not saved, because nothing a continuation computes depends on it: randomness (streams
are counter-based hashes of seed, id, tick and slot: no state), the compiled path's
cell order (a function of the tick and the positions), non-penetration's candidate
lists (a cache: the passes give the same positions whichever lists they use; they are
rebuilt on the first tick), the kernels (restore picks them as a new Simulation does:
both paths give the same bits), new agents' rows drawn ahead (the same bits by id),
timings, last tick's forces per leaf (debug views) and ``sim.events`` (empty until the
next step). ``sim.on`` subscriptions are the game's: subscribe again after restoring.
State a plugin keeps outside its ops' ``per_agent`` arrays is not saved.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from behaviortk.engines.base import SavedGroup
from behaviortk.engines.names import ENGINES
from behaviortk.errors import SimulationError, SnapshotError
from behaviortk.format.blackboard_keys import Mismatch, coerce
from behaviortk.sim import snapshot_lod
from behaviortk.sim.snapshot_file import FORMAT, VERSION, SnapshotFile, write
from behaviortk.steering.context import LeafMemory
from behaviortk.tree.blackboard import Keys, SavedKey
from behaviortk.tree.flat import Decision
from behaviortk.world.build import build
from behaviortk.world.rows import PER_AGENT, slices_of
from behaviortk.world.smoothing import HeadingSmoother
from behaviortk.world.state import Agents

Simulation = Any
"""A ``sim/simulation.Simulation`` (which imports this module: no import back)."""

MAX_IDS = 2**31
"""Ids a restored run may have handed out (its id -> row map holds one entry per id)."""

_AGENT_ARRAYS = (*PER_AGENT, "group")


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


# ------------------------------------------------------------------------------ saving
def save(sim: Simulation, path: str | Path) -> int:
    """Write ``sim``'s snapshot to ``path``; returns its size in bytes."""
    from behaviortk import __version__

    if not hasattr(sim.engine, "export_state"):
        raise SnapshotError(
            f"cannot save {path}: engine {sim.engine.name!r} does not export its state"
        )
    ag = sim.agents  # applies spawns and despawns pending since the last step
    n = ag.n
    arrays: dict[str, np.ndarray] = {f"agents/{f}": getattr(ag, f)[:n] for f in _AGENT_ARRAYS}
    arrays["world/obstacle_pos"] = sim.world.obstacle_pos
    smoother = ag.smoother
    if smoother is not None:
        arrays["smoother"] = smoother.history[:, :n]
    memory: list[dict[str, Any]] = []
    for (group, leaf), mem in sim.memory.items():
        for key, values in mem.items():
            arrays[f"memory/{len(memory)}"] = values[:n]
            fill = _plain(mem.fills.get(key, 0))
            memory.append({"group": group, "leaf": leaf, "key": key, "fill": fill})
    trees = []
    for i, (group, saved) in enumerate(sim.engine.export_state().items()):
        arrays[f"tree{i}/status"], arrays[f"tree{i}/current"] = saved.status, saved.current
        for name, values in saved.arrays.items():
            arrays[f"tree{i}/{name}"] = values
        board = []
        for j, (key, s) in enumerate(saved.board.items()):
            rows = s.xy if s.xy is not None else s.ids
            assert rows is not None
            arrays[f"tree{i}/board{j}"] = rows
            arrays[f"tree{i}/board{j}.ticks"] = s.ticks
            board.append({"key": key, "values": None if s.xy is not None else s.values})
        decision = sim.decisions.get(group)
        if decision is not None:
            arrays[f"tree{i}/emitted"] = decision.emitted
            if decision.acted is not None:
                arrays[f"tree{i}/acted"] = decision.acted
            if decision.thought is not None:
                arrays[f"tree{i}/thought"] = decision.thought
        trees.append(
            {
                "group": group,
                "arrays": sorted(saved.arrays),
                "board": board,
                "decision": decision is not None,
                "acted": decision is not None and decision.acted is not None,
                "thought": decision is not None and decision.thought is not None,
            }
        )
    recorded, watched = sim.event_log.saved()
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "behaviortk": __version__,
        "engine": str(sim.engine.name),
        "kernels": sim.kernel_name,
        "tick": int(sim.tick),
        "time": float(sim.time),
        "seed": int(sim.seed),
        "next_id": int(sim._next_id),
        "agents": n,
        "groups": list(ag.group_names),
        "definition": _definition_text(sim),
        "names": list(ag.names),
        "smoother_next": None if smoother is None else int(smoother.next),
        "memory": memory,
        "trees": trees,
        "events": [[int(t), [int(a) for a in ids], name] for t, ids, name in recorded],
        "watched": [[int(a), codes.tolist()] for a, codes in watched.items()],
        "pointer": None if sim.pointer is None else [float(v) for v in sim.pointer],
        "accumulated": float(sim._fixed_step.accumulated),
        "lod": snapshot_lod.gather(sim, arrays),
    }
    return write(path, manifest, arrays)


def _definition_text(sim: Simulation) -> str:
    import json

    return json.dumps(sim.scenario.raw, ensure_ascii=False)


# ---------------------------------------------------------------------------- restoring
def restore(
    make: Any,
    path: str | Path,
    engine: Any = None,
    *,
    kernels: str = "auto",
    debug: bool = False,
    registries: Any = None,
) -> Simulation:
    """The Simulation saved in ``path`` (see the module docstring); ``make`` is the
    ``Simulation`` class."""
    f = SnapshotFile(path)
    scenario = _scenario(f, registries)
    seed = f.key("seed", int)
    saved_engine = f.key("engine", str)
    if engine is None:
        if saved_engine not in ENGINES:
            raise f.error(f"saved on engine {saved_engine!r}; pass engine= one of {ENGINES}")
        engine = saved_engine
    tick = _whole(f, "tick")
    next_id = _whole(f, "next_id")
    if next_id > MAX_IDS:
        raise f.error(f"next_id {next_id} is beyond the {MAX_IDS:,} ids a run may hand out")
    try:
        world, fresh = build(scenario.definition, seed)
    except (SimulationError, ValueError, OverflowError) as exc:
        raise f.error(f"its seed {seed!r} cannot be used ({exc})") from None
    agents = _agents(f, fresh, next_id)
    world.obstacle_pos = f.array("world/obstacle_pos", world.obstacle_pos)
    try:
        sim = make(
            scenario, engine, seed=seed, debug=debug, kernels=kernels,
            _state=(world, agents, next_id),
        )  # fmt: skip
    except SimulationError as exc:
        raise f.error(str(exc)) from None
    sim.tick, sim.time = tick, tick * sim.dt
    _smoother(f, sim)
    _memory(f, sim)
    _trees(f, sim)
    snapshot_lod.restore(f, sim)
    _events(f, sim)
    sim._fixed_step.accumulated = _number(f, "accumulated")
    pointer = f.key("pointer", (list, type(None)))
    if pointer is not None:
        if len(pointer) != 2 or not all(_finite(v) for v in pointer):
            raise f.error(f"the manifest's 'pointer' must be [x, y] or null, got {pointer!r}")
        sim.pointer = np.array(pointer, dtype=np.float64)
    return sim


def _scenario(f: SnapshotFile, registries: Any) -> Any:
    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.loader import load_text

    text = f.key("definition", str)
    try:
        return load_text(text, f"{f.path} (saved definition)", registries=registries)
    except DefinitionError as exc:
        first = exc.issues[0] if exc.issues else "invalid"
        raise f.error(
            f"its saved definition does not validate with this behaviortk: {first}"
        ) from None


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _whole(f: SnapshotFile, name: str) -> int:
    value = f.key(name, int)
    if value < 0:
        raise f.error(f"the manifest's {name!r} must be >= 0, got {value}")
    return int(value)


def _number(f: SnapshotFile, name: str) -> float:
    value = f.key(name, (int, float))
    if not (_finite(value) and value >= 0):
        raise f.error(f"the manifest's {name!r} must be a finite number >= 0, got {value!r}")
    return float(value)


def _agents(f: SnapshotFile, fresh: Agents, next_id: int) -> Agents:
    """The saved agents, checked against a fresh build's arrays (types, trailing shapes)."""
    n = _whole(f, "agents")
    if f.key("groups", list) != fresh.group_names:
        raise f.error(f"it has groups {f.manifest['groups']}, its definition {fresh.group_names}")
    names = f.key("names", list)
    if len(names) != n or not all(isinstance(name, str) for name in names):
        raise f.error(f"the manifest's 'names' must be {n} strings")
    arrays = {
        field: f.array(f"agents/{field}", getattr(fresh, field), n) for field in _AGENT_ARRAYS
    }
    ids, group = arrays["ids"], arrays["group"]
    if n and (int(ids.min()) < 0 or int(ids.max()) >= next_id):
        raise f.error(f"agent ids must be in 0..{next_id - 1} (next_id {next_id})")
    if np.unique(ids).size != n:
        raise f.error("agent ids repeat")
    if n and (int(group.min()) < 0 or int(group.max()) >= len(fresh.group_names)):
        raise f.error("agents' groups are out of range")
    if n > 1 and bool((np.diff(group) < 0).any()):
        raise f.error("agents' groups are not in the definition's order")
    make: Any = Agents  # the per-agent arrays are keyword arguments by name
    return make(
        names=names,
        group_names=list(fresh.group_names),
        slices=slices_of(group, fresh.group_names),
        **arrays,
    )


def _smoother(f: SnapshotFile, sim: Simulation) -> None:
    position = f.key("smoother_next", (int, type(None)))
    if position is None:
        return
    ag, k = sim.agents, sim.heading_smoothing
    if not 0 <= position < k:
        raise f.error(f"the smoother's position {position} is not in 0..{k - 1}")
    smoother = HeadingSmoother(k, ag.heading)
    smoother.history = f.array("smoother", smoother.history)
    smoother.next = position
    ag.smoother = smoother


def _memory(f: SnapshotFile, sim: Simulation) -> None:
    n = sim.agents.n
    for i, entry in enumerate(f.key("memory", list)):
        group = f.key("group", str, entry)
        leaf, key = f.key("leaf", int, entry), f.key("key", str, entry)
        fill = f.key("fill", (int, float, bool), entry)
        tree = sim.trees.get(group)
        if tree is None or not 0 <= leaf < len(tree.steering):
            raise f.error(f"steering memory of group {group!r} leaf {leaf}: no such leaf")
        values = f.array(f"memory/{i}")
        if values.ndim == 0 or values.shape[0] != n:
            raise f.error(f"the array memory/{i} has {values.shape[:1]} rows, expected {n}")
        memory = sim._memory.setdefault((group, leaf), LeafMemory())
        memory[key], memory.fills[key] = values, fill


def _trees(f: SnapshotFile, sim: Simulation) -> None:
    """Each group's saved tree state into the engine (checked against a fresh export of it:
    the same arrays, types and shapes, and values a tick can use), and last tick's
    decisions."""
    template = sim.engine.export_state()
    entries = f.key("trees", list)
    groups = [f.key("group", str, e) for e in entries]
    if groups != list(template):
        raise f.error(f"it has trees for groups {groups}, its definition for {list(template)}")
    saved: dict[str, SavedGroup] = {}
    decisions: dict[str, Decision] = {}
    for i, (entry, (group, t)) in enumerate(zip(entries, template.items(), strict=True)):
        tree = sim.trees[group]
        status = _codes(f, f"tree{i}/status", t.status)
        current = f.array(f"tree{i}/current", t.current)
        children = np.array([len(node.children) for node in tree.nodes])[:, None]
        if bool(((current < -1) | (current >= np.maximum(children, 1))).any()):
            raise f.error(f"the array tree{i}/current names children a node does not have")
        n = t.status.shape[1]
        requests = np.zeros((n, len(tree.steering)), dtype=bool)
        expected = {**t.arrays, "held": requests}  # held: with LOD, when some did not think
        listed = f.key("arrays", list, entry)
        if not set(t.arrays) <= set(listed) <= set(expected):
            missing, extra = set(t.arrays) - set(listed), set(listed) - set(expected)
            raise f.error(
                f"the tree state of group {group!r} does not fit its tree "
                f"(missing {sorted(missing)}, unexpected {sorted(extra)})"
            )
        arrays = {
            name: _codes(f, f"tree{i}/{name}", expected[name])
            if expected[name].dtype == np.int8  # a status code (``one_shot``'s final)
            else f.array(f"tree{i}/{name}", expected[name])
            for name in listed
        }
        board = _board(f, i, entry, t.board, Keys(sim.scenario.blackboards.get(group, {})))
        saved[group] = SavedGroup(status, current, arrays, board)
        if f.key("decision", bool, entry):
            emitted = f.array(f"tree{i}/emitted", requests)
            acted = f.array(f"tree{i}/acted", requests) if f.key("acted", bool, entry) else None
            thought = None
            if f.key("thought", bool, entry):
                thought = f.array(f"tree{i}/thought", np.zeros(n, dtype=bool))
            status_rows = np.ascontiguousarray(status.T)
            decisions[group] = Decision(emitted, status_rows, acted, thought=thought)
    sim.engine.import_state(saved)
    sim._decisions = decisions


def _codes(f: SnapshotFile, name: str, like: np.ndarray) -> np.ndarray:
    """An int8 array of status codes (``tree/status.py``: 0..3)."""
    codes: np.ndarray = f.array(name, like)
    if codes.size and (int(codes.min()) < 0 or int(codes.max()) > 3):
        raise f.error(f"the array {name} holds status codes outside 0..3")
    return codes


def _board(
    f: SnapshotFile, i: int, entry: Any, template: dict[str, SavedKey], keys: Keys
) -> dict[str, SavedKey]:
    listed = f.key("board", list, entry)
    names = [f.key("key", str, b) for b in listed]
    if names != list(template):
        raise f.error(f"tree{i} has blackboard keys {names}, its tree declares {list(template)}")
    out: dict[str, SavedKey] = {}
    for j, (b, (key, t)) in enumerate(zip(listed, template.items(), strict=True)):
        ticks = f.array(f"tree{i}/board{j}.ticks", t.ticks)
        if t.xy is not None:
            xy = f.array(f"tree{i}/board{j}", t.xy)
            unset = np.isnan(xy)
            if bool((unset[:, 0] != unset[:, 1]).any() or np.isinf(xy).any()):
                raise f.error(f"blackboard key {key!r}: points must be finite or unset")
            out[key] = SavedKey(ticks, xy=xy)
            continue
        assert t.ids is not None
        values = f.key("values", list, b)
        spec = keys.spec(key)
        for value in values:
            try:
                ok = coerce(spec.type, value)
            except Mismatch:
                ok = None
            if type(ok) is not type(value) or ok != value:
                raise f.error(f"blackboard key {key!r} is a {spec.type}; it holds {value!r}")
        ids = f.array(f"tree{i}/board{j}", t.ids)
        if ids.size and (int(ids.min()) < -1 or int(ids.max()) >= len(values)):
            raise f.error(f"blackboard key {key!r}: value indices out of range")
        out[key] = SavedKey(ticks, ids=ids, values=values)
    return out


def _events(f: SnapshotFile, sim: Simulation) -> None:
    recorded = []
    for item in f.key("events", list):
        if not (
            isinstance(item, list)
            and len(item) == 3
            and type(item[0]) is int
            and isinstance(item[1], list)
            and all(type(a) is int for a in item[1])
            and isinstance(item[2], str)
        ):
            raise f.error(f"a pending event is not [tick, [ids], name]: {item!r}"[:200])
        recorded.append((item[0], item[1], item[2]))
    watched: dict[int, np.ndarray] = {}
    for item in f.key("watched", list):
        agent = item[0] if isinstance(item, list) and len(item) == 2 else None
        if type(agent) is not int or not 0 <= agent < sim._next_id or sim._row_of[agent] < 0:
            raise f.error(f"a watched agent is not [live id, statuses]: {item!r}"[:200])
        group, _ = sim.locate(int(sim._row_of[agent]))
        codes = item[1]
        nodes = len(sim.trees[group]) if group in sim.trees else 0
        if not (
            isinstance(codes, list)
            and len(codes) == nodes
            and all(type(c) is int and 0 <= c <= 3 for c in codes)
        ):
            raise f.error(f"watched agent {agent}: its statuses are not {nodes} status codes")
        watched[agent] = np.array(codes, dtype=np.int8)
    sim.event_log.load_saved(recorded, watched)
