"""The shape, neighbour and combiner formulas are one source for both paths: each formula of
``steering/formulas.py``'s last section (and the ``vec`` helpers it adds) gives the same bits
on NumPy columns as inside a compiled row loop, row by row, edge cases included (zero and
coincident offsets, no neighbours, no crossing, a fresh wander target, a cursor off the
path). ``vec.minimum``/``vec.maximum`` are ``np.minimum``/``np.maximum`` on columns and
``min``/``max`` in a loop: equal for numbers. Exceptions, by design, compared to 1e-12:
``cos``/``sin`` (``coincident_push``) and ``pow`` with an exponent NumPy has no shortcut for
(``lj_potential``, ``lj_term`` with m = 2.5), where NumPy's vectorised functions and the C
library's may differ in the last bit (with the exponents 1 and 2 they are exact).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from behaviortk import vec
from behaviortk.steering import formulas as f

N = 400
CONSTANTS: dict[str, Any] = {
    "min_length": 40.0, "braking_weight": 0.2, "a": 3.0, "n": 1.0, "b": 20.0, "m": 2.0,
    "cutoff": 60.0, "front": 40.0, "lc": 0.7071067811865476, "ls": 0.7071067811865475,
    "rc": 0.7071067811865476, "rs": -0.7071067811865475, "seek_distance": 20.0,
    "looped": False, "deceleration": 2.0, "tolerance": 0.5, "x0": 0.0, "y0": 0.0, "x1": 100.0,
    "y1": 80.0, "margin": 10.0, "look_ahead": 0.5, "epsilon": 1e-3, "e": 2.0,
}  # fmt: skip
"""Leaf constants: one number for every row, as ``Rows.constants`` or a loop's argument."""
PATH_POINTS = 7
"""The path formulas' ``count`` (a constant; elsewhere ``count`` is a row's neighbours)."""


def column(name: str, rng: np.random.Generator) -> np.ndarray:
    """Random values of parameter ``name`` for ``N`` rows, with the edge cases its formula
    selects on."""
    some = rng.uniform(size=N)
    if name in ("i", "j"):
        return rng.integers(0, 30, N)
    if name == "cursor":
        return rng.integers(-2, PATH_POINTS + 2, N)
    if name == "count":
        return rng.integers(0, 4, N).astype(np.float64)  # 0: no neighbours
    if name in ("u0", "u1", "u", "chance"):
        return rng.uniform(size=N)
    if name in ("t", "hit"):
        values = rng.uniform(-0.2, 1.2, N)
        values[some < 0.3] = np.inf  # no crossing, no hit
        return values
    if name in ("hx", "hy"):
        angle = rng.uniform(-np.pi, np.pi, N)
        return np.cos(angle) if name == "hx" else np.sin(angle)
    values = rng.normal(0.0, 30.0, N)
    if name in ("top", "max_force", "radius", "orad", "box", "step", "distance", "den"):
        values = np.abs(values)
        values[some < 0.1] = 0.0  # guarded divisions
    if name in ("x", "d"):
        values = np.abs(values) + 0.5
    if name in ("dx", "dy", "rx", "ry", "fx", "fy"):
        values[some < 0.15] = 0.0  # coincident pairs, zero forces
    if name in ("lx", "ly"):
        values[some < 0.15] = np.nan  # a fresh wander target
    return values


def on_columns(fn: Callable[..., Any], args: list[Any]) -> np.ndarray:
    found = fn(*args)
    outs = found if isinstance(found, tuple) else (found,)
    return np.stack([np.broadcast_to(np.asarray(o, dtype=np.float64), (N,)) for o in outs], 1)


def in_a_loop(fn: Callable[..., Any], args: list[Any], width: int) -> np.ndarray:
    """``fn`` called row by row in a numba loop: columns indexed, constants passed as they are."""
    from numba import njit

    from behaviortk.jit import compile as _registers  # noqa: F401  (formulas -> numba)

    names = [f"a{k}" for k in range(len(args))]
    call = ", ".join(
        f"{n}[r]" if isinstance(a, np.ndarray) else n for n, a in zip(names, args, strict=True)
    )
    rows = next(n for n, a in zip(names, args, strict=True) if isinstance(a, np.ndarray))
    body = "\n".join(f"        out[r, {k}] = res[{k}]" for k in range(width))
    if width == 1:
        body = "        out[r, 0] = res"
    source = (
        f"def loop({', '.join(names)}, out):\n"
        f"    for r in range({rows}.shape[0]):\n"
        f"        res = fn({call})\n{body}\n"
    )
    scope: dict[str, Any] = {"fn": fn}
    exec(source, scope)  # a loop written here, for this test only
    out = np.empty((N, width))
    njit(error_model="numpy")(scope["loop"])(*args, out)
    return out


