"""Compiling generated source (a group's fused tree, ``engines/batch/fused.py``) with numba.

numba caches a compiled function beside the file it was written in, so the
source is written to a file named after its hash, once, under the kernels' cache
directory (``jit/compile.py``: keyed by the source of every formula the generated
code may call), and imported from there: a second run of the same tree
pays no compile time. Where that directory cannot be written (``CACHE_PROBLEM``), the
source is compiled in memory (no disk cache). Functions are also kept per process, by
source, so rebuilding a group (spawns, the cell-order re-sort) costs nothing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from numba import njit

from behaviortk.jit.compile import CACHE_DIR, CACHE_PROBLEM

HEADER = (
    "from numba import njit\n\n"
    "JIT = njit(cache=True, nogil=True, error_model='numpy', boundscheck=False)\n"
)
_functions: dict[str, Callable[..., Any]] = {}


def cache_dir() -> Path:
    """Where generated modules are written (see the module docstring): beside the kernels,
    under the hash of every formula's source, since generated code calls them."""
    return Path(CACHE_DIR) / "generated"


def _write_once(path: Path, text: str) -> bool:
    """``path`` holds ``text`` (written atomically if it did not); False if it cannot be written."""
    try:
        if path.exists() and path.read_text() == text:
            return True
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
        return True
    except OSError:
        return False


def compile_function(source: str, name: str) -> Callable[..., Any]:
    """Function ``name`` of module ``source``, compiled with numba (disk-cached when possible).

    ``source`` defines ``name`` undecorated; it is compiled as the package's
    kernels are (``jit/compile.py``: cached, ``error_model="numpy"``, no fastmath).
    """
    key = f"{name}\n{source}"
    found = _functions.get(key)
    if found is not None:
        return found
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    module_name = f"behaviortk_tree_{digest}"
    text = HEADER + source + f"\n\n{name} = JIT({name})\n"
    path = cache_dir() / f"{module_name}.py"
    if CACHE_PROBLEM is None and _write_once(path, text):
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # numba's cache finds the function's module by name
        spec.loader.exec_module(module)
        fn = getattr(module, name)
    else:  # no writable cache: compile in memory
        scope: dict[str, Any] = {"njit": njit}
        exec(compile(source, f"<{module_name}>", "exec"), scope)  # our own generated text
        fn = njit(nogil=True, error_model="numpy", boundscheck=False)(scope[name])
    _functions[key] = fn
    return fn
