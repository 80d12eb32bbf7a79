"""A second process compiling a run's kernels into the shared disk cache, meanwhile.

numba compiles one function at a time in a process (a global lock), and the
big kernels take seconds each on a cold cache (the neighbour query,
non-penetration's passes). :class:`Ahead` starts one more Python process that
compiles the same kernels (``backend.WARM`` names) from the other end of the
list while the Simulation's own process goes from the start; each takes a
kernel by creating its claim file first (``O_EXCL``: never both), so they meet
in the middle with no cost estimates. A kernel the other process took is then
read from the disk cache, once its ``done`` file is there. The Simulation's
process still readies every kernel itself, in order: the other process only
fills the cache sooner, so if it fails, is slow or is killed, the run compiles
what is missing as it would have alone.

Only worth it where the cache can be written, the machine has a core to spare and
at least two kernels are not cached yet (``ready/<name>`` files beside the
kernels: written once a kernel is compiled there). ``BEHAVIORTK_COMPILE_WORKERS=0``
turns it off.

    python -m behaviortk.sim.compile_ahead CLAIMS NAME...   # the other process
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ENV = "BEHAVIORTK_COMPILE_WORKERS"
"""``0`` turns the second process off (it is on where the machine has two cores or more)."""

POLL = 0.05
"""Seconds between looks for a kernel the other process is compiling."""


def ready_mark(cache: str, name: str) -> Path:
    """The file saying kernel ``name`` was compiled into ``cache`` (by any process)."""
    return Path(cache) / "ready" / name


def mark_ready(cache: str, name: str) -> None:
    try:
        mark = ready_mark(cache, name)
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
    except OSError:  # only a hint for the next run
        pass


def wanted(cache_problem: str | None) -> bool:
    """A second process can help here: a writable cache, two cores or more and a load average
    no higher than their count (evacuation's first run on 2 cores at load 2: 1.10x faster
    with it; at load 4 a second compiler only added its start-up, 1.1-1.5x slower), not
    turned off."""
    if cache_problem is not None or os.environ.get(ENV, "").strip() == "0":
        return False
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average here (Windows)
        load = 0.0
    return cores >= 2 and load <= cores


def claim(claims: Path, name: str) -> bool:
    """Take ``name`` (True) unless the other process has."""
    try:
        os.close(os.open(claims / f"{name}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


class Ahead:
    """The other process, compiling ``names`` from the last one back."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.claims = Path(tempfile.mkdtemp(prefix="behaviortk-compile-"))
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": package_root + (os.pathsep + path if path else "")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "behaviortk.sim.compile_ahead", str(self.claims), *names],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        atexit.register(self.close)  # a window closed mid-compile: the process goes too

    def first_own(self, steps: list[Any]) -> list[Any]:
        """``steps`` (``(key, compile it)``) with those only this process can do first (a
        leaf's generated loop, the fused tree: the other process compiles no Simulation's
        code), in their order: while it does them the other process gets further along
        the shared kernels from its end, so the two finish closer together."""
        return sorted(steps, key=lambda step: step[0] in self.names)

    def take(self, name: str) -> bool:
        """This process compiles ``name`` now (True), or the other one has it."""
        return claim(self.claims, name)

    def wait(self, name: str) -> None:
        """Until the other process is done with ``name`` (or has stopped)."""
        done = self.claims / f"{name}.done"
        while not done.exists() and self.proc.poll() is None:
            time.sleep(POLL)

    def finished(self) -> set[str]:
        """The kernels the other process has compiled so far."""
        return {path.stem for path in self.claims.glob("*.done")}

    def close(self) -> None:
        """Stop the other process if it still runs; remove the claims (again: nothing)."""
        atexit.unregister(self.close)
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.claims, ignore_errors=True)


def main(argv: list[str]) -> int:
    """The other process: claim and compile ``names`` from the last one back."""
    from behaviortk.jit.compile import CACHE_DIR
    from behaviortk.sim.backend import WARM

    claims, names = Path(argv[0]), argv[1:]
    for name in reversed(names):
        if not claim(claims, name):
            break  # the Simulation's process got here first: the rest is its
        WARM[name]()
        mark_ready(CACHE_DIR, name)
        (claims / f"{name}.done").touch()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
