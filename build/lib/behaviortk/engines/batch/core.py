"""py_trees' tick and stop semantics as masked NumPy over all agents of a group.

Every node works on ``rows``: the sorted group-local indices of the agents that
tick (or stop) it now. A composite splits its rows between its children in the
order py_trees visits them, so each agent sees exactly the sequence of
initialise / update / stop / terminate calls its own py_trees tree would make;
agents never interact, so running that sequence for many agents at once changes
nothing. The rules are transcribed from py_trees 2.6 (behaviour.py, composites.py,
decorators.py); comments name the py_trees line of thought each step mirrors.

Loops run over nodes and children (tens per tree), never over agents.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np

from behaviortk.tree.ops import Codes, LeafOps, Rows
from behaviortk.tree.status import FAILURE, INVALID, RUNNING, SUCCESS
from behaviortk.world.rows import GroupMove, grown

EMPTY = np.zeros(0, dtype=np.int64)


class TreeState:
    """All per-agent state of one group's tree: node statuses and each node's own arrays."""

    def __init__(self, n_nodes: int, n_agents: int) -> None:
        self.n = n_agents
        self.status = np.zeros((n_nodes, n_agents), dtype=np.int8)  # row per node: contiguous
        # composites: position of py_trees' current_child (-1 = None)
        self.current = np.full((n_nodes, n_agents), -1, dtype=np.int16)

    def move(self, m: GroupMove, root: Node) -> None:
        """A spawn or despawn in place: despawned agents' columns take new agents (INVALID,
        no current child) or the last survivors'. Columns past ``n`` are spare room (grown by
        half when full; the nodes under ``root`` then see the new rows)."""
        if m.n_new > self.status.shape[1]:
            status = np.zeros((self.status.shape[0], grown(m.n_new)), dtype=np.int8)
            current = np.full(status.shape, -1, dtype=np.int16)
            status[:, : m.old_n] = self.status[:, : m.old_n]
            current[:, : m.old_n] = self.current[:, : m.old_n]
            self.status, self.current = status, current
            stack = [root]
            while stack:
                node = stack.pop()
                node.st = status[node.k]
                if isinstance(node, Composite):
                    node.cur = current[node.k]
                stack.extend(node.children)
        if m.holes.size:
            self.status[:, m.holes] = self.status[:, m.fillers]
            self.current[:, m.holes] = self.current[:, m.fillers]
        if m.fresh.size:
            self.status[:, m.fresh_at] = INVALID
            self.current[:, m.fresh_at] = -1
        self.n = m.n_new


class Node(ABC):
    """A compiled node: ``tick`` and ``stop`` over many agents at once.

    Statuses live in the shared ``TreeState``; a node's own per-agent arrays are
    named in ``per_agent`` (carried over to survivors when agents spawn or despawn).
    """

    per_agent: ClassVar[tuple[str, ...]] = ()

    def __init__(self, index: int, state: TreeState) -> None:
        self.k = index
        self.state = state
        self.st = state.status[index]
        self.children: list[Node] = []

    @abstractmethod
    def tick(self, rows: Rows) -> None:
        """Tick the node for ``rows``, writing their statuses into the shared state."""

    @abstractmethod
    def stop(self, rows: Rows, new_status: int) -> None:
        """py_trees' ``stop(new_status)`` for ``rows``: reset what the node keeps for them."""

    # helpers -----------------------------------------------------------------
    def not_running(self, rows: Rows) -> Rows:
        return rows[self.st[rows] != RUNNING]

    def stop_by_status(self, rows: Rows, codes: Codes) -> None:
        """``self.stop(new_status)`` for each agent whose new status is SUCCESS or FAILURE."""
        for code in (SUCCESS, FAILURE, INVALID):
            sel = rows[codes == code]
            if sel.size:
                self.stop(sel, code)


def stop_unless(child: Node, rows: Rows, skip: int, new_status: int = INVALID) -> None:
    """``if child.status != skip: child.stop(new_status)`` for each agent."""
    if rows.size:
        sel = rows[child.st[rows] != skip]
        if sel.size:
            child.stop(sel, new_status)


