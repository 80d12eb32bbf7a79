"""Which kernels a Simulation runs on, and loading the compiled ones (imports no numba itself).

``kernels`` is ``"numba"`` (compiled), ``"numpy"`` (the reference) or
``"auto"``: the ``BEHAVIORTK_KERNELS`` environment variable when it is set,
else numba from ``AUTO_BATCH_AGENTS`` agents on (crowds, where ticks are long)
and NumPy below (small scenes, where loading numba would cost more than it
saves). The choice goes by the agent count alone, as ``engine="auto"`` does,
never by the engine: the two paths may differ in the last bit (libm's and
NumPy's ``pow``), so the same scenario on either engine with default flags
runs the same kernels and gives byte-identical traces. ``BEHAVIORTK_KERNELS=numpy`` (or ``--kernels numpy``) forces the
reference everywhere.

Loading compiles every kernel, or reads it from numba's on-disk cache (under
``$NUMBA_CACHE_DIR``, ``$XDG_CACHE_HOME`` or ``~/.cache``, in
``behaviortk-kernels/<hash of the kernels' sources>``: ``jit/compile.py``); the time it took is
``compile_s``. If numba is missing or a kernel fails to compile, the NumPy
path runs instead and one warning line says why.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from behaviortk.engines.names import AUTO_BATCH_AGENTS, KERNELS
from behaviortk.errors import SimulationError

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


def load() -> tuple[Any, float]:
    """``(the compiled Kernels or None, seconds spent compiling or loading them now)``.

    The first call in a process imports numba and readies every kernel; later
    calls return the same object at no cost. A failure is reported once, on
    stderr, in one line, and every later call answers None (the NumPy path).
    """
    global _loaded, _failed
    if _loaded is not None or _failed:
        return _loaded, 0.0
    start = time.perf_counter()
    try:
        from behaviortk.sim.backend import Kernels

        Kernels.warm()
        _loaded = Kernels()
    except Exception as exc:  # numba missing, or a kernel that does not compile here
        _failed = True
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        print(
            f"behaviortk: warning: compiled kernels unavailable, using NumPy ({reason})",
            file=sys.stderr,
        )
    return _loaded, time.perf_counter() - start
