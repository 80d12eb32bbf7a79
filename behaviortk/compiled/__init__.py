"""Compiled kernels (numba) for the hot paths of a tick: the same answers as the NumPy code, faster.

The NumPy implementation stays the reference; this package is an alternative
*path* through the same phases, chosen per Simulation (``kernels="numba"``,
``--kernels numba``; ``auto``, the default, picks it for the batch engine):

- sense: the neighbour grid build and query (view distance, field of view,
  wrap, nearest ``max_neighbours``) as one kernel writing the same CSR
  ``Neighbours``; nearest agent when one side is small; target facts of agents;
  the per-tick random table (``world/streams_loops.py``), drawn when first read,
  or only the rows a leaf reads; the ``in_range`` condition
  (``leaves/conditions_loops.py``);
- act: the built-in primitives and combiners, one kernel per leaf over the
  rows that asked, flocking forces fused into one pass over the neighbour
  pairs, Buckland's AccumulateForce in place (``act.py``, ``leaves.py``);
- integrate: truncation, ``a = F / m``, speed limit, edges, heading, smoothing
  (``world/integrate_loops.py``);
- decide (batch engine): a reactive tree as one generated function over the
  agents (``engines/batch/fused.py`` writes it, ``generated.py`` compiles it).

Anything without a kernel (a plugin primitive, a predictor or target kind of a
plugin, a built-in whose model gained an option the kernel does not know, set
away from its default) runs through the NumPy code for that leaf only, in the
same request order (``leaves.supports``). Kernels are compiled on first use and
cached on disk (``cache=True``): a second run pays no compile time. Nothing
here is imported unless compiled kernels are asked for; ``engines/choice.py``
loads them and falls back to NumPy, with one warning line, when numba fails.
"""
