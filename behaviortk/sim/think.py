"""Which agents think (tick their tree) this tick: ``think_every`` and the think-rate LOD.

A group with ``"think_every": k`` runs each agent's tree every k ticks, staggered by id
so that a k-th of the group thinks each tick (Millington, *AI for Games*, 3rd ed.,
"Execution Management": scheduling by frequency and phase; Unreal Engine's tick
intervals). With ``"lod"`` the rate depends on
where the agent is: within ``near`` of a focus point it is ``k``, else
``far_think_every`` (K >= k) (Unreal's significance-based LOD). The rule, at tick
``t`` (the tick being decided) for the agent of id ``i`` whose rate this tick is ``r``:

    the agent thinks  iff  (t - i) % r == 0  or  t - last(i) >= K

``last(i)`` is the last tick it thought; an agent that never thought thinks, so every
agent thinks on its first tick of life (tick 0, or the first step after its spawn) and
has a decision before its first act. The second clause only matters for an agent that
changes rate: one that comes near thinks at its next near slot (at most k - 1 ticks
later), one that goes far at its next far slot; and one that keeps crossing the
``near`` boundary still thinks at least every K ticks (nobody starves). Without LOD
``K = k`` and the rule is the stagger alone.

Near means: the distance from the agent to the nearest focus point (the shortest image
on a wrapped world) is at most ``near``, measured on the positions at the start of
the tick. The focus is the file's (points, or every agent of a group where it is at
the start of the tick) until the game calls ``Simulation.focus(points)``, which
replaces it for every LOD group until ``focus(None)``.

``last`` is kept per agent id (ids are never reused), so spawns, despawns and
re-sorted rows need nothing here; the compiled pass reads it through a copy in row order
(``world.rows.RowCopy``), written through.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.errors import SimulationError
from behaviortk.format.limits import MAX_COORD
from behaviortk.world.rows import RowCopy, grown
from behaviortk.world.spatial import SMALL_SIDE, displacement, padded, wrap_positions
from behaviortk.world.state import Agents, World

NEVER = -(2**62)
"""``last`` of an agent that has not thought yet: ``t - NEVER`` exceeds every rate."""

NOWHERE = np.zeros(0, dtype=bool)
"""``near`` of a group without LOD (never read)."""


@dataclass(frozen=True)
class Rate:
    """One group's think rates: ``every`` near (or without LOD), ``far`` elsewhere."""

    every: int
    far: int
    near: float | None  # None: no LOD
    focus_group: str | None
    focus_points: np.ndarray  # (m, 2), the file's points (empty with a focus group)


def rates_of(definition: Any) -> dict[str, Rate]:
    """The groups that do not think every tick (``think_every`` > 1 or an ``lod``)."""
    out: dict[str, Rate] = {}
    for g in definition.groups:
        lod = g.lod
        if g.tree is None or (g.think_every == 1 and lod is None):
            continue
        if lod is None:
            out[g.name] = Rate(g.think_every, g.think_every, None, None, np.zeros((0, 2)))
            continue
        group = getattr(lod.focus, "group", None)
        points = np.zeros((0, 2)) if group is not None else np.asarray(lod.focus, dtype=float)
        out[g.name] = Rate(g.think_every, lod.far_think_every, float(lod.near), group, points)
    return out


