"""Sense: what a tick senses, computed once and shared by both engines.

``sensing.py`` (``Sense``: the facts of one tick, computed lazily over all agents and cached),
``target_kinds.py`` (the built-in target kinds: where each target is) and
``derived_targets.py`` (targets computed from others: centroid, offset, hide_point, and the
hiding spot's maths that ``hide`` imports).
"""
