"""Studies: many runs, judged and compared, apart from the tick.

``check_runs.py`` (record metrics over headless runs and judge a definition's checks),
``metrics.py`` (the built-in metrics), ``sweep.py`` and ``results.py`` (parameter sweeps and
their results file), ``tune.py`` (tuning), ``cluster.py`` (where tasks run: Dask), ``plot.py``.
"""
