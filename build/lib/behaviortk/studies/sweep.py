"""Parameter sweeps: a grid of definition edits times seeds, each point a headless run.

A parameter is a path into the definition and a list of values:
``world.F``, ``groups.NAME.F`` or ``trees.NAME.params.P`` (the tree's parameter:
its default and every group running that tree that sets it), with values
``a,b,c`` (JSON numbers, true/false or strings) or ``start:stop:step`` (stop
included when the steps land on it). ``points`` validates every edited
definition before anything runs, so a bad value is one clear error, not a
failed task on a worker. ``run_point`` is the task: one definition text, one
seed, returning one result row (the parameters, the seed, every check's
aggregate, every extra metric's). ``sweep.dask`` runs the tasks.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from behaviortk.errors import shown
from behaviortk.format.limits import MAX_GRID_POINTS
from behaviortk.registry import choices

PATH_FORMS = "world.FIELD, groups.NAME.FIELD or trees.NAME.params.PARAM"


class SweepError(ValueError):
    """A bad --param or --metric, or a grid point whose definition does not validate."""


@dataclass(frozen=True)
class Param:
    path: tuple[str, ...]
    values: tuple[Any, ...]

    @property
    def name(self) -> str:
        return ".".join(self.path)


def _number(text: str) -> float | int:
    value = _value(text)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SweepError(f"expected a number, got {shown(text)}")
    return value


def _value(text: str) -> Any:
    """A JSON value, else the bare word as a string; a non-finite or over-long number is a
    SweepError (the format holds neither)."""
    try:
        value = json.loads(text, parse_constant=_not_finite)
    except json.JSONDecodeError:
        return text  # a bare word: a string value
    except SweepError:
        raise
    except ValueError as exc:  # more digits than int() reads
        raise SweepError(f"{shown(text)}: {exc}".splitlines()[0]) from None
    if isinstance(value, float) and not math.isfinite(value):  # 1e999
        _not_finite(text)
    return value


def _not_finite(text: str) -> Any:
    raise SweepError(f"{shown(text)} is not a finite number; values must be finite")


def _count(start: float | int, stop: float | int, step: float | int, text: str) -> int:
    """How many values ``start:stop:step`` has (exact for whole numbers); at most
    ``MAX_GRID_POINTS`` (a SweepError says how many it would be)."""
    if all(isinstance(v, int) for v in (start, stop, step)):
        count = (int(stop) - int(start)) // int(step) + 1
    else:
        try:
            ratio = (float(stop) - float(start)) / float(step)
        except OverflowError:
            ratio = math.inf
        if not ratio < MAX_GRID_POINTS:
            raise SweepError(f"{shown(text)} has more than {MAX_GRID_POINTS:,} values")
        count = math.floor(ratio + 1e-9) + 1
    if count > MAX_GRID_POINTS:
        raise SweepError(
            f"{shown(text)} has {count:,} values; at most {MAX_GRID_POINTS:,} (use a coarser step)"
        )
    return count


def span(text: str) -> tuple[Any, ...]:
    """``a:b:s`` -> a, a+s, ... up to b (included when the steps land on it); else a,b,c."""
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise SweepError(f"a range is start:stop:step, got {text!r}")
        start, stop, step = (_number(p) for p in parts)
        if step <= 0 or stop < start:
            raise SweepError(f"{shown(text)}: the step must be > 0 and stop >= start")
        count = _count(start, stop, step, text)
        whole = all(isinstance(v, int) for v in (start, stop, step))
        return tuple(
            start + i * step if whole else round(start + i * step, 12) for i in range(count)
        )
    values = tuple(_value(v.strip()) for v in text.split(",") if v.strip())
    if not values:
        raise SweepError(f"no values in {shown(text)}")
    return values


def parse_param(text: str) -> Param:
    """``groups.prey.max_speed=80:140:10`` -> Param(("groups", "prey", "max_speed"), (80, ..., 140))."""
    name, sep, values = text.partition("=")
    if not sep or not name.strip():
        raise SweepError(f"--param is PATH=VALUES ({PATH_FORMS}), got {text!r}")
    path = tuple(name.strip().split("."))
    shapes = {"world": 2, "groups": 3, "trees": 4}
    if (
        path[0] not in shapes
        or len(path) != shapes[path[0]]
        or (path[0] == "trees" and path[2] != "params")
    ):
        raise SweepError(f"--param path {name!r} must be {PATH_FORMS}")
    return Param(path, span(values))


def apply(raw: dict[str, Any], path: Sequence[str], value: Any) -> None:
    """Set one parameter in a parsed definition (in place); unknown names are SweepErrors."""
    head = path[0]
    if head == "world":
        if not isinstance(raw.get("world"), dict):
            raise SweepError("the definition has no world object")
        raw["world"][path[1]] = value
        return
    if head == "groups":
        groups = [g for g in raw.get("groups") or [] if isinstance(g, dict)]
        names = [str(g.get("name")) for g in groups]
        if path[1] not in names:
            raise SweepError(f"unknown group {path[1]!r}{choices(path[1], names)}")
        groups[names.index(path[1])][path[2]] = value
        return
    found = raw.get("trees")
    trees: dict[str, Any] = found if isinstance(found, dict) else {}
    tree = trees.get(path[1])
    if not isinstance(tree, dict):
        raise SweepError(f"unknown tree {path[1]!r}{choices(path[1], list(trees))}")
    declared = tree.get("params")
    params: dict[str, Any] = declared if isinstance(declared, dict) else {}
    if path[3] not in params:
        raise SweepError(
            f"tree {path[1]!r} has no parameter {path[3]!r}{choices(path[3], list(params))}"
        )
    spec = params[path[3]]
    params[path[3]] = {**spec, "default": value} if isinstance(spec, dict) else {"default": value}
    for group in raw.get("groups") or []:
        given = group.get("params") if isinstance(group, dict) else None
        if group.get("tree") == path[1] and isinstance(given, dict) and path[3] in given:
            given[path[3]] = value


@dataclass(frozen=True)
class Point:
    """One grid point: parameter values by name, and the edited definition's JSON text."""

    values: dict[str, Any]
    text: str


