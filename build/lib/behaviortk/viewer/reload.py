"""Watch a definition file in a background thread; the window polls and reloads on its own thread.

watchfiles blocks while waiting for changes, so it runs in a daemon thread
that only raises a flag. Loading, validating and rebuilding happen in the
window's update, so the simulation is never touched from two threads.
"""

from __future__ import annotations

import threading
from pathlib import Path


class FileWatcher:
    def __init__(self, path: str | Path, debounce_ms: int = 100) -> None:
        self.path = Path(path).resolve()
        self._changed = threading.Event()
        self._stop = threading.Event()
        self._debounce = debounce_ms
        self._thread = threading.Thread(target=self._run, name="behaviortk-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from watchfiles import watch

        # Watch the directory: editors often save by replacing the file.
        for changes in watch(
            self.path.parent,
            stop_event=self._stop,
            debounce=self._debounce,
            step=50,
            raise_interrupt=False,
        ):
            if any(Path(p).resolve() == self.path for _, p in changes):
                self._changed.set()

    def poll(self) -> bool:
        """True once per batch of changes to the file since the last poll."""
        if self._changed.is_set():
            self._changed.clear()
            return True
        return False

    def stop(self) -> None:
        self._stop.set()
