"""No stale kernels: a compiled kernel freezes a constant of another module (the compiled step in
``world/integrate_loops.py`` calls ``world/integrate.py``'s formula ``heading_of``, which reads
``HEADING_MIN_SPEED``); after that module changes, the same disk cache must not hand back the
old compiled code (jit/compile.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "behaviortk"

HEADING = """
import numpy as np
from behaviortk.world import integrate_loops
one = np.ones(1)
outs = [np.empty((1, 2)) for _ in range(4)] + [np.empty(1), np.empty(1)]
integrate_loops.step(
    np.array([[50.0, 50.0]]), np.array([[0.0, 1e-6]]), np.array([[1.0, 0.0]]),
    np.zeros((1, 2)), np.zeros(1), np.zeros(1), np.zeros(1), one, one * 100, one * 100,
    one * np.inf, False, one * 10, one * 10, 0.1, 100.0, 100.0, 0, *outs,
)
print(outs[2][0].tolist())
"""


def heading_after_a_slow_step(root: Path) -> list[float]:
    """The compiled step's new heading for a speed of 1e-6, run from the copy at ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root), "NUMBA_CACHE_DIR": str(root / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", HEADING], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return [float(v) for v in done.stdout.strip().strip("[]").split(",")]


@pytest.mark.slow
def test_changing_a_constant_in_another_module_recompiles(tmp_path: Path) -> None:
    shutil.copytree(PACKAGE, tmp_path / "behaviortk", ignore=shutil.ignore_patterns("__pycache__"))
    # 1e-6 > HEADING_MIN_SPEED (1e-8): the heading turns to the velocity
    assert heading_after_a_slow_step(tmp_path) == [0.0, 1.0]
    integrate = tmp_path / "behaviortk" / "world" / "integrate.py"
    text = integrate.read_text()
    assert "HEADING_MIN_SPEED = 1e-8\n" in text
    integrate.write_text(text.replace("HEADING_MIN_SPEED = 1e-8\n", "HEADING_MIN_SPEED = 1e-3\n"))
    # same cache folder: 1e-6 is now below the threshold, the heading is kept
    assert heading_after_a_slow_step(tmp_path) == [1.0, 0.0]
