"""The snapshot file: one zip archive of a JSON manifest and NumPy arrays, read safely.

``manifest.json`` comes first (the format name and version, scalars, the definition's
text, the names of the arrays' owners); every array is a member ``<name>.npy`` in NumPy's
own format (``numpy.lib.format``). Members are stored, not compressed: saving and loading
are a copy each, a zip tool lists and extracts the parts, and a member's size on disk is
its size in memory (nothing can inflate). Why this and not pickle (``np.save`` of
objects, ``shelve``): a snapshot is a file a player may share, and reading one must never
run code; the manifest is plain JSON and arrays are read with ``allow_pickle=False``, so
a member of object dtype is refused, not unpickled.

Reading checks everything it can before anything is built, and every failure is one
``SnapshotError`` naming the file and what is wrong: empty, not a zip archive (a JSON
file, a trace), truncated (the zip directory is at the end, so any cut loses it), a
damaged member (each carries a CRC-32, checked as it is read), a zip without the
manifest, another format, a newer version, a missing manifest key, an array that is
missing, unreadable, of the wrong type or shape.

Writing goes through ``files.atomic_output``: a temporary file renamed into place, so a
crash or a full disk never leaves half a snapshot, and an existing file is replaced only
once the new one is complete. A file that is there and is not a snapshot (the
definition, a trace) is never replaced: ``Simulation.save`` refuses it.
"""

from __future__ import annotations

import io
import json
import os
import struct
import zipfile
import zlib
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import numpy as np

from behaviortk.errors import SnapshotError
from behaviortk.files import OutputError, atomic_output

FORMAT = "behaviortk-snapshot"
VERSION = 1
"""The format version this behaviortk writes and reads; a file of another is refused."""

MANIFEST = "manifest.json"
SUFFIX = ".btks"
"""The suffix ``run --save-every`` gives snapshots (any name works)."""

_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    struct.error,
    zlib.error,
    NotImplementedError,  # an unknown zip version or compression
    RuntimeError,  # an encrypted member
)
_LOCAL_HEADER = b"PK\x03\x04"


