"""Resident memory of this process, for ``bench``: now, and the peak since a mark.

Compiling numba kernels makes LLVM hold a few hundred MB for a moment; the
process's lifetime peak (``ru_maxrss``) would then report the compiler, not
the crowd. On Linux, writing ``5`` to ``/proc/self/clear_refs`` resets the
peak to what is resident now, and ``VmHWM`` in ``/proc/self/status`` is the
peak since; ``bench`` resets it once the kernels are ready, so its peak is
that of building and ticking the simulation. Elsewhere (or when the reset is
refused) the figures fall back to the lifetime peak, and ``reset_peak`` says so.
"""

from __future__ import annotations

import os
import resource


def _status_kb(field: str) -> float | None:
    """A ``kB`` field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``), or None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def lifetime_peak_mb() -> float:
    """The process's peak resident memory as the OS counts it (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def resident_mb() -> float:
    """Resident memory now (the peak so far where the OS does not say)."""
    kb = _status_kb("VmRSS")
    return kb / 1024.0 if kb is not None else lifetime_peak_mb()


def peak_mb() -> float:
    """Peak resident memory since the last ``reset_peak`` (or since the process started)."""
    kb = _status_kb("VmHWM")
    return kb / 1024.0 if kb is not None else lifetime_peak_mb()


def reset_peak() -> bool:
    """Start the peak again from what is resident now; False where the OS does not allow it."""
    try:
        fd = os.open("/proc/self/clear_refs", os.O_WRONLY)
    except OSError:
        return False
    try:
        os.write(fd, b"5")
    except OSError:
        return False
    finally:
        os.close(fd)
    return _status_kb("VmHWM") is not None