def stop_if(child: Node, rows: Rows, status: int, new_status: int = INVALID) -> None:
    """``if child.status == status: child.stop(new_status)`` for each agent."""
    if rows.size:
        sel = rows[child.st[rows] == status]
        if sel.size:
            child.stop(sel, new_status)


def _overrides(ops: object, hook: str) -> bool:
    """Whether ``ops`` has its own ``hook`` (LeafOps' default does nothing: no need to call it)."""
    return getattr(type(ops), hook, None) is not getattr(LeafOps, hook)


class Leaf(Node):
    """py_trees ``Behaviour.tick``: initialise when not RUNNING, update, stop when done.

    Hooks the ops class leaves at LeafOps' do-nothing default are not called
    (nor the rows they would get worked out): the same effect, fewer passes.
    """

    def __init__(self, index: int, state: TreeState, ops: LeafOps) -> None:
        super().__init__(index, state)
        self.ops = ops
        self._initialise = _overrides(ops, "initialise")
        self._terminate = _overrides(ops, "terminate")

    def tick(self, rows: Rows) -> None:
        if not rows.size:
            return
        if self._initialise:
            fresh = self.not_running(rows)
            if fresh.size:
                self.ops.initialise(fresh)
        codes = self.ops.update(rows)
        if self._terminate:
            done = codes != RUNNING
            if done.any():
                for code in (SUCCESS, FAILURE, INVALID):
                    sel = rows[codes == code]
                    if sel.size:
                        self.ops.terminate(sel, code)
        self.st[rows] = codes

    def stop(self, rows: Rows, new_status: int) -> None:
        if rows.size:
            if self._terminate:
                self.ops.terminate(rows, new_status)
            self.st[rows] = new_status


class Composite(Node):
    """``Composite.stop``: on INVALID forget the current child and stop every non-INVALID child."""

    def __init__(self, index: int, state: TreeState, children: Sequence[Node]) -> None:
        super().__init__(index, state)
        self.children = list(children)
        self.cur = state.current[index]

    def stop(self, rows: Rows, new_status: int) -> None:
        if not rows.size:
            return
        if new_status == INVALID:
            self.cur[rows] = -1
            for child in self.children:
                stop_unless(child, rows, INVALID)
        self.st[rows] = new_status


class SequenceNode(Composite):
    """py_trees ``Sequence.tick`` (with or without memory)."""

    def __init__(
        self, index: int, state: TreeState, children: Sequence[Node], memory: bool
    ) -> None:
        super().__init__(index, state, children)
        self.memory = memory

    def tick(self, rows: Rows) -> None:
        if not rows.size:
            return
        kids = self.children
        running = self.st[rows] == RUNNING
        fresh = rows[~running]
        if fresh.size:
            # not RUNNING: current child = first, stop every non-INVALID child, initialise
            self.cur[fresh] = 0 if kids else -1
            for child in kids:
                stop_unless(child, fresh, INVALID)
        resumed = rows[running]
        if not self.memory and resumed.size:
            self.cur[resumed] = 0 if kids else -1
        if not kids:
            self.cur[rows] = -1
            self.stop(rows, SUCCESS)
            return
        # with memory a RUNNING sequence resumes at its current child
        start = self.cur[rows] if self.memory else np.zeros(rows.size, dtype=np.int16)
        searching = np.ones(rows.size, dtype=bool)
        last = len(kids) - 1
        for p, child in enumerate(kids):
            sel = searching & (start <= p)
            tick_rows = rows[sel]
            if not tick_rows.size:
                continue
            child.tick(tick_rows)
            codes = child.st[tick_rows]
            bad = codes != SUCCESS
            if bad.any():
                halted = tick_rows[bad]
                if not self.memory:
                    for later in kids[p + 1 :]:
                        stop_unless(later, halted, INVALID)
                failed = halted[codes[bad] != RUNNING]
                if failed.size:
                    self.stop_by_status(failed, child.st[failed])
                still = halted[codes[bad] == RUNNING]
                self.st[still] = RUNNING
                searching[np.flatnonzero(sel)[bad]] = False
            if p < last:
                good = tick_rows[~bad]
                self.cur[good] = p + 1
        done = rows[searching]
        if done.size:
            self.stop(done, SUCCESS)


