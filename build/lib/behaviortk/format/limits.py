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

MAX_LIVE_AGENTS = 10_000_000
"""Most agents one Simulation holds at once (``spawn`` refuses more): about 2 GB of
per-agent arrays, beyond what one machine of this project runs at interactive rates."""

# --- numbers: every numeric field of the format is bounded by one of these ---------------------
# float64 overflows past 1.8e308 and has 53 bits of mantissa. The engines multiply a few values
# of a definition together (force / mass * dt, a squared distance, weight * force) and sum such
# terms over at most MAX_AGENTS agents; with magnitudes <= 1e9 and positive values >= 1e-6 no
# product of four of them leaves [1e-24, 1e36], so no inf or nan can appear. Each bound is
# checked when loading, so a definition that validates runs.

MAX_MAGNITUDE = 1e9
"""Largest magnitude of a real number of the format (speeds, forces, masses, radii,
distances, durations, weights, angles in degrees, blackboard numbers, check values):
far from float64's overflow even squared and summed over every agent."""

MIN_POSITIVE = 1e-6
"""Smallest value of a number that must be > 0 (mass, time_to_target, cell_size,
durations, exponents...): the engines divide by these, and 1e9 / 1e-6 stays finite."""

MAX_WORLD_SIDE = 1e7
"""Longest side of the world, in world units: float64 positions there are spaced about
2e-9 apart, so a tick's step (a speed times dt) is still resolved, and the squared
diagonal (2e14) is exact. 10,000 km in metres; every shipped world is at most 1,600."""

MIN_WORLD_SIDE = 1.0
"""Shortest side of the world: one world unit, a sixth of the default body radius (6).
A wrapped position is folded with ``x - w * floor(x / w)``; with coordinates bounded by
MAX_COORD the quotient is below 1e9, and the remainder keeps 7 significant digits."""

MAX_COORD = 100 * MAX_WORLD_SIDE
"""Largest magnitude of a coordinate (spawn positions, obstacles, walls, paths, zones,
point targets, offsets): points may lie outside the world, but within 100 widths of
the largest, so differences of points are exact to 1e-7."""

MIN_DT = 1e-6
"""Shortest time step, in seconds: a game ticks at 30-240 Hz and physics at about 1 kHz.
Velocities are displacements / dt (an external agent moved by the game): with
coordinates bounded by MAX_COORD they stay below about 2e15, where a finite dt of 5e-324
made them inf and the heading nan."""

MAX_DT = 1.0
"""Longest time step, in seconds (a step longer than a second is not a simulation tick)."""

MAX_LJ_EXPONENT = 12.0
"""Largest exponent of ``lj_avoidance`` (``U = -A / d^n + B / d^m``): 12 is the classic
Lennard-Jones repulsion. ``d`` is a distance in obstacle radii, from 0.01 (the clamp) up to
about MAX_COORD / MIN_POSITIVE = 1e15, and ``d^12`` stays finite over that range."""

MAX_COUNT = 2**31 - 1
"""Largest count of a node (``repeat``'s successes, ``retry``'s failures, a ``neighbours``
condition's ``min_count``): fits the engines' integer columns; one a tick, it is over a
year at 60 Hz."""

MAX_GROUP_COUNT = 10_000_000
"""Most agents of one group, and most neighbours an agent counts (the total over all
groups is checked against ``--max-agents``)."""

MAX_CHECK_TICK = 1_000_000
"""Last tick a check's window may name: ``behaviortk check`` runs until every window ends,
and 1,000,000 ticks is 4.6 hours of simulated time at 60 Hz (every shipped check ends
before tick 600)."""

MAX_PATH_POINTS = 10_000
"""Most waypoints of one path: path following reads the whole path every tick."""

MAX_HEADING_SMOOTHING = 600
"""Longest heading average, in ticks (10 seconds at 60 Hz): the engines keep that many
past headings per agent."""

MAX_THINK_EVERY = 3600
"""Most ticks between two thinks of an agent (a group's ``think_every`` and its LOD's
``far_think_every``): a minute at 60 Hz. An agent that decides less often than that has
stopped deciding; the stagger (``sim/think.py``) keeps one tick counter per agent id."""

MAX_NON_PENETRATION_PASSES = 100
"""Most relaxation passes of non-penetration per tick."""

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
