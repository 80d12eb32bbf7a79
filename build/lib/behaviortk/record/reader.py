"""Reading a recorded run back, tick by tick: ``open_recording(path)`` for either trace format.

A ``Recording`` holds what the file says about the run (header, the definition
it recorded, the trees it loads to, the recorded ticks, how the run ended) and
rebuilds any recorded tick as a ``TickState`` (``state(tick)``), the object the
viewer draws. Nothing is simulated again: positions, statuses and active leaves
are the recorded ones.

Parquet (``parquet.py``): the tick index in the file's metadata says which
row group holds a tick; that row group is decoded once and kept, so a seek reads
one row group and stepping within it reads nothing. JSON Lines (``jsonl.py``):
the file is scanned once for the byte offset of each tick's line; a seek parses
one line.

Every problem is a ``TraceError`` whose message is one line naming the file: not
a trace, truncated, another format version, a recorded definition that no longer
validates or no longer gives the trees the statuses were recorded against, or
rows that do not fit those trees.

``active`` lists name leaves, and names can repeat within a tree; ``emitted``
is rebuilt by giving the k-th occurrence of a name in an agent's list to the
k-th steering leaf of that name (exact whenever a tree's steering leaves have
distinct trace names).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from behaviortk.format.limits import MAX_TRACE_TICK
from behaviortk.record.jsonl import FORMAT, VERSION
from behaviortk.record.tick_state import STATUS_DIGIT, TickState
from behaviortk.tree.flat import FlatTree, flatten
from behaviortk.vec import from_angle

PARQUET_MAGIC = b"PAR1"
_TICK_LINE = re.compile(rb'^\{"tick":(-?\d+),')
MAX_ID = 2**63 - 1
"""Largest agent id a trace holds (the Parquet ``id`` column is int64)."""
TICK_RULE = f"a whole number 0 to {MAX_TRACE_TICK:,}"


class TraceError(Exception):
    """A trace that cannot be replayed; ``str(exc)`` is one line naming the file."""


@dataclass
class Recording:
    """A recorded run: its header, definition, trees and recorded ticks."""

    path: Path
    kind: str  # "parquet" | "jsonl"
    header: dict[str, Any]  # the trace header without the definition
    definition_text: str
    scenario: Any  # behaviortk.Scenario loaded from the recorded definition
    trees: dict[str, FlatTree]
    ticks: np.ndarray  # (T,) int64 recorded ticks, ascending
    end: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)  # what was tolerated (a cut last line)
    _reader: Callable[[int], TickState] | None = None

    @property
    def dt(self) -> float:
        return float(self.header["dt"])

    @property
    def name(self) -> str:
        return str(self.header.get("scenario", self.path.stem))

    def index_of(self, tick: int) -> int:
        """Position of ``tick`` in ``ticks``; ``TraceError`` naming what was recorded."""
        i = int(np.searchsorted(self.ticks, tick))
        if i >= self.ticks.size or int(self.ticks[i]) != tick:
            raise TraceError(f"{self.path}: tick {tick} is not recorded; {self.describe_ticks()}")
        return i

    def describe_ticks(self) -> str:
        """``recorded ticks 0..598 every 2 (300 ticks)`` or the list when irregular."""
        t = self.ticks
        if t.size == 0:
            return "no tick was recorded"
        steps = np.unique(np.diff(t))
        if steps.size <= 1:
            every = f" every {int(steps[0])}" if steps.size and steps[0] != 1 else ""
            return f"recorded ticks {t[0]}..{t[-1]}{every} ({t.size} ticks)"
        shown = ", ".join(str(v) for v in t[:8].tolist())
        return f"recorded ticks {shown}{', ...' if t.size > 8 else ''} ({t.size} ticks)"

    def state(self, tick: int) -> TickState:
        """The recorded state after ``tick`` (which must be one of ``ticks``)."""
        self.index_of(tick)
        assert self._reader is not None
        return self._reader(tick)


# ----------------------------------------------------------------------------- opening
def open_recording(path: str | Path) -> Recording:
    """Open a Parquet or JSON Lines trace (told apart by content, not extension)."""
    p = Path(path)
    try:
        with p.open("rb") as fh:
            start = fh.read(4)
    except FileNotFoundError:
        raise TraceError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise TraceError(f"{p}: is a directory, not a trace") from None
    except OSError as exc:
        raise TraceError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if start == PARQUET_MAGIC:
        return _open_parquet(p)
    if start[:1] == b"{":
        return _open_jsonl(p)
    what = "an empty file" if not start else "neither Parquet nor JSON Lines"
    raise TraceError(f"{p}: not a behaviortk trace ({what})")


def check_header(path: Path, head: Any) -> dict[str, Any]:
    """The header if this version can replay it, else a ``TraceError`` saying why."""
    if not isinstance(head, dict) or ("format" not in head and "scenario" not in head):
        raise TraceError(f"{path}: not a behaviortk trace (its header has no 'format')")
    if "format" not in head:
        raise TraceError(
            f"{path}: trace format 1 (recorded before node statuses and the definition were "
            f"stored) cannot be replayed; record the run again"
        )
    if head.get("format") != FORMAT:
        raise TraceError(f"{path}: not a behaviortk trace (format {head.get('format')!r})")
    if head.get("version") != VERSION:
        raise TraceError(
            f"{path}: trace format version {head.get('version')!r}; this behaviortk "
            f"reads version {VERSION}"
        )
    for key in ("dt", "trees", "world"):
        if key not in head:
            raise TraceError(f"{path}: the trace header has no {key!r}")
    dt = head["dt"]
    if isinstance(dt, bool) or not isinstance(dt, int | float) or not dt > 0:
        raise TraceError(f"{path}: the trace header's dt must be a positive number, got {dt!r}")
    return head


def load_definition(
    path: Path, text: str, recorded: dict[str, Any]
) -> tuple[Any, dict[str, FlatTree]]:
    """The recorded definition, validated, and its flat trees, checked against ``recorded``.

    ``recorded`` is the header's ``trees`` (node paths per group): the statuses
    in the file follow that order, so a definition that gives other trees (edited,
    or loaded by a version whose node types changed) cannot explain them.
    """
    from behaviortk.format.issues import DefinitionError
    from behaviortk.format.loader import load_text

    try:
        scenario = load_text(text, f"{path} (recorded definition)")
    except DefinitionError as exc:
        first = exc.issues[0] if exc.issues else "invalid"
        raise TraceError(
            f"{path}: its recorded definition does not validate with this behaviortk: {first}"
        ) from None
    trees = {name: flatten(root, scenario.registries) for name, root in scenario.trees.items()}
    if not isinstance(recorded, dict) or set(recorded) != set(trees):
        got = sorted(recorded) if isinstance(recorded, dict) else recorded
        raise TraceError(
            f"{path}: the trace has trees for groups {got}, its definition for {sorted(trees)}"
        )
    for group, tree in trees.items():
        paths = [node.path for node in tree.nodes]
        if list(recorded[group]) != paths:
            differs = next(
                (i for i, (a, b) in enumerate(zip(recorded[group], paths, strict=False)) if a != b),
                min(len(paths), len(recorded[group])),
            )
            was = recorded[group][differs] if differs < len(recorded[group]) else "(none)"
            now = paths[differs] if differs < len(paths) else "(none)"
            raise TraceError(
                f"{path}: the recorded definition no longer matches the trace: group "
                f"{group!r} node {differs} was {was!r} when recorded, is {now!r} now "
                f"(the trace was edited, or written by another version)"
            )
    return scenario, trees


# ----------------------------------------------------------------------------- decoding
def group_order(
    path: Path | str, tick: int, names: list[str], group_names: list[str]
) -> np.ndarray:
    """Definition group index per row; rows must be grouped in the definition's order."""
    lut = {name: k for k, name in enumerate(group_names)}
    unknown = [name for name in names if name not in lut]
    if unknown:
        raise TraceError(f"{path}: tick {tick} has agents of unknown group {unknown[0]!r}")
    return np.array([lut[name] for name in names], dtype=np.int64)


