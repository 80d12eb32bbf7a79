"""Decide phase: the two engines (py_trees reference, vectorised batch) and what they share
(``facts.py``: every steering leaf's status and every sensed condition, once a tick)."""
