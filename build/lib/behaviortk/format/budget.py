"""Memory and time of one tick, estimated from a definition alone (no NumPy).

A crowd's tick is dominated by its neighbour queries (``sense/sensing.py``): each
observer is measured against the agents of the 3 x 3 grid cells around it
(cells at least a view distance wide), a chunk of observers at a time so the
candidates never take more than :data:`NEIGHBOUR_WORKING_SET` bytes, and it
keeps at most ``max_neighbours`` pairs, its nearest (dense crowds are first
measured within view / 2^L on a finer grid, which this module mirrors). A
tick therefore holds about

- the kept pairs: ``count x min(max_neighbours, expected in view)`` times
  :data:`BYTES_PER_PAIR` (the pairs and what flocking builds from them);
- one chunk of candidates, at most :data:`NEIGHBOUR_WORKING_SET`;
- the agents, :data:`BYTES_PER_AGENT` each;

and takes about ``candidates x SECONDS_PER_CANDIDATE + close pairs x
SECONDS_PER_CLOSE + kept pairs x SECONDS_PER_PAIR + agents x
SECONDS_PER_AGENT`` (close pairs: within the measured radius). How many are near comes from
where a group spawns: its count spread uniformly over the spawn rectangle
(clipped to the world; a ring's bounding square; the bounding box of listed
positions; all on one point when that box is empty). Agents move, and flocks
gather, so this is the tick after spawning, an order of magnitude: it tells
1 GiB from 20, not 1.1 from 1.2. The constants were measured with
``benchmarks/bench_memory.py`` (batch engine) on the development VM.

Imports nothing but ``world.cells`` (plain Python), so ``format`` stays free of
NumPy and the command line can show the defaults.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from behaviortk.format.cells import grid_cells

DEFAULT_MAX_NEIGHBOURS = 64
"""Default ``max_neighbours`` of a group: above every shipped group's size minus one
(the largest shipped group has 60 agents), so it never binds there, and small
enough that 200,000 agents keep at most 12.8 million pairs (about 0.5 GiB)."""

NEIGHBOUR_WORKING_SET = 64 * 1024 * 1024
"""Bytes of candidate pairs the neighbour query holds at once (``sense.NEIGHBOUR_BUDGET``).
Larger chunks are no faster: past a few tens of MiB they fall out of the caches."""

BYTES_PER_CANDIDATE = 96
"""Peak bytes per candidate pair inside one chunk (indices, offsets, distances, masks)."""

BYTES_PER_OBSERVER = 9 * 48
"""Bytes per observer inside one chunk: its 9 stencil cells' ids, counts, starts, shifts."""

BYTES_PER_PAIR = 110
"""Bytes per kept neighbour pair over a tick: the pair itself (rows, offset, distance:
40) and what the flocking forces build from it (owner rows, gathered velocities)."""

BYTES_PER_AGENT = 1200
"""Bytes per agent of the batch engine (state columns, random table, tree arrays)."""

SECONDS_PER_CANDIDATE = 15e-9
"""Seconds per candidate pair measured on the grid (the 3 x 3 cells around an observer)."""

SECONDS_PER_CLOSE = 45e-9
"""Seconds per pair within the measured radius: the exact view and field-of-view tests."""

SECONDS_PER_PAIR = 350e-9
"""Seconds per kept pair over a tick: the cap, and the flocking forces and conditions."""

SECONDS_PER_AGENT = 1e-6
"""Seconds per agent of the batch engine at ordinary densities (its tree, targets, moves)."""

MAX_SECONDS_PER_TICK = 1.0
"""``validate`` warns when a tick is estimated to take longer than this."""

NEIGHBOUR_LEVELS = 6
"""Deepest level of the nearest-first shortcut (``sense._levels``): an observer expected
to see far more than its cap is first measured within view / 2**L, L <= this."""

LEVEL_MARGIN = 2.0
"""A level is tried where this many times the cap are expected in view."""

NEIGHBOUR_NODES = frozenset({"separation", "alignment", "cohesion", "neighbours"})
"""Node types that read neighbour sets: the built-in flocking forces and condition."""

GiB = 1024**3