def check_rows(path: Path | str, tick: int, group: np.ndarray) -> None:
    if group.size and np.any(np.diff(group) < 0):
        raise TraceError(f"{path}: tick {tick}: agents are not grouped in the definition's order")


def statuses(
    path: Path | str,
    tick: int,
    trees: dict[str, FlatTree],
    slices: dict[str, slice],
    lengths: np.ndarray,
    values: np.ndarray,
    ids: np.ndarray,
) -> dict[str, np.ndarray]:
    """Per group ``(n, nodes)`` int8 from per-row list lengths and the flat codes."""
    ends = np.cumsum(lengths)
    starts = ends - lengths
    out: dict[str, np.ndarray] = {}
    for group, rows in slices.items():
        tree = trees.get(group)
        if tree is None:
            bad = np.flatnonzero(lengths[rows] != 0)
        else:
            bad = np.flatnonzero(lengths[rows] != len(tree))
        if bad.size:
            row = rows.start + int(bad[0])
            want = 0 if tree is None else len(tree)
            raise TraceError(
                f"{path}: tick {tick}: agent {int(ids[row])} has {int(lengths[row])} status "
                f"codes; its group {group!r} has {want} nodes"
            )
        if tree is None:
            continue
        n = rows.stop - rows.start
        lo = int(starts[rows.start]) if n else 0
        codes = values[lo : lo + n * len(tree)].astype(np.int8).reshape(n, len(tree))
        if codes.size and (codes.min() < 0 or codes.max() > 3):
            raise TraceError(f"{path}: tick {tick}: status codes must be 0..3")
        out[group] = codes
    return out


