"""A sweep's results file: Parquet rewritten atomically as rows arrive, resumable.

The file's metadata records what produced it (the definition's hash, ticks,
engine, parameter names, metrics): a rerun with the same ``--out`` reads the
rows already there and skips their (parameters, seed) keys; a rerun whose
settings differ is refused rather than mixing incomparable rows. Rows are
written at most every ``every`` seconds and at the end, each time through a
temporary file renamed into place, so an interrupted sweep keeps every row
written before it stopped and never leaves a half-written file.

A column is stored as Arrow types it when that holds its values exactly (JSON
text of the values read back unchanged); any other column (an integer past
int64, a parameter mixing numbers and words, an int beside floats) is stored
as the JSON text of each value and named in ``behaviortk.studies.sweep.json``, and
decoded on resume: every value a definition accepts is written, and a rerun
recognises its rows.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

META_KEY = b"behaviortk.studies.sweep"
META_JSON = b"behaviortk.studies.sweep.json"
"""The names of the columns stored as JSON text (a JSON list)."""


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
        self.rows = rows_of(table)
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
        import pyarrow.parquet as pq

        from behaviortk.files import atomic_output

        table = table_of(self.rows, self.settings)
        with atomic_output(self.path, "wb", inputs=self.inputs, what="results") as out:
            pq.write_table(table, out)
        self._last = time.monotonic()
        self._dirty = False


def table_of(rows: list[dict[str, Any]], settings: dict[str, Any]) -> Any:
    """The rows as an Arrow table with the sweep's metadata, each column typed or JSON text."""
    import pyarrow as pa

    names = list(dict.fromkeys(name for row in rows for name in row))
    columns: dict[str, Any] = {}
    texts = []
    for name in names:
        values = [row.get(name) for row in rows]
        column = exact_array(values)
        if column is None:
            texts.append(name)
            column = pa.array([_dumps(v) for v in values], type=pa.string())
        columns[name] = column
    meta = {META_KEY: json.dumps(settings).encode(), META_JSON: json.dumps(texts).encode()}
    return pa.table(columns).replace_schema_metadata(meta)


def exact_array(values: list[Any]) -> Any:
    """``values`` as an Arrow array when it gives them back exactly, else None."""
    import pyarrow as pa

    try:
        column = pa.array(values)
    except (pa.ArrowException, OverflowError):
        return None
    return column if _dumps(column.to_pylist()) == _dumps(values) else None


def _dumps(value: Any) -> str:
    """JSON text of a value of a row (numpy scalars as the Python values they hold)."""
    return json.dumps(value, default=lambda o: o.item() if hasattr(o, "item") else str(o))


def rows_of(table: Any) -> list[dict[str, Any]]:
    """A results table's rows as written (its JSON text columns decoded)."""
    texts = json.loads((table.schema.metadata or {}).get(META_JSON) or b"[]")
    rows: list[dict[str, Any]] = table.to_pylist()
    for row in rows:
        for name in texts:
            row[name] = json.loads(row[name])
    return rows


def load_rows(path: str | Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return rows_of(pq.read_table(path))
