"""One tick's recordable state, as arrays: what traces write and what a replay shows.

``TickState.of(sim)`` copies it out of a live Simulation after a step;
``behaviortk.record.reader`` rebuilds it from a trace file. Either way the viewer,
the tree panel and the trace writers read the same object, so a recorded tick
and the live tick it came from look the same.

Rows are in the simulation's row order: each group's agents contiguous, groups in
file order. Node statuses (``tree/status.py`` codes) are per group ``(n, nodes)``
in the group's flat-tree order (``tree/flat.py``: DFS pre-order); ``emitted``
per group ``(n, steering leaves)`` in request order. ``active`` lists and status
strings are built per group from the distinct rows of those arrays, never per
agent. ``thought`` (think-rate LOD, ``sim/think.py``) says which agents ticked their
tree in the step; None when every agent thinks every tick (the trace then has no
``thought`` at all, as before LOD).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from behaviortk.tree.flat import FlatTree

STATUS_DIGIT = 48  # ord("0"): status code k is written as the digit k


@dataclass
class TickState:
    """The state after trace tick ``tick`` (the 0-based step just taken)."""

    tick: int
    time: float  # simulated time of this state: (tick + 1) * dt
    ids: np.ndarray  # (N,) int64 stable ids
    group: np.ndarray  # (N,) int64 index into group_names
    group_names: list[str]
    pos: np.ndarray  # (N, 2)
    vel: np.ndarray  # (N, 2)
    heading: np.ndarray  # (N, 2) unit
    force: np.ndarray  # (N, 2) steering force applied in this step
    status: dict[str, np.ndarray]  # group -> (n, nodes) int8, flat-tree order
    emitted: dict[str, np.ndarray]  # group -> (n, steering leaves) bool, request order:
    # the requests ``active`` lists name
    trees: dict[str, FlatTree] = field(default_factory=dict)  # shared, never copied
    thought: np.ndarray | None = None  # (N,) bool: ticked its tree in the step (with LOD)
    leaf_forces: dict[str, np.ndarray] | None = None  # group -> (n, steering leaves, 2)
    # float32: the weighted force each leaf asked for (NaN: none); None when not kept

    @classmethod
    def of(cls, sim: Any, copy: bool = True, leaf_forces: bool = False) -> TickState:
        """A copy of ``sim``'s state after its last step (trace tick ``sim.tick - 1``);
        ``copy=False``: views of the live arrays, for a caller done with them before the
        next step (``sim.serve`` packs them at once); ``leaf_forces``: with each steering
        leaf's force (``sim.contributions``), as a Parquet trace records them."""
        keep = np.array if copy else np.asarray
        ag = sim.agents
        decisions = sim.decisions
        trees: dict[str, FlatTree] = sim.trees
        status: dict[str, np.ndarray] = {}
        emitted: dict[str, np.ndarray] = {}
        for name, rows in ag.slices.items():
            tree = trees.get(name)
            if tree is None:  # an external group: no tree, no statuses
                continue
            n = rows.stop - rows.start
            dec = decisions.get(name)
            if dec is None:  # no tick yet
                status[name] = np.zeros((n, len(tree)), dtype=np.int8)
                emitted[name] = np.zeros((n, len(tree.steering)), dtype=bool)
            else:
                status[name] = keep(dec.status, dtype=np.int8)
                # the requests that count as active: the act phase's ``acted`` where the
                # Decision has it (requests that gave a force), else every emitted request
                acted = getattr(dec, "acted", None)
                emitted[name] = keep(dec.emitted if acted is None else acted, dtype=bool)
        return cls(
            tick=int(sim.tick) - 1,
            time=float(sim.time),
            ids=keep(ag.ids),
            group=keep(ag.group, dtype=np.int64),
            group_names=list(ag.group_names),
            pos=keep(ag.pos),
            vel=keep(ag.vel),
            heading=keep(ag.heading),
            force=keep(ag.force),
            status=status,
            emitted=emitted,
            trees=trees,
            thought=thought_of(sim),
            leaf_forces=forces_by_leaf(sim) if leaf_forces else None,
        )

    @property
    def n(self) -> int:
        return int(self.ids.shape[0])

    @property
    def slices(self) -> dict[str, slice]:
        """Group name -> its contiguous rows (every group, empty ones included)."""
        counts = np.bincount(self.group, minlength=len(self.group_names))
        ends = np.cumsum(counts)
        return {
            name: slice(int(end - count), int(end))
            for name, count, end in zip(self.group_names, counts, ends, strict=True)
        }

    def locate(self, row: int) -> tuple[str, int]:
        """``(group, row within the group)`` of ``row``."""
        name = self.group_names[int(self.group[row])]
        return name, row - self.slices[name].start

    def node_status(self, row: int) -> np.ndarray:
        """int8 status of every node of ``row``'s tree, flat order (empty: no tree)."""
        name, local = self.locate(row)
        codes = self.status.get(name)
        return np.zeros(0, np.int8) if codes is None else codes[local].copy()

    def active(self, row: int) -> list[str]:
        """Trace names of the steering leaves that emitted for ``row``, in request order."""
        name, local = self.locate(row)
        flags = self.emitted.get(name)
        if flags is None:
            return []
        tree = self.trees[name]
        return [tree.nodes[tree.steering[k]].name for k in np.flatnonzero(flags[local]).tolist()]

    def active_lists(self) -> list[list[str]]:
        """``active(row)`` of every row; one list per distinct emitted pattern of a group."""
        out: list[list[str]] = [[] for _ in range(self.n)]
        for name, rows in self.slices.items():
            flags = self.emitted.get(name)
            if flags is None or flags.size == 0:  # no agents, or a tree without steering
                continue
            tree = self.trees[name]
            leaves = [tree.nodes[i].name for i in tree.steering]
            patterns, which = _distinct_rows(flags.astype(np.uint8))
            lists = [[leaves[k] for k in np.flatnonzero(p).tolist()] for p in patterns]
            out[rows] = [lists[i] for i in which.tolist()]
        return out

    def status_strings(self) -> list[str]:
        """Each row's status codes as a string of digits (``"2310"``), ``""`` without a tree."""
        out = [""] * self.n
        for name, rows in self.slices.items():
            codes = self.status.get(name)
            if codes is None or codes.shape[0] == 0 or codes.shape[1] == 0:
                continue
            patterns, which = _distinct_rows(codes)
            texts = [(p.astype(np.uint8) + STATUS_DIGIT).tobytes().decode() for p in patterns]
            out[rows] = [texts[i] for i in which.tolist()]
        return out


