"""The `utility` composite on the batch engine: ``engines/utility.py``'s rule over row arrays.

The group's ``UtilityOps`` (``leaves/utility.py``) scores and picks for every row that
ticks the node at once; then, per child, the rows whose choice left it stop it (INVALID)
and the rows that chose it tick it. Each agent sees the calls its py_trees tree makes, in
the same order; agents never interact, so running them side by side changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from behaviortk.engines.batch.core import Composite, Node, TreeState, stop_unless
from behaviortk.tree.ops import Rows
from behaviortk.tree.status import FAILURE, INVALID, RUNNING


class UtilityNode(Composite):
    """A `utility` node over many agents (module docstring)."""

    def __init__(self, index: int, state: TreeState, children: Sequence[Node], ops: Any) -> None:
        super().__init__(index, state, children)
        self.ops = ops

    def tick(self, rows: Rows) -> None:
        if not rows.size:
            return
        kids = self.children
        fresh = self.not_running(rows)
        if fresh.size:  # not RUNNING: forget the current child, reset the children
            self.cur[fresh] = -1
            for child in kids:
                stop_unless(child, fresh, INVALID)
        running = self.cur[rows].astype(np.int64)
        choice = self.ops.choose(rows, running)
        for p, child in enumerate(kids):  # the choice left the running child: stop it
            stop_unless(child, rows[(running == p) & (choice != p)], INVALID)
        none = rows[choice < 0]
        if none.size:
            self.cur[none] = -1
            self.stop(none, FAILURE)
        for p, child in enumerate(kids):
            sel = rows[choice == p]
            if not sel.size:
                continue
            self.cur[sel] = p
            child.tick(sel)
            codes = child.st[sel]
            done = codes != RUNNING
            if done.any():
                self.stop_by_status(sel[done], codes[done])
            self.st[sel[~done]] = RUNNING
