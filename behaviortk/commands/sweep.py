"""``behaviortk sweep FILE --param PATH=VALUES ... --out results.parquet``: grid x seeds on Dask."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection
from typing import Any

from behaviortk.commands.options import (
    SEEDS_LIMIT,
    TICKS_LIMIT,
    add_engine_option,
    positive_int,
    seed_count,
    tick_count,
)
from behaviortk.format.limits import MAX_GRID_POINTS, MAX_SWEEP_RUNS

DEFAULT_TICKS = 600


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    """Options sweep and tune share: parameters, seeds, ticks, engine, cluster."""
    parser.add_argument("file", metavar="FILE", help="definition file (JSON)")
    parser.add_argument(
        "--param",
        action="append",
        required=True,
        metavar="PATH=VALUES",
        help="a parameter and its values: world.F, groups.NAME.F or trees.NAME.params.P = "
        "a,b,c or start:stop:step (finite numbers, stop included); repeat for a grid of at "
        f"most {MAX_GRID_POINTS:,} points (sweep: and {MAX_SWEEP_RUNS:,} runs, points x seeds)",
    )
    parser.add_argument(
        "--seeds",
        type=seed_count,
        default=1,
        metavar="K",
        help=f"runs per point: its seed (the file's, or a --param world.seed value) and the "
        f"next K-1, {SEEDS_LIMIT} (default 1)",
    )
    parser.add_argument(
        "--ticks",
        type=tick_count,
        default=None,
        metavar="N",
        help=f"ticks per run, {TICKS_LIMIT} (default {DEFAULT_TICKS}, or enough for every "
        "check's window)",
    )
    add_engine_option(parser)
    parser.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="use this Dask scheduler (default: a local cluster, one worker per core)",
    )
    parser.add_argument(
        "--workers", type=positive_int, default=None, metavar="N", help="local cluster size"
    )


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "sweep",
        help="run a parameter grid times seeds on Dask, results to Parquet",
        description="Run every combination of the --param values for each seed, as tasks on "
        "dask.distributed. Each result row holds the parameters, the seed, every check's "
        "aggregate and every --metric. Rows are written as they complete; rerunning with "
        "the same --out skips what is done.",
    )
    add_cluster_options(parser)
    parser.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="SPEC",
        help="a metric to aggregate per run: NAME:key=value,... (groups=a+b, over=mean|min|"
        "max|final) or a JSON object, e.g. polarisation:group=prey",
    )
    parser.add_argument("--out", required=True, metavar="OUT.parquet", help="results file")
    parser.add_argument("--plot", metavar="OUT.png", help="plot each value against the parameters")
    return parser


def check_metric_names(raw: dict[str, Any], metrics: list[Any], name: str) -> None:
    """Refuse a --metric naming a group, zone or node the definition lacks (before any task)."""
    import copy
    import json

    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.loader import load_text
    from behaviortk.studies.sweep import SweepError

    for m in metrics:
        probe = copy.deepcopy(raw)
        args = m.model.model_dump(mode="json", exclude_none=True)
        probe["checks"] = [{"name": "probe", **args, "op": ">=", "value": 0}]
        try:
            load_text(json.dumps(probe), name)
        except DefinitionError as exc:
            raise SweepError(f"--metric {m.label}: {exc.issues[0].message}") from None


class SweepSetup:
    """The parsed, validated sweep: definition, points, metrics, settings of the results file."""

    def __init__(self, args: argparse.Namespace, max_runs: int | None = MAX_SWEEP_RUNS) -> None:
        """Parse and check everything, cheapest first: seeds, ticks and the grid's size are
        checked before the grid is expanded and each point validated (``max_runs``: None
        for tune, whose runs are its trials)."""
        import hashlib
        import json
        from pathlib import Path

        from behaviortk.format.loader import load
        from behaviortk.studies.check_runs import seeds_of, ticks_needed
        from behaviortk.studies.sweep import check_grid, parse_metric, parse_param, points

        self.scenario = load(args.file)  # located errors first
        self.text = Path(args.file).read_text(encoding="utf-8")
        raw = json.loads(self.text)
        self.params = [parse_param(p) for p in args.param]
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            from behaviortk.studies.sweep import SweepError

            raise SweepError("a --param path is given twice")
        self.seeds = seeds_of(self.scenario, args.seeds)
        self.ticks = args.ticks or ticks_needed(self.scenario, DEFAULT_TICKS)
        check_grid(self.params, len(self.seeds), max_runs)
        regs = self.scenario.registries
        self.metrics = [parse_metric(m, regs) for m in getattr(args, "metric", [])]
        check_metric_names(raw, self.metrics, Path(args.file).name)
        self.points = points(raw, self.params, Path(args.file).name)
        if "world.seed" in names:  # each point runs its own seed and the next K-1
            top = max(int(p.values["world.seed"]) for p in self.points)
            seeds_of(self.scenario, args.seeds, first=top)  # LimitError past MAX_SEED
        self.plugins = list(getattr(args, "plugin", None) or [])
        self.settings = {
            "definition": hashlib.sha256(self.text.encode()).hexdigest(),
            "ticks": self.ticks,
            "engine": args.engine,
            "params": names,
            "metrics": [m.label for m in self.metrics],
        }

    def tasks(self, engine: str, skip: Collection[str] = ()) -> list[Any]:
        from behaviortk.studies.sweep import Task, point_seeds

        out = []
        for point in self.points:
            for seed in point_seeds(point.values, self.seeds):
                task = Task(
                    point.values,
                    point.text,
                    seed,
                    self.ticks,
                    engine,
                    self.metrics,
                    self.plugins,
                    str(self.scenario.definition.name),
                )
                if task.key not in skip:
                    out.append(task)
        return out

    def value_columns(self) -> list[str]:
        checks = [str(getattr(c, "name", "")) for c in self.scenario.definition.checks]
        return checks + [m.label for m in self.metrics]


def run(args: argparse.Namespace) -> int:
    from behaviortk.extras import require

    require("dask", "distributed", "pyarrow")  # before any work: the studies extra
    from behaviortk.commands.diagnostics import print_issues
    from behaviortk.commands.progress import Progress
    from behaviortk.format.issues import DefinitionError
    from behaviortk.studies.check_runs import LimitError
    from behaviortk.studies.cluster import ClusterError, completed, connect
    from behaviortk.studies.results import Results, ResultsError
    from behaviortk.studies.sweep import SweepError, run_point

    try:
        setup = SweepSetup(args)
        results = Results(args.out, setup.settings, inputs=[args.file])
    except DefinitionError as exc:
        print_issues(exc.issues)
        return 1
    except (SweepError, ResultsError) as exc:
        print(f"behaviortk sweep: error: {exc}", file=sys.stderr)
        return 2
    except LimitError as exc:
        print(f"behaviortk sweep: error: {exc}", file=sys.stderr)
        return exc.code
    tasks = setup.tasks(args.engine, results.done)
    skipped = len(setup.points) * len(setup.seeds) - len(tasks)
    print(
        f"{setup.scenario.definition.name}: {len(setup.points)} points x {len(setup.seeds)} "
        f"seeds, {setup.ticks} ticks each, engine {args.engine}: {len(tasks)} to run"
        + (f", {skipped} already in {args.out}" if skipped else ""),
        file=sys.stderr,
    )
    bar = Progress(len(tasks), "sweep", unit="runs")
    try:
        if tasks:
            with connect(args.scheduler, args.workers) as client:
                for task, row in completed(client, run_point, tasks):
                    results.add(task.key, row)
                    bar.advance()
    except ClusterError as exc:
        print(f"behaviortk sweep: error: {exc}", file=sys.stderr)
        return 1
    finally:
        bar.close()
        results.flush()
    engines = sorted({str(r.get("engine")) for r in results.rows if r.get("engine")})
    print(
        f"results: {args.out} ({len(results.rows)} rows; engine {', '.join(engines) or args.engine})"
    )
    if args.plot:
        from behaviortk.files import atomic_output
        from behaviortk.studies.plot import plot

        with atomic_output(args.plot, "wb", inputs=[args.file, args.out], what="plot") as out:
            plot(results.rows, setup.settings["params"], setup.value_columns(), out)
        print(f"plot: {args.plot}")
    return 0