class SelectorNode(Composite):
    """py_trees ``Selector.tick``: priorities, pre-empting lower ones with stop(INVALID)."""

    def __init__(
        self, index: int, state: TreeState, children: Sequence[Node], memory: bool
    ) -> None:
        super().__init__(index, state, children)
        self.memory = memory

    def tick(self, rows: Rows) -> None:
        if not rows.size:
            return
        kids = self.children
        fresh = self.not_running(rows)
        if fresh.size:
            self.cur[fresh] = 0 if kids else -1
        if not kids:
            self.cur[rows] = -1
            self.stop(rows, FAILURE)
            return
        if not self.memory:
            self._tick_from_first(rows)
            return
        start = self.cur[rows].copy()
        # children before the remembered one are reset
        for p, child in enumerate(kids[:-1]):
            stop_unless(child, rows[start > p], INVALID)
        searching = np.ones(rows.size, dtype=bool)
        for p, child in enumerate(kids):
            sel = searching & (start <= p)
            tick_rows = rows[sel]
            if not tick_rows.size:
                continue
            child.tick(tick_rows)
            codes = child.st[tick_rows]
            hit = (codes == RUNNING) | (codes == SUCCESS)
            if not hit.any():
                continue
            won = tick_rows[hit]
            # previous current child differs: stop every non-INVALID child after the winner
            switched = won[self.cur[won] != p]
            self.cur[won] = p
            if switched.size:
                for later in kids[p + 1 :]:
                    stop_unless(later, switched, INVALID)
            won_codes = codes[hit]
            succeeded = won[won_codes == SUCCESS]
            if succeeded.size:
                self.stop(succeeded, SUCCESS)
            self.st[won[won_codes == RUNNING]] = RUNNING
            searching[np.flatnonzero(sel)[hit]] = False
        failed = rows[searching]
        if failed.size:
            self.stop(failed, FAILURE)
            self.cur[failed] = len(kids) - 1

    def _tick_from_first(self, rows: Rows) -> None:
        """The loop above without memory: every agent starts at the first child, and
        ``pending`` holds the rows still searching (no mask over all rows to keep)."""
        kids = self.children
        pending = rows
        for p, child in enumerate(kids):
            if not pending.size:
                break
            child.tick(pending)
            codes = child.st[pending]
            hit = _HIT[codes]
            if not hit.any():
                continue
            won = pending[hit]
            # previous current child differs: stop every non-INVALID child after the winner
            moved = self.cur[won] != p
            if moved.any():
                switched = won[moved]
                self.cur[won] = p
                for later in kids[p + 1 :]:
                    stop_unless(later, switched, INVALID)
            won_codes = codes[hit]
            done = won_codes == SUCCESS
            if done.any():
                self.stop(won[done], SUCCESS)
                self.st[won[~done]] = RUNNING
            else:
                self.st[won] = RUNNING
            pending = pending[~hit]
        if pending.size:
            self.stop(pending, FAILURE)
            self.cur[pending] = len(kids) - 1


_HIT = np.zeros(4, dtype=bool)
_HIT[[RUNNING, SUCCESS]] = True
"""Statuses that end a selector's search (RUNNING, SUCCESS), as a lookup table."""


