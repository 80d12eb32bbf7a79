"""Record metrics over headless runs and judge a definition's checks.

``record`` steps a Simulation and evaluates metric specs after every tick into a
table (``Columns``: NumPy columns ``tick``, ``time``, one per metric label);
row ``tick = k`` is the state after the k-th step (tick 0 = after the first).
``judge`` aggregates a check's column over its window and compares.
``run_checks`` does both for one definition over several seeds, the engine of
``behaviortk check`` and of each sweep task.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from behaviortk.format.limits import MAX_SEED

if TYPE_CHECKING:
    from behaviortk.format.loader import Scenario
    from behaviortk.sim.simulation import Simulation


Columns = dict[str, np.ndarray]
"""A run's table: equal-length NumPy columns by name (plain arrays, so checking needs no
dataframe library; ``check --table`` writes them with pyarrow)."""


class LimitError(ValueError):
    """Runs asked for past a limit: seeds past ``MAX_SEED``, ticks past ``MAX_RUN_TICKS``.

    ``code`` is the exit code: 2 when the command line asked (``--seeds``), 1 when the
    definition did (a check's ``to_tick``)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Verdict:
    """One check on one run: its aggregate and whether it passed."""

    definition: str
    check: str
    seed: int
    value: float
    passed: bool
    expected: str  # e.g. ">= 0.9"
    over: str
    window: str  # e.g. "100..599"
    engine: str = ""  # the engine that ran (``auto`` resolved)


def metric_fn(spec: Any, registries: Any) -> Callable[..., float]:
    fn: Callable[..., float] = registries.metrics.impl(spec.metric)
    return fn


def record(
    sim: Simulation,
    specs: dict[str, Any],
    ticks: int,
    on_tick: Callable[[int], None] | None = None,
) -> Columns:
    """Run ``ticks`` ticks; after each, every spec's value, in a column named by its key."""
    fns = {label: metric_fn(spec, sim.registries) for label, spec in specs.items()}
    memory: dict[str, dict[str, Any]] = {label: {} for label in specs}
    values = {label: np.full(ticks, np.nan) for label in specs}
    tick = np.zeros(ticks, dtype=np.int64)
    time = np.zeros(ticks)
    for k in range(ticks):
        sim.step()
        tick[k], time[k] = sim.tick - 1, sim.time
        for label, fn in fns.items():
            values[label][k] = fn(specs[label], sim, memory[label])
        if on_tick is not None:
            on_tick(k + 1)
    return {"tick": tick, "time": time, **values}


def aggregate(
    column: np.ndarray, ticks: np.ndarray, over: str, from_tick: int = 0, to_tick: int | None = None
) -> float:
    """``over`` (min, max, mean, final) of ``column`` within ticks ``from_tick..to_tick``.

    NaN when the window is empty or (except for ``final``) holds a NaN.
    """
    last = int(ticks[-1]) if len(ticks) else -1
    hi = last if to_tick is None else min(to_tick, last)
    window = column[(ticks >= from_tick) & (ticks <= hi)]
    if window.size == 0:
        return math.nan
    if over == "final":
        return float(window[-1])
    if np.isnan(window).any():
        return math.nan
    reduce: dict[str, Callable[[np.ndarray], Any]] = {"min": np.min, "max": np.max, "mean": np.mean}
    return float(reduce[over](window))


def judge(check: Any, table: Columns, definition: str, seed: int, engine: str = "") -> Verdict:
    ticks = table["tick"]
    column = table[check.name]
    value = aggregate(column, ticks, check.over, check.from_tick, check.to_tick)
    last = int(ticks[-1]) if len(ticks) else 0
    hi = last if check.to_tick is None else check.to_tick
    return Verdict(
        definition,
        check.name,
        seed,
        value,
        not math.isnan(value) and check.passes(value),
        f"{check.op} {check.value:g}",
        check.over,
        f"{check.from_tick}..{hi}",
        engine,
    )


def ticks_needed(scenario: Scenario, default: int) -> int:
    """Enough ticks for every check's window: the largest ``to_tick`` + 1, else ``default``
    (the format bounds ``to_tick`` by ``MAX_CHECK_TICK``, below ``MAX_RUN_TICKS``)."""
    checks: list[Any] = scenario.definition.checks
    ends = [c.to_tick for c in checks if c.to_tick is not None]
    return max([default, *[e + 1 for e in ends]]) if ends else default


def seeds_of(scenario: Scenario, count: int, first: int | None = None) -> list[int]:
    """``count`` seeds: ``first`` (default: the definition's own), then the next ones.

    ``LimitError`` when they would pass ``MAX_SEED`` (no run could use them)."""
    first = int(scenario.definition.world.seed if first is None else first)
    if first + count - 1 > MAX_SEED:
        raise LimitError(
            f"{scenario.definition.name}: --seeds {count:,} from its seed {first} goes past "
            f"the largest seed, 2**63 - 1 = {MAX_SEED}",
            2,
        )
    return [first + k for k in range(count)]


def run_checks(
    scenario: Scenario,
    *,
    seed: int,
    ticks: int,
    engine: str,
    extra: dict[str, Any] | None = None,
    on_tick: Callable[[int], None] | None = None,
) -> tuple[list[Verdict], Columns]:
    """One run: the table of every check's metric (and ``extra`` metrics, and ``engine``),
    and the verdicts."""
    from behaviortk.sim.simulation import Simulation

    checks: list[Any] = scenario.definition.checks
    specs: dict[str, Any] = {c.name: c for c in checks}
    specs.update(extra or {})
    sim = Simulation(scenario, engine=engine, seed=seed)
    table = record(sim, specs, ticks, on_tick)
    name = str(scenario.definition.name)
    ran = str(sim.engine.name)
    table["engine"] = np.full(len(table["tick"]), ran)
    return [judge(c, table, name, seed, ran) for c in checks], table


def junit_xml(verdicts: Sequence[Verdict], suite: str = "behaviortk check") -> str:
    """JUnit XML: one testcase per check and seed, grouped in a suite per definition."""
    from xml.etree import ElementTree as ET

    root = ET.Element("testsuites", name=suite)
    for definition in dict.fromkeys(v.definition for v in verdicts):
        mine = [v for v in verdicts if v.definition == definition]
        failures = sum(not v.passed for v in mine)
        ts = ET.SubElement(
            root, "testsuite", name=definition, tests=str(len(mine)), failures=str(failures)
        )
        for v in mine:
            case = ET.SubElement(
                ts, "testcase", classname=definition, name=f"{v.check} [seed {v.seed}]"
            )
            if not v.passed:
                failure = ET.SubElement(
                    case, "failure", message=f"{v.over} = {v.value:.6g}, expected {v.expected}"
                )
                failure.text = (
                    f"check {v.check!r}: {v.over} over ticks {v.window} is {v.value:.6g}; "
                    f"expected {v.expected}"
                )
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
