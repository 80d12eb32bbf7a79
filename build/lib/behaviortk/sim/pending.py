"""Spawns and despawns a Simulation has taken but not yet applied to its rows.

A game spawns a shot and despawns an enemy every frame. ``Simulation.spawn`` and
``despawn`` check their arguments, hand out ids and record events at once, and
leave the rows to :class:`Pending`; the next ``step()``, or the first read that
needs rows (``sim.agents``, ``sim.ids``, ``rows_of``, ...), applies the whole
batch as one ``world/rows.RowPlan``: a despawn and a spawn in one group become
one overwritten row, with nothing slid and nothing regrown.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.vec import Array
from behaviortk.world.build import Draw, group_constants, spawned_rows

AHEAD = 64
"""Ids whose new rows a group draws ahead (:class:`NewRows`), at least; a spawn of ``n``
draws ``3 n`` ahead, up to ``AHEAD_MAX``."""

AHEAD_MAX = 1024

SPAWNING = int(np.iinfo(np.int64).max)
"""``Simulation._row_of`` of an id spawned but not placed in a row yet (-1: despawned):
past every row, so one minimum tells live ids from gone ones and one maximum placed ones."""

NOTHING_GIVEN: tuple[None, None, None] = (None, None, None)
"""A spawn's positions, velocities and headings when the spawn rule gives them all."""

Spawned = tuple[dict[str, Any], list[str]]
"""New agents of one group: their per-agent fields (``world/build.spawned_rows``), names."""


class Pending:
    """The spawns and despawns since the rows were last brought up to date, made against
    the rows as they are (nothing moves rows while a batch is pending)."""

    __slots__ = ("gone", "spawned")

    def __init__(self) -> None:
        self.gone: list[np.ndarray | int] = []  # despawned agents' rows: per call, sorted
        # rows, or one row as an int (one despawn costs no array)
        self.spawned: dict[str, list[Spawned]] = {}  # per group, one entry per spawn call

    def spawn(self, group: str, rows: dict[str, Any], names: list[str]) -> None:
        self.spawned.setdefault(group, []).append((rows, names))

    def cancel(self, ids: np.ndarray) -> list[str]:
        """Drop the agents ``ids`` spawned in this batch (despawned before they had a row);
        returns the group of each one dropped."""
        groups: list[str] = []
        for group, entries in self.spawned.items():
            kept: list[Spawned] = []
            for rows, names in entries:
                stay = ~np.isin(rows["ids"], ids)
                groups += [group] * int(stay.size - np.count_nonzero(stay))
                if stay.all():
                    kept.append((rows, names))
                elif stay.any():
                    picked = {
                        f: v[stay] if isinstance(v, np.ndarray) else v for f, v in rows.items()
                    }
                    kept.append(
                        (picked, [n for n, s in zip(names, stay.tolist(), strict=True) if s])
                    )
            self.spawned[group] = kept
        return groups

    def batches(self) -> dict[str, Spawned]:
        """Each group's new agents in the order they spawned, one ``Spawned`` per group."""
        out: dict[str, Spawned] = {}
        for group, entries in self.spawned.items():
            if len(entries) == 1:
                out[group] = entries[0]
            elif entries:
                sizes = [rows["ids"].size for rows, _ in entries]
                fields = {
                    f: _joined([rows[f] for rows, _ in entries], sizes) for f in entries[0][0]
                }
                out[group] = (fields, [n for _, names in entries for n in names])
        return out


def _joined(values: list[Any], sizes: list[int]) -> Any:
    """One field of several spawn calls: a group constant stays one value when every call
    gave the same, else each call's values (one each, or one for all) in order."""
    if not any(isinstance(v, np.ndarray) for v in values) and all(v == values[0] for v in values):
        return values[0]
    tail = next((v.shape[1:] for v in values if isinstance(v, np.ndarray)), ())
    return np.concatenate(
        [np.broadcast_to(np.asarray(v), (k, *tail)) for v, k in zip(values, sizes, strict=True)]
    )


