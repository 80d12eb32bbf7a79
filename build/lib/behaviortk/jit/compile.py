"""The numba decorators every kernel uses (compiled on first call, cached on disk), and the
registration that lets compiled row loops call the package's formulas.

``error_model="numpy"``: a division by zero gives inf or nan as in NumPy
instead of raising; kernels guard their divisions as the NumPy code does, so
results match. No ``fastmath``: floating-point operations stay in the order
written (no reassociation, no fused multiply-add), which is what lets the
kernels reproduce the NumPy reference to the last bit where they follow its
order of operations.

**Lazy selects.** A formula is registered with its ``select(c, a, b)`` calls
rewritten as ``(a if c else b)`` (:func:`lazy`): the same values, but a compiled
loop computes only the value it keeps. NumPy computes both on columns; a row
loop can then skip a division or a libm call the way a hand-written ``if`` did
(``vec.truncate_xy`` below its limit, ``world.spatial.shortest_near`` for close
pairs): the reason the formulas' loops run as fast as the kernels they replaced.

**No stale kernels.** numba's own disk cache checks only the file that defines a
kernel, so a kernel that calls a helper in another module, or freezes a constant
imported from one (``HEADING_MIN_SPEED``, ``steering/kernels.py``'s), would keep
running the old value after that module changed. So every kernel is cached in a
folder named after a hash of the source of every behaviortk module the compiled
package imports, transitively (:func:`source_key`): change any of them and the
kernels compile afresh. The folder is under ``$NUMBA_CACHE_DIR``, else
``$XDG_CACHE_HOME`` or ``~/.cache`` (``behaviortk-kernels/<key>/``), so a package
installed read-only still caches its kernels (in the user's cache). Where that folder
cannot be made or written (a read-only home, no home at all) kernels compile in memory
in every process (:data:`CACHE_PROBLEM` says why; ``sim/choice.py`` warns once).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import os
import re
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from numba import njit
from numba.core import config as numba_config
from numba.extending import overload

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
    """Where the kernels of these sources are cached (see the module docstring); a relative
    path (no home directory to be found) is refused by :func:`writable`."""
    root = os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
    try:
        base = Path(root) if root else Path.home() / ".cache"
    except RuntimeError:  # HOME unset and no password entry: nowhere to cache
        base = Path("no-home-directory")
    return base / "behaviortk-kernels" / source_key()


def writable(path: Path) -> str | None:
    """None when kernels can be cached in ``path`` (made if missing, a file written and
    removed there, as numba checks), else why not, in one line."""
    if not path.is_absolute():
        return "no home directory to cache in"
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as exc:
        return " ".join(str(exc).split())
    return None


CACHE_DIR = str(cache_dir())
CACHE_PROBLEM = writable(Path(CACHE_DIR))
"""None when :data:`CACHE_DIR` can be written; else why not: kernels then compile in memory,
in every process (never into numba's other cache folders, which no source hash guards)."""


def _cached(options: dict[str, Any], fn: F) -> F:
    """``njit(cache=True, **options)(fn)`` cached under :data:`CACHE_DIR` (numba picks a
    function's cache folder when it is decorated; its global setting is put back after);
    uncached where that folder cannot be written (:data:`CACHE_PROBLEM`)."""
    if CACHE_PROBLEM is not None:
        return cast(F, njit(**options)(fn))
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
    """``vec.select`` on scalars called as a function (a formula's own selects are rewritten
    by :func:`lazy`): a ternary of two values already computed."""

    def ternary(cond: Any, a: Any, b: Any) -> Any:
        return a if cond else b

    return ternary


class _LazySelects(ast.NodeTransformer):
    """Each ``select(c, a, b)`` of a statement (``select`` naming ``vec.select``) becomes a
    fresh name, set before the statement by ``if c: name = a`` / ``else: name = b``; the
    selects inside ``a`` or ``b`` are set inside that arm, so only the arm taken runs."""

    PLAIN = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr, ast.Pass)

    def __init__(self, scope: dict[str, Any]) -> None:
        self.scope = scope
        self.count = 0
        self.before: list[ast.stmt] = []

    def _is_select(self, node: ast.Call) -> bool:
        func = node.func
        if len(node.args) != 3 or node.keywords:
            return False
        if isinstance(func, ast.Name):
            return self.scope.get(func.id) is vec.select
        return (
            isinstance(func, ast.Attribute)
            and func.attr == "select"
            and isinstance(func.value, ast.Name)
            and self.scope.get(func.value.id) is vec
        )

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if not self._is_select(node):
            return self.generic_visit(node)
        cond = self.visit(node.args[0])
        name = f"_select_{self.count}"
        self.count += 1
        arms: list[list[ast.stmt]] = []
        for arm in node.args[1:]:
            outer, self.before = self.before, []
            value = self.visit(arm)
            store = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value)
            arms.append([*self.before, store])
            self.before = outer
        self.before.append(ast.If(test=cond, body=arms[0], orelse=arms[1]))
        return ast.Name(id=name, ctx=ast.Load())

    def body(self, statements: list[ast.stmt]) -> list[ast.stmt] | None:
        """The statements rewritten; None where one is not plain (a loop, an ``if``: not a
        formula's shape, left as written)."""
        out: list[ast.stmt] = []
        for statement in statements:
            if not isinstance(statement, self.PLAIN):
                return None
            self.before = []
            rewritten = self.visit(statement)
            out += [*self.before, rewritten]
        return out


def lazy(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its selects made lazy (:class:`_LazySelects`): the same values (a formula
    has no side effects), but a compiled row loop computes only the value it keeps, so
    a select can spare a division, a square root or a libm call where its condition is
    false (``vec.truncate_xy`` below the limit). ``fn`` itself where its source is not at
    hand, it closes over variables or its body is not a formula's."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return fn
    tree = ast.parse(source)
    found = tree.body[0] if tree.body else None
    if fn.__closure__ or not isinstance(found, ast.FunctionDef):
        return fn
    body = _LazySelects(fn.__globals__).body(found.body)
    if body is None:
        return fn
    found.body, found.decorator_list, found.returns = body, [], None
    for arg in (*found.args.posonlyargs, *found.args.args, *found.args.kwonlyargs):
        arg.annotation = None
    tree = ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)
    made: dict[str, Any] = {}
    exec(compile(tree, fn.__code__.co_filename, "exec"), fn.__globals__, made)  # fn's own source
    return cast(Callable[..., Any], made[found.name])


def _register(fn: Callable[..., Any]) -> None:
    """``register_jitable(error_model="numpy")(fn)``, compiling :func:`lazy` of it; a
    ``vec.inlined`` formula is inlined by numba at each call."""
    rewritten = lazy(fn)

    def implementation(*args: Any, **kwargs: Any) -> Callable[..., Any]:
        return rewritten

    options: Any = {"error_model": "numpy"}
    if getattr(fn, vec.INLINE, False):
        overload(fn, jit_options=options, strict=False, inline="always")(implementation)
    else:
        overload(fn, jit_options=options, strict=False)(implementation)


vec.on_formula(_register)
