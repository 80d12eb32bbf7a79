"""The `utility` composite's scores and choice, written once for both engines.

Dave Mark's Infinite Axis Utility System (GDC AI Summit 2010, "Improving AI Decision
Modeling Through Utility Theory"; 2013, "Architecture Tricks"): every consideration maps
its input, normalised by its range, through a response curve to [0, 1]; Mark's
compensation factor lifts each by ``(1 - s) * (1 - 1/n) * s`` so that an option with many
considerations is not punished for their number; the option's score is its weight times
their product. :class:`UtilityOps` is the composite's ops object (one per group, as for
actions): it computes the scores of the rows that tick the node, vectorised, and picks the
child; the engines (``engines/utility.py``, ``engines/batch/utility.py``) tick it, with
py_trees' stop rules. It remembers per agent the scores shown in the viewer and when each
node a `since_success` input watches last ended a tick in SUCCESS (``observe``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from behaviortk.format.utility import (
    CURVES,
    Exponential,
    Linear,
    Logistic,
    Logit,
    Quadratic,
    Step,
    Utility,
)
from behaviortk.registry import Registries
from behaviortk.tree.flat import Decision, FlatTree
from behaviortk.tree.ops import NodeContext, Rows
from behaviortk.tree.status import SUCCESS

if TYPE_CHECKING:
    from behaviortk.sense.sensing import Sense

NEVER = np.iinfo(np.int64).min // 4
"""``last_success`` of a node that never succeeded: ticks since it are then huge."""

LOGIT_EDGE = 1e-4
"""The logit curve reads x clamped to [LOGIT_EDGE, 1 - LOGIT_EDGE] (finite at the ends)."""


def _linear(p: Linear, x: np.ndarray) -> np.ndarray:
    return p.m * (x - p.c) + p.b


def _quadratic(p: Quadratic, x: np.ndarray) -> np.ndarray:
    return p.m * (x - p.c) ** p.k + p.b


def _logistic(p: Logistic, x: np.ndarray) -> np.ndarray:
    return p.m / (1.0 + np.exp(-p.k * (x - p.c))) + p.b


def _logit(p: Logit, x: np.ndarray) -> np.ndarray:
    z = np.clip(x, LOGIT_EDGE, 1.0 - LOGIT_EDGE)
    return p.m * (p.c + np.log(z / (1.0 - z)) / p.k) + p.b


def _exponential(p: Exponential, x: np.ndarray) -> np.ndarray:
    return p.m * np.exp(p.k * (x - p.c)) + p.b


def _step(p: Step, x: np.ndarray) -> np.ndarray:
    return np.where(x >= p.c, p.m, p.b)


CURVE_FORMULAS: dict[type, Callable[[Any, np.ndarray], np.ndarray]] = {
    Linear: _linear,
    Quadratic: _quadratic,
    Logistic: _logistic,
    Logit: _logit,
    Exponential: _exponential,
    Step: _step,
}
assert set(CURVE_FORMULAS) == set(CURVES)


def normalised(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """``clamp((values - lo) / (hi - lo), 0, 1)``; NaN stays NaN (no value)."""
    return np.clip((values - lo) / (hi - lo), 0.0, 1.0)


def consideration_score(curve: Any, x: np.ndarray) -> np.ndarray:
    """The curve at ``x``, clamped to [0, 1]; 0 where ``x`` or the curve is NaN."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        y = np.clip(CURVE_FORMULAS[type(curve)](curve, x), 0.0, 1.0)
    return np.where(np.isnan(y), 0.0, y)


def compensated(scores: list[np.ndarray]) -> np.ndarray:
    """Mark's product of ``n`` consideration scores: each ``s`` becomes ``s + (1 - s) * (1 -
    1/n) * s`` first (Lewis and Mark 2013), so more considerations do not sink a score."""
    n = len(scores)
    modification = 1.0 - 1.0 / n
    out = np.ones_like(scores[0])
    for s in scores:
        out = out * (s + (1.0 - s) * modification * s)
    return out


def pick(scores: np.ndarray, top: int, u: np.ndarray | None) -> np.ndarray:
    """Each row's chosen child: the best (ties to the lower index), or with ``top`` > 1 one of
    the ``top`` best drawn by ``u`` in [0, 1); never a child scoring 0 (-1 when all do)."""
    rows = np.arange(scores.shape[0])
    if top <= 1 or u is None:
        best = np.argmax(scores, axis=1)
        return np.where(scores[rows, best] > 0, best, -1)
    order = np.argsort(-scores, axis=1, kind="stable")  # best first, ties by index
    count = np.minimum(top, (scores > 0).sum(axis=1))
    slot = np.minimum((u * count).astype(np.int64), np.maximum(count - 1, 0))
    return np.where(count > 0, order[rows, slot], -1)