def thought_of(sim: Any) -> np.ndarray | None:
    """``(N,)`` bool: the agents that ticked their tree in ``sim``'s last step (a replay's
    recorded ones); None when every agent thinks every tick (no ``think_every``, no ``lod``).

    A group that thinks every tick counts as thinking; an external group never thinks."""
    state = getattr(sim, "state", None)
    if isinstance(state, TickState):
        return state.thought
    think = getattr(sim, "think", None)
    if think is None or not think.active:
        return None
    ag = sim.agents
    out = np.zeros(ag.n, dtype=bool)
    decisions = sim.decisions
    for name in sim.trees:
        rows = ag.slices[name]
        decision = decisions.get(name)
        if decision is not None:
            thought = decision.thought
            out[rows] = True if thought is None else thought
    return out


def _distinct_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a small-integer 2-D array and, per row, which one it is."""
    contiguous = np.ascontiguousarray(table)
    keys = contiguous.view(np.dtype((np.void, contiguous.dtype.itemsize * contiguous.shape[1])))
    _, first, which = np.unique(keys.ravel(), return_index=True, return_inverse=True)
    return contiguous[first], which.ravel()


def forces_by_leaf(sim: Any) -> dict[str, np.ndarray]:
    """Per group with a tree: ``(n, steering leaves, 2)`` float32, the weighted force each
    leaf of each agent asked for in the last act phase (``sim.contributions``), NaN where
    it asked for none; a handful of array writes per leaf, no loop over agents."""
    contributions = sim.contributions
    out: dict[str, np.ndarray] = {}
    for name, rows in sim.agents.slices.items():
        tree = sim.trees.get(name)
        if tree is None:
            continue
        forces = np.full((rows.stop - rows.start, len(tree.steering), 2), np.nan, np.float32)
        for k, (at, f) in contributions.get(name, {}).items():
            if k < forces.shape[1]:
                forces[np.asarray(at) - rows.start, k] = f
        out[name] = forces
    return out
