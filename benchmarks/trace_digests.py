"""Digest of every shipped definition's trace on both engines and both kernel choices.

Issue 24's contract is that moving the maths changes no user-visible number:
run this before and after a change and compare the lines (``diff``).

    python benchmarks/trace_digests.py --ticks 300 > before.txt
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import sys
import tempfile
from pathlib import Path

from behaviortk.cli import main as cli

ROOT = Path(__file__).resolve().parents[1]


def shipped() -> list[Path]:
    files = [*sorted((ROOT / "definitions").glob("*.json")), ROOT / "examples" / "chase_game.json"]
    return [f for f in files if f.name != "behaviortk.schema.json"]


def digest(path: Path, engine: str, kernels: str, ticks: int, folder: Path) -> str:
    out = folder / f"{path.stem}-{engine}-{kernels}.jsonl"
    argv = [
        "run", str(path), "--headless", "--ticks", str(ticks), "--trace", str(out),
        "--engine", engine, "--kernels", kernels,
    ]  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli(argv)
    if code != 0:
        return f"exit {code}"
    return hashlib.sha256(out.read_bytes()).hexdigest()[:16]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--only", default="", help="substring of the definition names to run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for path in shipped():
            if args.only not in path.name:
                continue
            for engine in ("py_trees", "batch"):
                if engine == "py_trees" and path.stem == "evacuation":
                    continue  # 3,000 agents: minutes on the reference engine; batch covers it
                for kernels in ("numpy", "numba"):
                    line = digest(path, engine, kernels, args.ticks, Path(tmp))
                    print(f"{path.name} {engine} {kernels} {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
