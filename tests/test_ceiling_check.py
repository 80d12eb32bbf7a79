"""The benchmarks' hand-written ceiling (``benchmarks/ceiling_kernel.py``) still does the
engine's tick of the shipped evade_or_flock: ``bench_ceiling.py`` refuses to time a ceiling
that does not, and a change of the shipped file once left it refusing unnoticed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.slow
def test_the_ceiling_agrees_with_the_engine_after_a_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BEHAVIORTK_KERNELS", "numba")
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    bench = pytest.importorskip("bench_ceiling")
    sim = bench.engine(20_000)
    for _ in range(3):
        sim.step()
    assert bench.check(sim, ticks=2) <= bench.AGREE
    sys.modules.pop("bench_ceiling", None)
