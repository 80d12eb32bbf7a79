"""The optional parts of an install: which extra brings which module, and the one message.

The core install (``pip install behaviortk``) authors, validates, runs, checks and
shows definitions. Heavier libraries come with extras, named where a command
needs one that is missing: ``crowds`` (numba: compiled kernels; without it every
run takes the NumPy kernels), ``traces`` (pyarrow: Parquet traces; JSON Lines
need nothing), ``studies`` (dask, optuna, matplotlib, polars, pyarrow: ``sweep``,
``tune``, plots). ``make demo`` and ``make test`` install them all.
"""

from __future__ import annotations

EXTRAS = {
    "numba": "crowds",
    "llvmlite": "crowds",
    "pyarrow": "traces",
    "dask": "studies",
    "distributed": "studies",
    "optuna": "studies",
    "matplotlib": "studies",
    "polars": "studies",
}
"""Top-level module -> the extra that installs it."""

STUDY_COMMANDS = frozenset({"sweep", "tune"})
"""Commands that need the whole ``studies`` extra (pyarrow included), whatever module failed."""


def extra_for(module: str | None, command: str | None = None) -> str | None:
    """The extra that brings ``module`` (a dotted name; None when no extra does)."""
    extra = EXTRAS.get((module or "").split(".", 1)[0])
    if extra is not None and command in STUDY_COMMANDS:
        return "studies"
    return extra


def missing_message(module: str | None, who: str, command: str | None = None) -> str | None:
    """``behaviortk sweep needs the studies extra: pip install 'behaviortk[studies]'``, or None
    when ``module`` is not one an extra installs (a real error, reported as such)."""
    extra = extra_for(module, command)
    if extra is None:
        return None
    return f"{who} needs the {extra} extra: pip install 'behaviortk[{extra}]'"


def require(*modules: str) -> None:
    """Import ``modules`` before any work, so a missing one fails first: the command line
    turns its ``ModuleNotFoundError`` into the one-line message naming its extra."""
    from importlib import import_module

    for module in modules:
        import_module(module)