class ParallelNode(Composite):
    """py_trees ``Parallel.tick`` with its three policies and synchronise."""

    ALL, ONE, SELECTED = "success_on_all", "success_on_one", "success_on_selected"

    def __init__(
        self,
        index: int,
        state: TreeState,
        children: Sequence[Node],
        policy: str,
        synchronise: bool,
        selected: Sequence[int] = (),
    ) -> None:
        super().__init__(index, state, children)
        if policy not in (self.ALL, self.ONE, self.SELECTED):
            raise ValueError(f"unknown parallel policy {policy!r}")
        self.policy = policy
        # SuccessOnOne is never synchronised in py_trees
        self.synchronise = synchronise and policy != self.ONE
        self.selected = list(selected)

    def tick(self, rows: Rows) -> None:
        if not rows.size:
            return
        kids = self.children
        fresh = self.not_running(rows)
        if fresh.size:
            for child in kids:
                stop_unless(child, fresh, INVALID)
            self.cur[fresh] = -1
        if not kids:
            self.cur[rows] = -1
            self.stop(rows, SUCCESS)
            return
        for child in kids:
            if self.synchronise:
                child.tick(rows[child.st[rows] != SUCCESS])
            else:
                child.tick(rows)
        codes = np.stack([child.st[rows] for child in kids])  # (children, rows)
        is_fail = codes == FAILURE
        is_success = codes == SUCCESS
        any_fail = is_fail.any(axis=0)
        new = np.full(rows.size, RUNNING, dtype=np.int8)
        cur = np.full(rows.size, len(kids) - 1, dtype=np.int16)
        if self.policy == self.ALL:
            ok = is_success.all(axis=0)
        elif self.policy == self.ONE:
            ok = is_success.any(axis=0)
            # current child: the last succeeding child
            last_success = len(kids) - 1 - np.argmax(is_success[::-1], axis=0)
            cur = np.where(ok, last_success, cur).astype(np.int16)
        else:
            ok = is_success[self.selected].all(axis=0)
            cur = np.where(ok, self.selected[-1], cur).astype(np.int16)
        new[ok] = SUCCESS
        new[any_fail] = FAILURE
        cur = np.where(any_fail, np.argmax(is_fail, axis=0), cur).astype(np.int16)
        self.cur[rows] = cur
        done = new != RUNNING
        if done.any():
            self.stop_by_status(rows[done], new[done])
        self.st[rows] = new

    def stop(self, rows: Rows, new_status: int) -> None:
        if not rows.size:
            return
        for child in self.children:
            stop_if(child, rows, RUNNING, INVALID)
        super().stop(rows, new_status)


class Decorator(Node):
    """py_trees ``Decorator.tick`` / ``stop``; subclasses give update and the hooks."""

    def __init__(self, index: int, state: TreeState, child: Node) -> None:
        super().__init__(index, state)
        self.child = child
        self.children = [child]

    # hooks (py_trees names) ------------------------------------------------------
    def initialise(self, rows: Rows) -> None:
        return None

    def update(self, rows: Rows) -> Codes:
        return self.child.st[rows].copy()

    def terminate(self, rows: Rows, new_status: int) -> None:
        return None

    # mechanics -------------------------------------------------------------------
    def tick(self, rows: Rows) -> None:
        if not rows.size:
            return
        if type(self).initialise is not Decorator.initialise:  # the default does nothing
            fresh = self.not_running(rows)
            if fresh.size:
                self.initialise(fresh)
        self.child.tick(rows)
        codes = self.update(rows)
        done = codes != RUNNING
        if done.any():
            self.stop_by_status(rows[done], codes[done])
        self.st[rows] = codes

    def stop(self, rows: Rows, new_status: int) -> None:
        if not rows.size:
            return
        self.terminate(rows, new_status)
        if new_status == INVALID:
            self.child.stop(rows, INVALID)
        stop_if(self.child, rows, RUNNING, INVALID)
        self.st[rows] = new_status


def status_map(**pairs: str) -> np.ndarray:
    """A lookup table child status -> own status, identity except for the given pairs."""
    names = {"INVALID": INVALID, "RUNNING": RUNNING, "SUCCESS": SUCCESS, "FAILURE": FAILURE}
    table = np.arange(4, dtype=np.int8)
    for src, dst in pairs.items():
        table[names[src]] = names[dst]
    return table


class MapDecorator(Decorator):
    """Inverter, PassThrough and the status converters: a fixed map of the child's status."""

    def __init__(self, index: int, state: TreeState, child: Node, table: np.ndarray) -> None:
        super().__init__(index, state, child)
        self.table = table

    def update(self, rows: Rows) -> Codes:
        return self.table[self.child.st[rows]]