class ThinkSchedule:
    """Each tick's thinkers of every group that does not think every tick (module docstring)."""

    def __init__(self, definition: Any) -> None:
        self.definition = definition
        self.rates = rates_of(definition)
        self._last = np.full(0, NEVER, dtype=np.int64)
        self._last_rows = RowCopy()  # ``last`` in row order, for the compiled pass
        self._behind: np.ndarray | None = None
        """The ``agents.ids`` under which ``_last_rows`` holds thinks ``_last`` lacks (the
        compiled stagger writes the row copy alone: in row order, not scattered by id)."""
        self.override: np.ndarray | None = None
        """The game's focus points (``Simulation.focus``), or None: each group's own."""
        self._phases: dict[str, tuple[Any, ...]] = {}  # _slots
        self._slot_rows: dict[str, tuple[Any, dict[int, np.ndarray]]] = {}  # _at_slot
        self._seen: tuple[Any, ...] = ()  # (tick, agents.ids, last, rates) of the last call
        self._whole_rule_until = 0  # before this tick the compiled path applies every clause

    @property
    def last(self) -> np.ndarray:
        """Per agent id, the last tick it thought (``NEVER``: not yet)."""
        self._write_back()
        return self._last

    @last.setter
    def last(self, value: np.ndarray) -> None:
        self._last, self._behind = value, None

    def _write_back(self) -> None:
        """``_last`` given the thinks only the row copy holds."""
        if self._behind is not None:
            self._last_rows.write_back(self._last)
            self._behind = None

    def follow(self, definition: Any) -> None:
        """The rates of ``definition`` from now on (a tuning change replaces the definition;
        every agent keeps its ``last``)."""
        if definition is not self.definition:
            self.definition = definition
            self.rates = rates_of(definition)

    @property
    def active(self) -> bool:
        """Whether some group does not think every tick (traces then record ``thought``)."""
        return bool(self.rates)

    def focus(self, points: Any) -> None:
        """Replace every LOD group's focus with ``points`` (``[x, y]`` or ``[[x, y], ...]``,
        none at all making every agent far); None gives each group its own focus back."""
        self.override = None if points is None else focus_points(points)

    def thinkers(
        self, tick: int, agents: Agents, world: World, ids_bound: int, kernels: Any = None
    ) -> dict[str, np.ndarray]:
        """Per group of ``rates``, the sorted local rows that think on ``tick``; records it.
        ``ids_bound``: more than every id handed out so far; ``kernels``: the compiled
        kernels (``think_loops.due_rows``: the same rows in one pass), or None."""
        if self._behind is not agents.ids or kernels is None or self._last.size < ids_bound:
            self._write_back()  # before the rows or the store change
        if self._last.size < ids_bound:
            more = np.full(grown(ids_bound), NEVER, dtype=np.int64)
            more[: self._last.size] = self._last
            self._last = more
        settled = self._settled(tick, agents.ids)
        out: dict[str, np.ndarray] = {}
        for name, rate in self.rates.items():
            rows = agents.slices[name]
            ids = agents.ids[rows]
            near_slot, far_slot = self._slots(name, rate, agents.ids, rows)
            near = NOWHERE
            lod = rate.near is not None and rate.far != rate.every
            if rate.near is not None and lod:
                near = within(agents.pos[rows], self._focus(rate, agents), rate.near, world)
            if kernels is not None:
                in_rows = self._last_rows.of(self._last, agents.ids)[rows]
                if settled and not lod:  # the stagger alone: this tick's slot
                    local = self._at_slot(name, near_slot, tick % rate.every)
                    in_rows[local] = tick
                    self._behind = agents.ids
                    out[name] = local
                    continue
                args = (near_slot, far_slot, near, lod, tick, rate.every, rate.far, self._last)
                out[name] = kernels.due_rows(ids, *args, in_rows)
                continue
            due = near_slot == tick % rate.every
            if lod:
                due = np.where(near, due, far_slot == tick % rate.far)
            due |= self._last.take(ids) <= tick - rate.far
            local = np.flatnonzero(due)
            self._last[ids.take(local)] = tick
            out[name] = local
        return out

    def _settled(self, tick: int, ids: np.ndarray) -> bool:
        """Whether no agent can be due by the second clause (``t - last(i) >= K``) this
        tick in a group without LOD, so that its thinkers are its slot's rows.

        With a fixed rate, an agent that has thought once thinks at every slot of its own
        (at most ``every`` ticks apart): the clause adds only agents that never thought.
        So the whole rule is applied on a tick whose rows changed (``agents.ids``, a new
        array object: spawns, despawns, re-sorts), and for ``far`` ticks after anything
        else this schedule cannot follow: a tick that does not follow the last one, a new
        ``last`` (a restore, or more ids) or new rates (a tuning change)."""
        seen = self._seen
        self._seen = (tick, ids, self._last, self.rates)
        changed = len(seen) == 0 or seen[0] != tick - 1
        changed = changed or seen[2] is not self._last or seen[3] is not self.rates
        if changed:
            longest = max((rate.far for rate in self.rates.values()), default=1)
            self._whole_rule_until = tick + longest
        elif seen[1] is not ids:
            self._whole_rule_until = max(self._whole_rule_until, tick + 1)
        return tick >= self._whole_rule_until

    def _at_slot(self, name: str, slot_of: np.ndarray, slot: int) -> np.ndarray:
        """The local rows whose slot (``slot_of``: ``ids % every``) is ``slot``, sorted; kept
        while the rows stay (nobody writes a tick's thinkers)."""
        kept = self._slot_rows.get(name)
        if kept is None or kept[0] is not slot_of:
            kept = self._slot_rows[name] = (slot_of, {})
        found = kept[1].get(slot)
        if found is None:
            found = kept[1][slot] = np.flatnonzero(slot_of == slot)
        return found

    def _slots(
        self, name: str, rate: Rate, ids: np.ndarray, rows: slice
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(ids % every, ids % far)`` of the group's rows: ``(t - i) % r == 0`` is
        ``i % r == t % r``; kept while the rows stay (``agents.ids`` is a new array object
        whenever rows change)."""
        found = self._phases.get(name)
        if found is None or found[:3] != (id(ids), rows.start, rows.stop) or found[3] is not rate:
            own = ids[rows]
            found = (id(ids), rows.start, rows.stop, rate, ids, own % rate.every, own % rate.far)
            self._phases[name] = found
        return found[5], found[6]

    def _focus(self, rate: Rate, agents: Agents) -> np.ndarray:
        if self.override is not None:
            return self.override
        if rate.focus_group is not None:
            return agents.pos[agents.slices[rate.focus_group]]
        return rate.focus_points


def focus_points(points: Any) -> np.ndarray:
    """``points`` as ``(m, 2)`` finite coordinates (one ``[x, y]`` or a list of them, maybe
    empty); ``SimulationError`` for anything else."""
    try:
        arr = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError):
        raise SimulationError(
            f"focus points must be [x, y] or a list of them (or None), got {points!r}"
        ) from None
    if arr.shape == (2,):
        arr = arr.reshape(1, 2)
    if arr.size == 0:
        return np.zeros((0, 2))
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise SimulationError(
            f"focus points must be [x, y] or a list of them (or None), got shape {arr.shape}"
        )
    if not np.isfinite(arr).all() or float(np.abs(arr).max()) > MAX_COORD:
        raise SimulationError(
            f"focus points must be finite coordinates within {MAX_COORD:g}, got {points!r}"
        )
    return arr


def within(pos: np.ndarray, points: np.ndarray, radius: float, world: World) -> np.ndarray:
    """(n,) bool: whether each of ``pos`` is at most ``radius`` from one of ``points`` (the
    shortest image on a wrapped world): a loop over a few points, else a tree."""
    near = np.zeros(pos.shape[0], dtype=bool)
    if points.shape[0] == 0 or pos.shape[0] == 0:
        return near
    if points.shape[0] <= SMALL_SIDE:
        for point in points:
            d = displacement(pos, point, world)
            near |= np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) <= radius
        return near
    from scipy.spatial import cKDTree

    wrap = world.edges == "wrap"
    box = world.size if wrap else None
    place = (lambda p: wrap_positions(p, world)) if wrap else (lambda p: p)
    _, idx = cKDTree(place(points), boxsize=box).query(
        place(pos), k=1, distance_upper_bound=padded(radius)
    )
    found = np.flatnonzero(idx < points.shape[0])
    d = displacement(pos[found], points[idx[found]], world)  # the exact test, as above
    near[found] = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) <= radius
    return near
