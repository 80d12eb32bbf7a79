"""The neighbour grid's shape in closed form (issue 23, item 5: a long thin world hung ``run``).

``grid_shape`` used to take one cell off the longer axis at a time until the
cells fitted, about 10^10 times for a world of 2^64 by 600 and 10^148 times for
one of 600 by 1e300. ``world.cells`` gives the loop's result directly.
"""

from __future__ import annotations

import math

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from behaviortk.format.budget import grid_side
from behaviortk.format.cells import fit_cells, grid_cells
from behaviortk.world.grid import grid_shape


def loop_shape(width: float, height: float, radius: float, max_cells: int) -> tuple[int, int]:
    """The loop ``grid_shape`` had before: the reference the closed form must match."""
    cell = max(radius, math.sqrt(width * height / max_cells))
    nx, ny = max(1, int(width // cell)), max(1, int(height // cell))
    while nx * ny > max_cells:
        if nx >= ny:
            nx -= 1
        else:
            ny -= 1
    return nx, ny


def test_fit_cells_by_hand() -> None:
    assert fit_cells(3, 4, 12) == (3, 4)  # fits already
    assert fit_cells(10, 1, 4) == (4, 1)  # the longer axis shortened: 10, 9, ..., 4
    assert fit_cells(1, 10, 4) == (1, 4)
    assert fit_cells(7, 3, 20) == (6, 3)  # 21 > 20, then 6 x 3 = 18
    # they meet at a square that does not fit, then shrink alternately, x first
    assert fit_cells(5, 5, 16) == (4, 4)  # 25, 4 x 5 = 20, 4 x 4 = 16
    assert fit_cells(6, 6, 30) == (5, 6)  # 36, 5 x 6 = 30
    assert fit_cells(9, 2, 10) == (5, 2)  # 10 // 2 = 5 >= 2
    assert fit_cells(9, 4, 10) == (3, 3)  # 10 // 4 = 2 < 4: square phase, 3 x 4 = 12, 3 x 3


def test_long_thin_worlds_by_hand() -> None:
    # 2^64 x 600, 3 agents: 16 cells. The cell side is sqrt(2^64 * 600 / 16) = 2.6e10 > 600,
    # so the height has one cell and the width all 16.
    assert grid_shape(2.0**64, 600.0, 60.0, 3) == (16, 1)
    # 600 x 1e300 at 65535 cells: the same, across
    assert grid_shape(600.0, 1e300, 60.0, 100_000) == (1, 65535)
    # a 1e7 x 1 world (the format's extremes) with 200,000 agents
    assert grid_shape(1e7, 1.0, 60.0, 200_000) == (65535, 1)
    assert grid_side(1e7, 1.0, 60.0, 200_000) == 1e7 / 65535


def test_normal_worlds_keep_their_shape() -> None:
    assert grid_shape(1000.0, 1000.0, 16.0, 10_000) == (62, 62)  # cells >= radius bind
    assert grid_shape(800.0, 600.0, 60.0, 100) == (13, 10)  # 800 // 60, 600 // 60
    # 40 cells at most: side sqrt(800 * 600 / 40) = 109.5, 800 // 109.5 = 7, 600 // 109.5 = 5
    assert grid_shape(800.0, 600.0, 1.0, 10) == (7, 5)


@settings(max_examples=300, deadline=None)
@given(
    width=st.floats(1.0, 1e7),
    height=st.floats(1.0, 1e7),
    radius=st.floats(0.0, 1e4),
    n=st.integers(0, 200_000),
)
def test_same_shape_as_the_loop_on_every_world_it_finishes(
    width: float, height: float, radius: float, n: int
) -> None:
    max_cells = min(max(16, 4 * n), 65535)
    cell = max(radius, math.sqrt(width * height / max_cells))
    assume(max(width, height) // cell < 4 * max_cells)  # the loop takes a moment at most
    assert grid_cells(width, height, radius, max_cells) == loop_shape(
        width, height, radius, max_cells
    )
    assert grid_shape(width, height, radius, n) == loop_shape(width, height, radius, max_cells)


@settings(max_examples=500, deadline=None)
@given(
    width=st.floats(5e-324, 1e300),
    height=st.floats(5e-324, 1e300),
    radius=st.floats(0.0, 1e300),
    max_cells=st.integers(1, 10**7),
)
def test_any_sides_give_a_valid_shape_at_once(
    width: float, height: float, radius: float, max_cells: int
) -> None:
    nx, ny = grid_cells(width, height, radius, max_cells)  # closed form: no loop to run long
    assert nx >= 1 and ny >= 1 and nx * ny <= max_cells
    # cells at least radius wide, unless the axis has a single cell
    assert nx == 1 or width / nx >= radius * (1 - 1e-12)
    assert ny == 1 or height / ny >= radius * (1 - 1e-12)


def test_the_compiled_grid_fits_a_long_thin_world_in_closed_form() -> None:
    """sense/query_loops.grid_shape takes the same closed form: a 1e7 x 1 world with 200,000
    points gets at most CELLS_PER_POINT cells a point, one row, and a stencil the kernel clamps."""
    from behaviortk.sense.query_loops import CELLS_PER_POINT, grid_shape

    nx, ny, reach_x, reach_y = grid_shape(1e7, 1.0, 60.0, 200_000, cap=64)
    assert ny == 1 and 1 <= nx * ny <= CELLS_PER_POINT * 200_000
    assert reach_x >= 1 and reach_y == 60  # 60 one-unit rows each side: _stencil clamps it
