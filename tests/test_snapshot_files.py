"""Snapshot files that are damaged, truncated, foreign or crafted are a ``SnapshotError``
naming what is wrong (issue 26), never another exception; saving never leaves half a
file and never replaces a file that is not a snapshot."""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_snapshot import GAME, game_turn

from behaviortk import SimulationError, SnapshotError
from behaviortk.sim.simulation import Simulation
from behaviortk.sim.snapshot_file import MANIFEST, SnapshotFile

ROOT = Path(__file__).resolve().parent.parent
GUARDS = ROOT / "definitions" / "guard_patrol.json"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """guard_patrol (waits, repeat, blackboards, memory) saved at tick 40 on py_trees."""
    sim = Simulation(GUARDS, engine="py_trees")
    sim.run(40)
    path = tmp_path_factory.mktemp("snap") / "guards.btks"
    sim.save(path)
    return path


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A game's run (heading smoother, number, string and point keys) saved at tick 12."""
    from behaviortk.format.loader import load_text

    sim = Simulation(load_text(json.dumps(GAME)), engine="batch")
    for t in range(12):
        game_turn(sim, t)
        sim.step()
    path = tmp_path_factory.mktemp("snap") / "game.btks"
    sim.save(path)
    return path


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def rewrite(
    src: Path,
    dst: Path,
    manifest: Callable[[dict[str, Any]], None] | None = None,
    arrays: dict[str, Any] | None = None,
) -> Path:
    """A copy of ``src`` with its manifest edited in place by ``manifest`` and the arrays
    in ``arrays`` replaced (None: removed; bytes: written as they are)."""
    parts = members(src)
    head = json.loads(parts.pop(MANIFEST))
    if manifest is not None:
        manifest(head)
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(MANIFEST, json.dumps(head))
        for name, data in parts.items():
            key = name.removesuffix(".npy")
            if arrays is not None and key in arrays:
                value = arrays[key]
                if value is None:
                    continue
                if not isinstance(value, bytes):
                    out = io.BytesIO()
                    np.lib.format.write_array(out, np.asarray(value), allow_pickle=True)
                    value = out.getvalue()
                data = value
            archive.writestr(name, data)
    return dst


