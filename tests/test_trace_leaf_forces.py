"""Parquet traces record each steering leaf's force, so a replayed tree panel shows the
force dials a live one shows (issue: replays showed no forces at all)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import behaviortk
from behaviortk.cli import main
from behaviortk.record.parquet import ParquetTraceWriter
from behaviortk.record.reader import TraceError, open_recording
from behaviortk.sim.simulation import Simulation
from behaviortk.viewer.recorded import RecordedView, RecordedWorld
from behaviortk.viewer.tree_frame import frame_from_sim

ROOT = Path(__file__).resolve().parents[1]
GUARDS = ROOT / "definitions" / "guard_patrol.json"


def recorded(tmp_path: Path, ticks: int, **kw: object) -> tuple[Simulation, Path]:
    sim = Simulation(behaviortk.load(GUARDS), engine="batch")
    path = tmp_path / "t.parquet"
    writer = ParquetTraceWriter(str(path), sim, **kw)  # type: ignore[arg-type]
    for _ in range(ticks):
        sim.step()
        writer.on_tick(sim)
    writer.finish(sim)
    return sim, path


def test_the_replayed_leaf_forces_are_the_live_ones(tmp_path: Path) -> None:
    sim, path = recorded(tmp_path, 40)
    rec = open_recording(path)
    view = RecordedView(rec, RecordedWorld(rec), rec.state(39))
    live = sim.contributions
    assert set(view.contributions) == {g for g in sim.trees}  # every group with a tree
    for group, leaves in live.items():
        assert sorted(view.contributions[group]) == sorted(leaves), group
        for k, (rows, forces) in leaves.items():
            got_rows, got = view.contributions[group][k]
            assert np.array_equal(got_rows, np.asarray(rows))
            np.testing.assert_allclose(got, np.asarray(forces), rtol=1e-6)  # float32
    for row in range(sim.agents.n):  # the tree panel's dials: the same per leaf
        a, b = frame_from_sim(sim, row), frame_from_sim(view, row)
        if a is not None:
            np.testing.assert_allclose(b.forces, a.forces, rtol=1e-6, equal_nan=True)


def test_left_out_on_request_and_a_damaged_column_is_refused(tmp_path: Path) -> None:
    _, path = recorded(tmp_path, 5, leaf_forces=False)
    assert "leaf_force" not in pq.read_schema(path).names
    rec = open_recording(path)
    assert RecordedView(rec, RecordedWorld(rec), rec.state(4)).contributions == {}
    _, path = recorded(tmp_path, 5)
    table = pq.read_table(path)
    short = pa.array([[1.0]] * table.num_rows, type=pa.list_(pa.float32()))
    bad = table.set_column(table.schema.get_field_index("leaf_force"), "leaf_force", short)
    damaged = tmp_path / "damaged.parquet"
    pq.write_table(bad.replace_schema_metadata(pq.read_metadata(path).metadata), damaged)
    with pytest.raises(TraceError, match="leaf_force holds 1 numbers, not"):
        open_recording(damaged).state(0)


def test_run_records_them_by_default_and_no_leaf_forces_leaves_them_out(
    tmp_path: Path,
) -> None:
    on, off = tmp_path / "on.parquet", tmp_path / "off.parquet"
    args = ["run", str(GUARDS), "--headless", "--ticks", "3", "--trace"]
    assert main([*args, str(on)]) == 0
    assert main([*args, str(off), "--no-leaf-forces"]) == 0
    assert "leaf_force" in pq.read_schema(on).names
    assert "leaf_force" not in pq.read_schema(off).names