@dataclass(frozen=True)
class Query:
    """One neighbour query of a tick: ``group`` observing the agents of ``of``."""

    group: str
    of: str
    observers: int
    candidates: float  # measured per observer
    close: float  # within the measured radius per observer (given the exact tests)
    expected: float  # in view per observer, before the cap
    kept: float  # per observer, after the cap
    max_neighbours: int
    view_distance: float

    @property
    def pairs(self) -> float:
        return self.observers * self.kept

    @property
    def measured(self) -> float:
        return self.observers * self.candidates

    @property
    def seconds(self) -> tuple[float, float]:
        """Time of measuring (candidates and close pairs) and of the kept pairs."""
        measuring = self.observers * (
            self.candidates * SECONDS_PER_CANDIDATE + self.close * SECONDS_PER_CLOSE
        )
        return measuring, self.pairs * SECONDS_PER_PAIR


@dataclass(frozen=True)
class Estimate:
    """Per-tick memory (bytes) and time (seconds) of a definition, and the queries behind them."""

    agents: int
    memory: float
    seconds: float
    queries: tuple[Query, ...]


def machine_memory() -> int | None:
    """Total physical memory in bytes (sysconf, else /proc/meminfo), or None."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        pass
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def grid_side(width: float, height: float, radius: float, n: int) -> float:
    """Longest cell side of the neighbour grid (``world.grid.grid_shape``, without NumPy)."""
    nx, ny = grid_cells(width, height, radius, min(max(16, 4 * n), 65535))
    return max(width / nx, height / ny)


def spread(group: Any, width: float, height: float) -> tuple[float, float]:
    """Width and height of the rectangle the group spawns in, clipped to the world."""
    spawn = group.spawn
    if spawn.kind == "area":
        w, h = spawn.max[0] - spawn.min[0], spawn.max[1] - spawn.min[1]
    elif spawn.kind == "ring":
        w = h = 2.0 * spawn.radius
    elif spawn.points:
        xs = [p[0] for p in spawn.points]
        ys = [p[1] for p in spawn.points]
        w, h = max(xs) - min(xs), max(ys) - min(ys)
    else:
        w, h = width, height
    return min(float(w), width), min(float(h), height)


def in_square(box: tuple[float, float], side: float) -> float:
    """Fraction of agents spread over ``box`` within a square of ``side`` around one of them."""
    return math.prod(1.0 if s <= side else side / s for s in box)


def in_disc(box: tuple[float, float], radius: float) -> float:
    """Fraction of agents spread over ``box`` within ``radius`` of one of them: the disc's
    area over the box's when both sides exceed its diameter; whole sides when shorter."""
    fx, fy = (1.0 if s <= 2.0 * radius else 2.0 * radius / s for s in box)
    return fx * fy * (math.pi / 4.0 if fx < 1.0 and fy < 1.0 else 1.0)