def refused(path: Path, *words: str) -> str:
    """Restoring ``path`` raises a ``SnapshotError`` naming the file and ``words``."""
    with pytest.raises(SnapshotError) as caught:
        Simulation.restore(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    for word in words:
        assert word in message, message
    return message


def test_the_saved_file_restores(saved: Path) -> None:
    assert Simulation.restore(saved).tick == 40


def test_truncated_anywhere(saved: Path, tmp_path: Path) -> None:
    data = saved.read_bytes()
    size = len(data)
    manifest_end = data.index(b"PK\x03\x04", 4)  # the first array's local header
    cuts = [1, 4, 20, 31, 100, manifest_end - 3, manifest_end + 40, size // 2, size - 200]
    cuts += [size - 22, size - 1]  # in the central directory, in the end record
    for cut in cuts:
        path = tmp_path / f"cut{cut}.btks"
        path.write_bytes(data[:cut])
        refused(path)


def test_a_flipped_byte_is_refused_or_harmless(saved: Path, tmp_path: Path) -> None:
    """Member data carries a CRC-32; a flip in a zip header field nothing reads (a time
    stamp, a local copy of the CRC) changes nothing: restored, the run is the same."""
    data = saved.read_bytes()
    want = Simulation.restore(saved)
    want.run(3)
    positions = [*range(0, 64), *range(len(data) // 3, len(data), len(data) // 40)]
    positions += list(range(len(data) - 120, len(data)))
    refusals = 0
    for at in positions:
        flipped = bytearray(data)
        flipped[at] ^= 0x5A
        path = tmp_path / "flipped.btks"
        path.write_bytes(bytes(flipped))
        try:
            sim = Simulation.restore(path)
        except SnapshotError as exc:
            assert str(exc).startswith(f"{path}: ")
            refusals += 1
            continue
        sim.run(3)
        np.testing.assert_array_equal(sim.agents.pos, want.agents.pos)
    assert refusals > len(positions) // 2


def test_not_snapshots(tmp_path: Path) -> None:
    empty = tmp_path / "empty.btks"
    empty.write_bytes(b"")
    refused(empty, "not a behaviortk snapshot", "empty")
    refused(GUARDS, "not a behaviortk snapshot", "JSON")
    png = ROOT / "examples" / "viewer.png"
    refused(png, "not a behaviortk snapshot", "not a zip archive")
    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as archive:
        archive.writestr("readme.txt", "hello")
    refused(foreign, "without manifest.json")
    refused(tmp_path / "missing.btks", "no such file")
    refused(tmp_path, "is a directory")


def test_other_formats_and_versions(saved: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.btks"
    refused(rewrite(saved, path, lambda m: m.update(version=2)), "version 2", "reads version 1")
    refused(rewrite(saved, path, lambda m: m.update(format="other")), "format 'other'")
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(MANIFEST, "{not json")
    refused(path, "manifest is not JSON")
    parts = members(saved)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    refused(path, "compressed")


REQUIRED = [
    "definition", "seed", "engine", "tick", "next_id", "agents", "groups", "names",
    "smoother_next", "memory", "trees", "events", "watched", "pointer", "accumulated",
]  # fmt: skip


@pytest.mark.parametrize("key", REQUIRED)
def test_a_manifest_missing_a_key(saved: Path, tmp_path: Path, key: str) -> None:
    path = rewrite(saved, tmp_path / "s.btks", lambda m: m.pop(key))
    refused(path, f"no {key!r}")


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda m: m.update(tick=-1), ["'tick' must be >= 0"]),
        (lambda m: m.update(tick=True), ["'tick' must be int"]),
        (lambda m: m.update(seed="7"), ["'seed' must be int"]),
        (lambda m: m.update(agents=4), ["'names' must be 4 strings"]),
        (lambda m: m.update(next_id=2), ["agent ids must be in 0..1"]),
        (lambda m: m.update(next_id=2**40), ["next_id"]),
        (lambda m: m.update(groups=["guards"]), ["groups"]),
        (lambda m: m.update(names=["a", "b", 3]), ["'names'"]),
        (lambda m: m.update(engine="tensor"), ["engine 'tensor'"]),
        (lambda m: m.update(pointer=[1.0]), ["'pointer'"]),
        (lambda m: m.update(accumulated=-1.0), ["'accumulated'"]),
        (lambda m: m.update(events=[[1, "x", "spawn"]]), ["pending event"]),
        (lambda m: m.update(watched=[[99, []]]), ["watched agent"]),
        (lambda m: m.update(watched=[[0, [9]]]), ["watched agent 0"]),
        (lambda m: m["trees"][0].update(group="x"), ["trees for groups"]),
        (lambda m: m["trees"][0]["arrays"].append("node1.count"), ["unexpected ['node1.count']"]),
        (lambda m: m["trees"][0]["board"][0].update(key="y"), ["blackboard keys"]),
        (lambda m: m["memory"][0].update(leaf=99), ["no such leaf"]),
        (lambda m: m.update(definition="{}"), ["saved definition does not validate"]),
        (
            lambda m: m.update(definition=m["definition"].replace('"wait"', '"sleep"', 1)),
            ["saved definition does not validate", "sleep"],
        ),
    ],
)
def test_a_manifest_with_bad_values(
    saved: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], None], words: list[str]
) -> None:
    refused(rewrite(saved, tmp_path / "s.btks", edit), *words)


@pytest.mark.parametrize(
    ("key", "values"),
    [(0, [1]), (0, [True, [1, 2]]), (2, [{"a": 1}]), (2, [1.5]), (0, [1.0]), (2, [None])],
)
def test_blackboard_values_of_the_wrong_type(
    game: Path, tmp_path: Path, key: int, values: list[Any]
) -> None:
    """Key 0 is ``angry`` (a bool), 2 ``note`` (a string)."""

    def edit(m: dict[str, Any]) -> None:
        m["trees"][0]["board"][key]["values"] = values

    refused(rewrite(game, tmp_path / "s.btks", edit), "blackboard key")


def test_blackboard_rows_out_of_range(game: Path, tmp_path: Path) -> None:
    f = SnapshotFile(game)
    ids = f.array("tree0/board0")
    xy = f.array("tree0/board1")
    half = xy.copy()
    half[0] = [np.nan, 1.0]
    path = tmp_path / "s.btks"
    refused(rewrite(game, path, arrays={"tree0/board0": ids + 5}), "value indices")
    refused(rewrite(game, path, arrays={"tree0/board1": half}), "finite or unset")