def point_seeds(values: dict[str, Any], seeds: Sequence[int]) -> list[int]:
    """The seeds a point runs: ``seeds`` (the file's seed and the next K-1), or, when the
    point sets ``world.seed``, that seed and the next K-1 (runs pass their seed explicitly,
    so an edited ``world.seed`` would otherwise change nothing)."""
    if "world.seed" not in values:
        return list(seeds)
    return [int(values["world.seed"]) + k for k in range(len(seeds))]


def check_grid(params: Sequence[Param], seeds: int, max_runs: int | None) -> None:
    """Refuse a grid past ``MAX_GRID_POINTS`` points (or ``max_runs`` runs with ``seeds`` per
    point) before it is expanded: ``points`` validates each point, one by one."""
    size = math.prod(len(p.values) for p in params)
    factors = " x ".join(f"{len(p.values):,} values of {p.name}" for p in params)
    if size > MAX_GRID_POINTS:
        raise SweepError(f"the grid has {size:,} points ({factors}); at most {MAX_GRID_POINTS:,}")
    if max_runs is not None and size * seeds > max_runs:
        raise SweepError(
            f"the sweep has {size * seeds:,} runs ({size:,} points x {seeds:,} seeds); "
            f"at most {max_runs:,}"
        )


def grid(params: Sequence[Param]) -> Iterator[dict[str, Any]]:
    for combo in itertools.product(*(p.values for p in params)):
        yield {p.name: v for p, v in zip(params, combo, strict=True)}


def points(raw: dict[str, Any], params: Sequence[Param], name: str) -> list[Point]:
    """Every grid point's definition, each validated (a DefinitionError names the point)."""
    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.loader import load_text

    out = []
    for values in grid(params):
        edited = copy.deepcopy(raw)
        for param in params:
            apply(edited, param.path, values[param.name])
        text = json.dumps(edited)
        try:
            load_text(text, name)
        except DefinitionError as exc:
            where = ", ".join(f"{k}={v!r}" for k, v in values.items())
            first = exc.issues[0]
            raise SweepError(
                f"at {where}: the definition does not validate: {first.message}"
            ) from None
        out.append(Point(values, text))
    return out


@dataclass(frozen=True)
class MetricSpec:
    """A ``--metric``: a metric model (its arguments) and how to aggregate its ticks."""

    label: str
    model: Any
    over: str = "mean"


def parse_metric(text: str, registries: Any) -> MetricSpec:
    """``polarisation:group=prey``, ``min_distance:groups=prey+predator,over=min``, or JSON.

    ``over`` (min, max, mean, final; default mean) aggregates the run's ticks.
    """
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SweepError(f"--metric {text!r}: not valid JSON ({exc.msg})") from None
    else:
        tag, _, rest = text.partition(":")
        data = {"metric": tag.strip()}
        for item in filter(None, (p.strip() for p in rest.split(","))):
            key, sep, value = item.partition("=")
            if not sep:
                raise SweepError(f"--metric {text!r}: expected key=value, got {item!r}")
            data[key.strip()] = (
                value.split("+") if key.strip() == "groups" else _value(value.strip())
            )
    if not isinstance(data, dict):
        raise SweepError(f"--metric {text!r}: expected an object")
    over = str(data.pop("over", "mean"))
    if over not in ("min", "max", "mean", "final"):
        raise SweepError(f"--metric {text!r}: over must be min, max, mean or final")
    tag = str(data.get("metric"))
    reg = registries.metrics
    if tag not in reg:
        raise SweepError(f"unknown metric {tag!r}{choices(tag, reg.tags())}")
    from pydantic import ValidationError

    try:
        model = reg[tag].model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or tag}: {e['msg']}" for e in exc.errors()
        )
        raise SweepError(f"--metric {text!r}: {problems}") from None
    return MetricSpec(f"{model.label}:{over}" if over != "mean" else model.label, model, over)


@dataclass
class Task:
    """What one worker needs: self-contained, so it pickles to any cluster."""

    values: dict[str, Any]
    text: str
    seed: int
    ticks: int
    engine: str
    metrics: list[MetricSpec] = field(default_factory=list)
    plugins: list[str] = field(default_factory=list)
    name: str = "sweep"

    @property
    def key(self) -> str:
        return json.dumps([self.values, self.seed], sort_keys=True)


def run_point(task: Task) -> dict[str, Any]:
    """Run one grid point for one seed; a row of parameters, seed, check and metric values."""
    from behaviortk.format.loader import load_text
    from behaviortk.registry import default, load_entry_points, load_plugin
    from behaviortk.studies.check_runs import aggregate, run_checks

    load_entry_points(default())  # a worker is a fresh process: the same plugins as the CLI
    for module in task.plugins:
        load_plugin(module, default())
    scenario = load_text(task.text, task.name)
    extra = {f"metric {m.label}": m.model for m in task.metrics}
    verdicts, table = run_checks(
        scenario, seed=task.seed, ticks=task.ticks, engine=task.engine, extra=extra
    )
    row: dict[str, Any] = {**task.values, "seed": task.seed, "engine": str(table["engine"][0])}
    for v in verdicts:
        row[v.check] = v.value
        row[f"{v.check} passed"] = v.passed
    ticks = table["tick"]
    for m in task.metrics:
        row[m.label] = aggregate(table[f"metric {m.label}"], ticks, m.over)
    return row
