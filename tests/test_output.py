"""Nothing lost: no command writes over its input, and no output is ever left half-written.

``behaviortk/files.py`` is the one door every writer uses: ``check_not_input``
(same resolved path or same file on disk) and ``atomic_output`` (a temporary
file in the same directory renamed into place on success, removed on failure).
The first half tests the module, the second every writing command through
``behaviortk.cli.main``.
"""

from __future__ import annotations

import builtins
import errno
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from behaviortk import files
from behaviortk.cli import main
from behaviortk.files import OutputError, atomic_output, check_not_input

REFERENCE = Path(__file__).resolve().parent.parent / "definitions" / "evade_or_flock.json"
ENOSPC = os.strerror(errno.ENOSPC)


class FullDisk:
    """A file whose disk fills after ``room`` more bytes or characters: then ENOSPC."""

    def __init__(self, real: Any, room: int) -> None:
        self.real = real
        self.room = room

    def write(self, data: Any) -> int:
        if len(data) > self.room:
            self.real.write(data[: self.room])
            self.room = 0
            raise OSError(errno.ENOSPC, ENOSPC)
        self.room -= len(data)
        return int(self.real.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def __enter__(self) -> FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.real.close()


def fill_disk_after(monkeypatch: pytest.MonkeyPatch, room: int) -> None:
    """Every file ``atomic_output`` opens from now on runs out of space after ``room``."""
    real_open = builtins.open
    monkeypatch.setattr(
        files, "open", lambda *a, **k: FullDisk(real_open(*a, **k), room), raising=False
    )


def temp_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# ------------------------------------------------------------------ the module


def test_success_replaces_the_file_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    with atomic_output(target) as out:
        out.write("new\n")
        assert target.read_text() == "old"  # untouched until the new one is complete
        assert len(temp_files(tmp_path)) == 1
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


@pytest.mark.parametrize("error", [RuntimeError("midway"), KeyboardInterrupt()])
def test_a_failure_midway_keeps_the_old_file_and_removes_the_temp(
    tmp_path: Path, error: BaseException
) -> None:
    target = tmp_path / "out.bin"
    target.write_bytes(b"previous good output")
    with pytest.raises(type(error)), atomic_output(target, "wb") as out:
        out.write(b"half of the new")
        raise error
    assert target.read_bytes() == b"previous good output"
    assert temp_files(tmp_path) == []


def test_a_failure_midway_with_no_previous_file_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), atomic_output(tmp_path / "new.txt") as out:
        out.write("half")
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []


def test_full_disk_while_writing_is_one_line_naming_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("old trace\n")
    fill_disk_after(monkeypatch, 10)
    with pytest.raises(OutputError) as caught, atomic_output(target, what="trace") as out:
        out.write("x" * 100)
    assert str(caught.value) == f"cannot write trace {target}: {ENOSPC}"
    assert caught.value.code == 1
    assert target.read_text() == "old trace\n"
    assert temp_files(tmp_path) == []


def test_full_disk_when_syncing_is_caught_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, ENOSPC)

    monkeypatch.setattr(files.os, "fsync", no_space)
    target = tmp_path / "a.txt"
    with pytest.raises(OutputError, match="No space left on device"), atomic_output(target) as f:
        f.write("text")
    assert list(tmp_path.iterdir()) == []


