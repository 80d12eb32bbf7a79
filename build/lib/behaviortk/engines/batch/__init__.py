"""The batch engine: every group's tree over all its agents at once.

``engine.py`` (``BatchEngine``: the tree compiled once into masked NumPy), ``core.py`` (py_trees'
tick and stop semantics over index arrays), ``leaf_nodes.py`` (leaves, blackboards and sim-time
decorators, one object per flat node) and ``fused.py`` (a reactive tree as the source of one
function, every agent's tick in one loop, on compiled kernels).
"""
