"""Tuning: search the swept parameters for the value that maximises (or minimises) a metric.

Optuna proposes parameter values (its TPE sampler by default, seeded so a rerun
proposes the same); each trial is the definition edited with them, run for every
seed as tasks on the same Dask cluster as sweeps, and scored by the mean over
seeds of the objective: a check's aggregate or a ``--metric``. As many trials
are in flight as the cluster has workers (Optuna's ask-and-tell interface); a
trial whose values do not validate is told to Optuna as failed, not run.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from behaviortk.studies.sweep import Param, SweepError, Task, apply, point_seeds, run_point


def distribution(param: Param) -> Any:
    """An Optuna distribution over the values a --param lists (a range keeps its step)."""
    import optuna

    values = param.values
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    if len(values) >= 3 and numbers:
        step = values[1] - values[0]
        even = all(math.isclose(b - a, step) for a, b in itertools.pairwise(values))
        if even and all(isinstance(v, int) for v in values):
            return optuna.distributions.IntDistribution(values[0], values[-1], step=step)
        if even:
            return optuna.distributions.FloatDistribution(values[0], values[-1], step=step)
    return optuna.distributions.CategoricalDistribution(list(values))


@dataclass
class Trial:
    trial: Any
    values: dict[str, Any]
    scores: list[float]
    pending: int


def edited(raw: dict[str, Any], params: Sequence[Param], values: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    for param in params:
        apply(out, param.path, values[param.name])
    return out


def tune(
    client: Any,
    raw: dict[str, Any],
    params: Sequence[Param],
    *,
    objective: str,
    maximise: bool,
    trials: int,
    seeds: Sequence[int],
    ticks: int,
    engine: str,
    metrics: Sequence[Any],
    plugins: Sequence[str],
    name: str,
    sampler_seed: int = 0,
    on_trial: Any = None,
) -> Any:
    """Run ``trials`` Optuna trials on the cluster; return the study."""
    import optuna
    from distributed import as_completed

    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.loader import load_text

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        direction="maximize" if maximise else "minimize",
        sampler=optuna.samplers.TPESampler(seed=sampler_seed),
    )
    space = {p.name: distribution(p) for p in params}
    parallel = max(1, len(client.scheduler_info().get("workers", {})))
    running: dict[Any, Trial] = {}
    flow = as_completed([])
    asked = finished = 0

    def ask() -> None:
        nonlocal asked, finished
        trial = study.ask(space)
        asked += 1
        values = dict(trial.params)
        text = json.dumps(edited(raw, params, values))
        try:
            load_text(text, name)
        except DefinitionError:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            finished += 1
            return
        record = Trial(trial, values, [], len(seeds))
        for seed in point_seeds(values, seeds):
            task = Task(values, text, seed, ticks, engine, list(metrics), list(plugins), name)
            future = client.submit(run_point, task, pure=False, retries=2)
            running[future] = record
            flow.add(future)

    while asked < trials and len(running) < parallel * len(seeds):
        ask()
    for future in flow:
        record = running.pop(future)
        row = future.result()
        record.scores.append(float(row[objective]))
        record.pending -= 1
        if record.pending == 0:
            score = float(sum(record.scores) / len(record.scores))
            if math.isnan(score):
                study.tell(record.trial, state=optuna.trial.TrialState.FAIL)
            else:
                study.tell(record.trial, score)
            finished += 1
            if on_trial is not None:
                on_trial(finished)
            while asked < trials and len(running) < parallel * len(seeds):
                ask()
    if not any(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials):
        raise SweepError(
            "no trial completed: every proposed definition failed to validate or scored NaN"
        )
    return study