def is_snapshot(path: str | Path) -> bool:
    """Whether ``path`` starts as a snapshot does (a zip whose first member is the manifest)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(30 + len(MANIFEST))
    except OSError:
        return False
    return head[:4] == _LOCAL_HEADER and head[30:] == MANIFEST.encode()


def checked_path(path: Any) -> str:
    """``path`` as a string: a non-empty ``str`` or ``os.PathLike`` of one, else a
    ``SnapshotError`` naming what was given (``None``, a number, bytes)."""
    text = os.fspath(path) if isinstance(path, str | os.PathLike) else None
    if not isinstance(text, str) or not text:
        raise SnapshotError(f"a snapshot's path must be a file name (str or Path), got {path!r}")
    return text


def write(path: str | Path, manifest: dict[str, Any], arrays: dict[str, np.ndarray]) -> int:
    """Write ``manifest`` and ``arrays`` to ``path`` (atomically); returns the bytes written.

    ``SnapshotError`` when ``path`` holds something that is not a snapshot, or cannot be
    written."""
    path = checked_path(path)
    if os.path.lexists(path) and not os.path.isdir(path) and not is_snapshot(path):
        raise SnapshotError(
            f"refusing to overwrite {os.fspath(path)}: it is not a behaviortk snapshot "
            "(nothing was written)"
        )
    text = json.dumps({**manifest, "arrays": sorted(arrays)}, separators=(",", ":"))
    try:
        with (
            atomic_output(path, "wb", what="snapshot") as out,
            zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as archive,
        ):
            archive.writestr(MANIFEST, text)
            for name, array in arrays.items():
                data = np.ascontiguousarray(array)
                with archive.open(f"{name}.npy", "w", force_zip64=data.nbytes > 2**30) as fh:
                    np.lib.format.write_array(fh, data, allow_pickle=False)
    except OutputError as exc:
        raise SnapshotError(str(exc)) from None
    return os.path.getsize(path)


class SavedState(ABC):
    """A snapshot's manifest and arrays, read with checks: the part restoring reads, whether
    they come from a file (``SnapshotFile``) or from memory (``snapshot_memory.Capture``)."""

    path = ""
    manifest: dict[str, Any]

    def error(self, what: str) -> SnapshotError:
        return SnapshotError(f"{self.path}: {what}")

    @abstractmethod
    def raw(self, name: str) -> np.ndarray:
        """Array ``name`` as stored, not checked yet (a copy: restoring writes into it)."""

    def key(self, name: str, kind: type | tuple[type, ...], where: Any = None) -> Any:
        """Manifest value ``name`` (of ``where``, a part of it: the top level by default),
        which must be of ``kind`` (``bool`` is not an ``int``)."""
        scope = self.manifest if where is None else where
        if not isinstance(scope, dict) or name not in scope:
            raise self.error(f"the manifest has no {name!r}")
        value = scope[name]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
            wanted = " or ".join(k.__name__ for k in kinds)
            raise self.error(f"the manifest's {name!r} must be {wanted}, got {value!r}")
        return value

    def array(self, name: str, like: np.ndarray | None = None, rows: int | None = None) -> Any:
        """Array ``name`` as a writable C-contiguous array of its own. ``like``: it must have
        that dtype and, with ``rows`` first, the same trailing shape (``like``'s whole shape
        without ``rows``)."""
        array = self.raw(name)
        if array.dtype.hasobject or array.dtype.kind not in "biuf":
            raise self.error(f"the array {name} holds {array.dtype}; snapshots hold numbers only")
        if like is not None:
            shape = like.shape if rows is None else (rows, *like.shape[1:])
            if array.dtype != like.dtype or array.shape != shape:
                raise self.error(
                    f"the array {name} is {array.dtype} {list(array.shape)}, "
                    f"expected {like.dtype} {list(shape)}"
                )
        return np.require(array, requirements=["C", "W"])


class SnapshotFile(SavedState):
    """A snapshot read into memory: its manifest, checked, and its arrays, read when asked."""

    def __init__(self, path: str | Path) -> None:
        self.path = checked_path(path)
        data = self._bytes()
        try:
            self.archive = zipfile.ZipFile(io.BytesIO(data))
            names = self.archive.namelist()
        except _ZIP_ERRORS as exc:
            raise self.error(f"damaged or truncated snapshot ({_reason(exc)})") from None
        if MANIFEST not in names:
            raise self.error("not a behaviortk snapshot (a zip archive without manifest.json)")
        for info in self.archive.infolist():
            if info.compress_type != zipfile.ZIP_STORED:
                raise self.error(
                    f"member {info.filename} is compressed; snapshots hold stored members only"
                )
        text = self._member(MANIFEST)  # a damaged member is its own error, not "not JSON"
        try:
            manifest = json.loads(text.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise self.error(f"its manifest is not JSON ({_reason(exc)})") from None
        self.manifest = self._checked(manifest)
        self.members = set(names)

    def _bytes(self) -> bytes:
        try:
            with open(self.path, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            raise self.error("no such file") from None
        except IsADirectoryError:
            raise self.error("is a directory, not a snapshot") from None
        except OSError as exc:
            raise self.error(f"cannot read: {exc.strerror or exc}") from None
        if not data:
            raise self.error("not a behaviortk snapshot (an empty file)")
        if data[:4] != _LOCAL_HEADER:
            kind = "a JSON text" if data.lstrip()[:1] in (b"{", b"[") else "not a zip archive"
            raise self.error(f"not a behaviortk snapshot ({kind})")
        return data

    def _member(self, name: str) -> bytes:
        try:
            return self.archive.read(name)
        except KeyError:
            raise self.error(f"the array {name.removesuffix('.npy')} is missing") from None
        except (*_ZIP_ERRORS, OSError, ValueError) as exc:
            raise self.error(f"damaged snapshot: member {name} ({_reason(exc)})") from None

    def _checked(self, manifest: Any) -> dict[str, Any]:
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            found = manifest.get("format") if isinstance(manifest, dict) else None
            raise self.error(f"not a behaviortk snapshot (format {found!r})")
        version = manifest.get("version")
        if version != VERSION:
            by = manifest.get("behaviortk")
            raise self.error(
                f"snapshot format version {version!r}"
                + (f" (saved by behaviortk {by})" if isinstance(by, str) else "")
                + f"; this behaviortk reads version {VERSION}"
            )
        return manifest

    def raw(self, name: str) -> np.ndarray:
        data = self._member(f"{name}.npy")
        try:
            array: np.ndarray = np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
        except (ValueError, OSError, EOFError, SyntaxError) as exc:
            raise self.error(f"the array {name} cannot be read ({_reason(exc)})") from None
        return array


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]
