"""Let glibc reuse freed memory for large NumPy temporaries.

By default glibc serves every allocation above a (dynamic) threshold with a
fresh ``mmap`` and returns it on free, so each tick's ~1 MB temporaries fault
in new pages again. In the VM this project is measured on, that doubled the
time of the neighbour query (19 ms -> 9 ms for 10,000 agents, see
``benchmarks/bench_neighbours.py``). Raising the mmap and trim thresholds keeps
freed blocks in the heap for reuse. No effect on other C libraries.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's maximum on 64-bit systems
TRIM_THRESHOLD = 256 * 1024 * 1024

_done = False


def reuse_freed_memory() -> bool:
    """Raise glibc's mmap/trim thresholds once per process; True if applied.

    Set ``BEHAVIORTK_KEEP_MALLOC=1`` to leave the allocator alone.
    """
    global _done
    if _done:
        return True
    _done = True
    if os.environ.get("BEHAVIORTK_KEEP_MALLOC") == "1":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    ok_mmap = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    ok_trim = mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    return bool(ok_mmap and ok_trim)
