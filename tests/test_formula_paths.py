"""Formulas give the same bits on NumPy columns and in compiled row loops, fast paths included.

The compiled path calls each formula with its selects made lazy (``jit/compile.lazy``);
``vec.maximum``/``minimum``/``clip`` stand for NumPy's own functions on both paths; the
fast paths written into formulas (``wrap_axis``, ``shortest_near``, ``wrap_angle``) must
give what the plain formula gives, signed zeros included.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from behaviortk import vec
from behaviortk.vec import select
from behaviortk.world.spatial import fold, minimum_image, shortest_near, wrap_axis

SPECIAL = [-0.0, 0.0, 1.0, -1.0, 2.0, np.nan, np.inf, -np.inf]

noted: list[float] = []


def _note(x: float) -> float:
    noted.append(x)
    return x


def _pick(c: bool, a: float) -> Any:
    return select(c, _note(a), -a)


@pytest.fixture(scope="module")
def njit() -> Any:
    from numba import njit

    import behaviortk.jit.compile  # noqa: F401  (formulas -> numba)

    return njit


def same_bits(a: Any, b: Any) -> bool:
    return bool(
        np.asarray(a, dtype=np.float64).tobytes() == np.asarray(b, dtype=np.float64).tobytes()
    )


def test_a_lazy_select_computes_only_the_value_it_keeps() -> None:
    from behaviortk.jit.compile import lazy

    lazy_pick = lazy(_pick)
    noted.clear()
    assert lazy_pick(False, 2.0) == -2.0 and noted == []
    assert lazy_pick(True, 2.0) == 2.0 and noted == [2.0]
    noted.clear()
    assert _pick(False, 2.0) == -2.0 and noted == [2.0]  # the formula itself: both values


def test_maximum_minimum_and_clip_give_numpy_s_answers_on_both_paths(njit: Any) -> None:
    @njit
    def compiled(x: float, lo: float, hi: float) -> tuple[float, float, float]:
        return vec.maximum(x, lo), vec.minimum(x, lo), vec.clip(x, lo, hi)

    for x, lo, hi in itertools.product(SPECIAL, repeat=3):
        for n in (1, 3, 17):  # NumPy's scalar and vector loops
            col, high = np.full(n, x), np.full(n, hi)  # clip's bounds: one an array, as used
            want = (np.maximum(col, lo), np.minimum(col, lo), np.clip(col, lo, high))
            got = (vec.maximum(col, lo), vec.minimum(col, lo), vec.clip(col, lo, high))
            assert all(same_bits(w, g) for w, g in zip(want, got, strict=True)), (x, lo, hi, n)
        for w, c in zip(want, compiled(x, lo, hi), strict=True):
            assert same_bits(w[0], c), (x, lo, hi)


def test_the_fast_paths_give_the_plain_formula_s_bits(njit: Any) -> None:
    @njit
    def compiled(p: float, size: float, top: float) -> tuple[float, float, float]:
        return wrap_axis(p, size, top), shortest_near(p, size, True), vec.wrap_angle(p)

    size = 800.0
    top = float(np.nextafter(size, 0.0))
    rng = np.random.default_rng(3)
    edge = [0.0, -0.0, 400.0, -400.0, 799.9992, size, -size, 1e-300, -1e-300, np.pi, -np.pi]
    p = np.concatenate([rng.uniform(-2000.0, 2000.0, 2000), rng.uniform(-4.0, 4.0, 500), edge])
    plain = (fold(p, size, top), minimum_image(p, size), (p + np.pi) % (2.0 * np.pi) - np.pi)
    fast = (wrap_axis(p, size, top), shortest_near(p, size, True), vec.wrap_angle(p))
    for a, b in zip(plain, fast, strict=True):
        assert same_bits(a, b)
    rows = np.array([compiled(float(v), size, top) for v in p])
    for k, a in enumerate(plain):
        assert same_bits(a, rows[:, k]), k
