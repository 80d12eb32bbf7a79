"""Compiled trees: the one numbering of nodes both engines share.

A group's expanded tree is flattened in DFS pre-order. Node indices, the order
of steering leaves (the order their requests are combined in) and the columns
of the per-tick random table each leaf reads are fixed here, so the py_trees
engine and the batch engine agree on them by construction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from behaviortk.registry import COMPOSITE, DECORATOR, STEERING, Registries


def random_numbers(model: Any) -> int:
    """Columns of the random table a node reads each tick (its own, or its guard condition's)."""
    own = int(getattr(model, "random_numbers", 0) or 0)
    guard = getattr(model, "condition", None)
    return own + (int(getattr(guard, "random_numbers", 0) or 0) if guard is not None else 0)


def trace_name(model: Any) -> str:
    return str(getattr(model, "name", None) or model.type)


@dataclass(frozen=True)
class FlatNode:
    index: int
    parent: int  # -1 for the root
    children: tuple[int, ...]
    model: Any
    kind: str
    depth: int
    path: str  # e.g. "selector/sequence[1]/evade"
    emit_index: int  # column in Decision.emitted for steering leaves, else -1
    rand_slot: int  # first column of sense.rand this node reads, else -1

    @property
    def name(self) -> str:
        return trace_name(self.model)


@dataclass(frozen=True)
class FlatTree:
    nodes: tuple[FlatNode, ...]
    steering: tuple[int, ...]  # node indices of steering leaves, in request order
    n_rand: int  # random columns this tree reads per agent per tick

    @property
    def root(self) -> FlatNode:
        return self.nodes[0]

    def __len__(self) -> int:
        return len(self.nodes)


def child_models(model: Any, kind: str) -> list[Any]:
    """A node's children as tree nodes (combiner children are parameters, not nodes)."""
    if kind == COMPOSITE:
        return list(model.children)
    if kind == DECORATOR:
        return [model.child]
    return []


def flatten(root: Any, registries: Registries, rand_offset: int = 0) -> FlatTree:
    """DFS pre-order numbering of an expanded tree; iterative, so depth never recurses."""
    records: list[dict[str, Any]] = []
    stack: list[tuple[Any, int, int, str]] = [(root, -1, 0, trace_name(root))]
    steering: list[int] = []
    n_rand = 0
    while stack:
        model, parent, depth, path = stack.pop()
        index = len(records)
        kind = registries.kind_of(model.type)
        emit = -1
        if kind == STEERING:
            emit = len(steering)
            steering.append(index)
        width = random_numbers(model)
        slot = rand_offset + n_rand if width else -1
        n_rand += width
        records.append(
            dict(
                index=index,
                parent=parent,
                children=[],
                model=model,
                kind=kind,
                depth=depth,
                path=path,
                emit_index=emit,
                rand_slot=slot,
            )
        )
        if parent >= 0:
            records[parent]["children"].append(index)
        kids = child_models(model, kind)
        for i in range(len(kids) - 1, -1, -1):
            kid = kids[i]
            suffix = f"[{i}]" if len(kids) > 1 else ""
            stack.append((kid, index, depth + 1, f"{path}/{trace_name(kid)}{suffix}"))
    nodes = tuple(FlatNode(**{**r, "children": tuple(r["children"])}) for r in records)
    return FlatTree(nodes=nodes, steering=tuple(steering), n_rand=n_rand)


class StatusSource(Protocol):
    """Where an engine reads a group's node statuses when somebody asks (see :class:`Decision`)."""

    def all(self) -> np.ndarray:
        """``(n, nodes)`` int8 codes of every agent of the group, a new array."""
        ...

    def rows(self, local: np.ndarray) -> np.ndarray:
        """``(len(local), nodes)`` int8 codes of the group-local rows ``local``, a new array."""
        ...


class Decision:
    """What decide produced for one group this tick.

    ``emitted`` is needed every tick (the act phase reads it). ``status``, every
    node's status, is read only by traces, the viewer's tree panel, watched
    agents' events and tests, so an engine may hand a :class:`StatusSource`
    instead of an array: the statuses are then read when first asked for
    (``status``: every row, kept; ``status_of``: a few rows) and ``collected``
    says whether that happened. An engine that does so keeps the answer true:
    the py_trees engine reads a Decision it left uncollected before it ticks
    the trees again if anybody but the Simulation still holds it
    (``engines/pytrees.py``), so a late reader gets that tick's statuses too.
    """

    __slots__ = ("__weakref__", "_acted", "_emitted", "_source", "_status", "_thought")

    def __init__(
        self,
        emitted: np.ndarray | Callable[[], np.ndarray],
        status: np.ndarray | StatusSource,
        acted: np.ndarray | Callable[[], np.ndarray | None] | None = None,
        thought: np.ndarray | Callable[[], np.ndarray | None] | None = None,
    ) -> None:
        # emitted / acted / thought may be given as functions, called when first read (a
        # Decision carried over a spawn: its rows are moved only if somebody reads them)
        self._emitted = emitted
        self._acted = acted
        self._thought = thought
        self._status: np.ndarray | None = None
        self._source: StatusSource | None = None
        if isinstance(status, np.ndarray):
            self._status = status
        else:
            self._source = status

    @property
    def emitted(self) -> np.ndarray:
        """bool ``(n_agents_in_group, n_steering_leaves)``: which steering leaves asked for a force."""
        if callable(self._emitted):
            self._emitted = self._emitted()
        return self._emitted

    @emitted.setter
    def emitted(self, value: np.ndarray) -> None:
        self._emitted = value

    @property
    def acted(self) -> np.ndarray | None:
        """bool like ``emitted``, filled by the act phase: the requests whose weighted force or
        torque was not zero (a separation with no neighbour asks and gives nothing). Traces'
        ``active`` lists and colour-by-action read it; None until the act phase ran."""
        if callable(self._acted):
            self._acted = self._acted()
        return self._acted

    @acted.setter
    def acted(self, value: np.ndarray | None) -> None:
        self._acted = value

    @property
    def thought(self) -> np.ndarray | None:
        """bool ``(n_agents_in_group,)``: which agents ticked their tree this tick (the others
        kept their last decision: ``sim/think.py``); None when the group thinks every tick."""
        if callable(self._thought):
            self._thought = self._thought()
        return self._thought

    @thought.setter
    def thought(self, value: np.ndarray | None) -> None:
        self._thought = value

    @property
    def status(self) -> np.ndarray:
        """int8 ``(n_agents_in_group, n_nodes)``: every node's status code (``tree/status.py``)."""
        if self._status is None:
            assert self._source is not None
            self._status, self._source = self._source.all(), None
        return self._status

    @property
    def collected(self) -> bool:
        """Whether ``status`` is in hand (False: nobody has asked for it yet)."""
        return self._status is not None

    def status_columns(self, nodes: np.ndarray) -> np.ndarray:
        """``(n, len(nodes))`` statuses of the nodes ``nodes`` (flat indices) for every row; while
        uncollected, a source that can read columns alone (``columns``) reads only those."""
        if self._source is not None and hasattr(self._source, "columns"):
            return np.asarray(self._source.columns(nodes))
        return self.status[:, nodes]

    def status_of(self, local: Any) -> np.ndarray:
        """``(k, n_nodes)`` statuses of the group-local rows ``local``, a new array; while
        uncollected only those rows are read (a watched agent, the viewer's tree panel)."""
        rows = np.asarray(local, dtype=np.int64).reshape(-1)
        if self._source is not None:
            return self._source.rows(rows)
        return self.status[rows]

    def __repr__(self) -> str:
        status = "collected" if self.collected else "not collected"
        return f"Decision(emitted={self.emitted.shape}, status {status}, acted={self.acted is not None})"
