"""Writing an output file: never over one of its inputs, never half-written.

Every command that writes a file goes through here (``run --trace``, ``render --out``,
``demo --out``, ``tree --dot``, ``schema --out``, ``new``), and so does the library
(``studies/results.py``'s sweep results, the viewer's saved tuning); a new writer should too.

``check_not_input(out, inputs)`` refuses an output that is one of the command's input
files: the same path once resolved (``./x.json`` and ``x.json``, symlinks) or the same
file on disk (``os.path.samefile``: same device and inode, so hard links too).

``atomic_output(path, mode)`` does that check, then yields a file object on a temporary
file in the target's directory (``.NAME.<random>.tmp``, so the rename cannot cross a
file system). When the block ends normally the file is flushed, synced and renamed over
the target with ``os.replace``: readers see the old file or the complete new one, never a
truncated one. When the block raises (an error, ^C), the temporary file is removed and
the target is left exactly as it was. A symlinked target is written through (the file it
points to is replaced, the link kept); a target that cannot be replaced because it is
not a regular file (``/dev/stdout``, a FIFO) is written in place.

``write_new(path, text)`` creates a file that must not exist yet (``behaviortk new``):
the complete text is written to a temporary file and hard-linked to the target, which
fails if anything is there, so an existing file is never touched, even by a race.

Failures are ``OutputError`` with one line for the user and an exit code, which
``behaviortk.cli.main`` prints as ``behaviortk: error: MESSAGE``:

- 2 (a usage error): ``refusing to write trace x.json: it is the input file ./x.json``;
- 1: ``cannot write trace out.jsonl: No space left on device``. Any ``OSError`` that
  escapes the block counts as a failure to write the output, so keep other I/O out of it.

Stdlib only (a foundation: it imports nothing of behaviortk), since command modules
import this while the parser is built.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

StrPath = str | os.PathLike[str]

REFUSED = 2
"""Exit code when an output would overwrite an input (a usage error)."""
FAILED = 1
"""Exit code when the output could not be written."""


class OutputError(Exception):
    """An output refused or not written: ``str(exc)`` is one line, ``exc.code`` the exit code."""

    def __init__(self, message: str, code: int = FAILED) -> None:
        super().__init__(message)
        self.code = code


def same_file(a: StrPath, b: StrPath) -> bool:
    """``a`` and ``b`` name one file: equal resolved paths, or the same device and inode."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): not the same file
        return False


def check_not_input(out: StrPath, inputs: Iterable[StrPath], what: str = "output") -> None:
    """Raise ``OutputError`` (exit 2) when ``out`` is one of ``inputs``, naming both paths."""
    for source in inputs:
        if same_file(out, source):
            raise OutputError(
                f"refusing to write {what} {os.fspath(out)}: "
                f"it is the input file {os.fspath(source)}",
                REFUSED,
            )


def cannot_write(path: StrPath, exc: OSError, what: str = "output") -> OutputError:
    """The ``OutputError`` (exit 1) for an ``OSError`` while writing ``path``."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return OutputError(f"cannot write {what} {os.fspath(path)}: {reason}", FAILED)


def _create_temp(directory: str, name: str) -> tuple[int, str]:
    """A new file ``.NAME.<random>.tmp`` in ``directory`` (mode 0o666 less the umask).

    NAME is cut to 200 bytes: a target whose name nears the file system's 255 must
    not fail for its temporary's longer one."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    short = name.encode("utf-8", "surrogateescape")[:200].decode("utf-8", "ignore")
    for _ in range(100):
        tmp = os.path.join(directory, f".{short}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name for {name} in {directory}")


def _sync(fd: int) -> None:
    """``os.fsync``, except where the file system cannot (EINVAL/ENOTSUP: nothing to wait for)."""
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise


def _remove(path: str) -> None:
    with suppress(OSError):
        os.unlink(path)


@contextmanager
def atomic_output(
    path: StrPath,
    mode: str = "w",
    *,
    inputs: Iterable[StrPath] = (),
    what: str = "output",
    parents: bool = False,
) -> Iterator[IO[Any]]:
    """Yield a file to write ``path`` through a temporary file renamed into place on success.

    ``mode`` is ``"w"`` (UTF-8 text, ``\\n`` line ends) or ``"wb"``. ``inputs`` are the
    command's input files, refused as outputs; ``what`` names the output in messages
    (``trace``, ``image``, ...); ``parents`` creates missing parent directories.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    check_not_input(path, inputs, what)
    text: dict[str, Any] = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
    target = os.path.realpath(path)  # a symlink is written through, not replaced
    try:
        if parents:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        try:
            old: os.stat_result | None = os.stat(target)
        except FileNotFoundError:
            old = None
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise IsADirectoryError(21, "Is a directory", target)
        if old is not None and not stat.S_ISREG(old.st_mode):
            direct = open(target, mode, **text)  # noqa: SIM115 (a device or FIFO: no rename)
        else:
            direct = None
            fd, tmp = _create_temp(os.path.dirname(target), os.path.basename(target))
    except OSError as exc:
        raise cannot_write(path, exc, what) from exc
    if direct is not None:
        try:
            with direct:
                yield direct
        except OSError as exc:
            raise cannot_write(path, exc, what) from exc
        return
    try:
        with open(fd, mode, **text) as out:
            yield out
            out.flush()
            _sync(out.fileno())
        if old is not None:
            os.chmod(tmp, stat.S_IMODE(old.st_mode))
        os.replace(tmp, target)
    except BaseException as exc:
        _remove(tmp)
        if isinstance(exc, OSError):
            raise cannot_write(path, exc, what) from exc
        raise


def write_new(path: StrPath, text: str, what: str = "file") -> None:
    """Create ``path`` holding ``text`` (UTF-8); ``OutputError`` (exit 2) if it exists.

    Never replaces anything: the text goes to a temporary file next to it, which is
    then hard-linked to ``path`` (``os.link`` fails when the name is taken) and
    removed; where hard links are not supported, ``path`` is created exclusively.
    """
    target = os.fspath(path)
    if os.path.lexists(target):
        raise OutputError(
            f"refusing to overwrite {what} {target}: it exists (nothing was written)", REFUSED
        )
    directory = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = _create_temp(directory, os.path.basename(target))
    except OSError as exc:
        raise cannot_write(path, exc, what) from exc
    try:
        with open(fd, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            _sync(out.fileno())
        try:
            os.link(tmp, target)
        except FileExistsError:
            raise OutputError(
                f"refusing to overwrite {what} {target}: it exists (nothing was written)", REFUSED
            ) from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                raise
            with open(target, "x", encoding="utf-8", newline="\n") as direct:
                try:
                    direct.write(text)
                except BaseException:
                    _remove(target)  # ours, created just above: never leave half of it
                    raise
    except FileExistsError:
        raise OutputError(
            f"refusing to overwrite {what} {target}: it exists (nothing was written)", REFUSED
        ) from None
    except OSError as exc:
        raise cannot_write(path, exc, what) from exc
    finally:
        _remove(tmp)
