"""Columnar traces: a run as Parquet, one row per agent per recorded tick (``--trace x.parquet``).

Columns (``SCHEMA``), in this order:

========== ============================ ===============================================
``tick``   int32                        the 0-based step just taken (as in JSONL traces)
``id``     int64                        the agent's stable id (``sim.ids``)
``group``  dictionary<string>           its group's name
``x y``    float64                      position after the step's integration
``vx vy``  float64                      velocity after the step
``heading`` float64                     heading angle, radians, ``atan2(hy, hx)`` in (-pi, pi]
``fx fy``  float64                      the steering force applied in the step (truncated)
``active`` list<dictionary<string>>     trace names of the steering leaves that emitted,
                                        in request order
``status`` string                      one digit per node of the agent's tree, in
                                        flat-tree order: its status code ("" : no tree)
``thought`` bool                        whether it ticked its tree in the step; only
                                        when some group does not think every tick
                                        (``think_every``, ``lod``: ``sim/think.py``)
``leaf_force`` list<float32>            the weighted force each steering leaf of its
                                        tree asked for, in request order, as
                                        ``fx0, fy0, fx1, fy1, ...`` (NaN: asked none):
                                        what the tree panel's force dials show; on by
                                        default (``leaf_forces=False``, ``run
                                        --no-leaf-forces``: left out)
========== ============================ ===============================================

Status codes are ``tree/status.py``'s: 0 INVALID (not ticked), 1 RUNNING, 2
SUCCESS, 3 FAILURE; ``status`` is the string JSONL traces write (``"2130"``), which
costs half of a list of int8 to write and is dictionary encoded (agents share
few status patterns). The simulated time of a row is ``(tick + 1) * dt``; an
agent's name is its definition name (ids below the initial count) or
``<group>-<id>`` (agents spawned later).

The file's key-value metadata makes it self-contained:

- ``behaviortk.version``: the trace format version (``trace.VERSION``);
- ``behaviortk.header``: the JSONL header without the definition (scenario, seed,
  dt, engine, every, world, statuses, and ``trees``: each group's node paths in
  flat-tree order, the order of ``status``);
- ``behaviortk.definition``: the definition as JSON text (key order kept);
- ``behaviortk.index`` (written when the trace ends): ``{"ticks": [...],
  "row_groups": [...]}``, the recorded ticks and the index in ``ticks`` of the
  first tick of each row group, so a reader finds any tick's row group without
  scanning (``reader.py``);
- ``behaviortk.end``: how the run ended, as the JSONL end line.

Rows are written in row groups of whole ticks (at least ``row_group_rows`` rows,
default 32,768: 7 ticks at 5,000 agents), so a seek decodes one row group. The
simulation's thread only copies each recorded tick's arrays (``TickColumns``);
encoding and writing a row group happens on a writer thread of its own (pyarrow
releases the GIL while it encodes), so a recorded tick costs the run little more
than the copy. At most three row groups are in memory (one filling, one waiting,
one being written): a long run's memory stays bounded. A ^C never lands inside a
write (signals go to the main thread), so an interrupted run waits for the write
in progress, writes what it has and closes its file properly. Float columns are
written without dictionary encoding (it costs more than it saves on positions);
``group``, ``active`` and ``status`` with it.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from behaviortk.record.jsonl import VERSION, header, interrupted
from behaviortk.sim.simulation import Simulation
from behaviortk.sim.tick_state import STATUS_DIGIT, TickState
from behaviortk.world.overlap import OverlapLog

ROW_GROUP_ROWS = 32_768
FLOATS = ("x", "y", "vx", "vy", "heading", "fx", "fy")
META_VERSION = "behaviortk.version"
META_HEADER = "behaviortk.header"
META_DEFINITION = "behaviortk.definition"
META_INDEX = "behaviortk.index"
META_END = "behaviortk.end"
COMPRESSION = "snappy"


def index_type(n: int) -> pa.DataType:
    """The smallest signed integer type that indexes a dictionary of ``n`` values."""
    return pa.int8() if n <= 127 else pa.int16() if n <= 32_767 else pa.int32()


def schema(
    group_names: list[str], leaf_names: list[str], thought: bool = False, leaf_force: bool = False
) -> pa.Schema:
    """The columns (module docstring); ``thought`` only for a run with think-rate LOD,
    ``leaf_force`` only when the per-leaf forces are recorded."""
    last = [pa.field("thought", pa.bool_(), nullable=False)] if thought else []
    if leaf_force:
        last.append(pa.field("leaf_force", pa.list_(pa.float32())))
    return pa.schema(
        [
            pa.field("tick", pa.int32(), nullable=False),
            pa.field("id", pa.int64(), nullable=False),
            pa.field("group", pa.dictionary(index_type(len(group_names)), pa.string())),
            *[pa.field(name, pa.float64(), nullable=False) for name in FLOATS],
            pa.field("active", pa.list_(pa.dictionary(index_type(len(leaf_names)), pa.string()))),
            pa.field("status", pa.string()),
            *last,
        ]
    )


def leaf_dictionary(sim: Simulation) -> tuple[list[str], dict[str, np.ndarray]]:
    """All steering leaf names (first-seen order) and, per group, each leaf's index in them."""
    names: list[str] = []
    lut: dict[str, np.ndarray] = {}
    for group, tree in sim.trees.items():
        cols = []
        for i in tree.steering:
            name = tree.nodes[i].name
            if name not in names:
                names.append(name)
            cols.append(names.index(name))
        lut[group] = np.array(cols, dtype=np.int64)
    return names, lut


