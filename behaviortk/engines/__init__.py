"""Decide phase: the two engines (py_trees reference, vectorised batch) and what they share."""
