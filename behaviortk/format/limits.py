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
