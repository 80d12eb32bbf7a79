"""Saying a long compile out loud: one line on stderr, then its progress to a watch.

Compiling a run's kernels on a cold cache takes seconds to tens of seconds
(``sim/choice.py``); a silent pause that long looks like a hang. Once compiling
has taken ``NOTICE_AFTER`` seconds, :class:`Notice` prints one line on stderr,
terminal or not (``compiling kernels for evacuation: 15 of 29 (first run only;
cached after)``), and from then on tells the watch in force how many kernels are
done: the thread's own (:func:`watching`: the viewer's loading screen), else the
process's (:func:`watch_compiles`: the command line's progress bar). A warm
cache says nothing.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

NOTICE_AFTER = 1.0
"""Seconds of compiling before the notice line (and the watch) appear: a warm cache is silent."""


class Watch(Protocol):
    """What hears of a long compile's progress (``commands/progress.Progress`` is one)."""

    def update(self, done: int) -> None: ...

    def close(self) -> None: ...


WatchFactory = Callable[[int, str], Watch]
"""``factory(kernels to compile, description)``: a watch, made when the notice is shown."""


_watch_default: WatchFactory | None = None
_local = threading.local()


def watch_compiles(factory: WatchFactory | None) -> None:
    """The process's watch of long compiles (the command line's progress bar), or None."""
    global _watch_default
    _watch_default = factory


@contextmanager
def watching(factory: WatchFactory) -> Iterator[None]:
    """Report this thread's compiles to ``factory``'s watch instead (the viewer's window)."""
    saved = getattr(_local, "factory", None)
    _local.factory = factory
    try:
        yield
    finally:
        _local.factory = saved


def current_factory() -> WatchFactory | None:
    """The watch factory in force on this thread (:func:`watching`, else the process's)."""
    found: WatchFactory | None = getattr(_local, "factory", None)
    return found if found is not None else _watch_default


class Notice:
    """A compile of ``count`` kernels (of ``of``) for ``name``: once it has taken ``after``
    seconds (``NOTICE_AFTER``), the notice line on ``stream`` (stderr) and a watch from
    ``factory`` (if any), told how many are done as they are (:meth:`done_with`, and
    ``elsewhere()``: the keys another process has compiled, looked at every ``POLL``
    seconds); nothing at all for a shorter compile."""

    POLL = 0.25

    def __init__(
        self,
        name: str,
        count: int,
        of: int,
        factory: WatchFactory | None,
        *,
        cached: bool = True,
        after: float | None = None,
        stream: Any = None,
        elsewhere: Callable[[], set[Any]] | None = None,
    ) -> None:
        self.name, self.count, self.of = name, count, of
        self.factory = factory
        self.cached = cached
        self.stream = sys.stderr if stream is None else stream
        self.elsewhere = elsewhere
        self.shown = False
        self.watch: Watch | None = None
        self._keys: set[Any] = set()
        self._told = -1
        self._lock = threading.Lock()
        self._stop = threading.Event()
        wait = NOTICE_AFTER if after is None else after
        self._thread = threading.Thread(target=self._run, args=(wait,), daemon=True)
        self._thread.start()

    @property
    def line(self) -> str:
        when = "first run only; cached after" if self.cached else "not cached: every run"
        return f"compiling kernels for {self.name}: {self.count} of {self.of} ({when})"

    @property
    def done(self) -> int:
        found = self._keys | self.elsewhere() if self.elsewhere is not None else self._keys
        return min(len(found), self.count)

    def _run(self, wait: float) -> None:
        if self._stop.wait(wait):
            return
        with self._lock:
            if self._stop.is_set():
                return
            self.shown = True
            print(self.line, file=self.stream, flush=True)
            if self.factory is not None:
                self.watch = self.factory(self.count, f"compiling kernels for {self.name}")
            self._tell()
        while not self._stop.wait(self.POLL):
            with self._lock:
                self._tell()

    def _tell(self) -> None:
        done = self.done
        if self.watch is not None and done != self._told:
            self._told = done
            self.watch.update(done)

    def done_with(self, key: Any) -> None:
        """Step ``key`` is done here (None: a step of its own, never done elsewhere)."""
        with self._lock:
            self._keys.add(object() if key is None else key)
            self._tell()

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            if self.watch is not None:
                self.watch.close()
                self.watch = None
        if threading.current_thread() is not self._thread:
            self._thread.join()
