"""Which kernels a Simulation runs on, and readying the compiled ones (imports no numba itself).

``kernels`` is ``"numba"`` (compiled), ``"numpy"`` (the reference) or
``"auto"``: the ``BEHAVIORTK_KERNELS`` environment variable when it is set,
else numba from ``AUTO_BATCH_AGENTS`` agents on (crowds, where ticks are long)
and NumPy below (small scenes, where loading numba would cost more than it
saves). The choice goes by the agent count alone, as ``engine="auto"`` does,
never by the engine: the two paths may differ in the last bit (libm's and
NumPy's ``pow``), so the same scenario on either engine with default flags
runs the same kernels and gives byte-identical traces. ``BEHAVIORTK_KERNELS=numpy`` (or ``--kernels numpy``) forces the
reference everywhere.

:func:`load` imports the compiled path; :func:`ready` compiles what one
Simulation calls (``sim/kernel_plan.py``: its nodes' kernels, its leaves'
generated loops, its fused trees) and nothing else, or reads them from numba's
on-disk cache (under ``$NUMBA_CACHE_DIR``, ``$XDG_CACHE_HOME`` or ``~/.cache``,
in ``behaviortk-kernels/<hash of the kernels' sources>``: ``jit/compile.py``).
Kernels readied once stay ready in the process: a later Simulation compiles only
what it adds. Compiling that takes over a second says so in one line on stderr,
and reports its progress to the watch in force (``sim/compile_notice.py``). If numba is missing or a kernel fails to
compile, the NumPy path runs instead and one warning line says why; a cache
folder that cannot be written gets one warning line too (kernels then compile
in memory, every run).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from behaviortk.engines.names import AUTO_BATCH_AGENTS, KERNELS
from behaviortk.errors import SimulationError
from behaviortk.sim import compile_ahead
from behaviortk.sim.compile_notice import Notice, current_factory

ENV = "BEHAVIORTK_KERNELS"
"""Environment variable that sets what ``kernels="auto"`` means (``numba``/``numpy``/``auto``)."""


class KernelsError(SimulationError):
    """An unknown kernels name (argument or environment variable)."""


def resolve(kernels: str, agents: int) -> str:
    """``"numba"`` or ``"numpy"`` for a requested ``kernels`` name and the scenario's agent count."""
    if kernels not in KERNELS:
        raise KernelsError(f"unknown kernels {kernels!r}; choose one of {', '.join(KERNELS)}")
    if kernels == "auto":
        env = os.environ.get(ENV, "").strip() or "auto"
        if env not in KERNELS:
            raise KernelsError(
                f"{ENV}={env!r} is not a kernels name; choose one of {', '.join(KERNELS)}"
            )
        kernels = env
    if kernels == "auto":
        return "numba" if agents >= AUTO_BATCH_AGENTS else "numpy"
    return kernels


_loaded: Any = None
_failed = False
_ready: set[Any] = set()  # keys of the compile steps done in this process
_lock = threading.Lock()  # one Simulation readies its kernels at a time (the viewer's thread)


def _warn_failure(exc: BaseException) -> None:
    global _failed
    _failed = True
    from behaviortk.extras import missing_message

    missing = isinstance(exc, ModuleNotFoundError) and missing_message(
        exc.name, "compiling kernels"
    )
    reason = missing or " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    print(
        f"behaviortk: warning: compiled kernels unavailable, using NumPy ({reason})",
        file=sys.stderr,
    )


def load() -> tuple[Any, float]:
    """``(the compiled Kernels or None, seconds spent importing them now)``.

    The first call in a process imports numba and the kernels' modules (compiling
    nothing: :func:`ready` does); later calls return the same object at no cost.
    A failure is reported once, on stderr, in one line, and every later call
    answers None (the NumPy path). So is a cache folder that cannot be written.
    """
    global _loaded
    if _loaded is not None or _failed:
        return _loaded, 0.0
    start = time.perf_counter()
    try:
        from behaviortk.jit.compile import CACHE_DIR, CACHE_PROBLEM
        from behaviortk.sim.backend import Kernels

        _loaded = Kernels()
    except Exception as exc:  # numba missing, or a module that does not load here
        _warn_failure(exc)
        return None, time.perf_counter() - start
    if CACHE_PROBLEM is not None:
        print(
            f"behaviortk: warning: cannot cache compiled kernels in {CACHE_DIR} "
            f"({CACHE_PROBLEM}); they compile again in every run (set NUMBA_CACHE_DIR "
            "to a writable folder)",
            file=sys.stderr,
        )
    return _loaded, time.perf_counter() - start