class NewRows:
    """New agents' rows (``world/build.spawned_rows``) and names for one Simulation's spawns.

    A group's constants are worked out once per group definition. An agent spawned by an
    area rule with nothing given has rows that depend only on the run's seed, its id and
    its group, so those of the next ``AHEAD`` ids are drawn in one go (:class:`Ahead`) and
    handed out as the group spawns (an id another group takes is skipped): a frame's one
    spawn then costs a lookup instead of a dozen NumPy calls, and the rows are the same
    bits.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._constants: dict[str, tuple[Any, dict[str, Any]]] = {}  # group: (its spec, values)
        self._ahead: dict[str, Ahead] = {}

    def rows(
        self,
        spec: Any,
        first: int,
        n: int,
        order: int,
        given: tuple[Array | None, Array | None, Array | None],
        draw: Draw,
    ) -> Spawned:
        """The rows and names of agents ``first .. first + n - 1`` joining ``spec``'s group
        as its ``order``-th onward, with the positions, velocities and headings ``given``
        (None: the spawn rule's)."""
        name = spec.name
        ahead = self._ahead.get(name)
        if (  # the usual spawn: its rows are ready
            given is NOTHING_GIVEN
            and ahead is not None
            and ahead.spec is spec
            and ahead.first <= first <= ahead.end - n
        ):
            return ahead.take(first, n)
        kept = self._constants.get(name)
        if kept is None or kept[0] is not spec:
            kept = self._constants[name] = (spec, group_constants(spec))
        pos, vel, heading = given
        if spec.spawn.kind != "area" or pos is not None or vel is not None or heading is not None:
            ids = np.arange(first, first + n, dtype=np.int64)
            rows = spawned_rows(
                spec, ids, self.seed, order, pos=pos, vel=vel, heading=heading, draw=draw,
                constants=kept[1],
            )  # fmt: skip
            return rows, names_of(name, first, n)
        more = max(AHEAD, min(3 * n, AHEAD_MAX))
        ids = np.arange(first, first + n + more, dtype=np.int64)
        rows = spawned_rows(spec, ids, self.seed, order, draw=draw, constants=kept[1])
        ahead = self._ahead[name] = Ahead(spec, first, rows, singly=n == 1)
        return ahead.take(first, n)


def names_of(group: str, first: int, n: int) -> list[str]:
    """The names of new agents ``first .. first + n - 1`` of ``group``: ``<group>-<id>``."""
    return list(map(f"{group}-{{}}".format, range(first, first + n)))


class Ahead:
    """One group's rows and names drawn ahead for ids ``first .. end - 1``. A group that
    spawns one agent at a time (``singly``) finds each agent's rows ready, made in one loop
    with the draw rather than in the frame."""

    __slots__ = ("arrays", "constants", "end", "first", "names", "ones", "spec")

    def __init__(self, spec: Any, first: int, rows: dict[str, Any], singly: bool) -> None:
        self.spec, self.first = spec, first
        self.arrays = {f: v for f, v in rows.items() if isinstance(v, np.ndarray)}
        self.constants = {f: v for f, v in rows.items() if f not in self.arrays}
        self.end = first + rows["ids"].size
        self.names = names_of(spec.name, first, self.end - first)
        self.ones = [
            {**{f: v[k : k + 1] for f, v in self.arrays.items()}, **self.constants}
            for k in range(self.end - first if singly else 0)
        ]

    def take(self, first: int, n: int) -> Spawned:
        """The rows and names of ``n`` agents from id ``first`` on."""
        at = first - self.first
        if n == 1 and self.ones:
            return self.ones[at], self.names[at : at + 1]
        rows = {f: v[at : at + n] for f, v in self.arrays.items()}
        rows.update(self.constants)
        return rows, self.names[at : at + n]