INVERTER = status_map(SUCCESS="FAILURE", FAILURE="SUCCESS")
CONVERTERS = {
    "passthrough": status_map(),
    "inverter": INVERTER,
    "running_is_failure": status_map(RUNNING="FAILURE"),
    "running_is_success": status_map(RUNNING="SUCCESS"),
    "failure_is_success": status_map(FAILURE="SUCCESS"),
    "failure_is_running": status_map(FAILURE="RUNNING"),
    "success_is_failure": status_map(SUCCESS="FAILURE"),
    "success_is_running": status_map(SUCCESS="RUNNING"),
}


class RepeatNode(Decorator):
    """py_trees ``Repeat``: SUCCESS after ``num_success`` child successes, FAILURE on any failure."""

    per_agent = ("count",)

    def __init__(self, index: int, state: TreeState, child: Node, num_success: int) -> None:
        super().__init__(index, state, child)
        self.num = num_success
        self.count = np.zeros(state.n, dtype=np.int64)

    def initialise(self, rows: Rows) -> None:
        self.count[rows] = 0

    def update(self, rows: Rows) -> Codes:
        child = self.child.st[rows]
        out = np.full(rows.size, RUNNING, dtype=np.int8)
        out[child == FAILURE] = FAILURE
        won = child == SUCCESS
        won_rows = rows[won]
        self.count[won_rows] += 1
        out[won] = np.where(self.count[won_rows] == self.num, SUCCESS, RUNNING)
        return out


class RetryNode(Decorator):
    """py_trees ``Retry``: RUNNING after a failure until ``num_failures`` failures, then FAILURE."""

    per_agent = ("count",)

    def __init__(self, index: int, state: TreeState, child: Node, num_failures: int) -> None:
        super().__init__(index, state, child)
        self.num = num_failures
        self.count = np.zeros(state.n, dtype=np.int64)

    def initialise(self, rows: Rows) -> None:
        self.count[rows] = 0

    def update(self, rows: Rows) -> Codes:
        child = self.child.st[rows]
        out = child.copy()
        lost = child == FAILURE
        lost_rows = rows[lost]
        self.count[lost_rows] += 1
        out[lost] = np.where(self.count[lost_rows] < self.num, RUNNING, FAILURE)
        return out


class OneShotNode(Decorator):
    """py_trees ``OneShot``: once the child completes with a status in the policy, keep it forever."""

    per_agent = ("final",)

    def __init__(self, index: int, state: TreeState, child: Node, final_on: Sequence[int]) -> None:
        super().__init__(index, state, child)
        self.final_on = np.zeros(4, dtype=bool)
        self.final_on[list(final_on)] = True
        self.final = np.zeros(state.n, dtype=np.int8)  # INVALID (0) = not yet final

    def update(self, rows: Rows) -> Codes:
        final = self.final[rows]
        return np.where(final != INVALID, final, self.child.st[rows]).astype(np.int8)

    def terminate(self, rows: Rows, new_status: int) -> None:
        if self.final_on[new_status]:
            sel = rows[self.final[rows] == INVALID]
            self.final[sel] = new_status

    def tick(self, rows: Rows) -> None:
        if not rows.size:
            return
        settled = self.final[rows] != INVALID
        if settled.any():
            # Behaviour.tick: the child is not ticked, the final status is returned again
            done = rows[settled]
            self.stop_by_status(done, self.final[done])
        super().tick(rows[~settled])


class EternalGuardNode(Decorator):
    """py_trees ``EternalGuard``: check the condition every tick; when false, stop with FAILURE."""

    def __init__(
        self,
        index: int,
        state: TreeState,
        child: Node,
        condition: Callable[[Rows], np.ndarray],
        fact: int | None = None,
    ) -> None:
        super().__init__(index, state, child)
        self.condition = condition
        self.fact = fact
        """The flat node whose sensed result (``GroupFacts.cond``) ``condition`` reads, if any."""

    def tick(self, rows: Rows) -> None:
        if not rows.size:
            return
        ok = np.asarray(self.condition(rows), dtype=bool)
        blocked = rows[~ok]
        if blocked.size:
            self.stop(blocked, FAILURE)
        super().tick(rows[ok])
