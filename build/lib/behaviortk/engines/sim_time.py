"""Decorators that py_trees lacks or that must run on simulated time.

py_trees' own ``Timeout`` reads the wall clock and it has no cooldown. These
subclasses keep py_trees' decorator machinery (``Decorator.tick``/``stop``)
and count *simulation ticks* instead: a duration in seconds becomes a whole
number of ticks with :func:`ticks_for`, so both engines compare integers and
agree bit for bit. Every other decorator is py_trees' own class.

The clock is handed to the tree in ``setup(clock=...)``: any object with an
integer ``tick`` (the tick being decided, starting at 0) and a float ``dt``.
The batch engine mirrors the rules written in the class docstrings below.
"""

from __future__ import annotations

import typing

import py_trees
from py_trees import behaviour, common

from behaviortk.tree.clock import Clock, ticks_for


def _clock_from(kwargs: dict[str, typing.Any], name: str) -> Clock:
    clock = kwargs.get("clock")
    if clock is None:
        raise KeyError(f"{name}: setup() needs clock=<object with tick and dt>")
    return typing.cast(Clock, clock)


class SimTimeDecorator(py_trees.decorators.Decorator):
    """A decorator whose duration is counted in ticks of the simulation clock."""

    def __init__(self, name: str, child: behaviour.Behaviour, duration: float) -> None:
        super().__init__(name=name, child=child)
        self.duration = float(duration)
        self.clock: Clock | None = None
        self.limit = 0

    def setup(self, **kwargs: typing.Any) -> None:
        self.clock = _clock_from(kwargs, self.name)
        self.limit = ticks_for(self.duration, self.clock.dt)

    def _now(self) -> int:
        assert self.clock is not None, f"{self.name}: setup(clock=...) was not called"
        return int(self.clock.tick)


class SimTimeout(SimTimeDecorator):
    """Fail a child that is still running after ``duration`` seconds of simulated time.

    Exact rule (``n = ticks_for(duration, dt)``, ``now`` = the tick being decided):

    * When ticked while not RUNNING, the timeout starts: ``start = now``; the
      child is ticked and the timeout returns the child's status.
    * When ticked while RUNNING and ``now - start >= n``: the child is *not*
      ticked; if it is RUNNING it is stopped with INVALID (py_trees' pre-emption,
      its ``terminate`` runs) and the timeout returns FAILURE.
    * Otherwise the child is ticked and its status is returned.

    So a child that keeps running is ticked on exactly ``max(n, 1)`` ticks
    (``n`` ticks = ``duration`` seconds of steering) and the timeout fails on the
    next tick. A child finishing earlier passes its SUCCESS/FAILURE through.
    """

    def __init__(self, name: str, child: behaviour.Behaviour, duration: float) -> None:
        super().__init__(name, child, duration)
        self.start = 0

    def tick(self) -> typing.Iterator[behaviour.Behaviour]:
        now = self._now()
        if self.status == common.Status.RUNNING and now - self.start >= self.limit:
            self.feedback_message = f"timed out after {self.duration}s"
            self.stop(common.Status.FAILURE)  # Decorator.stop invalidates a running child
            yield self
            return
        if self.status != common.Status.RUNNING:
            self.start = now
        yield from super().tick()

    def update(self) -> common.Status:
        status = self.decorated.status
        if status == common.Status.RUNNING:
            left = (self.limit - (self._now() - self.start)) * (
                self.clock.dt if self.clock else 0.0
            )
            self.feedback_message = f"running, {left:.3g}s left"
        else:
            self.feedback_message = f"child finished: {status.value}"
        return status


class SimCooldown(SimTimeDecorator):
    """After the child finishes, refuse to run it again for ``duration`` seconds.

    Exact rule (``n = ticks_for(duration, dt)``, ``now`` = the tick being decided):

    * The child is ticked normally and its status returned, unless the
      decorator is cooling down.
    * When the child *finishes* (returns SUCCESS or FAILURE) on tick ``t``, the
      cooldown ends at tick ``t + n``. A child stopped by pre-emption
      (INVALID) did not finish and starts no cooldown.
    * While ``now < t + n`` and the decorator is ticked, the child is not ticked
      and the decorator returns FAILURE (so a selector moves on).

    With ``n = 0`` the decorator is transparent.
    """

    def __init__(self, name: str, child: behaviour.Behaviour, duration: float) -> None:
        super().__init__(name, child, duration)
        self.ready_at = -(2**62)

    def tick(self) -> typing.Iterator[behaviour.Behaviour]:
        now = self._now()
        if now < self.ready_at:
            left = (self.ready_at - now) * (self.clock.dt if self.clock else 0.0)
            self.feedback_message = f"cooling down, {left:.3g}s left"
            self.stop(common.Status.FAILURE)
            yield self
            return
        yield from super().tick()

    def update(self) -> common.Status:
        status = self.decorated.status
        if status in (common.Status.SUCCESS, common.Status.FAILURE):
            self.ready_at = self._now() + self.limit
            self.feedback_message = f"child finished: {status.value}, cooling down"
        else:
            self.feedback_message = "child running"
        return status