def emitted_from_active(
    path: Path | str,
    tick: int,
    trees: dict[str, FlatTree],
    slices: dict[str, slice],
    lengths: np.ndarray,
    names: np.ndarray,
    dictionary: list[str],
    ids: np.ndarray,
) -> dict[str, np.ndarray]:
    """Per group ``(n, leaves)`` bool from each row's active leaf names (indices into
    ``dictionary``): the k-th occurrence of a name goes to the k-th leaf of that name."""
    ends = np.cumsum(lengths)
    starts = ends - lengths
    d = max(len(dictionary), 1)
    out: dict[str, np.ndarray] = {}
    for group, rows in slices.items():
        tree = trees.get(group)
        n = rows.stop - rows.start
        if tree is None:
            if n and lengths[rows].any():
                row = rows.start + int(np.flatnonzero(lengths[rows])[0])
                raise TraceError(
                    f"{path}: tick {tick}: agent {int(ids[row])} of group {group!r} "
                    f"has active leaves but no tree"
                )
            continue
        leaves = [tree.nodes[i].name for i in tree.steering]
        flags = np.zeros((n, len(leaves)), dtype=bool)
        out[group] = flags
        if n == 0:
            continue
        lo, hi = int(starts[rows.start]), int(ends[rows.stop - 1])
        if hi == lo:
            continue
        vals = names[lo:hi].astype(np.int64)
        local = np.repeat(np.arange(n), lengths[rows])
        # occurrence rank of each (row, name) pair, in list order
        key = local * d + vals
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        first = np.searchsorted(sorted_key, sorted_key, side="left")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size) - first
        # leaf column of the rank-th leaf named dictionary[v]
        depth = max(leaves.count(x) for x in set(leaves)) if leaves else 0
        table = np.full((d, max(depth, 1)), -1, dtype=np.int64)
        seen: dict[str, int] = {}
        index = {name: k for k, name in enumerate(dictionary)}
        for leaf, name in enumerate(leaves):
            k = index.get(name)
            if k is not None:
                table[k, seen.get(name, 0)] = leaf
            seen[name] = seen.get(name, 0) + 1
        col = np.where(rank < table.shape[1], table[vals, np.minimum(rank, table.shape[1] - 1)], -1)
        bad = np.flatnonzero(col < 0)
        if bad.size:
            row = rows.start + int(local[bad[0]])
            raise TraceError(
                f"{path}: tick {tick}: agent {int(ids[row])}'s active list names "
                f"{dictionary[int(vals[bad[0]])]!r}, which its group {group!r} has no "
                f"(further) steering leaf of"
            )
        flags[local, col] = True
    return out


