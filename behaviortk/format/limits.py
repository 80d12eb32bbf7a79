"""Size limits of definition files; no imports, so the command line can show the defaults."""

MAX_BYTES = 10 * 1024 * 1024
"""Largest definition file read."""

MAX_DEPTH = 64
"""Deepest tree, after subtree expansion."""

MAX_AGENTS = 200_000
"""Most agents over all groups (``validate --max-agents`` overrides it)."""

MAX_EXPANDED_NODES = 100_000
"""Most nodes over all expanded trees."""

MAX_SEED = 2**63 - 1
"""Largest random seed anywhere (the format, ``--seed``, sweeps): it fits a signed 64-bit
column, so traces and sweep results hold every seed the format accepts."""

MAX_RUN_TICKS = 10_000_000
"""Most ticks in one run asked for on the command line (``--ticks``) or by a check's
``to_tick``: ``check``, ``sweep`` and ``tune`` keep a value per tick per metric (80 MB
each at this bound), and ten million ticks is 46 hours of a 60 Hz game."""

MAX_SEEDS = 10_000
"""Most runs per definition or grid point (``--seeds``)."""

MAX_GRID_POINTS = 100_000
"""Most points in a ``sweep``/``tune`` grid (the product of the ``--param`` value counts),
checked before the grid is expanded: every point is validated before anything runs."""

MAX_SWEEP_RUNS = 1_000_000
"""Most runs in one ``sweep`` (grid points times seeds)."""

MAX_TRACE_TICK = 2**31 - 1
"""Largest tick a trace records (the Parquet ``tick`` column is int32); ``replay --tick``
and the readers of both formats hold ticks to it."""
