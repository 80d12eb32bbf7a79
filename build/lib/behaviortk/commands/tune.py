"""``behaviortk tune FILE --param ... --maximise METRIC --trials N``: Optuna on the Dask cluster."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from behaviortk.commands.options import positive_int
from behaviortk.commands.sweep import SweepSetup, add_cluster_options


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "tune",
        help="search parameters with Optuna for the best value of a metric",
        description="Search the --param values with Optuna (TPE sampler) for the largest "
        "(--maximise) or smallest (--minimise) mean over seeds of a check's aggregate or a "
        "--metric; trials run on Dask. Writes the best parameters as a definition.",
    )
    add_cluster_options(parser)
    goal = parser.add_mutually_exclusive_group(required=True)
    goal.add_argument("--maximise", metavar="METRIC", help="a check name or a --metric spec")
    goal.add_argument("--minimise", metavar="METRIC", help="a check name or a --metric spec")
    parser.add_argument("--trials", type=positive_int, default=20, metavar="N", help="default 20")
    parser.add_argument(
        "--out",
        metavar="OUT.json",
        help="where to write the best definition (default FILE.tuned.json)",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from behaviortk.commands.diagnostics import print_issues
    from behaviortk.commands.progress import Progress
    from behaviortk.files import atomic_output
    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.loader import load_text
    from behaviortk.studies.check_runs import LimitError
    from behaviortk.studies.cluster import ClusterError, connect
    from behaviortk.studies.sweep import SweepError, parse_metric
    from behaviortk.studies.tune import edited, tune

    goal = args.maximise or args.minimise
    try:
        setup = SweepSetup(args, max_runs=None)
        checks = [str(getattr(c, "name", "")) for c in setup.scenario.definition.checks]
        if goal in checks:
            objective, metrics = goal, []
        else:
            spec = parse_metric(goal, setup.scenario.registries)
            from behaviortk.commands.sweep import check_metric_names

            check_metric_names(json.loads(setup.text), [spec], Path(args.file).name)
            objective, metrics = spec.label, [spec]
    except DefinitionError as exc:
        print_issues(exc.issues)
        return 1
    except SweepError as exc:
        print(f"behaviortk tune: error: {exc}", file=sys.stderr)
        return 2
    except LimitError as exc:
        print(f"behaviortk tune: error: {exc}", file=sys.stderr)
        return exc.code
    source = Path(args.file)
    out = args.out or str(source.with_name(f"{source.stem}.tuned.json"))
    raw = json.loads(setup.text)
    bar = Progress(args.trials, "tune", unit="trials")
    try:
        with connect(args.scheduler, args.workers) as client:
            study = tune(
                client,
                raw,
                setup.params,
                objective=objective,
                maximise=bool(args.maximise),
                trials=args.trials,
                seeds=setup.seeds,
                ticks=setup.ticks,
                engine=args.engine,
                metrics=metrics,
                plugins=setup.plugins,
                name=source.name,
                on_trial=lambda _n: bar.advance(),
            )
    except (SweepError, ClusterError) as exc:
        print(f"behaviortk tune: error: {exc}", file=sys.stderr)
        return 1
    finally:
        bar.close()
    best = study.best_trial
    text = json.dumps(edited(raw, setup.params, dict(best.params)), indent=2) + "\n"
    load_text(text, out)  # what we write must validate
    with atomic_output(out, "w", inputs=[args.file], what="tuned definition") as f:
        f.write(text)
    done = sum(t.value is not None for t in study.trials)
    print(
        f"{done} of {len(study.trials)} trials completed (engine {args.engine}); "
        f"best {objective} = {best.value:.6g}"
    )
    for name, value in best.params.items():
        print(f"  {name} = {value}")
    print(f"tuned definition: {out}")
    return 0
