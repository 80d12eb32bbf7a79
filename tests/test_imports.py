"""Which heavy modules each command imports (what it loads, not how long it takes).

Each case runs the real command, ``python -X importtime -m behaviortk ...``, in
a fresh interpreter and reads the list of imported modules from stderr.
``--help`` builds the parser of every command, so it also proves that no
command module imports anything heavy at its top level.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DEFINITION = "definitions/evade_or_flock.json"

HEAVY = (
    "pydantic",
    "numpy",
    "scipy",
    "py_trees",
    "arcade",
    "jsonschema",
    "behaviortk.sim.simulation",
    "rich",
    "numba",
    "pyarrow",
    "polars",
    "dask",
    "optuna",
    "matplotlib",
    "argcomplete",
    "behaviortk.jit",
)
"""What ``--help`` never imports. ``validate`` needs pydantic and (for now) numpy only."""

NEVER_FOR_VALIDATE = tuple(name for name in HEAVY if name not in ("pydantic", "numpy"))


def imported(*args: str, code: int = 0) -> set[str]:
    """Every module a fresh ``python -X importtime <args>`` (run from the project root) imports."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == code, proc.stdout + proc.stderr[-2000:]
    modules = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "imported package" not in line:
            modules.add(line.rsplit("|", 1)[1].strip())
    assert "behaviortk" in modules
    return modules


def command(*argv: str) -> set[str]:
    return imported("-m", "behaviortk", *argv)


def loaded(modules: set[str], name: str) -> list[str]:
    """``name`` and its submodules among ``modules``."""
    return sorted(m for m in modules if m == name or m.startswith(name + "."))


def engine_modules(modules: set[str]) -> list[str]:
    """Engine implementations. ``behaviortk.engines`` itself is import-free and
    ``engines.names`` (the ``--engine`` choices every parser offers) is constants only."""
    light = {"behaviortk.engines", "behaviortk.engines.names"}
    return [m for m in loaded(modules, "behaviortk.engines") if m not in light]


def test_import_behaviortk_loads_nothing_heavy() -> None:
    modules = imported("-c", "import behaviortk")
    assert loaded(modules, "behaviortk") == ["behaviortk"]
    for name in HEAVY:
        assert loaded(modules, name) == [], name


def test_public_names_resolve_lazily() -> None:
    import behaviortk

    for name in behaviortk.__all__:
        assert getattr(behaviortk, name).__name__ == name
    with pytest.raises(AttributeError):
        _ = behaviortk.no_such_name


@pytest.fixture(scope="module")
def help_modules() -> set[str]:
    return command("--help")


@pytest.mark.parametrize("name", HEAVY)
def test_help_imports_nothing_heavy(help_modules: set[str], name: str) -> None:
    assert loaded(help_modules, name) == []


def test_help_imports_no_engine_steering_or_format(help_modules: set[str]) -> None:
    assert engine_modules(help_modules) == []
    assert loaded(help_modules, "behaviortk.steering") == []
    assert loaded(help_modules, "behaviortk.world") == []
    # only the import-free limits module (validate's --max-agents default) of the format
    assert loaded(help_modules, "behaviortk.format") == [
        "behaviortk.format",
        "behaviortk.format.limits",
    ]


@pytest.fixture(scope="module")
def validate_modules() -> set[str]:
    return command("validate", DEFINITION)


@pytest.mark.parametrize("name", NEVER_FOR_VALIDATE)
def test_validate_imports_no_simulation_viewer_or_jsonschema(
    validate_modules: set[str], name: str
) -> None:
    assert loaded(validate_modules, name) == []


def test_validate_imports_no_engine(validate_modules: set[str]) -> None:
    assert engine_modules(validate_modules) == []


def test_validate_uses_pydantic(validate_modules: set[str]) -> None:
    assert loaded(validate_modules, "pydantic")


# What validate still imports: the built-in node models are defined in the same
# modules as their NumPy implementations. definition_adapter() -> behaviortk.builtins
# -> behaviortk.leaves.conditions (``import numpy``; and behaviortk.sense.sensing -> world.spatial,
# world.state -> numpy) and -> behaviortk.steering (__init__ -> combiners, predictors,
# primitives -> context, kernels, debug: all ``import numpy``).
# Strict xfail: once the registry keeps models apart from implementations, these
# pass, the suite reports XPASS as a failure, and the marker should be removed.
@pytest.mark.xfail(
    strict=True, reason="node models live with their NumPy implementations (builtins)"
)
@pytest.mark.parametrize("name", ["numpy", "behaviortk.steering"])
def test_validate_does_not_import_the_implementations(
    validate_modules: set[str], name: str
) -> None:
    assert loaded(validate_modules, name) == []


def test_validate_schema_only_imports_jsonschema() -> None:
    modules = command("validate", "--schema-only", DEFINITION)
    assert loaded(modules, "jsonschema")
    assert loaded(modules, "behaviortk.sim.simulation") == []
    assert engine_modules(modules) == []


@pytest.mark.parametrize("name", NEVER_FOR_VALIDATE)
def test_validate_of_a_bad_file_imports_nothing_more(name: str) -> None:
    """Errors with their source lines and colours are plain Python (no rich)."""
    bad = "tests/fixtures/invalid/unknown_key_typo.json"
    assert loaded(imported("-m", "behaviortk", "validate", bad, code=1), name) == []


def test_a_headless_run_into_a_pipe_draws_no_progress_so_imports_no_rich() -> None:
    modules = command("run", DEFINITION, "--headless", "--ticks", "2")
    assert loaded(modules, "rich") == []
