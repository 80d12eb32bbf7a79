"""Leaves: the built-in condition and action nodes, one module per node family.

``conditions.py`` (yes/no over a group from the tick's sensed facts), ``actions.py``
(blackboard writes, ``wait``, ``emit``: actions that do not steer), ``memory.py`` (``remember``, ``recall``, ``forget``). Each
module holds its nodes' models and implementations together, with a ``register(registries)``
function the built-in plugin calls.
"""