def test_the_game_arrays(game: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.btks"
    refused(rewrite(game, path, arrays={"smoother": np.zeros((2, 2))}), "smoother")
    refused(rewrite(game, path, lambda m: m.update(smoother_next=4)), "smoother's position")
    assert Simulation.restore(game).agents.smoother is not None


def test_arrays_of_the_wrong_shape_or_type(saved: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.btks"
    pos = SnapshotFile(saved).array("agents/pos")
    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({"agents/pos": pos[:2]}, ["agents/pos", "expected float64 [3, 2]"]),
        ({"agents/pos": pos.astype(np.float32)}, ["agents/pos", "float32"]),
        ({"agents/pos": np.array([object()] * 6, dtype=object)}, ["agents/pos", "cannot be read"]),
        ({"agents/pos": np.array(["a", "b"])}, ["agents/pos", "numbers only"]),
        ({"agents/pos": b"\x93NUMPY garbage"}, ["agents/pos", "cannot be read"]),
        ({"agents/pos": None}, ["agents/pos is missing"]),
        ({"agents/ids": np.array([0, 0, 1])}, ["ids repeat"]),
        ({"agents/group": np.array([1, 0, 0])}, ["order"]),
        ({"agents/group": np.array([0, 0, 7])}, ["out of range"]),
        ({"tree0/status": np.full((40, 3), 9, dtype=np.int8)}, ["tree0/status"]),
        ({"tree0/current": np.full((40, 3), 9, dtype=np.int16)}, ["tree0/current"]),
        ({"memory/0": np.zeros(7)}, ["memory/0"]),
    ]
    for replaced, words in cases:
        refused(rewrite(saved, path, arrays=replaced), *words)


def test_status_codes_and_children_out_of_range(saved: Path, tmp_path: Path) -> None:
    f = SnapshotFile(saved)
    status, current = f.array("tree0/status"), f.array("tree0/current")
    bad_status = status.copy()
    bad_status[0, 0] = 7
    bad_current = current.copy()
    bad_current[0, 0] = 99
    path = tmp_path / "s.btks"
    refused(rewrite(saved, path, arrays={"tree0/status": bad_status}), "status codes")
    refused(rewrite(saved, path, arrays={"tree0/current": bad_current}), "children")


# ------------------------------------------------------------------------------ saving
def test_save_writes_exactly_its_path_and_replaces_a_snapshot(saved: Path, tmp_path: Path) -> None:
    sim = Simulation(GUARDS, engine="batch")
    path = tmp_path / "slot.btks"
    size = sim.save(path)
    assert size == path.stat().st_size and sorted(os.listdir(tmp_path)) == ["slot.btks"]
    sim.run(5)
    sim.save(path)  # a save slot: replaced
    assert Simulation.restore(path).tick == 5
    assert sorted(os.listdir(tmp_path)) == ["slot.btks"]


def test_save_never_replaces_what_is_not_a_snapshot(tmp_path: Path) -> None:
    definition = tmp_path / "guards.json"
    definition.write_text(GUARDS.read_text())
    sim = Simulation(definition)
    with pytest.raises(SnapshotError, match=r"refusing to overwrite .*not a behaviortk snapshot"):
        sim.save(definition)
    assert definition.read_text() == GUARDS.read_text()
    assert sorted(os.listdir(tmp_path)) == ["guards.json"]


def test_save_to_a_place_it_cannot_write(tmp_path: Path) -> None:
    sim = Simulation(GUARDS)
    with pytest.raises(SnapshotError, match="cannot write snapshot"):
        sim.save(tmp_path / "no" / "such" / "dir" / "s.btks")


def test_snapshot_errors_are_simulation_errors() -> None:
    assert issubclass(SnapshotError, SimulationError)


def test_an_engine_that_cannot_export_its_state(tmp_path: Path) -> None:
    from types import SimpleNamespace

    sim = Simulation(GUARDS)
    sim._engine = SimpleNamespace(name="custom")
    with pytest.raises(SnapshotError, match="engine 'custom' does not export its state"):
        sim.save(tmp_path / "s.btks")
    assert not os.listdir(tmp_path)


def test_a_damaged_manifest_is_named_damaged_not_json(saved: Path, tmp_path: Path) -> None:
    """A flipped byte inside manifest.json fails its CRC-32: the message says the member is
    damaged, once, and names the file once (it said "its manifest is not JSON (<path>: ...)")."""
    data = bytearray(saved.read_bytes())
    start = data.index(b"manifest.json") + len(b"manifest.json")  # the member's data follows
    data[start + 10] ^= 0x5A
    path = tmp_path / "manifest-flipped.btks"
    path.write_bytes(bytes(data))
    message = refused(path, "damaged snapshot: member manifest.json", "CRC")
    assert "not JSON" not in message and message.count(str(path)) == 1, message


@pytest.mark.parametrize("path", [None, 5, b"slot.btks", ""])
def test_a_path_that_is_not_a_file_name_is_a_snapshot_error(
    path: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """save / restore of None, a number, bytes or '' say so (they raised TypeError or
    AttributeError, or named the file '')."""
    monkeypatch.chdir(tmp_path)  # a bytes path would be written here
    sim = Simulation(GUARDS)
    for call in (lambda: sim.save(path), lambda: Simulation.restore(path)):
        with pytest.raises(SnapshotError, match="must be a file name") as caught:
            call()
        assert repr(path) in str(caught.value)
    assert list(tmp_path.iterdir()) == []
