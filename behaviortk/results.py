"""A sweep's results file: Parquet rewritten atomically as rows arrive, resumable.

The file's metadata records what produced it (the definition's hash, ticks,
engine, parameter names, metrics): a rerun with the same ``--out`` reads the
rows already there and skips their (parameters, seed) keys; a rerun whose
settings differ is refused rather than mixing incomparable rows. Rows are
written at most every ``every`` seconds and at the end, each time through a
temporary file renamed into place, so an interrupted sweep keeps every row
written before it stopped and never leaves a half-written file.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

META_KEY = b"behaviortk.sweep"


class ResultsError(ValueError):
    """The results file exists but belongs to a different sweep, or is not readable."""


class Results:
    def __init__(self, path: str, settings: dict[str, Any], inputs: list[str], every: float = 1.0):
        self.path = path
        self.settings = settings
        self.inputs = inputs
        self.every = every
        self.rows: list[dict[str, Any]] = []
        self.done: set[str] = set()
        self._last = time.monotonic()
        self._dirty = False
        if os.path.exists(path):
            self._resume()

    def _resume(self) -> None:
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(self.path)
        except Exception as exc:
            raise ResultsError(
                f"{self.path} exists and is not a readable Parquet file ({exc}); "
                "choose another --out"
            ) from None
        meta = (table.schema.metadata or {}).get(META_KEY)
        found = json.loads(meta) if meta else None
        if found != self.settings:
            raise ResultsError(
                f"{self.path} holds results of a different sweep (definition, ticks, engine, "
                "parameters or metrics differ); choose another --out or remove it"
            )
        self.rows = table.to_pylist()
        params = self.settings["params"]
        self.done = {
            json.dumps([{p: r[p] for p in params}, r["seed"]], sort_keys=True) for r in self.rows
        }

    def add(self, key: str, row: dict[str, Any]) -> None:
        self.rows.append(row)
        self.done.add(key)
        self._dirty = True
        if time.monotonic() - self._last >= self.every:
            self.flush()

    def flush(self) -> None:
        if not self._dirty:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        from behaviortk.commands.output import atomic_output

        table = pa.Table.from_pylist(self.rows)
        table = table.replace_schema_metadata({META_KEY: json.dumps(self.settings).encode()})
        with atomic_output(self.path, "wb", inputs=self.inputs, what="results") as out:
            pq.write_table(table, out)
        self._last = time.monotonic()
        self._dirty = False


def load_rows(path: str | Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return list(pq.read_table(path).to_pylist())