# ------------------------------------------------------------------ readying
Step = tuple[Any, Callable[[], Any]]
"""``(key, compile it)``: the key marks it done in this process (None: never marked)."""


def steps_for(sim: Any) -> tuple[list[Step], int]:
    """The compile steps ``sim`` still needs in this process, in the order a tick needs them,
    and how many kernels it could have needed (every hand-written kernel and its own
    generated ones): the notice's ``N of M``."""
    from behaviortk.sim import backend, kernel_plan
    from behaviortk.steering import jobs, row_loops

    plan = kernel_plan.plan(sim)
    wanted: list[Step] = [(name, backend.WARM[name]) for name in plan.kernels]
    loops: set[Any] = set()
    for model in plan.row_leaves:
        rows = jobs.declared(model)
        assert rows is not None
        loop, tail = row_loops.loop_of(rows, model, sim.world)
        key = ("rows", loop, tuple(type(v) for v in tail))  # one compile per types
        if key not in loops:
            loops.add(key)
            wanted.append((key, _row_loop(model, sim)))
    if plan.fused:
        wanted.append((None, sim.engine.compile_trees))
    of = len(backend.WARM) + len(loops) + int(plan.fused)
    return [(key, fn) for key, fn in wanted if key is None or key not in _ready], of


def _row_loop(model: Any, sim: Any) -> Callable[[], None]:
    def warm() -> None:
        from behaviortk.sim.backend import warm_row_loop

        warm_row_loop(model, sim.agents, sim.world)

    return warm


def ready(sim: Any) -> float | None:
    """Compile (or load from the disk cache) what ``sim`` calls on compiled kernels and this
    process has not readied yet; the seconds it took, or None when a kernel failed (one
    warning line: ``sim`` runs on NumPy, and so does every later Simulation)."""
    if _failed:
        return None
    start = time.perf_counter()
    with _lock:
        try:
            from behaviortk.jit.compile import CACHE_PROBLEM

            steps, of = steps_for(sim)
            run(steps, sim.name, of, cached=CACHE_PROBLEM is None)
        except Exception as exc:  # a kernel that does not compile here
            _warn_failure(exc)
            return None
    return time.perf_counter() - start


def run(steps: list[Step], name: str, of: int, *, cached: bool = True) -> None:
    """Run the compile ``steps`` of ``name`` in order, with the notice if they take long; the
    hand-written kernels not cached yet are shared with a second process where that helps
    (``compile_ahead.py``: it fills the disk cache, this process then loads from it)."""
    if not steps:
        return
    ahead = _ahead(steps) if cached else None
    elsewhere = ahead.finished if ahead is not None else None
    notice = Notice(name, len(steps), of, current_factory(), cached=cached, elsewhere=elsewhere)
    shared = set(ahead.names) if ahead is not None else set()
    later: list[Step] = []
    try:
        for key, fn in steps:
            if ahead is not None and key in shared and not ahead.take(key):
                later.append((key, fn))  # the other process compiles it: read it after
                continue
            _step(key, fn)
            notice.done_with(key)
        for key, fn in later:
            assert ahead is not None
            ahead.wait(key)
            _step(key, fn)
            notice.done_with(key)
    finally:
        notice.close()
        if ahead is not None:
            ahead.close()


def _step(key: Any, fn: Callable[[], Any]) -> None:
    fn()
    if key is None:
        return
    _ready.add(key)
    if isinstance(key, str):
        from behaviortk.jit.compile import CACHE_DIR, CACHE_PROBLEM

        if CACHE_PROBLEM is None:
            compile_ahead.mark_ready(CACHE_DIR, key)


def _ahead(steps: list[Step]) -> compile_ahead.Ahead | None:
    """A second process for the hand-written kernels of ``steps`` not cached yet, when two
    or more are left and it can help (``compile_ahead.wanted``)."""
    from behaviortk.jit.compile import CACHE_DIR, CACHE_PROBLEM

    if not compile_ahead.wanted(CACHE_PROBLEM):
        return None
    cold = [
        key
        for key, _ in steps
        if isinstance(key, str) and not compile_ahead.ready_mark(CACHE_DIR, key).exists()
    ]
    return compile_ahead.Ahead(cold) if len(cold) >= 2 else None