def _node_of(tree: FlatTree | None, model: Utility) -> Any:
    """This model's flat node (found by identity: the engines build ops from it)."""
    for node in tree.nodes if tree is not None else ():
        if node.model is model:
            return node
    return None


class UtilityOps:
    """One group's `utility` node: its inputs, the scores and the choice (module docstring).

    ``per_agent``: ``scores`` (n, children), each option's score on the agent's last tick
    of the node (with the inertia bonus: what the choice compared; the viewer shows it), and
    ``last_success`` (n, watched), the tick each node watched by a `since_success` input
    last ended a tick in SUCCESS (``NEVER`` before).
    """

    per_agent = ("scores", "last_success")

    def __init__(self, model: Utility, ctx: NodeContext) -> None:
        self.model, self.clock, self.group = model, ctx.clock, ctx.group
        registries: Registries = ctx.registries
        self.options: list[list[tuple[Any, Any]]] = []  # per child: (consideration, input)
        self.inputs: list[Any] = []
        watched: list[str] = []
        for option in model.children:
            built = []
            for c in option.considerations:
                spec: Any = c.input
                op = registries.inputs.impl(spec.kind)(spec, ctx)
                name = getattr(op, "watches", None)
                if name is not None:  # ticks since a node succeeded: this ops remembers
                    if name not in watched:
                        watched.append(name)
                    op.bind(self, watched.index(name))
                self.inputs.append(op)
                built.append((c, op))
            self.options.append(built)
        self.watched = watched
        tree: FlatTree | None = ctx.tree
        self.watch_nodes = [
            np.array([n.index for n in tree.nodes if n.name == name], dtype=np.int64)
            if tree is not None
            else np.zeros(0, dtype=np.int64)
            for name in watched
        ]
        node = _node_of(tree, model)
        self.rand_slot = -1 if node is None or model.random_numbers == 0 else node.rand_slot
        n = ctx.n_agents
        self.scores = np.zeros((n, len(model.children)), dtype=np.float64)
        self.last_success = np.full((n, len(watched)), NEVER, dtype=np.int64)
        self.u: np.ndarray | None = None

    def prepare(self, sense: Sense) -> None:
        for op in self.inputs:
            op.prepare(sense)
        if self.rand_slot >= 0:  # the tick's table, as conditions read it (planned: uniforms)
            self.u = np.array(sense.rand[sense.rows(self.group), self.rand_slot], dtype=np.float64)

    def option_scores(self, rows: Rows) -> np.ndarray:
        """``(len(rows), children)``: weight times the compensated product of considerations."""
        out = np.empty((rows.size, len(self.options)), dtype=np.float64)
        for i, (option, built) in enumerate(zip(self.model.children, self.options, strict=True)):
            if not built:
                out[:, i] = option.weight
                continue
            parts = []
            for c, op in built:
                x = normalised(np.asarray(op.values(rows), dtype=np.float64), *c.range)
                parts.append(consideration_score(c.curve, x))
            out[:, i] = option.weight * compensated(parts)
        return out

    def choose(self, rows: Rows, running: np.ndarray) -> np.ndarray:
        """The child each of ``rows`` ticks (-1: none scores above 0); ``running`` is each
        row's child running since the last tick (-1: none), which gets the inertia bonus
        unless it scores 0."""
        scores = self.option_scores(rows)
        at = np.flatnonzero(running >= 0)
        if at.size:  # the running child's bonus, unless it scores 0 (a veto stays a veto)
            kids = running[at]
            keep = scores[at, kids] > 0
            scores[at[keep], kids[keep]] += self.model.inertia
        self.scores[rows] = scores
        top = self.model.random_top or 1
        u = None if self.u is None else self.u[rows]
        return pick(scores, top, u)

    def observe(self, decision: Decision, rows: Rows) -> None:
        """After the tick: remember where each watched node ended in SUCCESS."""
        if not self.watched or not rows.size:
            return
        every = np.concatenate(self.watch_nodes)
        status = decision.status_columns(every)[rows]
        at = 0
        for j, nodes in enumerate(self.watch_nodes):
            won = (status[:, at : at + nodes.size] == SUCCESS).any(axis=1)
            self.last_success[rows[won], j] = self.clock.tick
            at += nodes.size

    def since(self, column: int, rows: Rows) -> np.ndarray:
        """Ticks since the watched node ``column`` last succeeded, float64."""
        return (self.clock.tick - self.last_success[rows, column]).astype(np.float64)


def register(registries: Registries) -> None:
    registries.composites.register(Utility, UtilityOps)