def neighbour_ofs(node: Any) -> Iterator[str]:
    """The ``of`` of every neighbour-reading node in a tree (pydantic models or plain data)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            kind, of, children = item.get("type"), item.get("of", "same"), list(item.values())
        elif hasattr(type(item), "model_fields"):
            kind, of = getattr(item, "type", None), getattr(item, "of", "same")
            children = [getattr(item, name, None) for name in type(item).model_fields]
        elif isinstance(item, list | tuple):
            stack.extend(item)
            continue
        else:
            continue
        if kind in NEIGHBOUR_NODES and isinstance(of, str):
            yield of
        stack.extend(children)


def estimate(definition: Any, trees: Mapping[str, Any]) -> Estimate:
    """Memory and time of one tick of ``definition`` (validated) whose groups run ``trees``
    (group name -> root node, as expanded by the loader)."""
    width, height = float(definition.world.width), float(definition.world.height)
    groups = list(definition.groups)
    by_name = {g.name: g for g in groups}
    agents = sum(int(g.count) for g in groups)
    queries = []
    for group in groups:
        for of in dict.fromkeys(neighbour_ofs(trees.get(group.name))):
            observed = groups if of == "any" else [by_name.get(group.name if of == "same" else of)]
            queries.append(_query(group, of, [g for g in observed if g is not None], width, height))
    pairs = sum(q.pairs for q in queries)
    chunk = max(
        (
            min(
                q.observers * (q.candidates * BYTES_PER_CANDIDATE + BYTES_PER_OBSERVER),
                NEIGHBOUR_WORKING_SET,
            )
            for q in queries
        ),
        default=0.0,
    )
    memory = pairs * BYTES_PER_PAIR + chunk + agents * BYTES_PER_AGENT
    seconds = sum(sum(q.seconds) for q in queries) + agents * SECONDS_PER_AGENT
    return Estimate(agents, memory, seconds, tuple(queries))


def _query(group: Any, of: str, observed: list[Any], width: float, height: float) -> Query:
    view = float(group.view_distance)
    fov = min(float(group.fov) / 360.0, 1.0)
    cap = int(getattr(group, "max_neighbours", DEFAULT_MAX_NEIGHBOURS))
    n_b = sum(int(g.count) for g in observed)
    spreads = [(int(g.count) - (g is group), spread(g, width, height)) for g in observed]

    def candidates(side: float) -> float:
        return sum(n * in_square(box, 3.0 * side) for n, box in spreads)

    def within(radius: float) -> float:
        return sum(n * in_disc(box, radius) for n, box in spreads)

    side = grid_side(width, height, view, n_b)
    measured = candidates(side)
    radius = view
    # the nearest-first shortcut, as sense._levels picks it
    ratio = (
        measured * fov * math.pi * view * view / (3.0 * side) ** 2 / (LEVEL_MARGIN * max(cap, 1))
    )
    if ratio >= 4.0 and view > 0:
        level = min(math.floor(math.log(ratio, 4.0)), NEIGHBOUR_LEVELS)
        finer = grid_side(width, height, view / 2.0**level, n_b)
        if finer <= 0.5 * side:
            measured, radius = candidates(finer), view / 2.0**level
    expected = fov * within(view)
    return Query(
        group=group.name,
        of=of,
        observers=int(group.count),
        candidates=measured,
        close=min(measured, within(radius)),
        expected=expected,
        kept=min(float(cap), expected),
        max_neighbours=cap,
        view_distance=view,
    )


def warnings(
    path: str,
    definition: Any,
    trees: Mapping[str, Any],
    *,
    memory: int | None = None,
    max_seconds: float = MAX_SECONDS_PER_TICK,
) -> list[str]:
    """``validate``'s warnings: one line when a tick would exceed the machine's memory
    (``memory`` bytes, default the machine's) and one when it would take longer than
    ``max_seconds``, each with the estimate, its main term and the knobs to turn."""
    est = estimate(definition, trees)
    total = machine_memory() if memory is None else memory
    lines = []
    if total is not None and est.memory > total:
        lines.append(
            f"{path}: warning: one tick needs about {_gib(est.memory)} of memory, more than "
            f"this machine's {_gib(total)}: {_memory_term(est)}"
        )
    if est.seconds > max_seconds:
        lines.append(
            f"{path}: warning: one tick takes about {est.seconds:,.1f} s (estimated; more than "
            f"{max_seconds:g} s): {_time_term(est, definition)}"
        )
    return lines


def _gib(n: float) -> str:
    return f"{n / GiB:,.1f} GiB"


def _memory_term(est: Estimate) -> str:
    q = max(est.queries, key=lambda q: q.pairs, default=None)
    if q is None or q.pairs * BYTES_PER_PAIR < est.agents * BYTES_PER_AGENT:
        return f"{est.agents:,} agents at about {BYTES_PER_AGENT:,} bytes each; lower count"
    return (
        f"group {q.group!r} keeps about {q.observers:,} x {q.kept:,.0f} neighbour pairs "
        f"({_gib(q.pairs * BYTES_PER_PAIR)}); lower its max_neighbours "
        f"(now {q.max_neighbours:,}) or count"
    )


def _time_term(est: Estimate, definition: Any) -> str:
    q = max(est.queries, key=lambda q: sum(q.seconds), default=None)
    if q is None or sum(q.seconds) < est.agents * SECONDS_PER_AGENT:
        return f"{est.agents:,} agents at about {SECONDS_PER_AGENT * 1e6:g} us each; lower count"
    measuring, kept = q.seconds
    if kept > measuring:
        return (
            f"group {q.group!r} keeps about {q.observers:,} x {q.kept:,.0f} neighbour pairs; "
            f"lower its max_neighbours (now {q.max_neighbours:,}) or count"
        )
    world = definition.world
    knobs = (
        "lower its count or spawn it over a larger area"  # piled up: everyone is close
        if q.close >= 0.5 * q.candidates
        else "lower its view_distance or count, or enlarge the world"
    )
    return (
        f"group {q.group!r} measures about {q.observers:,} x {q.candidates:,.0f} candidate "
        f"neighbours ({q.expected:,.0f} in view each, view_distance {q.view_distance:g} in a "
        f"{world.width:g} x {world.height:g} world); {knobs}"
    )