def test_the_mode_of_the_replaced_file_is_kept_and_new_files_follow_the_umask(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "kept.txt"
    kept.write_text("old")
    kept.chmod(0o640)
    with atomic_output(kept) as out:
        out.write("new")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    umask = os.umask(0o022)
    os.umask(umask)
    fresh = tmp_path / "fresh.txt"
    with atomic_output(fresh) as out:
        out.write("new")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask


def test_a_symlinked_output_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with atomic_output(link) as out:
        out.write("new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_device_is_written_in_place_and_a_directory_refused(tmp_path: Path) -> None:
    with atomic_output("/dev/null") as out:
        out.write("discarded")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    directory = pytest.raises(OutputError, match=f"cannot write output {tmp_path}: Is a directory")
    with directory, atomic_output(tmp_path) as out:
        out.write("x")


def test_parents_are_created_only_when_asked(tmp_path: Path) -> None:
    missing = pytest.raises(OutputError, match="No such file or directory")
    with missing, atomic_output(tmp_path / "a" / "b.txt") as out:
        out.write("x")
    with atomic_output(tmp_path / "a" / "b.txt", parents=True) as out:
        out.write("x")
    assert (tmp_path / "a" / "b.txt").read_text() == "x"


def same_file_spellings(tmp_path: Path, source: Path) -> list[str]:
    """Other names of ``source``: relative, ``./``, ``..``, a symlink, a hard link."""
    (tmp_path / "sub").mkdir(exist_ok=True)
    link = tmp_path / f"link-{source.name}"
    link.symlink_to(source)
    hard = tmp_path / f"hard-{source.name}"
    os.link(source, hard)
    return [
        str(source),
        source.name,
        f"./{source.name}",
        f"sub/../{source.name}",
        str(link),
        str(hard),
    ]


def test_check_not_input_catches_every_spelling_of_an_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "scene.json"
    source.write_text("{}")
    for spelling in same_file_spellings(tmp_path, source):
        with pytest.raises(OutputError) as caught:
            check_not_input(spelling, [str(source)], "trace")
        assert caught.value.code == 2
        assert str(caught.value) == (
            f"refusing to write trace {spelling}: it is the input file {source}"
        )
    check_not_input(tmp_path / "other.json", [source])  # another file, or one not there yet
    (tmp_path / "copy.json").write_text("{}")
    check_not_input(tmp_path / "copy.json", [source])  # equal bytes are not the same file


# ------------------------------------------------------------- every command


@pytest.fixture(autouse=True)
def shared_window() -> None:
    """Render into the viewer tests' one hidden window: made here first at its size,
    so the tests that measure it later find the size they expect."""
    from tests.viewer_support import window

    window()


WRITERS = ("run", "run-parquet", "tree", "render-png", "render-gif", "demo")


def argv_writing(command: str, source: str, out: str) -> list[str]:
    """A command line of ``command`` reading ``source`` and writing ``out``."""
    if command in ("run", "run-parquet"):
        return ["run", source, "--headless", "--ticks", "3", "--trace", out]
    if command == "tree":
        return ["tree", source, "--group", "prey", "--dot", out]
    if command.startswith("render"):
        return ["render", source, "--ticks", "2", "--every", "1", "--out", out]
    if command == "demo":
        return ["demo", "--headless", "--ticks", "2", "--every", "1", "--out", out]
    raise AssertionError(command)


OUT_SUFFIX = {"run": ".jsonl", "tree": ".dot", "render-png": ".png", "render-gif": ".gif"}
OUT_SUFFIX["run-parquet"] = ".parquet"
OUT_SUFFIX["demo"] = ".gif"


@pytest.mark.parametrize("command", WRITERS)
def test_no_command_writes_over_its_input(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    # the input carries the output's suffix so that render accepts every spelling of it
    source = tmp_path / f"scene{OUT_SUFFIX[command]}"
    shutil.copyfile(REFERENCE, source)
    before = source.read_bytes()
    if command == "demo":
        monkeypatch.setattr("behaviortk.commands.demo.DEMO_FILE", source)
    for spelling in same_file_spellings(tmp_path, source):
        assert main(argv_writing(command, str(source), spelling)) == 2, spelling
        err = capsys.readouterr().err.splitlines()
        assert err[-1] == (
            f"behaviortk: error: refusing to write {what_of(command)} {spelling}: "
            f"it is the input file {source}"
        )
        assert source.read_bytes() == before
        assert temp_files(tmp_path) == []


def what_of(command: str) -> str:
    return {"run": "trace", "run-parquet": "trace", "tree": "dot file"}.get(command, "image")


@pytest.mark.parametrize("command", WRITERS)
def test_a_full_disk_keeps_the_previous_output_and_says_so_in_one_line(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    out = tmp_path / f"out{OUT_SUFFIX[command]}"
    out.write_bytes(b"the previous good output")
    fill_disk_after(monkeypatch, 20_000 if command == "run" else 64)  # the trace: a few ticks in
    # (a Parquet trace writes its magic bytes at once, its rows when the run ends: 64 is enough)
    assert main(argv_writing(command, str(REFERENCE), str(out))) == 1
    err = capsys.readouterr().err
    line = f"behaviortk: error: cannot write {what_of(command)} {out}: {ENOSPC}"
    assert err.splitlines()[-1] == line
    assert "Traceback" not in err
    assert out.read_bytes() == b"the previous good output"
    assert temp_files(tmp_path) == []


def test_a_render_failing_midway_keeps_the_previous_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    import behaviortk.viewer.render as render_module

    real = render_module.frame_image
    calls = []

    def breaks_on_the_third_frame(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("the GPU went away")
        return real(*args, **kwargs)

    monkeypatch.setattr(render_module, "frame_image", breaks_on_the_third_frame)
    out = tmp_path / "anim.gif"
    out.write_bytes(b"previous gif")
    argv = ["render", str(REFERENCE), "--ticks", "4", "--every", "1", "--out", str(out)]
    assert main(argv) == 1
    assert "RuntimeError: the GPU went away" in capsys.readouterr().err
    assert out.read_bytes() == b"previous gif"
    assert temp_files(tmp_path) == []


def test_schema_out_writes_the_schema_and_stdout_stays_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from behaviortk.format.schema import schema_text

    out = tmp_path / "s.json"
    assert main(["schema", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == schema_text()
    assert capsys.readouterr().out == f"wrote {out}\n"
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == schema_text()
    out.write_text("old schema")
    fill_disk_after(monkeypatch, 100)
    assert main(["schema", "--out", str(out)]) == 1
    assert capsys.readouterr().err == f"behaviortk: error: cannot write schema {out}: {ENOSPC}\n"
    assert out.read_text() == "old schema"
    assert temp_files(tmp_path) == []


def test_the_demo_gif_shows_the_selected_preys_tree_by_action(tmp_path: Path) -> None:
    """The GIF opens as the window does: prey-14's tree panel beside the scene (its running
    boxes amber) and agents coloured by action (flock's colour, not the prey group's blue)."""
    import numpy as np
    from PIL import Image

    from behaviortk.viewer import palette
    from behaviortk.viewer.scene import action_color

    out = tmp_path / "demo.gif"
    assert main(["demo", "--headless", "--ticks", "3", "--every", "1", "--out", str(out)]) == 0
    frame = Image.open(out)
    frame.seek(frame.n_frames - 1)
    rgb = np.asarray(frame.convert("RGB")).astype(int)

    def count(region: Any, colour: Any) -> int:
        return int(np.all(np.abs(region - np.array(colour[:3])) <= 24, axis=2).sum())

    assert count(rgb[:, 680:], palette.NODE_RUNNING) > 500  # the tree panel
    world = rgb[:, :660]
    assert count(world, action_color(1)) > 50  # flocking prey (evade 0, flock 1, wander 2)
    assert count(world, (0x4A, 0xA3, 0xFF)) < 20  # no prey in its group colour
