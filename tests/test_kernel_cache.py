"""Compiled kernels where their cache folder cannot be written: a run still runs on them.

A read-only install keeps its cache in the user's folder (``jit/compile.py``);
when that cannot be made or written either, kernels compile in memory and one
warning line says so, never a traceback. A folder whose parent is a file cannot
be made even by root (who writes through read-only permission bits), so that
is the unwritable cache here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from behaviortk.jit.compile import writable

ROOT = Path(__file__).resolve().parents[1]

STILL = {
    "name": "still",
    "world": {"width": 100, "height": 100, "edges": "contain", "dt": 0.1, "seed": 1},
    "groups": [
        {
            "name": "a",
            "count": 2,
            "spawn": {"kind": "positions", "points": [[10, 10], [50, 50]]},
            "tree": "idle",
        }
    ],
    "trees": {"idle": {"root": {"type": "wait", "duration": 5}}},
}
"""Two agents waiting: the smallest plan (the act phase's request rows, integration)."""


def test_a_folder_that_cannot_be_made_or_written_says_why(tmp_path: Path) -> None:
    assert writable(tmp_path / "kernels") is None
    assert (tmp_path / "kernels").is_dir()
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    reason = writable(blocker / "kernels")
    assert reason is not None and "Not a directory" in reason and "\n" not in reason
    assert writable(Path("no-home-directory") / "kernels") == "no home directory to cache in"


def test_a_run_with_no_writable_cache_compiles_in_memory_with_one_warning(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    definition = tmp_path / "still.json"
    definition.write_text(json.dumps(STILL))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(blocker / "cache")}
    argv = ["run", str(definition), "--headless", "--ticks", "3", "--kernels", "numba"]
    proc = subprocess.run(
        [sys.executable, "-m", "behaviortk", *argv], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith(
        f"behaviortk: warning: cannot cache compiled kernels in {blocker / 'cache'}"
    )
    assert warnings[0].endswith("(set NUMBA_CACHE_DIR to a writable folder)")
    assert "kernels    numba, compile" in proc.stdout  # compiled, not the NumPy fallback
    assert not (tmp_path / "cache").exists()
