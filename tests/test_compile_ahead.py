"""The second process that compiles a run's kernels into the disk cache meanwhile
(``sim/compile_ahead.py``): claims, its end of the list, what it leaves behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from behaviortk.jit.compile import CACHE_DIR, CACHE_PROBLEM
from behaviortk.sim import compile_ahead


def test_a_kernel_is_claimed_once(tmp_path: Path) -> None:
    assert compile_ahead.claim(tmp_path, "integrate")
    assert not compile_ahead.claim(tmp_path, "integrate")
    assert compile_ahead.claim(tmp_path, "wander")


def test_wanted_with_a_writable_cache_and_load_below_the_cores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compile_ahead.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(compile_ahead.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    monkeypatch.delenv(compile_ahead.ENV, raising=False)
    assert compile_ahead.wanted(None)
    assert not compile_ahead.wanted("[Errno 30] Read-only file system")
    monkeypatch.setenv(compile_ahead.ENV, "0")
    assert not compile_ahead.wanted(None)
    monkeypatch.delenv(compile_ahead.ENV)
    monkeypatch.setattr(compile_ahead.os, "getloadavg", lambda: (1.5, 0.5, 0.5))
    assert compile_ahead.wanted(None)  # half a core idle: still 1.10x faster measured at 2
    monkeypatch.setattr(compile_ahead.os, "getloadavg", lambda: (2.0, 0.5, 0.5))
    assert compile_ahead.wanted(None)
    monkeypatch.setattr(compile_ahead.os, "getloadavg", lambda: (2.01, 0.5, 0.5))
    assert not compile_ahead.wanted(None)  # busier than one per core: only its start-up
    monkeypatch.setattr(compile_ahead.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(compile_ahead.os, "cpu_count", lambda: 1)
    assert not compile_ahead.wanted(None)


@pytest.mark.skipif(CACHE_PROBLEM is not None, reason="the kernel cache cannot be written")
def test_the_other_process_compiles_from_the_end_and_marks_what_it_did() -> None:
    """Two small kernels, none taken here: the other process takes both, last first,
    and leaves each one's done file (for this process) and ready mark (for later runs)."""
    names = ["request_rows", "accumulate_rows"]
    ahead = compile_ahead.Ahead(names)
    try:
        for name in reversed(names):
            ahead.wait(name)
            assert (ahead.claims / f"{name}.done").exists(), ahead.proc.poll()
        assert ahead.proc.wait(60) == 0
        assert not ahead.take("accumulate_rows")  # it was taken
        for name in names:
            assert compile_ahead.ready_mark(CACHE_DIR, name).exists()
    finally:
        ahead.close()
    assert not ahead.claims.exists()
