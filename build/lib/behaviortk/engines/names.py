"""Engine names and the ``auto`` threshold, importable without loading any engine.

The command line offers these as ``--engine`` choices when it builds its
parser (for every command, ``--help`` included), so this module imports
nothing; ``behaviortk.sim.simulation`` takes them from here.
"""

ENGINES = ("py_trees", "batch", "auto")
"""Names ``Simulation(engine=...)`` and ``--engine`` accept."""

KERNELS = ("auto", "numba", "numpy")
"""Names ``Simulation(kernels=...)`` and ``--kernels`` accept (``sim/choice.py``)."""

AUTO_BATCH_AGENTS = 2000
"""``engine="auto"`` picks the batch engine, and ``kernels="auto"`` numba, from this many
agents on (both by the count alone, so default flags run the same kernels on either engine)."""