def tick_state(
    rec_path: Path | str,
    tick: int,
    time: float,
    trees: dict[str, FlatTree],
    group_names: list[str],
    ids: np.ndarray,
    group: np.ndarray,
    floats: dict[str, np.ndarray],
    status: tuple[np.ndarray, np.ndarray],
    active: tuple[np.ndarray, np.ndarray, list[str]],
    thought: np.ndarray | None = None,
) -> TickState:
    """Assemble a ``TickState`` from decoded columns (both formats end here); ``thought``
    only from a run with think-rate LOD.

    ``rec_path`` (like the ``path`` of the helpers) only names the place in messages:
    the file, with its line or row group."""
    check_rows(rec_path, tick, group)
    if ids.size and int(ids.min()) < 0:
        raise TraceError(f"{rec_path}: tick {tick}: agent ids must be >= 0, got {int(ids.min())}")
    unique, counts = np.unique(ids, return_counts=True)
    if unique.size != ids.size:  # the viewer selects and follows agents by id
        twice = int(unique[np.argmax(counts > 1)])
        raise TraceError(f"{rec_path}: tick {tick}: agent id {twice} appears more than once")
    counts = np.bincount(group, minlength=len(group_names))
    ends = np.cumsum(counts)
    slices = {
        name: slice(int(e - c), int(e))
        for name, c, e in zip(group_names, counts, ends, strict=True)
    }
    pos = np.column_stack([floats["x"], floats["y"]])
    vel = np.column_stack([floats["vx"], floats["vy"]])
    if not (np.isfinite(pos).all() and np.isfinite(vel).all()):
        raise TraceError(f"{rec_path}: tick {tick}: positions and velocities must be finite")
    force = np.column_stack(
        [floats.get("fx", np.zeros(ids.size)), floats.get("fy", np.zeros(ids.size))]
    )
    heading = from_angle(floats["heading"])
    return TickState(
        tick=tick,
        time=time,
        ids=ids.astype(np.int64),
        group=group,
        group_names=group_names,
        pos=pos,
        vel=vel,
        heading=heading,
        force=force,
        status=statuses(rec_path, tick, trees, slices, status[0], status[1], ids),
        emitted=emitted_from_active(
            rec_path, tick, trees, slices, active[0], active[1], active[2], ids
        ),
        trees=trees,
        thought=thought,
    )


# ----------------------------------------------------------------------------- Parquet
def _open_parquet(path: Path) -> Recording:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from behaviortk.record.parquet import (
        META_DEFINITION,
        META_END,
        META_HEADER,
        META_INDEX,
        META_VERSION,
    )

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise TraceError(
            f"{path}: not a readable Parquet file (truncated or damaged): {_first_line(exc)}"
        ) from None
    meta = {k.decode("utf-8", "replace"): v for k, v in (pf.metadata.metadata or {}).items()}
    if META_VERSION not in meta or META_HEADER not in meta:
        raise TraceError(f"{path}: a Parquet file, but not a behaviortk trace (no {META_HEADER})")
    try:
        head = json.loads(meta[META_HEADER])
        version = int(meta[META_VERSION])
    except ValueError as exc:
        raise TraceError(f"{path}: unreadable trace metadata: {_first_line(exc)}") from None
    if version != VERSION:
        raise TraceError(
            f"{path}: trace format version {version}; this behaviortk reads version {VERSION}"
        )
    head = check_header(path, head)
    if META_DEFINITION not in meta:
        raise TraceError(f"{path}: the trace has no recorded definition ({META_DEFINITION})")
    try:
        text = meta[META_DEFINITION].decode("utf-8")
        end = json.loads(meta[META_END]) if META_END in meta else None
    except ValueError as exc:
        raise TraceError(f"{path}: unreadable trace metadata: {_first_line(exc)}") from None
    if META_INDEX not in meta:
        raise TraceError(
            f"{path}: the trace has no tick index: its writer never finished (a killed run)"
        )
    try:
        index = json.loads(meta[META_INDEX])
    except ValueError as exc:
        raise TraceError(f"{path}: unreadable tick index: {_first_line(exc)}") from None
    ticks, firsts = tick_index(path, index, pf.metadata.num_row_groups)
    check_columns(path, pf.schema_arrow)
    scenario, trees = load_definition(path, text, head["trees"])
    rec = Recording(path, "parquet", head, text, scenario, trees, ticks, end)
    rec._reader = _ParquetTicks(rec, pf, firsts).read
    return rec