class TickColumns:
    """One recorded tick as column arrays (list columns as lengths + flat values)."""

    def __init__(self, state: TickState, lut: dict[str, np.ndarray]) -> None:
        n = state.n
        self.n = n
        self.tick = np.full(n, state.tick, dtype=np.int32)
        self.id = state.ids
        self.group = state.group
        self.floats = (
            state.pos[:, 0],
            state.pos[:, 1],
            state.vel[:, 0],
            state.vel[:, 1],
            np.arctan2(state.heading[:, 1], state.heading[:, 0]),
            state.force[:, 0],
            state.force[:, 1],
        )
        self.active_len = np.zeros(n, dtype=np.int32)
        self.status_len = np.zeros(n, dtype=np.int32)
        active: list[np.ndarray] = []
        status: list[np.ndarray] = []
        for group, rows in state.slices.items():
            codes = state.status.get(group)
            if codes is None:  # an external group: empty lists
                continue
            flags = state.emitted[group]
            _, cols = np.nonzero(flags)  # row-major: each row's leaves in request order
            self.active_len[rows] = flags.sum(axis=1)
            active.append(lut[group][cols])
            self.status_len[rows] = codes.shape[1]
            status.append(codes.ravel())
        self.active = np.concatenate(active) if active else np.zeros(0, np.int64)
        self.status = np.concatenate(status) if status else np.zeros(0, np.int8)  # codes
        thought = state.thought  # None: every agent thought (think_every 1 everywhere)
        self.thought = np.ones(n, dtype=bool) if thought is None else thought
        self.leaf_len = np.zeros(n, dtype=np.int32)
        leaf: list[np.ndarray] = []
        for group, forces in (state.leaf_forces or {}).items():
            self.leaf_len[state.slices[group]] = 2 * forces.shape[1]
            leaf.append(forces.ravel())
        self.leaf = np.concatenate(leaf) if leaf else np.zeros(0, np.float32)


def _records_thought(sim: Any) -> bool:
    """Whether the trace has the ``thought`` column: a run with think-rate LOD; for a view of
    a frame (``behaviortk attach``'s ``RecordedView``, which has no ``think``), a frame that
    carries the flags (``TickState.thought``), as the JSONL writer decides per record."""
    state = getattr(sim, "state", None)
    if isinstance(state, TickState):
        return state.thought is not None
    return bool(sim.think.active)


