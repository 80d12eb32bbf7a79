"""``behaviortk check FILES...``: run each definition headless per seed and judge its checks."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from behaviortk.commands.options import (
    SEEDS_LIMIT,
    TICKS_LIMIT,
    add_engine_option,
    seed_count,
    tick_count,
)

DEFAULT_TICKS = 600


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "check",
        help="run definitions headless and judge their checks (exit 1 if any fails)",
        description="Run each definition headless for each seed and judge its top-level "
        "`checks`: prints each check's aggregated value and verdict; exit 1 if any fails.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="definition files (JSON)")
    parser.add_argument(
        "--ticks",
        type=tick_count,
        default=None,
        metavar="N",
        help=f"ticks per run, {TICKS_LIMIT} (default: {DEFAULT_TICKS}, or enough for every "
        "check's to_tick)",
    )
    parser.add_argument(
        "--seeds",
        type=seed_count,
        default=1,
        metavar="K",
        help=f"runs per definition: the file's seed and the next K-1, {SEEDS_LIMIT} (default 1)",
    )
    add_engine_option(parser)
    parser.add_argument(
        "--junit", metavar="OUT.xml", help="write JUnit XML (a testcase per check and seed)"
    )
    parser.add_argument(
        "--table",
        metavar="OUT.parquet",
        help="write every run's per-tick metric values (a row per definition, seed and tick)",
    )
    return parser


def _format(value: float) -> str:
    return "nan" if value != value else f"{value:.4g}"


def print_table(verdicts: list[Any], out: Any = sys.stdout) -> None:
    """Definition, check, seed, window, aggregate, expected, verdict: aligned columns."""
    header = (
        "definition",
        "check",
        "seed",
        "engine",
        "over",
        "ticks",
        "value",
        "expected",
        "verdict",
    )
    rows = [
        (
            v.definition,
            v.check,
            str(v.seed),
            v.engine,
            v.over,
            v.window,
            _format(v.value),
            v.expected,
            "pass" if v.passed else "FAIL",
        )
        for v in verdicts
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print(
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip(), file=out
        )


def write_tables(tables: list[dict[str, Any]], out: Any) -> None:
    """Every run's columns as one Parquet table; a column some runs lack is null there."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    joined = pa.concat_tables([pa.table(t) for t in tables], promote_options="default")
    pq.write_table(joined, out)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from behaviortk.commands.diagnostics import print_issues
    from behaviortk.commands.progress import Progress
    from behaviortk.files import atomic_output, check_not_input
    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.loader import load
    from behaviortk.studies.check_runs import (
        LimitError,
        junit_xml,
        run_checks,
        seeds_of,
        ticks_needed,
    )

    outputs = [p for p in (args.junit, args.table) if p]
    for out in outputs:
        check_not_input(out, args.files, "output")
    scenarios = []
    bad = False
    for path in args.files:
        try:
            scenarios.append(load(path))
        except DefinitionError as exc:
            bad = True
            print_issues(exc.issues)
    if bad:
        return 1
    verdicts: list[Any] = []
    tables = []
    try:  # every run's seeds and ticks, within their limits, before anything runs
        plans = {
            id(s): (seeds_of(s, args.seeds), args.ticks or ticks_needed(s, DEFAULT_TICKS))
            for s in scenarios
            if s.definition.checks
        }
    except LimitError as exc:
        print(f"behaviortk check: error: {exc}", file=sys.stderr)
        return exc.code
    progress = Progress(sum(len(seeds) * t for seeds, t in plans.values()), "check")
    for scenario in scenarios:
        name = str(scenario.definition.name)
        if not scenario.definition.checks:
            print(f"behaviortk check: {name}: the definition declares no checks", file=sys.stderr)
            continue
        seeds, ticks = plans[id(scenario)]
        for seed in seeds:
            found, table = run_checks(
                scenario,
                seed=seed,
                ticks=ticks,
                engine=args.engine,
                on_tick=lambda _k: progress.advance(),
            )
            verdicts.extend(found)
            if args.table:
                rows = len(table["tick"])
                tables.append(
                    {
                        "definition": np.full(rows, name),
                        "seed": np.full(rows, seed, dtype=np.int64),
                        **table,
                    }
                )
    progress.close()
    print_table(verdicts)
    failed = sum(not v.passed for v in verdicts)
    print(f"{len(verdicts) - failed} passed, {failed} failed")
    if args.junit:
        with atomic_output(args.junit, "w", inputs=args.files, what="JUnit report") as out:
            out.write(junit_xml(verdicts))
    if args.table and tables:
        with atomic_output(args.table, "wb", inputs=args.files, what="table") as out:
            write_tables(tables, out)
    return 1 if failed else 0
