"""Which steering leaves have a kernel, and how a leaf's rows are handed to it.

A leaf runs compiled when :func:`supports` says so: its model's own class
declares ``ROWS`` (``steering/declared.py``: both paths run its formula) and
its predictor, if any, has a formula (a plugin predictor's runs on NumPy);
or its model is exactly a built-in class listed in ``IMPLS``, every field the
kernel does not read is at its default (a field added later, such as a new
option, set away from its default, sends the leaf to NumPy until its kernel
learns it), and for a combiner every child is supported too. Anything
else runs the registered NumPy implementation through a ``SteeringContext``
built exactly as ``steering.act.make_context`` builds it (:meth:`Job.context`),
so a plugin primitive or combiner is computed as it always was, in the same
request order.

An implementation here is ``fn(job, weight, out)``: it writes ``weight *
force`` for ``job.rows`` into ``out`` (``(n, 2)``); primitives with a kernel
return no angular part.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.sense.sensing import Sense, TargetFacts
from behaviortk.steering import combiner_loops as kc
from behaviortk.steering import combiners as cb
from behaviortk.steering import flock_loops, memory_loops, orca_loops, row_loops, shape_loops
from behaviortk.steering import orca as oc
from behaviortk.steering import primitives as pm
from behaviortk.steering.context import (
    Steering,
    SteeringContext,
    facts_for,
    leaf_state,
    random_numbers,
    steer,
)
from behaviortk.steering.debug import DebugBuffer
from behaviortk.steering.declared import Rows
from behaviortk.steering.formulas import DECELERATION
from behaviortk.steering.kernels import side_turns
from behaviortk.vec import Array
from behaviortk.world.state import Agents, World

Impl = Callable[["Job", float, Array], None]

BASE_FIELDS = frozenset({"type", "name", "weight"})
"""Fields of every steering leaf that no kernel needs to read (``weight`` is passed apart)."""


@dataclass
class Job:
    """One steering leaf over the rows that asked for it this tick (or a combiner's child)."""

    model: Any
    group: str
    rows: np.ndarray  # (n,) int64 global rows, ascending
    local: np.ndarray  # (n,) int64 rows within the group
    agents: Agents
    world: World
    sense: Sense
    dt: float
    rand_slot: int  # first column of sense.rand this leaf reads; -1: none
    memory: dict[str, np.ndarray]
    debug: DebugBuffer
    prefix: str = ""
    requests: Any = None  # steering.requests.Requests of the tick (``follow`` reads it)

    @property
    def n(self) -> int:
        return int(self.rows.shape[0])

    def facts(self, spec: Any) -> TargetFacts:
        """The group-wide facts of target ``spec`` (index them with ``local``), as kernels take them."""
        f = self.sense.target(spec, self.group)
        return TargetFacts(
            pos=np.ascontiguousarray(f.pos, dtype=np.float64),
            vel=np.ascontiguousarray(f.vel, dtype=np.float64),
            agent=np.ascontiguousarray(f.agent, dtype=np.int64),
            valid=np.ascontiguousarray(f.valid, dtype=np.bool_),
        )

    def target(self) -> TargetFacts:
        return self.facts(self.model.target)

    def state(
        self, name: str, tail: tuple[int, ...] = (), fill: float = 0.0, dtype: Any = np.float64
    ) -> np.ndarray:
        """``SteeringContext.state``: the leaf's persistent per-agent array ``name``."""
        return leaf_state(self.memory, self.agents.n, self.prefix + name, tail, fill, dtype)

    def child(self, model: Any, k: int, first_rand: int) -> Job:
        """``SteeringContext.child``: same rows, the child's model, random columns and memory."""
        slot = self.rand_slot + first_rand if self.rand_slot >= 0 else -1
        return Job(
            model=model,
            group=self.group,
            rows=self.rows,
            local=self.local,
            agents=self.agents,
            world=self.world,
            sense=self.sense,
            dt=self.dt,
            rand_slot=slot,
            memory=self.memory,
            debug=self.debug,
            prefix=f"{self.prefix}c{k}.",
            requests=self.requests,
        )

    def context(self) -> SteeringContext:
        """The NumPy path's context for this leaf (``steering.act.make_context``)."""
        sense, group, local = self.sense, self.group, self.local

        def resolve(spec: Any) -> TargetFacts:
            return facts_for(sense.target(spec, group), local)

        width = random_numbers(self.model)
        if self.rand_slot >= 0 and width:
            rand = np.asarray(
                sense.rand[self.rows, self.rand_slot : self.rand_slot + width], dtype=np.float64
            )
        else:
            rand = np.zeros((self.n, 0))
        spec = getattr(self.model, "target", None)
        return SteeringContext(
            rows=self.rows,
            group=group,
            agents=self.agents,
            world=self.world,
            sense=sense,
            dt=self.dt,
            target=None if spec is None else resolve(spec),
            rand=rand,
            memory=self.memory,
            debug=self.debug,
            resolve=resolve,
            prefix=self.prefix,
            requests=self.requests,
        )


def run(job: Job, weight: float) -> Steering:
    """The leaf's weighted steering: its kernel when supported, else its NumPy implementation."""
    if supports(job.model):
        out = np.empty((job.n, 2))
        _impl(job.model)(job, weight, out)
        return Steering(out)
    found = steer(job.model, job.context())
    angular = None if found.angular is None else found.angular * weight
    return Steering(found.linear * weight, angular)


# ---------------------------------------------------------------- support
_verdicts: dict[int, tuple[Any, bool]] = {}
_DEFAULT = object()


def supports(model: Any) -> bool:
    """Whether ``model`` runs on kernels (see the module docstring); cached per model."""
    found = _verdicts.get(id(model))
    if found is not None and found[0] is model:
        return found[1]
    verdict = _supports(model)
    _verdicts[id(model)] = (model, verdict)
    return verdict


def declared(model: Any) -> Rows | None:
    """The built-in ``ROWS`` declaration of ``model``'s class (a plugin's subclass has none)."""
    found = type(model).__dict__.get("ROWS")
    return found if isinstance(found, Rows) else None


def _by_rows(job: Job, weight: float, out: Array) -> None:
    model = job.model
    rows = declared(model)
    assert rows is not None
    target = job.target() if rows.targeted else None
    other = job.facts(model.other) if rows.other else None
    row_loops.run(
        rows, model, job.agents, job.world, job.rows, job.local, target, other, weight, out
    )


def _impl(model: Any) -> Impl:
    return _by_rows if declared(model) is not None else IMPLS[type(model)][0]


def _supports(model: Any) -> bool:
    rows = declared(model)
    if rows is not None:
        return rows.compiles(model)  # both paths run the declaration's formula
    entry = IMPLS.get(type(model))
    if entry is None:
        return False
    known = entry[1] | BASE_FIELDS
    for name, info in type(model).model_fields.items():
        accepted = KERNEL_ACCEPTS.get((type(model), name))
        if accepted is not None and getattr(model, name) not in accepted:
            return False
        if name in known:
            continue
        kernel_value = KERNEL_VALUES.get((type(model), name), _DEFAULT)
        if kernel_value is _DEFAULT:
            kernel_value = info.get_default(call_default_factory=True)
        if getattr(model, name) != kernel_value:
            return False
    children = getattr(model, "children", None)
    return children is None or all(supports(c) for c in children)


# --------------------------------------------------------------- primitives
def _wander(job: Job, weight: float, out: Array) -> None:
    p, ag = job.model, job.agents
    memory = job.state("wander_target", (2,), fill=np.nan)
    memory_loops.wander(
        job.rows, ag.pos, ag.vel, ag.heading, ag.max_speed, ag.radius, memory,
        job.sense.rand_rows(job.rows, job.rand_slot, 2), p.units != "world", float(p.radius),
        float(p.distance),
        float(p.jitter), float(job.dt), p.steer == "displacement", weight, out,
    )  # fmt: skip


_FLOCK: dict[Any, int] = {pm.Separation: 0, pm.Alignment: 1, pm.Cohesion: 2}
_NONE = np.empty((0, 2))


def _flock(jobs: list[tuple[Job, float, Array]]) -> None:
    """Separation, alignment and cohesion leaves of one ``of``, in one pass over the pairs."""
    first = jobs[0][0]
    nb = first.sense.neighbours(first.group, first.model.of)
    weights = [-1.0, -1.0, -1.0]
    outs = [_NONE, _NONE, _NONE]
    for job, weight, out in jobs:
        k = _FLOCK[type(job.model)]
        weights[k], outs[k] = weight, out
    ag = first.agents
    sums = getattr(nb, "sums", None)
    if sums is not None:  # the compiled query summed the pairs already
        flock_loops.flock_sums(
            first.rows, first.local, nb.offsets, sums, ag.pos, ag.vel, ag.max_speed,
            weights[0], weights[1], weights[2], outs[0], outs[1], outs[2],
        )  # fmt: skip
        return
    flock_loops.flock(
        first.rows, first.local, nb.offsets, nb.j, nb.d, ag.pos, ag.vel, ag.max_speed,
        weights[0], weights[1], weights[2], outs[0], outs[1], outs[2],
    )  # fmt: skip


def _flock_one(job: Job, weight: float, out: Array) -> None:
    _flock([(job, weight, out)])


def _obstacle_avoidance(job: Job, weight: float, out: Array) -> None:
    p, ag, w = job.model, job.agents, job.world
    shape_loops.obstacle_avoidance(
        job.rows, ag.pos, ag.vel, ag.heading, ag.max_speed, ag.radius,
        _c2(w.obstacle_pos), _c1(w.obstacle_radius),
        float(p.min_detection_length), float(p.braking_weight), weight, out,
    )  # fmt: skip


def _lj_avoidance(job: Job, weight: float, out: Array) -> None:
    p, ag, w = job.model, job.agents, job.world
    shape_loops.lj_avoidance(
        job.rows, ag.pos, ag.heading, _c2(w.obstacle_pos), _c1(w.obstacle_radius),
        float(p.a), float(p.n), float(p.b), float(p.m), float(p.cutoff), weight, out,
    )  # fmt: skip


def _wall_avoidance(job: Job, weight: float, out: Array) -> None:
    p, ag, w = job.model, job.agents, job.world
    lc, ls, rc, rs = side_turns(np.radians(p.side_angle))
    shape_loops.wall_avoidance(
        job.rows, ag.pos, ag.heading, _c2(w.wall_a), _c2(w.wall_b), _c2(w.wall_normal),
        float(p.feeler_length), lc, ls, rc, rs, weight, out,
    )  # fmt: skip


def _path_following(job: Job, weight: float, out: Array) -> None:
    p, t, ag = job.model, job.target(), job.agents
    path = job.world.paths.get(str(getattr(p.target, "path", "")))
    cursor = job.state("waypoint", (), 0, np.int64)
    if path is None or len(path.points) == 0:
        out[:] = 0.0
        return
    looped = path.looped if p.looped is None else bool(p.looped)
    points = np.ascontiguousarray(path.points, dtype=np.float64)
    memory_loops.path_following(
        job.rows, job.local, ag.pos, ag.vel, ag.max_speed, t.valid, points, cursor,
        float(p.waypoint_seek_distance), bool(looped), DECELERATION["normal"], weight, out,
    )  # fmt: skip


def _orca(job: Job, weight: float, out: Array) -> None:
    p, ag, w = job.model, job.agents, job.world
    t = job.target()
    nb = job.sense.neighbours(job.group, oc.NEIGHBOURS_OF, pairs=True)
    recip = oc.reciprocal(job.requests, job.rows, ag.n)
    orca_loops.orca(
        job.rows, job.local, nb.offsets, np.ascontiguousarray(nb.j, dtype=np.int64), _c2(nb.d),
        recip, ag.pos, ag.vel, ag.radius, ag.max_speed, ag.mass, t.pos, t.valid,
        _c2(w.obstacle_pos), _c1(w.obstacle_radius), _c2(w.wall_a), _c2(w.wall_b),
        float(p.time_horizon), float(p.obstacle_time_horizon), oc.cruise_speed(p),
        float(p.slowing_radius),
        float(p.tolerance), bool(p.keep_apart), oc.time_step(job.dt), weight, out,
    )  # fmt: skip


def _c2(a: Array) -> Array:
    return np.ascontiguousarray(a, dtype=np.float64).reshape(-1, 2)


def _c1(a: Array) -> Array:
    return np.ascontiguousarray(a, dtype=np.float64).reshape(-1)


# --------------------------------------------------------------- combiners
def _children(job: Job, first_rand: int) -> np.ndarray:
    """Every child's weighted force, ``(children, n, 2)``; flocking children of one
    ``of`` share a pass over the neighbour pairs."""
    children = job.model.children
    out = np.empty((len(children), job.n, 2))
    flocking: dict[str, list[tuple[Job, float, Array]]] = {}
    slot = first_rand
    for k, child in enumerate(children):
        cj = job.child(child, k, slot)
        slot += random_numbers(child)
        weight = float(getattr(child, "weight", 1.0))
        if type(child) in _FLOCK:
            flocking.setdefault(child.of, []).append((cj, weight, out[k]))
        else:
            _impl(child)(cj, weight, out[k])
    for jobs in flocking.values():
        _flock(jobs)
    return out


def _blend(job: Job, weight: float, out: Array) -> None:
    children = job.model.children
    ofs = {getattr(c, "of", None) for c in children}
    if all(type(c) in _FLOCK for c in children) and len(ofs) == 1:
        nb = job.sense.neighbours(job.group, children[0].of)
        sums = getattr(nb, "sums", None)
        if sums is not None:  # the common flock: one pass from the query's sums
            ag = job.agents
            kinds = np.array([_FLOCK[type(c)] for c in children], dtype=np.int64)
            weights = np.array([float(c.weight) for c in children])
            flock_loops.flock_blend(
                job.rows, job.local, nb.offsets, sums, ag.pos, ag.vel, ag.max_speed,
                ag.max_force, kinds, weights, weight, out,
            )  # fmt: skip
            return
    kc.blend(_children(job, 0), job.rows, job.agents.max_force, weight, out)


def _prioritized_sum(job: Job, weight: float, out: Array) -> None:
    kc.prioritized_sum(_children(job, 0), job.rows, job.agents.max_force, weight, out)


def _first_nonzero(job: Job, weight: float, out: Array) -> None:
    eps = float(job.model.epsilon)
    kc.first_nonzero(_children(job, 0), job.rows, job.agents.max_force, eps, weight, out)


def _prioritized_dither(job: Job, weight: float, out: Array) -> None:
    p = job.model
    forces = _children(job, len(p.children))
    chances = np.asarray(p.probabilities, dtype=np.float64)
    kc.prioritized_dither(
        forces, job.rows, job.agents.max_force, job.sense.rand, job.rand_slot, chances,
        weight, out,
    )  # fmt: skip


def _fields(text: str) -> frozenset[str]:
    return frozenset(text.split())


KERNEL_VALUES: dict[tuple[Any, str], Any] = {
    # a field the kernel does not read, whose default is not what the kernel computes
    (pm.Cohesion, "normalize"): False,  # the kernel sums the plain seek force
}
"""Fields a kernel does not read but implements one value of (other than the default)."""

KERNEL_ACCEPTS: dict[tuple[Any, str], frozenset[Any]] = {
    (pm.Wander, "steer"): frozenset({None, "seek", "displacement"}),  # not "face"
}
"""Fields a kernel reads for some of their values only; other values go to NumPy."""

IMPLS: dict[Any, tuple[Impl, frozenset[str]]] = {
    pm.Wander: (_wander, _fields("radius distance jitter units steer")),
    pm.Separation: (_flock_one, _fields("of")),
    pm.Alignment: (_flock_one, _fields("of")),
    pm.Cohesion: (_flock_one, _fields("of")),
    pm.ObstacleAvoidance: (_obstacle_avoidance, _fields("min_detection_length braking_weight")),
    pm.LJAvoidance: (_lj_avoidance, _fields("a n b m cutoff")),
    pm.WallAvoidance: (_wall_avoidance, _fields("feeler_length side_angle")),
    pm.PathFollowing: (_path_following, _fields("target waypoint_seek_distance looped")),
    oc.Orca: (
        _orca,
        _fields(
            "target time_horizon obstacle_time_horizon preferred_speed slowing_radius tolerance"
        ),
    ),
    cb.Blend: (_blend, _fields("children")),
    cb.PrioritizedSum: (_prioritized_sum, _fields("children")),
    cb.FirstNonzero: (_first_nonzero, _fields("children epsilon")),
    cb.PrioritizedDither: (_prioritized_dither, _fields("children probabilities")),
}
"""Built-in model class -> (implementation, the fields its kernel reads)."""
