"""The `utility` composite on the py_trees engine: a real py_trees ``Composite``.

Each tick it asks the group's ``UtilityOps`` (``leaves/utility.py``) which child this agent
ticks, then follows py_trees' composite rules: ticked while not RUNNING, it forgets its
current child and stops every child that is not INVALID (as ``Sequence`` does); when the
choice moves away from the current child, that child is stopped (INVALID), as a
``Selector`` stops the lower priority it interrupts; it then ticks the chosen child and
takes its status, ``stop(status)`` when done. No child scoring above 0: FAILURE, nothing
ticked. ``engines/batch/utility.py`` is the same rule over row arrays.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import py_trees
from py_trees import behaviour
from py_trees.common import Status

from behaviortk.tree.flat import FlatNode


class UtilityComposite(py_trees.composites.Composite):
    """One agent's `utility` node (module docstring); ``ops`` is None in display-only trees."""

    def __init__(self, node: FlatNode, children: list[behaviour.Behaviour], ops: Any) -> None:
        super().__init__(name=node.name, children=children)
        self.index = node.index
        self.ops = ops
        self.row = 0

    def setup(self, **kwargs: Any) -> None:
        self.row = int(kwargs["row"])

    def tick(self) -> Iterator[behaviour.Behaviour]:
        if self.status != Status.RUNNING:
            self.current_child = None
            for child in self.children:
                if child.status != Status.INVALID:
                    child.stop(Status.INVALID)
        previous = self.current_child
        running = -1 if previous is None else self.children.index(previous)
        rows = np.array([self.row], dtype=np.int64)
        choice = int(self.ops.choose(rows, np.array([running], dtype=np.int64))[0])
        chosen = self.children[choice] if choice >= 0 else None
        if previous is not None and previous is not chosen and previous.status != Status.INVALID:
            previous.stop(Status.INVALID)
        if chosen is None:
            self.current_child = None
            self.stop(Status.FAILURE)
            yield self
            return
        self.current_child = chosen
        yield from chosen.tick()
        self.status = chosen.status
        if self.status != Status.RUNNING:
            self.stop(self.status)
        yield self
