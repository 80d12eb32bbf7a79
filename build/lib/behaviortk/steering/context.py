"""What a primitive sees (``SteeringContext``) and what it returns (``Steering``).

A context covers the rows (global agent indices) that asked for one leaf this
tick. Combiners derive a child context per child: same rows, the child's own
target, its own random columns and its own memory namespace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from behaviortk.sense.sensing import Sense, TargetFacts
from behaviortk.steering.debug import DebugBuffer
from behaviortk.vec import Array
from behaviortk.world.rows import RowPlan, carry
from behaviortk.world.state import Agents, World

if TYPE_CHECKING:
    from behaviortk.steering.requests import Requests


@dataclass
class Steering:
    """A primitive's answer for its rows: a force and, for rotation primitives, an angular acceleration."""

    linear: Array  # (n, 2)
    angular: Array | None = None  # (n,) radians / s^2


class SteeringFn(Protocol):
    def __call__(self, p: Any, ctx: SteeringContext) -> Steering: ...


Resolver = Callable[[Any], TargetFacts]
"""Target spec -> facts for the context's rows."""


def random_numbers(model: Any) -> int:
    """Random columns a steering leaf reads per tick (its ``random_numbers``, 0 if none)."""
    return int(getattr(model, "random_numbers", 0) or 0)


def facts_for(facts: TargetFacts, local: np.ndarray) -> TargetFacts:
    """The facts of a group restricted to local rows ``local``."""
    return TargetFacts(
        pos=facts.pos[local],
        vel=facts.vel[local],
        agent=facts.agent[local],
        valid=facts.valid[local],
    )


class LeafMemory(dict[str, np.ndarray]):
    """A steering leaf's persistent per-agent arrays (first axis = all agents), with the
    value each was created with, so agents spawned later start from it."""

    def __init__(self) -> None:
        super().__init__()
        self.fills: dict[str, Any] = {}

    def rerow(self, src: np.ndarray, n: int) -> None:
        """Row ``r`` takes old row ``src[r]``; rows where ``src < 0`` start from the fill."""
        for key, arr in self.items():
            new = np.full((n, *arr.shape[1:]), self.fills.get(key, 0), dtype=arr.dtype)
            carry(new, arr, src)
            self[key] = new

    def move(self, plan: RowPlan) -> None:
        """Spawn / despawn in place (``world/rows.RowPlan``); new agents start from the fill."""
        for key, arr in self.items():
            self[key] = plan.apply(arr, self.fills.get(key, 0))


def leaf_state(
    memory: dict[str, np.ndarray],
    n_all: int,
    key: str,
    tail: tuple[int, ...] = (),
    fill: float = 0.0,
    dtype: Any = np.float64,
) -> np.ndarray:
    """A leaf's persistent per-agent array ``key`` (first axis = all agents): made, filled with
    ``fill``, when missing or of another shape or type (the fill is kept for new agents)."""
    arr = memory.get(key)
    if arr is None or arr.shape != (n_all, *tail) or arr.dtype != np.dtype(dtype):
        arr = np.full((n_all, *tail), fill, dtype=dtype)
        memory[key] = arr
        if isinstance(memory, LeafMemory):
            memory.fills[key] = fill
    return arr


@dataclass
class SteeringContext:
    rows: np.ndarray  # (n,) int64 global agent rows
    group: str
    agents: Agents
    world: World
    sense: Sense
    dt: float
    target: TargetFacts | None
    rand: Array  # (n, k) this leaf's random columns
    memory: dict[str, np.ndarray]  # the leaf's persistent arrays, length N (indexed by global row)
    debug: DebugBuffer
    resolve: Resolver
    prefix: str = ""  # memory namespace (combiner children get "c0.", "c1.", ...)
    requests: Requests | None = None  # every group's requests this tick (None: not known)
    _cache: dict[str, Array] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return int(self.rows.shape[0])

    @property
    def pos(self) -> Array:
        return self._take("pos")

    @property
    def vel(self) -> Array:
        return self._take("vel")

    @property
    def heading(self) -> Array:
        return self._take("heading")

    def _take(self, name: str) -> Array:
        found = self._cache.get(name)
        if found is None:
            found = np.take(getattr(self.agents, name), self.rows, axis=0)
            self._cache[name] = found
        return found

    def per_agent(self, name: str) -> Array:
        """A per-agent constant or state array of ``Agents`` (``max_speed``, ``mass``...) for these rows."""
        return self._take(name)

    @property
    def speed(self) -> Array:
        v = self.vel
        return np.sqrt(v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1])

    def state(
        self, name: str, tail: tuple[int, ...] = (), fill: float = 0.0, dtype: Any = np.float64
    ) -> np.ndarray:
        """Persistent per-agent array ``name`` (first axis = all agents), created filled with ``fill``."""
        return leaf_state(self.memory, self.agents.n, self.prefix + name, tail, fill, dtype)

    def target_facts(self) -> TargetFacts:
        """The leaf's own target facts (a leaf without a target gets its own position)."""
        if self.target is not None:
            return self.target
        return TargetFacts(
            pos=self.pos.copy(),
            vel=self.vel.copy(),
            agent=self.rows.astype(np.int64),
            valid=np.ones(self.n, dtype=bool),
        )

    def child(self, model: Any, k: int, first_rand: int) -> SteeringContext:
        """Context for a combiner's ``k``-th child reading random columns from ``first_rand``."""
        spec = getattr(model, "target", None)
        width = random_numbers(model)
        return replace(
            self,
            target=None if spec is None else self.resolve(spec),
            rand=self.rand[:, first_rand : first_rand + width],
            prefix=f"{self.prefix}c{k}.",
            _cache=self._cache,
        )


def steer(model: Any, ctx: SteeringContext) -> Steering:
    """Run a steering leaf, unweighted; rows whose target is missing get zero."""
    fn: SteeringFn = ctx.sense.registries.node(str(model.type)).impl
    out = fn(model, ctx)
    linear = _finite(out.linear, (ctx.n, 2))
    angular = None
    if out.angular is not None:
        angular = _finite(out.angular, (ctx.n,))
    if ctx.target is not None and not ctx.target.valid.all():
        bad = ~ctx.target.valid
        linear[bad] = 0.0
        if angular is not None:
            angular[bad] = 0.0
    return Steering(linear, angular)


def _finite(values: Any, shape: tuple[int, ...]) -> Array:
    """A plugin's output as floats of ``shape`` with non-finite entries replaced by 0."""
    arr = np.array(values, dtype=np.float64).reshape(shape)
    arr[~np.isfinite(arr)] = 0.0
    return arr
