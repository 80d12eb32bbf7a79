"""The numba decorators every kernel uses (compiled on first call, cached on disk), and the
registration that lets compiled row loops call the package's formulas.

``error_model="numpy"``: a division by zero gives inf or nan as in NumPy
instead of raising; kernels guard their divisions as the NumPy code does, so
results match. No ``fastmath``: floating-point operations stay in the order
written (no reassociation, no fused multiply-add), which is what lets the
kernels reproduce the NumPy reference to the last bit where they follow its
order of operations.

**No stale kernels.** numba's own disk cache checks only the file that defines a
kernel, so a kernel that calls a helper in another module, or freezes a constant
imported from one (``HEADING_MIN_SPEED``, ``steering/kernels.py``'s), would keep
running the old value after that module changed. So every kernel is cached in a
folder named after a hash of the source of every behaviortk module the compiled
package imports, transitively (:func:`source_key`): change any of them and the
kernels compile afresh. The folder is under ``$NUMBA_CACHE_DIR``, else
``$XDG_CACHE_HOME`` or ``~/.cache`` (``behaviortk-kernels/<key>/``), so a package
installed read-only still caches its kernels (in the user's cache).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from numba import njit
from numba.core import config as numba_config
from numba.extending import overload, register_jitable

from behaviortk import vec

PACKAGE = Path(__file__).resolve().parents[1]

F = TypeVar("F", bound=Callable[..., Any])


_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(behaviortk(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)"
    r"|import[ \t]+(behaviortk(?:\.\w+)*))",
    re.MULTILINE,
)


def _imports(path: Path) -> set[Path]:
    """The behaviortk module files ``path`` imports anywhere in its source (inside functions
    too): ``from behaviortk.a import b`` counts ``a`` and, when it is a module, ``a.b``."""
    found: set[Path] = set()
    for module, names, plain in _IMPORT.findall(path.read_text(encoding="utf-8")):
        base = module or plain
        candidates = [base] + [
            f"{base}.{n.split()[0]}" for n in re.findall(r"\w+(?:\s+as\s+\w+)?", names)
        ]
        for name in candidates:
            parts = name.split(".")[1:]
            for candidate in (PACKAGE.joinpath(*parts).with_suffix(".py"),
                              PACKAGE.joinpath(*parts, "__init__.py")):  # fmt: skip
                if parts and candidate.is_file():
                    found.add(candidate)
    return found


def _defines_kernels(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return "behaviortk.jit" in text and path.parent.name != "jit"


def source_key() -> str:
    """A hash of every module that defines kernels and of every behaviortk module they import,
    transitively: what any kernel's maths may come from (formulas, helpers, frozen constants)."""
    todo = sorted(p for p in PACKAGE.rglob("*.py") if _defines_kernels(p))
    todo += sorted((PACKAGE / "jit").glob("*.py"))
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo.extend(_imports(path) - seen)
    digest = hashlib.sha256()
    for path in sorted(seen):
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    """Where the kernels of these sources are cached (see the module docstring)."""
    root = os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
    base = Path(root) if root else Path.home() / ".cache"
    return base / "behaviortk-kernels" / source_key()


CACHE_DIR = str(cache_dir())


def _cached(options: dict[str, Any], fn: F) -> F:
    """``njit(cache=True, **options)(fn)`` cached under :data:`CACHE_DIR` (numba picks a
    function's cache folder when it is decorated; its global setting is put back after)."""
    config: Any = numba_config
    saved = config.CACHE_DIR
    config.CACHE_DIR = CACHE_DIR
    try:
        return cast(F, njit(cache=True, **options)(fn))
    finally:
        config.CACHE_DIR = saved


def kernel(fn: F) -> F:
    """A compiled, disk-cached kernel."""
    return _cached({"nogil": True, "error_model": "numpy"}, fn)


def inline(fn: F) -> F:
    """A small helper called by kernels (compiled once per signature; LLVM inlines it)."""
    return _cached({"inline": "always", "error_model": "numpy"}, fn)


@overload(vec.select, jit_options={"error_model": "numpy"})
def _select(cond: Any, a: Any, b: Any) -> Any:
    """``vec.select`` on scalars: a ternary (both values are already computed, as on columns)."""

    def ternary(cond: Any, a: Any, b: Any) -> Any:
        return a if cond else b

    return ternary


def _register(fn: Callable[..., Any]) -> None:
    if getattr(fn, vec.INLINE, False):  # vec.inlined: numba inlines it at each call
        overload(fn, jit_options={"error_model": "numpy"}, strict=False, inline="always")(
            lambda *args: fn
        )
    else:
        register_jitable(error_model="numpy")(fn)


vec.on_formula(_register)
