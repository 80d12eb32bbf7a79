"""A light install: a command that needs an extra the install left out says which, in one line.

Each case runs the real command in a fresh interpreter where the library is
blocked (``sys.modules[name] = None`` makes its import fail as if it were not
installed).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from behaviortk.extras import extra_for, missing_message

ROOT = Path(__file__).parent.parent
DEFINITION = str(ROOT / "definitions" / "seek_and_arrive.json")


def without(blocked: list[str], *argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        f"for name in {blocked!r}: sys.modules[name] = None\n"
        "from behaviortk.cli import main\n"
        f"sys.exit(main({list(argv)!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def test_which_extra_brings_which_module() -> None:
    assert extra_for("numba.core.errors") == "crowds"
    assert extra_for("pyarrow.parquet") == "traces"
    assert extra_for("pyarrow", command="sweep") == "studies"  # sweep needs all of studies
    assert (
        extra_for("optuna") == "studies" and extra_for("yaml") is None and extra_for(None) is None
    )
    assert missing_message("dask.distributed", "behaviortk sweep") == (
        "behaviortk sweep needs the studies extra: pip install 'behaviortk[studies]'"
    )
    assert missing_message("numpy", "behaviortk run") is None  # not optional: a real error


def test_sweep_without_the_studies_extra(tmp_path: Path) -> None:
    out = tmp_path / "r.parquet"
    proc = without(
        ["dask", "distributed"],
        "sweep", DEFINITION, "--param", "world.seed=1,2", "--seeds", "1", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "behaviortk: error: behaviortk sweep needs the studies extra: "
        "pip install 'behaviortk[studies]'"
    )
    assert not out.exists()


def test_parquet_traces_without_the_traces_extra(tmp_path: Path) -> None:
    trace = tmp_path / "t.parquet"
    proc = without(
        ["pyarrow"], "run", DEFINITION, "--headless", "--ticks", "3", "--trace", str(trace)
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "behaviortk run needs the traces extra: pip install 'behaviortk[traces]'" in proc.stderr
    jsonl = tmp_path / "t.jsonl"  # JSON Lines need nothing
    proc = without(
        ["pyarrow"], "run", DEFINITION, "--headless", "--ticks", "3", "--trace", str(jsonl)
    )
    assert proc.returncode == 0, proc.stderr
    assert len(jsonl.read_text().splitlines()) == 1 + 3 + 1  # header, 3 ticks, end


def test_crowds_without_numba_run_on_numpy() -> None:
    proc = without(
        ["numba", "llvmlite"],
        "run", DEFINITION, "--headless", "--ticks", "3", "--kernels", "numba",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (
        "behaviortk: warning: compiled kernels unavailable, using NumPy (compiling kernels "
        "needs the crowds extra: pip install 'behaviortk[crowds]')"
    ) in proc.stderr
