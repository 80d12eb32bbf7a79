"""The package's floors: every import goes to the same floor or a lower one, and no two units
reach each other.

A *unit* is a top-level subpackage (``world``, ``steering``, ...) or a loose module
(``vec``, ``cli``, ...) of ``behaviortk``. Every ``import`` of one behaviortk module by
another is an arrow between their units, including imports inside functions (a loop kept
alive only by deferred imports is still a loop; the graph is ``tests/test_house.py``'s).
``from behaviortk import NAME`` (the lazy public names) is not an arrow: the package's
``__init__`` is the door, not a unit.

The floors, from the ground up (imports only go down or sideways, never up):

0. foundations: ``errors``, ``files``, ``registry``, ``vec``: stdlib and NumPy only;
   ``jit``: the numba machinery (decorators, caches, formula registration), no maths
1. ``format``: the file format (also checked alone by ``test_house.py``)
2. ``world``: agent state, geometry, spatial index, sight, integrate
3. ``sense``: what a tick senses (``Sense``, target kinds, derived targets)
4. ``tree``: the vocabulary both engines and every leaf share
5. leaves and act: ``leaves`` (conditions, actions, memory), ``steering``
6. ``engines``: decide (leaf statuses and sensed conditions, both engines)
7. the tick: ``sim`` (``Simulation``, ``embed``, the allocator setting, the kernels
   choice and the compiled path's backend)
8. ``record``: tick_state, the JSON Lines and Parquet traces, their reader
9. ``studies``: checks over runs, metrics, sweeps, tuning, results, cluster, plots
10. ``viewer``
11. doors: ``commands``, ``cli``, ``__main__``, ``plugin``, ``builtins``

A new unit must be placed here before the test passes. Within a floor, arrows may go
either way, but never both ways round a loop (``test_no_two_units_reach_each_other``).
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from test_house import PACKAGE, Arrow, find_cycle, import_arrows, module_name

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundations", ("errors", "extras", "files", "registry", "vec")),
    ("numba machinery", ("jit",)),
    ("format", ("format",)),
    ("world", ("world",)),
    ("sense", ("sense",)),
    ("tree", ("tree",)),
    ("leaves and act", ("leaves", "steering")),
    ("engines", ("engines",)),
    ("the tick", ("sim",)),
    ("record", ("record",)),
    ("studies", ("studies",)),
    ("viewer", ("viewer",)),
    ("doors", ("commands", "cli", "__main__", "plugin", "builtins")),
]
"""The floors from the ground up: (name, units)."""

FLOOR = {unit: (i, name) for i, (name, units) in enumerate(LAYERS) for unit in units}


def unit_of(module: str) -> str | None:
    """``behaviortk.world.grid`` -> ``world``; ``behaviortk.sim.simulation`` -> ``sim``; the package: None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def units() -> set[str]:
    modules = (module_name(p) for p in PACKAGE.rglob("*.py"))
    return {u for u in map(unit_of, modules) if u is not None}


def unit_arrows() -> dict[tuple[str, str], list[Arrow]]:
    """(importing unit, imported unit) -> the imports that make that arrow."""
    arrows: dict[tuple[str, str], list[Arrow]] = defaultdict(list)
    for arrow in import_arrows():
        source, target = unit_of(arrow.source), unit_of(arrow.target)
        if source is not None and target is not None and source != target:
            arrows[source, target].append(arrow)
    return arrows


def where(arrow: Arrow) -> str:
    return f"{arrow.path.relative_to(PACKAGE.parent)}:{arrow.line}: {arrow.text}"


def test_the_units_are_read_from_the_source() -> None:
    assert unit_of("behaviortk.world.grid") == "world"
    assert unit_of("behaviortk.sim.simulation") == "sim"
    assert unit_of("behaviortk") is None
    arrows = unit_arrows()
    assert ("sim", "engines") in arrows
    assert all(a.text.startswith(("import ", "from ")) for a in arrows["sim", "engines"])


def test_every_unit_has_exactly_one_floor() -> None:
    listed = [unit for _, names in LAYERS for unit in names]
    twice = sorted({u for u in listed if listed.count(u) > 1})
    assert not twice, f"on two floors: {twice}"
    missing = sorted(units() - set(listed))
    assert not missing, f"units with no floor in LAYERS (place them): {missing}"
    gone = sorted(set(listed) - units())
    assert not gone, f"LAYERS names units that no longer exist: {gone}"


def test_every_import_goes_to_the_same_floor_or_a_lower_one() -> None:
    upward = []
    for (source, target), arrows in sorted(unit_arrows().items()):
        if source not in FLOOR or target not in FLOOR:
            continue  # reported by test_every_unit_has_exactly_one_floor
        (low, low_name), (high, high_name) = FLOOR[source], FLOOR[target]
        if high > low:
            upward += [
                f"{where(a)}\n    {source} (floor {low}, {low_name}) imports "
                f"{target} (floor {high}, {high_name})"
                for a in arrows
            ]
    assert not upward, "imports that go up a floor:\n" + "\n".join(upward)


def test_no_two_units_reach_each_other() -> None:
    arrows = unit_arrows()
    graph: dict[str, set[str]] = {unit: set() for unit in units()}
    for source, target in arrows:
        graph[source].add(target)
    cycle = find_cycle(graph)
    lines = [where(arrows[a, b][0]) for a, b in itertools.pairwise(cycle)]
    assert not cycle, f"units in a loop: {' -> '.join(cycle)}, through\n" + "\n".join(lines)


def test_loose_modules_are_only_doors_and_foundations() -> None:
    """Issue 24, target 2: everything else lives in the package of its phase or role."""
    loose = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    allowed = {unit for name, names in LAYERS if name in ("foundations", "doors") for unit in names}
    assert loose <= allowed, f"loose modules that belong in a package: {sorted(loose - allowed)}"
    assert len(loose) + 1 <= 10  # with __init__


def test_few_module_names_are_used_twice() -> None:
    """Issue 24, target 6: at most 6 names twice, not counting a ``commands/`` module named
    after the library module it drives (``commands/sweep.py`` and ``studies/sweep.py``)."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in PACKAGE.rglob("*.py"):
        if path.stem != "__init__":
            where[path.stem].append(module_name(path))
    twice = {
        name: modules
        for name, modules in where.items()
        if len([m for m in modules if not m.startswith("behaviortk.commands.")]) > 1
    }
    assert len(twice) <= 6, f"{len(twice)} module names used twice: {sorted(twice.items())}"