def _offsets(lengths: np.ndarray) -> np.ndarray:
    out = np.zeros(lengths.size + 1, dtype=np.int32)
    np.cumsum(lengths, out=out[1:])
    return out


def digits(lengths: np.ndarray, codes: np.ndarray) -> pa.Array:
    """A string array of status digits: row ``i`` holds the next ``lengths[i]`` codes."""
    data = (codes.astype(np.uint8) + STATUS_DIGIT).tobytes()
    buffers = [None, pa.py_buffer(_offsets(lengths)), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.string(), int(lengths.size), buffers)


class ParquetTraceWriter:
    """Write a Parquet trace while a simulation runs: ``writer.on_tick`` after each step.

    The same contract as ``trace.TraceWriter``: ``every``, ``finish(sim)`` after the
    last tick, ``interrupt(sim, reason)`` when the run was cut short, ``write_error``
    for an ``OSError`` the file raised. ``out`` is a binary file (``atomic_output``'s)
    or a path. Nothing is readable until ``finish``/``interrupt`` close the file.
    """

    def __init__(
        self,
        out: IO[bytes] | str,
        sim: Simulation,
        every: int = 1,
        *,
        row_group_rows: int = ROW_GROUP_ROWS,
        compression: str = COMPRESSION,
        leaf_forces: bool = True,
    ) -> None:
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        if row_group_rows < 1:
            raise ValueError(f"row_group_rows must be >= 1, got {row_group_rows}")
        self.every = int(every)
        self.row_group_rows = int(row_group_rows)
        self.ticks: list[int] = []
        self.row_groups: list[int] = []  # index in ``ticks`` of each row group's first tick
        self.rows = 0
        self.end: dict[str, Any] | None = None
        self.write_error: OSError | None = None
        self._buffer: list[TickColumns] = []
        self._buffered = 0
        self._group_names = list(sim.agents.group_names)
        self._leaf_names, self._lut = leaf_dictionary(sim)
        head = header(sim, self.every)
        definition = head.pop("definition")
        metadata = {
            META_VERSION: str(VERSION),
            META_HEADER: json.dumps(head, ensure_ascii=False),
            META_DEFINITION: json.dumps(definition, ensure_ascii=False, indent=1),
        }
        self._thought = _records_thought(sim)
        self._leaf_forces = bool(leaf_forces)
        self.schema = schema(self._group_names, self._leaf_names, self._thought, leaf_forces)
        self.schema = self.schema.with_metadata(metadata)
        self._writer = pq.ParquetWriter(
            out,
            self.schema,
            compression=compression,
            use_dictionary=["group", "active", "status"],
            write_statistics=["tick", "id"],
        )
        self._worker = RowGroupWorker(self._write_row_group)
        self.overlap = OverlapLog()
        """The overlap figure of every tick seen so far (for the end record), as in JSONL."""

    def on_tick(self, sim: Simulation) -> None:
        if self.end is not None:
            raise ValueError(f"the trace has ended ({self.end['end']})")
        self._check_worker()
        self.overlap.measure(sim.world, sim.agents)
        if (sim.tick - 1) % self.every != 0:
            return
        columns = TickColumns(TickState.of(sim, leaf_forces=self._leaf_forces), self._lut)
        self._buffer.append(columns)
        self._buffered += columns.n
        self.ticks.append(sim.tick - 1)
        if self._buffered >= self.row_group_rows:
            self._flush()

    @property
    def written(self) -> str:
        """What was recorded so far, for the run's summary: ``"600 ticks, 37,800 rows"``."""
        total = self.rows + self._buffered
        return f"{len(self.ticks)} ticks, {total:,} rows"

    def _table(self, parts: list[TickColumns]) -> pa.Table:
        cat = np.concatenate
        group = pa.DictionaryArray.from_arrays(
            pa.array(
                cat([p.group for p in parts]), type=self.schema.field("group").type.index_type
            ),
            pa.array(self._group_names, type=pa.string()),
        )
        active_type = self.schema.field("active").type.value_type
        active = pa.ListArray.from_arrays(
            pa.array(_offsets(cat([p.active_len for p in parts]))),
            pa.DictionaryArray.from_arrays(
                pa.array(cat([p.active for p in parts]), type=active_type.index_type),
                pa.array(self._leaf_names, type=pa.string()),
            ),
        )
        status = digits(cat([p.status_len for p in parts]), cat([p.status for p in parts]))
        floats = [pa.array(cat([p.floats[k] for p in parts])) for k in range(len(FLOATS))]
        arrays = [
            pa.array(cat([p.tick for p in parts])),
            pa.array(cat([p.id for p in parts]), type=pa.int64()),
            group,
            *floats,
            active,
            status,
        ]
        if self._thought:
            arrays.append(pa.array(cat([p.thought for p in parts]), type=pa.bool_()))
        if self._leaf_forces:
            arrays.append(
                pa.ListArray.from_arrays(
                    pa.array(_offsets(cat([p.leaf_len for p in parts]))),
                    pa.array(cat([p.leaf for p in parts]), type=pa.float32()),
                )
            )
        return pa.Table.from_arrays(arrays, schema=self.schema)

    def _write_row_group(self, parts: list[TickColumns]) -> None:
        """On the writer thread: encode and write ``parts`` as one row group."""
        table = self._table(parts)
        self._writer.write_table(table, row_group_size=table.num_rows)

    def _check_worker(self) -> None:
        """Raise, on the simulation's thread, what the writer thread met."""
        error = self._worker.error
        if error is not None:
            if isinstance(error, OSError):
                self.write_error = error
            raise error

    def _flush(self) -> None:
        """Hand the buffered ticks to the writer thread as one row group."""
        if not self._buffer:
            return
        self._worker.submit(self._buffer)  # waits while another row group is queued
        self.row_groups.append(len(self.ticks) - len(self._buffer))
        self.rows += self._buffered
        self._buffer = []
        self._buffered = 0

    def _close(self, end: dict[str, Any]) -> None:
        self._check_worker()
        self._flush()
        self._worker.drain()
        self._check_worker()
        index = {"ticks": self.ticks, "row_groups": self.row_groups}
        try:
            self._writer.add_key_value_metadata(
                {META_INDEX: json.dumps(index, separators=(",", ":")), META_END: json.dumps(end)}
            )
            self._writer.close()
        except OSError as exc:
            self.write_error = exc
            raise
        self.end = end

    def finish(self, sim: Simulation) -> None:
        """End a complete run: the end record ``{"end": "complete", "ticks": sim.tick, ...}``."""
        self._close({"end": "complete", "ticks": int(sim.tick), "overlap": self.overlap.summary()})

    def interrupt(
        self, sim: Simulation, reason: BaseException | str, breakpoint: str | None = None
    ) -> None:
        """End a run cut short by ``reason``: the ticks so far stay readable, the end says why
        (``breakpoint``: the spec of the breakpoint that stopped it)."""
        self._close(interrupted(sim, reason, self.overlap, breakpoint))


class RowGroupWorker:
    """A thread that writes the row groups it is handed, in order, one at a time.

    ``submit`` waits while one row group is already queued (back-pressure: memory
    stays bounded however fast ticks come); ``drain`` waits for everything handed
    over to be written. An exception on the thread stops the writing and is kept
    in ``error`` for the simulation's thread to raise.
    """

    def __init__(self, write: Callable[[list[TickColumns]], None]) -> None:
        self._write = write
        self._queue: queue.Queue[list[TickColumns] | None] = queue.Queue(maxsize=1)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="parquet-trace", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            parts = self._queue.get()
            if parts is None:
                return
            if self.error is None:
                try:
                    self._write(parts)
                except BaseException as exc:  # kept for the simulation's thread
                    self.error = exc

    def submit(self, parts: list[TickColumns]) -> None:
        self._queue.put(parts)

    def drain(self) -> None:
        """Wait until every submitted row group is written; the thread then ends."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
