"""Debug geometry that primitives record for the viewer (OpenSteer's annotation hooks).

Primitives never draw. When the buffer is enabled they add arrays of points
per kind; the viewer reads them after the tick. Disabled, ``add`` costs one
attribute check. The act phase clears the buffer at the start of every tick.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Kind -> the array names the viewer expects (see ARCHITECTURE.md, "Debug geometry").
KINDS: dict[str, tuple[str, ...]] = {
    "crosshair": ("point",),
    "wander": ("center", "radius", "target"),
    "box": ("corners",),
    "feelers": ("ends",),
    "hiding_spot": ("point",),
    "waypoint": ("point",),
    "potential": (),
}


@dataclass(frozen=True)
class DebugRecord:
    kind: str
    rows: np.ndarray  # (n,) global agent rows
    arrays: dict[str, np.ndarray]


@dataclass
class DebugBuffer:
    """Per-tick debug geometry, grouped by kind."""

    enabled: bool = False
    records: list[DebugRecord] = field(default_factory=list)

    def clear(self) -> None:
        self.records.clear()

    def add(self, kind: str, rows: np.ndarray, **arrays: np.ndarray) -> None:
        """Record ``arrays`` (first axis = ``rows``) of ``kind``; a no-op when disabled."""
        if not self.enabled:
            return
        expected = KINDS.get(kind)
        if expected is None:
            raise ValueError(f"unknown debug kind {kind!r}; known: {', '.join(KINDS)}")
        missing = set(expected) - set(arrays)
        if missing:
            raise ValueError(f"debug kind {kind!r} needs arrays {sorted(missing)}")
        rows = np.asarray(rows, dtype=np.int64).copy()
        copied = {k: np.array(v, dtype=np.float64, copy=True) for k, v in arrays.items()}
        self.records.append(DebugRecord(kind, rows, copied))

    def of_kind(self, kind: str) -> list[DebugRecord]:
        return [r for r in self.records if r.kind == kind]

    def gather(self, kind: str, name: str) -> tuple[np.ndarray, np.ndarray]:
        """All rows and the concatenated array ``name`` recorded for ``kind`` this tick."""
        found = self.of_kind(kind)
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 2))
        rows = np.concatenate([r.rows for r in found])
        return rows, np.concatenate([r.arrays[name] for r in found])
