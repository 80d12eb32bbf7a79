"""Parquet traces (issue 15, part 3): columns by hand, metadata, row groups, seeking, bad files.

Hand-worked values come from ``trace_support`` (``walk``, two ticks). Seeking is
checked against the live state of every tick, in shuffled order and across row
groups, for both trace formats. Every bad file is one ``TraceError`` line.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from trace_support import EXPECTED, WALK, WALK_PATHS, run_recorded, walk_sim

import behaviortk
from behaviortk.cli import main
from behaviortk.record.jsonl import TraceWriter
from behaviortk.record.parquet import (
    META_DEFINITION,
    META_END,
    META_HEADER,
    META_INDEX,
    META_VERSION,
    ParquetTraceWriter,
)
from behaviortk.record.reader import TraceError, open_recording
from behaviortk.sim.simulation import Simulation

REFERENCE = Path(__file__).resolve().parent.parent / "definitions" / "evade_or_flock.json"
COLUMNS = [
    *("tick", "id", "group", "x", "y", "vx", "vy", "heading", "fx", "fy", "active", "status"),
    "leaf_force",
]


def record_walk(path: Path, engine: str, ticks: int = 2, **kw) -> dict:
    sim = walk_sim(engine)
    return run_recorded(sim, ticks, ParquetTraceWriter(str(path), sim, **kw))


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_rows_by_hand(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "walk.parquet"
    record_walk(path, engine)
    df = pl.read_parquet(path)  # the one line a user needs
    assert df.columns == COLUMNS
    assert df.height == 6  # 3 agents x 2 ticks, tick-major, agents in row order
    assert df["tick"].to_list() == [0, 0, 0, 1, 1, 1]
    assert df["id"].to_list() == [0, 1, 2, 0, 1, 2]
    assert df["group"].cast(pl.String).to_list() == ["walkers", "walkers", "posts"] * 2
    for row in df.iter_rows(named=True):
        want = EXPECTED[row["tick"]][row["id"]]
        for key in ("x", "y", "vx", "vy", "heading", "fx", "fy"):
            assert row[key] == pytest.approx(want[key], abs=1e-9), (row["tick"], row["id"], key)
        assert row["active"] == want["active"]
        assert row["status"] == want["status"]
        if row["group"] == "posts":  # external: no tree, no leaves
            assert row["leaf_force"] == []
        else:  # two steering leaves (NaN: asked none); what they asked is the force applied
            pairs = np.array(row["leaf_force"], dtype=float).reshape(2, 2)
            asked = np.isfinite(pairs[:, 0])
            assert asked.sum() == len(row["active"]), row["id"]
            total = pairs[asked].sum(axis=0)
            assert total == pytest.approx([want["fx"], want["fy"]], rel=1e-6, abs=1e-6)


def test_both_engines_write_the_same_rows(tmp_path: Path) -> None:
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, engine in ((a, "py_trees"), (b, "batch")):
        sim = Simulation(behaviortk.load(REFERENCE), engine=engine)
        run_recorded(sim, 30, ParquetTraceWriter(str(path), sim, row_group_rows=500))
    ta, tb = pq.read_table(a), pq.read_table(b)
    forces = [t.column("leaf_force").combine_chunks() for t in (ta, tb)]
    ta, tb = ta.drop_columns(["leaf_force"]), tb.drop_columns(["leaf_force"])
    assert ta.equals(tb)  # values; the metadata differs only in the engine name
    # leaf forces bit for bit (``equals`` calls NaN, a leaf that asked none, unequal to NaN)
    assert forces[0].offsets.equals(forces[1].offsets)
    assert forces[0].values.to_numpy().tobytes() == forces[1].values.to_numpy().tobytes()
    ha = json.loads(pq.read_schema(a).metadata[META_HEADER.encode()])
    hb = json.loads(pq.read_schema(b).metadata[META_HEADER.encode()])
    assert (ha.pop("engine"), hb.pop("engine")) == ("py_trees", "batch")
    assert ha == hb


def test_parquet_holds_what_jsonl_holds(tmp_path: Path) -> None:
    sim = Simulation(behaviortk.load(REFERENCE), engine="batch")
    out = io.StringIO()
    path = tmp_path / "t.parquet"
    run_recorded(sim, 12, TraceWriter(out, sim), ParquetTraceWriter(str(path), sim))
    df = pl.read_parquet(path)
    lines = out.getvalue().splitlines()[1:-1]
    agents = [
        a | {"tick": json.loads(line)["tick"]} for line in lines for a in json.loads(line)["agents"]
    ]
    assert df["tick"].to_list() == [a["tick"] for a in agents]
    assert df["id"].to_list() == [a["id"] for a in agents]
    assert df["x"].to_list() == [a["pos"][0] for a in agents]  # exact: float64 both ways
    assert df["vy"].to_list() == [a["vel"][1] for a in agents]
    assert df["active"].to_list() == [a["active"] for a in agents]
    assert df["status"].to_list() == [a["status"] for a in agents]


def test_metadata_makes_the_file_self_contained(tmp_path: Path) -> None:
    path = tmp_path / "walk.parquet"
    record_walk(path, "batch", ticks=3)
    meta = {k.decode(): v.decode() for k, v in pq.ParquetFile(path).metadata.metadata.items()}
    assert meta[META_VERSION] == "2"
    assert json.loads(meta[META_DEFINITION]) == WALK
    head = json.loads(meta[META_HEADER])
    assert head["format"] == "behaviortk-trace" and head["version"] == 2
    assert head["trees"] == {"walkers": WALK_PATHS}
    assert head["statuses"] == ["INVALID", "RUNNING", "SUCCESS", "FAILURE"]
    assert (head["scenario"], head["seed"], head["dt"], head["every"]) == ("walk", 1, 0.1, 1)
    assert json.loads(meta[META_INDEX]) == {"ticks": [0, 1, 2], "row_groups": [0]}
    end = json.loads(meta[META_END])
    # three agents far apart never overlap: the figure of all 3 ticks is 0, as in JSONL
    assert end.pop("overlap") == {"ticks": 3, "last": 0.0, "max": 0.0, "mean": 0.0}
    assert end == {"end": "complete", "ticks": 3}
    # the definition alone loads to the trees whose statuses the file holds
    rec = open_recording(path)
    assert [n.path for n in rec.trees["walkers"].nodes] == WALK_PATHS


def test_row_groups_hold_whole_ticks_and_memory_stays_bounded(tmp_path: Path) -> None:
    """63 agents, row groups of >= 200 rows: 4 ticks (252 rows) each; the buffer is flushed
    as soon as it reaches the size, so it never holds more than one row group."""
    path = tmp_path / "t.parquet"
    sim = Simulation(behaviortk.load(REFERENCE), engine="batch")
    writer = ParquetTraceWriter(str(path), sim, row_group_rows=200)
    for _ in range(10):
        sim.step()
        writer.on_tick(sim)
        assert writer._buffered < 200
    writer.finish(sim)
    pf = pq.ParquetFile(path)
    # ceil(200 / 63) = 4 ticks per group: ticks 0-3, 4-7, then 8-9 when the trace ends
    assert [pf.metadata.row_group(i).num_rows for i in range(3)] == [252, 252, 126]
    assert writer.row_groups == [0, 4, 8]
    stats = [pf.metadata.row_group(i).column(0).statistics for i in range(3)]
    assert [(s.min, s.max) for s in stats] == [(0, 3), (4, 7), (8, 9)]


def test_every_k_and_its_ticks(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    sim = walk_sim("py_trees")
    run_recorded(sim, 10, ParquetTraceWriter(str(path), sim, every=4))
    rec = open_recording(path)
    assert rec.ticks.tolist() == [0, 4, 8]
    assert rec.describe_ticks() == "recorded ticks 0..8 every 4 (3 ticks)"
    with pytest.raises(TraceError, match=r"tick 5 is not recorded; recorded ticks 0\.\.8 every 4"):
        rec.state(5)
    with pytest.raises(ValueError, match="every"):
        ParquetTraceWriter(io.BytesIO(), sim, every=0)


@pytest.mark.parametrize("kind", ["parquet", "jsonl"])
@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_seek_gives_the_live_state_of_any_tick(tmp_path: Path, kind: str, engine: str) -> None:
    path = tmp_path / f"t.{kind}"
    sim = Simulation(behaviortk.load(REFERENCE), engine=engine)
    if kind == "parquet":
        live = run_recorded(sim, 40, ParquetTraceWriter(str(path), sim, row_group_rows=300))
    else:
        with path.open("w", encoding="utf-8") as fh:
            live = run_recorded(sim, 40, TraceWriter(fh, sim))
    rec = open_recording(path)
    assert rec.kind == kind and rec.ticks.tolist() == list(range(40))
    order = [*np.random.default_rng(5).permutation(40).tolist(), 0, 1, 2, 39, 38]
    for tick in order:
        got, want = rec.state(tick), live[tick]
        assert got.tick == tick and got.time == pytest.approx(want.time)
        assert np.array_equal(got.ids, want.ids)
        assert np.array_equal(got.group, want.group)
        assert np.array_equal(got.pos, want.pos) and np.array_equal(got.vel, want.vel)
        for group in want.status:
            assert np.array_equal(got.status[group], want.status[group]), (tick, group)
            assert np.array_equal(got.emitted[group], want.emitted[group]), (tick, group)
        assert got.active_lists() == want.active_lists()
        if kind == "parquet":  # JSONL keeps neither heading nor force
            assert np.allclose(got.heading, want.heading, atol=1e-12)
            assert np.array_equal(got.force, want.force)


def test_repeated_leaf_names_are_matched_in_request_order(tmp_path: Path) -> None:
    """Two steering leaves both named ``seek``: the k-th ``seek`` in a list is the k-th leaf."""
    data = json.loads(json.dumps(WALK))
    data["trees"]["walk"]["root"] = {
        "type": "parallel",
        "policy": "success_on_all",
        "children": [
            {"type": "seek", "target": {"kind": "point", "at": [300, 100]}},
            {"type": "flee", "target": {"kind": "point", "at": [150, 150]}},  # in panic range
            {"type": "seek", "target": {"kind": "point", "at": [0, 300]}},
        ],
    }
    sim = Simulation(behaviortk.load_text(json.dumps(data)), engine="batch")
    path = tmp_path / "t.parquet"
    live = run_recorded(sim, 2, ParquetTraceWriter(str(path), sim))
    assert pl.read_parquet(path)["active"][0].to_list() == ["seek", "flee", "seek"]
    state = open_recording(path).state(1)
    assert state.emitted["walkers"].tolist() == [[True, True, True]] * 2
    assert np.array_equal(state.emitted["walkers"], live[1].emitted["walkers"])


def test_an_interrupted_run_keeps_a_readable_parquet_trace(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    from test_cli_run import stop_at_tick

    out = tmp_path / "t.parquet"
    stop_at_tick(monkeypatch, 3, KeyboardInterrupt())
    assert main(["run", str(REFERENCE), "--headless", "--ticks", "10", "--trace", str(out)]) == 130
    err = capsys.readouterr().err
    assert f"trace: {out} (3 ticks, 189 rows, interrupted at tick 3)" in err
    rec = open_recording(out)
    assert rec.ticks.tolist() == [0, 1, 2]
    end = dict(rec.end)
    assert end.pop("overlap")["ticks"] == 3
    assert end == {"end": "interrupted", "tick": 3, "reason": "interrupted (SIGINT)"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]


def test_run_chooses_the_format_by_extension(tmp_path: Path, capsys) -> None:
    for name in ("t.parquet", "t.jsonl"):
        out = tmp_path / name
        assert main(["run", str(REFERENCE), "--headless", "--ticks", "4", "--trace", str(out)]) == 0
    said = [
        line.split(None, 1)[1]
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("  trace ")
    ]
    assert said[0].startswith(f"{tmp_path / 't.parquet'} (") and said[0].endswith(
        " KB, 4 ticks, 252 rows)"
    )
    assert said[1].startswith(f"{tmp_path / 't.jsonl'} (") and said[1].endswith(" KB, 6 lines)")
    assert (tmp_path / "t.parquet").read_bytes()[:4] == b"PAR1"
    assert (tmp_path / "t.jsonl").read_bytes()[:1] == b"{"


# ------------------------------------------------------------------ bad files
@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.parquet"
    record_walk(path, "batch", ticks=3)
    return path


def rewrite(src: Path, dst: Path, **changes: str) -> Path:
    """A copy of ``src`` with some key-value metadata replaced (pyarrow, rows unchanged)."""
    pf = pq.ParquetFile(src)
    meta = dict(pf.metadata.metadata)
    for key, value in changes.items():
        meta[key.encode()] = value.encode()
    table = pf.read().replace_schema_metadata(meta)
    pq.write_table(table, dst)
    return dst


def expect(path: Path, pattern: str) -> None:
    with pytest.raises(TraceError, match=pattern) as info:
        open_recording(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_truncated_and_foreign_files(tmp_path: Path, good: Path) -> None:
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    expect(cut, "not a readable Parquet file \\(truncated or damaged\\)")
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"x": [1.0, 2.0]}), foreign)
    expect(foreign, "a Parquet file, but not a behaviortk trace")
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    expect(text, "not a behaviortk trace \\(neither Parquet nor JSON Lines\\)")
    empty = tmp_path / "empty.parquet"
    empty.write_bytes(b"")
    expect(empty, "not a behaviortk trace \\(an empty file\\)")
    expect(tmp_path / "missing.parquet", "no such file")
    expect(tmp_path, "is a directory")


def test_another_format_version(tmp_path: Path, good: Path) -> None:
    expect(
        rewrite(good, tmp_path / "v3.parquet", **{META_VERSION: "3"}),
        "trace format version 3; this behaviortk reads version 2",
    )
    old = tmp_path / "v1.jsonl"
    old.write_text(json.dumps({"scenario": "x", "seed": 1, "dt": 0.1, "engine": "batch"}) + "\n")
    expect(old, "trace format 1 .* cannot be replayed")


def test_a_definition_that_changed(tmp_path: Path, good: Path) -> None:
    edited = json.loads(json.dumps(WALK))
    edited["trees"]["walk"]["root"]["children"][1]["name"] = "run"
    expect(
        rewrite(good, tmp_path / "renamed.parquet", **{META_DEFINITION: json.dumps(edited)}),
        "no longer matches the trace: group 'walkers' node 4 was 'pick/go\\[1\\]' when "
        "recorded, is 'pick/run\\[1\\]' now",
    )
    broken = json.loads(json.dumps(WALK))
    broken["trees"]["walk"]["root"]["type"] = "selektor"
    expect(
        rewrite(good, tmp_path / "invalid.parquet", **{META_DEFINITION: json.dumps(broken)}),
        "its recorded definition does not validate with this behaviortk: .*selektor",
    )


def test_rows_that_do_not_fit_the_trees(tmp_path: Path, good: Path) -> None:
    pf = pq.ParquetFile(good)
    table = pf.read()
    status = pa.array(["1121", *table.column("status").to_pylist()[1:]])  # one digit short
    bad = table.set_column(table.column_names.index("status"), "status", status)
    path = tmp_path / "short.parquet"
    pq.write_table(bad.replace_schema_metadata(pf.metadata.metadata), path)
    rec = open_recording(path)  # the metadata is fine; the rows are checked when decoded
    with pytest.raises(
        TraceError, match="tick 0: agent 0 has 4 status codes; its group 'walkers' has 5 nodes"
    ):
        rec.state(0)


def test_a_jsonl_trace_cut_mid_line_keeps_its_whole_ticks(tmp_path: Path) -> None:
    sim = walk_sim("batch")
    out = io.StringIO()
    run_recorded(sim, 3, TraceWriter(out, sim))
    text = out.getvalue()
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text[: text.index('{"tick":2') + 30], encoding="utf-8")
    rec = open_recording(cut)
    assert rec.ticks.tolist() == [0, 1]
    assert rec.end is None
    assert rec.notes == ["line 4 is cut short (a killed run): left out"]
    assert rec.state(1).pos[1, 0] == pytest.approx(200.29)
    garbled = tmp_path / "garbled.jsonl"
    garbled.write_text(text.splitlines()[0] + "\nnot json\n", encoding="utf-8")
    expect(garbled, "garbled.jsonl line 2: not a tick record nor an end line")


def test_heading_column_is_the_angle_of_the_heading(tmp_path: Path) -> None:
    path = tmp_path / "walk.parquet"
    record_walk(path, "batch", ticks=1)
    heading = pl.read_parquet(path)["heading"].to_list()
    assert heading == pytest.approx([-math.pi / 2, 0.0, 0.0])  # down, +x, the post's 0 degrees


def test_a_write_error_on_the_writer_thread_reaches_the_run() -> None:
    """A full disk while a row group is written: the next tick raises that OSError, kept
    as ``write_error`` (the CLI then discards the file: tests/test_output.py)."""
    import errno

    class Full(io.BytesIO):
        def write(self, data: bytes) -> int:
            if self.tell() + len(data) > 2_000:
                raise OSError(errno.ENOSPC, "No space left on device")
            return super().write(data)

    sim = Simulation(behaviortk.load(REFERENCE), engine="batch")
    writer = ParquetTraceWriter(Full(), sim, row_group_rows=100)  # a row group every 2 ticks
    with pytest.raises(OSError, match="No space left on device") as caught:
        for _ in range(50):
            sim.step()
            writer.on_tick(sim)
        writer.finish(sim)
    assert caught.value is writer.write_error
    assert writer.end is None


def test_the_writer_keeps_at_most_three_row_groups_in_memory(monkeypatch) -> None:
    """While the thread writes slowly, ``on_tick`` waits once a row group is queued."""
    import threading
    import time

    from behaviortk.record import parquet as trace_parquet

    started, release = threading.Event(), threading.Event()
    real = ParquetTraceWriter._write_row_group

    def slow(self, parts) -> None:
        started.set()
        release.wait(10)
        real(self, parts)

    monkeypatch.setattr(trace_parquet.ParquetTraceWriter, "_write_row_group", slow)
    sim = Simulation(behaviortk.load(REFERENCE), engine="batch")
    out = io.BytesIO()
    writer = ParquetTraceWriter(out, sim, row_group_rows=63)  # one tick per row group
    sim.step()
    writer.on_tick(sim)  # row group 1: taken by the thread, which blocks
    assert started.wait(10)
    sim.step()
    writer.on_tick(sim)  # row group 2: queued
    done = threading.Event()

    def third() -> None:
        sim.step()
        writer.on_tick(sim)  # row group 3: waits for room in the queue
        done.set()

    threading.Thread(target=third, daemon=True).start()
    time.sleep(0.3)
    assert not done.is_set()
    release.set()
    assert done.wait(10)
    writer.finish(sim)
    assert pq.ParquetFile(io.BytesIO(out.getvalue())).metadata.num_row_groups == 3


def test_columns_of_the_wrong_type_are_one_line(tmp_path: Path, good: Path) -> None:
    pf = pq.ParquetFile(good)
    table = pf.read()
    words = pa.array([f"{v}" for v in table.column("x").to_pylist()])
    bad = table.set_column(table.column_names.index("x"), "x", words)
    path = tmp_path / "words.parquet"
    pq.write_table(bad.replace_schema_metadata(pf.metadata.metadata), path)
    expect(path, "column 'x' holds string, not floats")
    gone = tmp_path / "gone.parquet"
    pq.write_table(
        table.drop_columns(["status"]).replace_schema_metadata(pf.metadata.metadata), gone
    )
    expect(gone, "the trace has no column 'status'")
    head = json.loads(pf.metadata.metadata[META_HEADER.encode()])
    expect(
        rewrite(good, tmp_path / "dt.parquet", **{META_HEADER: json.dumps({**head, "dt": "fast"})}),
        "dt must be a positive number, got 'fast'",
    )