def tick_index(path: Path, index: Any, row_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """The index's recorded ticks and each row group's first (an index into the ticks), if
    they can be: ascending whole numbers in range, one first per row group."""
    if not isinstance(index, dict):
        raise TraceError(f"{path}: the tick index must be an object, got {_value(index)}")
    ticks = index_entries(path, index, "ticks", MAX_TRACE_TICK)
    firsts = index_entries(path, index, "row_groups", max(ticks.size - 1, 0))
    if (
        firsts.size != row_groups
        or np.any(np.diff(ticks) <= 0)
        or np.any(np.diff(firsts) <= 0)
        or (firsts.size > 0) != (ticks.size > 0)
        or (firsts.size and firsts[0] != 0)
    ):
        raise TraceError(f"{path}: the tick index does not match the file's row groups")
    return ticks, firsts


def index_entries(path: Path, index: dict[str, Any], key: str, most: int) -> np.ndarray:
    """``index[key]`` as int64, if it is a list of whole numbers 0 to ``most``."""
    values = index.get(key)
    rule = f"a list of whole numbers 0 to {most:,}"
    if not isinstance(values, list):
        got = "nothing" if values is None else _value(values)
        raise TraceError(f'{path}: the tick index\'s "{key}" must be {rule}, got {got}')
    try:
        entries = np.asarray(values)
    except ValueError:  # ragged nested lists
        entries = np.asarray([None])
    if entries.size and (entries.dtype.kind != "i" or entries.min() < 0 or entries.max() > most):
        bad = next(v for v in values if type(v) is not int or not 0 <= v <= most)
        raise TraceError(
            f'{path}: the tick index\'s "{key}" must be {rule}, got an entry {_value(bad)}'
        )
    return entries.astype(np.int64)


def check_columns(path: Path, schema: Any) -> None:
    """Every column a replay reads is there, with a type that means what it should."""
    import pyarrow as pa

    from behaviortk.record.parquet import FLOATS

    t = pa.types

    def text(typ: Any) -> bool:
        return bool(t.is_string(typ) or t.is_large_string(typ))

    def words(typ: Any) -> bool:
        return bool(text(typ) or (t.is_dictionary(typ) and text(typ.value_type)))

    expected = {
        "tick": ("integers", t.is_integer),
        "id": ("integers", t.is_integer),
        "group": ("strings", words),
        **{name: ("floats", t.is_floating) for name in FLOATS},
        "active": ("lists of strings", lambda typ: t.is_list(typ) and words(typ.value_type)),
        "status": ("strings of digits", text),
    }
    for name, (what, fits) in expected.items():
        if name not in schema.names:
            raise TraceError(f"{path}: the trace has no column {name!r}")
        typ = schema.field(name).type
        if not fits(typ):
            raise TraceError(f"{path}: column {name!r} holds {typ}, not {what}")
    if "thought" in schema.names and not t.is_boolean(schema.field("thought").type):
        raise TraceError(
            f"{path}: column 'thought' holds {schema.field('thought').type}, not bools"
        )


class _ParquetTicks:
    """Seeks by the tick index; keeps the last decoded row group."""

    def __init__(self, rec: Recording, pf: Any, firsts: np.ndarray) -> None:
        self.rec = rec
        self.pf = pf
        self.firsts = firsts  # index in rec.ticks of each row group's first tick
        self.group_names = [g.name for g in rec.scenario.definition.groups]
        self._cached: tuple[int, Any, np.ndarray] | None = None

    def group_of(self, tick: int) -> int:
        """The row group holding ``tick`` (a recorded one)."""
        return int(np.searchsorted(self.firsts, self.rec.index_of(tick), side="right")) - 1

    def row_group(self, rg: int) -> tuple[Any, np.ndarray]:
        if self._cached is None or self._cached[0] != rg:
            import pyarrow as pa

            try:
                table = self.pf.read_row_group(rg)
            except (pa.ArrowException, OSError) as exc:
                raise TraceError(
                    f"{self.rec.path}: row group {rg} cannot be read: {_first_line(exc)}"
                ) from None
            self._cached = (rg, table, table.column("tick").to_numpy())
        return self._cached[1], self._cached[2]

    def read(self, tick: int) -> TickState:
        """The recorded state of ``tick``; damage is a TraceError naming the row group."""
        import pyarrow as pa

        rg = self.group_of(tick)
        where = f"{self.rec.path} row group {rg}"
        try:
            return self._read(where, rg, tick)
        except (pa.ArrowException, ValueError, TypeError, KeyError, IndexError, OverflowError) as e:
            raise TraceError(f"{where}: tick {tick}: unreadable rows: {_first_line(e)}") from None

    def _read(self, path: str, rg: int, tick: int) -> TickState:
        import pyarrow as pa

        table, ticks = self.row_group(rg)
        a = int(np.searchsorted(ticks, tick, side="left"))
        b = int(np.searchsorted(ticks, tick, side="right"))
        if a == b:
            raise TraceError(f"{path}: tick {tick} is indexed but its rows are missing")
        sub = table.slice(a, b - a)
        groups = sub.column("group").combine_chunks()
        if isinstance(groups, pa.DictionaryArray):
            names = groups.dictionary.to_pylist()
            lut = group_order(path, tick, names, self.group_names)
            group = lut[groups.indices.to_numpy(zero_copy_only=False).astype(np.int64)]
        else:
            group = group_order(path, tick, groups.to_pylist(), self.group_names)
        status = sub.column("status").combine_chunks()
        active = sub.column("active").combine_chunks()
        active_offsets = active.offsets.to_numpy(zero_copy_only=False)
        # the slice's values, from the offsets (``flatten`` would load pyarrow.compute: 0.2 s)
        flat_active = active.values.slice(
            int(active_offsets[0]), int(active_offsets[-1] - active_offsets[0])
        )
        if isinstance(flat_active, pa.DictionaryArray):
            dictionary = [str(x) for x in flat_active.dictionary.to_pylist()]
            active_idx = flat_active.indices.to_numpy(zero_copy_only=False)
        else:  # plain strings (a file rewritten by another tool)
            dictionary = sorted(set(flat_active.to_pylist()))
            where = {name: k for k, name in enumerate(dictionary)}
            active_idx = np.array([where[x] for x in flat_active.to_pylist()], dtype=np.int64)
        floats = {
            name: sub.column(name).to_numpy().astype(np.float64, copy=False)
            for name in ("x", "y", "vx", "vy", "heading", "fx", "fy")
        }
        thought = None
        if "thought" in sub.column_names:
            thought = sub.column("thought").to_numpy(zero_copy_only=False).astype(bool)
        return tick_state(
            path,
            tick,
            (tick + 1) * self.rec.dt,
            self.rec.trees,
            self.group_names,
            sub.column("id").to_numpy().astype(np.int64),
            group,
            floats,
            status_codes(path, tick, status),
            (
                np.diff(active_offsets).astype(np.int64),
                active_idx,
                dictionary,
            ),
            thought,
        )


def status_codes(path: Path | str, tick: int, column: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-row lengths and the flat codes of a string column of status digits."""
    import pyarrow as pa

    if isinstance(column, pa.DictionaryArray):
        column = column.dictionary_decode()
    if not pa.types.is_string(column.type):
        raise TraceError(f"{path}: tick {tick}: 'status' is {column.type}, not digit strings")
    n = len(column)
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int32)[
        column.offset : column.offset + n + 1
    ]
    data = column.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    codes = raw[offsets[0] : offsets[-1]].astype(np.int64) - STATUS_DIGIT
    return np.diff(offsets).astype(np.int64), codes


# ----------------------------------------------------------------------------- JSON Lines
def _open_jsonl(path: Path) -> Recording:
    offsets: list[int] = []
    lines: list[int] = []
    ticks: list[int] = []
    end: dict[str, Any] | None = None
    notes: list[str] = []
    with path.open("rb") as fh:
        first = fh.readline()
        try:
            head = json.loads(first)
        except ValueError as exc:
            raise TraceError(f"{path} line 1: the header is not JSON: {_first_line(exc)}") from None
        head = check_header(path, head)
        line_no = 1
        while True:
            at = fh.tell()
            line = fh.readline()
            if not line:
                break
            line_no += 1
            if not line.endswith(b"\n"):
                notes.append(f"line {line_no} is cut short (a killed run): left out")
                break
            m = _TICK_LINE.match(line)
            if m is not None:
                tick = indexed_tick(path, line_no, m.group(1))
                if ticks and tick <= ticks[-1]:
                    raise TraceError(f"{path} line {line_no}: tick {tick} after tick {ticks[-1]}")
                offsets.append(at)
                lines.append(line_no)
                ticks.append(tick)
            elif line.startswith(b'{"end"'):
                try:
                    end = json.loads(line)
                except ValueError:
                    raise TraceError(f"{path} line {line_no}: the end line is not JSON") from None
            elif line.strip():
                raise TraceError(f"{path} line {line_no}: not a tick record nor an end line")
    definition = head.get("definition")
    if not isinstance(definition, dict):
        raise TraceError(f"{path}: the trace header has no recorded definition")
    text = json.dumps(definition, ensure_ascii=False, indent=1)
    scenario, trees = load_definition(path, text, head["trees"])
    head = {k: v for k, v in head.items() if k != "definition"}
    rec = Recording(
        path, "jsonl", head, text, scenario, trees, np.array(ticks, np.int64), end, notes
    )
    rec._reader = _JsonlTicks(rec, offsets, lines).read
    return rec


def indexed_tick(path: Path, line_no: int, digits: bytes) -> int:
    """The tick a record line starts with, if it is one a trace can hold (checked on the
    digits first: a 5,000-digit number is refused before ``int`` reads it)."""
    if len(digits) <= len(str(MAX_TRACE_TICK)) and 0 <= int(digits) <= MAX_TRACE_TICK:
        return int(digits)
    got = digits.decode() if len(digits) <= 40 else f"a number of {len(digits):,} digits"
    raise TraceError(f'{path} line {line_no}: "tick" must be {TICK_RULE}, got {got}')


class _JsonlTicks:
    """Parses one tick's line on demand (the file was indexed by byte offset)."""

    def __init__(self, rec: Recording, offsets: list[int], lines: list[int]) -> None:
        self.rec = rec
        self.offsets = offsets
        self.lines = lines  # the line number of each recorded tick, for messages
        self.group_names = [g.name for g in rec.scenario.definition.groups]

    def read(self, tick: int) -> TickState:
        """The recorded state of ``tick``; a damaged line is a TraceError naming the file,
        the line, the agent and the field, and what that field must be."""
        i = self.rec.index_of(tick)
        where = f"{self.rec.path} line {self.lines[i]}"
        with self.rec.path.open("rb") as fh:
            fh.seek(self.offsets[i])
            line = fh.readline()
        try:
            record = json.loads(line)
        except ValueError as exc:  # not JSON, or a number of more than 4,300 digits
            raise TraceError(f"{where}: not JSON: {_first_line(exc)}") from None
        try:
            return self._decode(where, tick, record)
        except (ValueError, KeyError, TypeError, OverflowError, IndexError) as exc:
            problem = record_problem(record) or _first_line(exc)
            raise TraceError(f"{where}: {problem}") from None

    def _decode(self, where: str, tick: int, rec: Any) -> TickState:
        """The fast path: the columns straight from the parsed line; what numpy would take
        silently (a float id, a string position, a string as a list) fails here on purpose,
        with a cheap check per column, so ``read`` names it."""
        agents = rec["agents"]
        id_list = [a["id"] for a in agents]
        names = [a["group"] for a in agents]
        codes = [a["status"] for a in agents]
        lists = [a["active"] for a in agents]
        time = rec["time"]
        if (
            type(time) not in (int, float)
            or not all(type(v) is int for v in id_list)
            or not all(type(v) is str for v in names)
            or not all(type(v) is list for v in lists)
        ):
            raise ValueError("a field of the wrong type")
        ids = np.array(id_list, dtype=np.int64)  # OverflowError past int64
        group = group_order(where, tick, names, self.group_names)
        pos, vel = (_pairs([a[k] for a in agents]) for k in ("pos", "vel"))
        status_lengths = np.array([len(c) for c in codes], dtype=np.int64)
        status_values = np.frombuffer("".join(codes).encode("ascii", "replace"), dtype=np.uint8)
        dictionary = sorted({name for names in lists for name in names})
        if not all(type(name) is str for name in dictionary):
            raise ValueError("an active leaf name that is not a string")
        leaf_index = {name: k for k, name in enumerate(dictionary)}
        speed = np.hypot(vel[:, 0], vel[:, 1])
        floats = {
            "x": pos[:, 0],
            "y": pos[:, 1],
            "vx": vel[:, 0],
            "vy": vel[:, 1],
            # JSON Lines traces keep no heading: the velocity's direction, +x when still
            "heading": np.where(speed > 0.0, np.arctan2(vel[:, 1], vel[:, 0]), 0.0),
        }
        thought = None
        if agents and "thought" in agents[0]:  # a run with think-rate LOD: every agent has it
            flags = [a["thought"] for a in agents]
            if not all(type(v) is bool for v in flags):
                raise ValueError("a thought flag that is not true or false")
            thought = np.array(flags, dtype=bool)
        return tick_state(
            where,
            tick,
            time,
            self.rec.trees,
            self.group_names,
            ids,
            group,
            floats,
            (status_lengths, status_values.astype(np.int64) - STATUS_DIGIT),
            (
                np.array([len(names) for names in lists], dtype=np.int64),
                np.array([leaf_index[name] for names in lists for name in names], dtype=np.int64),
                dictionary,
            ),
            thought,
        )


def _pairs(values: list[Any]) -> np.ndarray:
    """``[[x, y], ...]`` as an (n, 2) float array; ValueError unless each is two numbers."""
    out = np.array(values)
    if out.dtype.kind not in "iuf" or out.shape != (len(values), 2):
        raise ValueError("not pairs of numbers")
    return out.astype(np.float64)


def _number(v: Any) -> bool:
    return type(v) in (int, float)


AGENT_FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "id": ("a whole number 0 to 2**63 - 1", lambda v: type(v) is int and 0 <= v <= MAX_ID),
    "group": ("a group name (a string)", lambda v: type(v) is str),
    "pos": (
        "[x, y], two numbers",
        lambda v: type(v) is list and len(v) == 2 and all(map(_number, v)),
    ),
    "vel": (
        "[vx, vy], two numbers",
        lambda v: type(v) is list and len(v) == 2 and all(map(_number, v)),
    ),
    "active": (
        "a list of steering leaf names (strings)",
        lambda v: type(v) is list and all(type(n) is str for n in v),
    ),
    "status": (
        "a string of status digits 0-3",
        lambda v: type(v) is str and all(c in "0123" for c in v),
    ),
}
"""What each field of an agent in a JSONL tick record must be (checked when a line fails)."""
THOUGHT_RULE = ("true or false", lambda v: type(v) is bool)
"""``thought``: in every agent of a run with think-rate LOD, in none otherwise."""


def record_problem(rec: Any) -> str | None:
    """What is wrong with a parsed tick record, in words, or None if nothing is found:
    the first agent and field that breaks ``AGENT_FIELDS`` (only run once a line failed)."""
    if not isinstance(rec, dict):
        return f"a tick record must be an object, got {_value(rec)}"
    for key in ("time", "agents"):
        if key not in rec:
            return f"the record has no {key!r}"
    if type(rec["time"]) not in (int, float):
        return f'"time" must be a number, got {_value(rec["time"])}'
    if type(rec["agents"]) is not list:
        return f'"agents" must be a list, got {_value(rec["agents"])}'
    lod = (
        bool(rec["agents"]) and isinstance(rec["agents"][0], dict) and "thought" in rec["agents"][0]
    )
    fields = {**AGENT_FIELDS, "thought": THOUGHT_RULE} if lod else AGENT_FIELDS
    for k, agent in enumerate(rec["agents"]):
        if not isinstance(agent, dict):
            return f"agent {k} must be an object, got {_value(agent)}"
        for key, (rule, fits) in fields.items():
            if key not in agent:
                return f"agent {k} has no {key!r}"
            if not fits(agent[key]):
                return f"agent {k}: {json.dumps(key)} must be {rule}, got {_value(agent[key])}"
    return None


def _value(v: Any) -> str:
    """A value as JSON, cut short when long."""
    text = json.dumps(v)
    return text if len(text) <= 40 else f"{text[:40]}... ({len(text):,} characters)"


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]