FORMULAS = [
    f.arrive_buckland, vec.separation_term, vec.coincident, f.alignment, f.cohesion,
    f.detection_box, f.obstacle_near, f.obstacle_hit, f.obstacle_push, f.power,
    f.lj_potential, f.lj_term, f.away_from, f.feelers, f.wall_crossing, f.overshoot, f.wall_push, f.on_path,
    f.next_waypoint, f.path_force, f.containment, f.wander_step, f.wander_target,
    f.accumulate, f.longer_than, f.dither, vec.safe_div,
]  # fmt: skip
NOT_LAST_BIT = [vec.coincident_xy, vec.coincident_push, f.lj_potential, f.lj_term]
PATH = (f.on_path, f.next_waypoint, f.path_force)


def agree(fn: Callable[..., Any], seed: int, **fixed: Any) -> tuple[np.ndarray, np.ndarray]:
    """``fn`` on random columns (:func:`column`; constants as given), then row by row in a loop."""
    rng = np.random.default_rng(seed)
    args: list[Any] = []
    for name in inspect.signature(fn).parameters:
        if name in fixed:
            args.append(fixed[name])
        elif name == "count" and fn in PATH:
            args.append(PATH_POINTS)
        elif name in CONSTANTS:
            args.append(CONSTANTS[name])
        else:
            args.append(column(name, rng))
    want = on_columns(fn, args)
    return want, in_a_loop(fn, args, want.shape[1])


@pytest.mark.parametrize("fn", FORMULAS, ids=lambda fn: fn.__name__)
def test_a_formula_gives_the_same_bits_on_columns_and_in_a_compiled_loop(fn: Any) -> None:
    for seed in range(3):
        want, got = agree(fn, seed)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("looped", [False, True])
def test_the_path_formulas_agree_on_a_looped_path_too(looped: bool) -> None:
    for fn in (f.next_waypoint, f.path_force):
        want, got = agree(fn, 5, looped=looped)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("e", [1.0, 2.0, 0.5, -1.0, 0.0])
def test_power_keeps_numpy_s_exact_shortcuts(e: float) -> None:
    """The exponents NumPy computes without ``pow`` are computed so in a loop too."""
    want, got = agree(f.power, 1, e=e)
    np.testing.assert_array_equal(got, want)
    x = np.abs(np.random.default_rng(1).normal(0.0, 30.0, N))
    np.testing.assert_array_equal(np.broadcast_to(f.power(x, e), (N,)), x**e)


@pytest.mark.parametrize("fn", NOT_LAST_BIT, ids=lambda fn: fn.__name__)
def test_cos_sin_and_pow_agree_to_the_last_bits(fn: Any) -> None:
    want, got = agree(fn, 2, m=2.5) if "m" in inspect.signature(fn).parameters else agree(fn, 2)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_minimum_and_maximum_are_numpy_s_on_columns_and_min_max_in_a_loop() -> None:
    a, b = np.array([1.0, 3.0, np.nan, 2.0]), np.array([2.0, 1.0, 0.0, np.nan])
    np.testing.assert_array_equal(vec.minimum(a, b), [1.0, 1.0, np.nan, np.nan])
    np.testing.assert_array_equal(vec.maximum(a, b), [2.0, 3.0, np.nan, np.nan])
    from numba import njit

    from behaviortk.jit import compile as _registers  # noqa: F401  (overloads)

    @njit
    def both(x: float, y: float) -> tuple[float, float]:
        return vec.minimum(x, y), vec.maximum(x, y)

    assert both(1.0, 2.0) == (1.0, 2.0)
    assert both(3.0, -1.0) == (-1.0, 3.0)
    assert both(2, 5) == (2, 5)
