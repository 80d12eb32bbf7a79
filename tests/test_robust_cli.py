"""The command line honours or refuses, in one line, what it is given (issue 23, items 9-12).

``new`` writes plain names only; ``--seed``, ``--seeds`` and ``--ticks`` are bounded
(one bounded-integer type) and checked before anything is allocated; a sweep's
grid is bounded before it is expanded, its ranges finite, its seeds the format's,
and its results hold every value; a plugin that exits or raises a ``BaseException``
is a load error, not the end of the process.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from behaviortk.cli import main
from behaviortk.commands.new import SCHEMA_FILE
from behaviortk.commands.options import whole_number
from behaviortk.format.limits import MAX_RUN_TICKS, MAX_SEED, MAX_SEEDS
from behaviortk.studies.results import Results

ROOT = Path(__file__).resolve().parents[1]
EVADE = ROOT / "definitions" / "evade_or_flock.json"


def one_error(capsys: Any) -> str:
    """The one line the command wrote to stderr (and nothing on stdout)."""
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert out == ""
    return err.rstrip("\n")


# ------------------------------------------------------------------ new (item 9)
NAME_RULE = (
    "NAME must be a plain name (letters, digits, _, - and ., starting with a letter or digit) "
    "or a path to one in an existing folder"
)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", f"{NAME_RULE}, got ''"),
        ("sub/", f"{NAME_RULE}, got 'sub/'"),
        ("/", f"{NAME_RULE}, got '/'"),
        ("a\0b", f"{NAME_RULE}, got 'a\\x00b'"),
        (".hidden", f"{NAME_RULE}, got '.hidden'"),
        (".json", f"{NAME_RULE}, got '.json'"),
        ("..", f"{NAME_RULE}, got '..'"),
        ("my scene", f"{NAME_RULE}, got 'my scene'"),
        ("a\\b", f"{NAME_RULE}, got 'a\\\\b'"),
        ("nope/x", "folder 'nope' does not exist (new creates no folder)"),
        ("x" * 251, "NAME is at most 250 bytes, got 251"),
    ],
)
def test_new_refuses_names_that_are_not_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, name: str, why: str
) -> None:
    monkeypatch.chdir(tmp_path)
    root_files = {p for p in ("/.json", "/" + SCHEMA_FILE) if os.path.lexists(p)}
    assert main(["new", name]) == 2
    assert one_error(capsys) == f"behaviortk new: error: {why}; nothing was written"
    assert list(tmp_path.iterdir()) == []
    assert {p for p in ("/.json", "/" + SCHEMA_FILE) if os.path.lexists(p)} == root_files


@pytest.mark.parametrize("name", ["my-scene.v2", "sub/x_1", "é2", "x" * 250])
def test_new_writes_plain_names_and_paths_into_existing_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    assert main(["new", name]) == 0
    written = tmp_path / f"{name}.json"
    assert json.loads(written.read_text(encoding="utf-8"))["name"] == os.path.basename(name)
    assert (written.parent / SCHEMA_FILE).exists()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    folder=st.sampled_from(["", "sub/", "missing/"]),
    last=st.text(alphabet="ab1_-. \0é²\\:*", max_size=6),
)
def test_new_writes_exactly_name_json_or_nothing(folder: str, last: str) -> None:
    """Names stay inside a temporary folder (no "/" but the prefix, so no ".." escapes)."""
    import tempfile

    name = folder + last
    with tempfile.TemporaryDirectory() as here:
        (Path(here) / "sub").mkdir()
        cwd = os.getcwd()
        os.chdir(here)
        try:
            code = main(["new", name])
            made = sorted(str(p.relative_to(here)) for p in Path(here).rglob("*") if p.is_file())
        finally:
            os.chdir(cwd)
    assert code in (0, 2)
    if code == 2:
        assert made == []
    else:
        target = name if name.endswith(".json") else f"{name}.json"
        assert made == sorted([target, folder + SCHEMA_FILE]) and folder != "missing/"


# ------------------------------------------------------------------ bounds (items 10, 11)
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["check", str(EVADE), "--seeds", "99999999999999999999"],
            "argument --seeds: must be <= 10,000, got '99999999999999999999'",
        ),
        (
            ["check", str(EVADE), "--ticks", "99999999999999999999"],
            "argument --ticks: must be <= 10,000,000, got '99999999999999999999'",
        ),
        (["check", str(EVADE), "--ticks", "10_000_001"], "must be <= 10,000,000, got 10000001"),
        (["check", str(EVADE), "--ticks", "0"], "argument --ticks: must be >= 1, got 0"),
        (["check", str(EVADE), "--ticks", "²"], "expected a whole number, got '²'"),
        (
            ["run", str(EVADE), "--headless", "--seed", str(MAX_SEED + 1)],
            f"argument --seed: must be <= 9,223,372,036,854,775,807, got {MAX_SEED + 1}",
        ),
        (
            ["run", str(EVADE), "--headless", "--seed", "9" * 5000],
            "argument --seed: must be <= 9,223,372,036,854,775,807, got '99999999999999999999'... "
            "(5,000 characters)",
        ),
        (["bench", str(EVADE), "--seed", "-1"], "argument --seed: must be >= 0, got -1"),
        (["render", str(EVADE), "--out", "x.png", "--ticks", "1e9"], "expected a whole number"),
        (["demo", "--ticks", "-3"], "argument --ticks: must be >= 1, got -3"),
        (
            [
                "sweep",
                str(EVADE),
                "--param",
                "world.dt=0.01",
                "--out",
                "r.parquet",
                "--seeds",
                "10001",
            ],
            "argument --seeds: must be <= 10,000, got 10001",
        ),
        (
            [
                "tune",
                str(EVADE),
                "--param",
                "world.dt=0.01",
                "--maximise",
                "x",
                "--ticks",
                "99999999999999999999",
            ],
            "argument --ticks: must be <= 10,000,000",
        ),
    ],
)
def test_counts_and_seeds_past_their_bound_are_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, argv: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = one_error(capsys)
    assert err.startswith(f"behaviortk {argv[0]}: error: ") and message in err
    assert list(tmp_path.iterdir()) == []


def test_help_states_the_bounds(capsys: Any) -> None:
    for command in ("check", "sweep"):
        with pytest.raises(SystemExit):
            from behaviortk.cli import build_parser

            build_parser().parse_args([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert f"at most {MAX_SEEDS:,}" in text and f"at most {MAX_RUN_TICKS:,}" in text
    assert "grid of at most 100,000 points" in text and "1,000,000 runs" in text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30) | st.integers(-(10**30), 10**30).map(str))
def test_a_bounded_whole_number_is_in_bounds_or_one_short_line(text: str) -> None:
    parse = whole_number(1, MAX_RUN_TICKS)
    try:
        value = parse(text)
    except argparse.ArgumentTypeError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 120
        return
    assert 1 <= value <= MAX_RUN_TICKS


def definition_with(tmp_path: Path, edit: Any) -> Path:
    data = json.loads(EVADE.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "d.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_seeds_past_the_largest_seed_are_refused_before_running(
    tmp_path: Path, capsys: Any
) -> None:
    path = definition_with(tmp_path, lambda d: d["world"].update(seed=MAX_SEED - 1))
    junit = tmp_path / "j.xml"
    assert main(["check", str(path), "--seeds", "3", "--junit", str(junit)]) == 2
    assert one_error(capsys) == (
        f"behaviortk check: error: evade_or_flock: --seeds 3 from its seed {MAX_SEED - 1} goes "
        f"past the largest seed, 2**63 - 1 = {MAX_SEED}"
    )
    assert not junit.exists()


def test_a_check_window_past_the_tick_bound_is_refused_before_allocating(
    tmp_path: Path, capsys: Any
) -> None:
    def far(data: dict[str, Any]) -> None:
        data["checks"][1]["to_tick"] = 10**20

    assert main(["check", str(definition_with(tmp_path, far))]) == 1
    out, err = capsys.readouterr()
    assert "/checks/1/to_tick: must be <= 1000000, got 100000000000000000000" in out + err


# ------------------------------------------------------------------ sweep and tune (item 10)
def sweep(tmp_path: Path, *params: str, command: str = "sweep") -> list[str]:
    argv = [command, str(EVADE), *[a for p in params for a in ("--param", p)]]
    goal = ["--maximise", "prey survive"] if command == "tune" else []
    return [
        *argv,
        *goal,
        "--out",
        str(tmp_path / ("r.parquet" if command == "sweep" else "t.json")),
    ]


@pytest.mark.parametrize("command", ["sweep", "tune"])
@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            ["world.seed=0:9999:1", "groups.prey.max_speed=1:1000:1"],
            "the grid has 10,000,000 points (10,000 values of world.seed x 1,000 values of "
            "groups.prey.max_speed); at most 100,000",
        ),
        (["world.seed=0:Infinity:1"], "'Infinity' is not a finite number; values must be finite"),
        (["world.seed=0:NaN:1"], "'NaN' is not a finite number; values must be finite"),
        (["world.dt=0:1e999:1"], "'1e999' is not a finite number; values must be finite"),
        (["world.dt=1,-Infinity"], "'-Infinity' is not a finite number"),
        (["world.seed=0:100000000000000000000000:1"], "has 100,000,000,000,000,000,000,001 values"),
        (["world.dt=0:1e300:1e-300"], "'0:1e300:1e-300' has more than 100,000 values"),
        (["world.seed=" + "9" * 5000], "Exceeds the limit (4300 digits)"),
        (
            ["world.seed=99999999999999999999999"],
            "at world.seed=99999999999999999999999: the definition does not validate: must be "
            "<= 9223372036854775807",
        ),
    ],
)
def test_a_grid_that_cannot_run_is_refused_before_anything_runs(
    tmp_path: Path, capsys: Any, command: str, params: list[str], message: str
) -> None:
    assert main(sweep(tmp_path, *params, command=command)) == 2
    err = one_error(capsys)
    assert err.startswith(f"behaviortk {command}: error: ") and message in err, err
    assert list(tmp_path.iterdir()) == []


def test_sweep_runs_are_bounded_too(tmp_path: Path, capsys: Any) -> None:
    argv = [*sweep(tmp_path, "world.seed=0:999:1"), "--seeds", "1001"]
    assert main(argv) == 2
    assert one_error(capsys).endswith(
        "the sweep has 1,001,000 runs (1,000 points x 1,001 seeds); at most 1,000,000"
    )


def test_results_hold_every_value_and_resume_recognises_them(tmp_path: Path) -> None:
    """An int past int64, numbers mixed with words, an int beside a float: kept exactly."""
    settings_ = {"params": ["trees.t.params.p", "groups.g.colour"], "ticks": 1}
    rows = [
        {"trees.t.params.p": 2**70, "groups.g.colour": "#fff", "seed": MAX_SEED, "v": 0.5},
        {"trees.t.params.p": 1, "groups.g.colour": 3, "seed": 0, "v": float("nan")},
        {"trees.t.params.p": 1.5, "groups.g.colour": None, "seed": 1, "v": 2.0},
    ]
    path = str(tmp_path / "r.parquet")
    results = Results(path, settings_, inputs=[])
    for row in rows:
        key = json.dumps([{p: row[p] for p in settings_["params"]}, row["seed"]], sort_keys=True)
        results.add(key, row)
    results.flush()
    again = Results(path, settings_, inputs=[])
    assert json.dumps(again.rows) == json.dumps(rows)
    assert again.done == results.done
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    assert str(schema.field("seed").type) == "int64" and str(schema.field("v").type) == "double"
    assert str(schema.field("trees.t.params.p").type) == "string"  # JSON text


# ------------------------------------------------------------------ plugins (item 12)
@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("import sys\nsys.exit(3)\n", "it called sys.exit(3) (at {file}:2)"),
        ("raise SystemExit\n", "it called sys.exit(None) (at {file}:1)"),
        (
            "class Boom(BaseException):\n    pass\nraise Boom('no')\n",
            "Boom: no (at {file}:3)",
        ),
        (
            "import sys\ndef register(regs):\n    sys.exit('bye')\n",
            "its register() failed: it called sys.exit('bye') (at {file}:3)",
        ),
        ("raise GeneratorExit\n", "GeneratorExit (at {file}:1)"),
    ],
)
def test_a_plugin_that_exits_or_raises_a_base_exception_is_a_load_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, source: str, reason: str
) -> None:
    module = f"exiting_{abs(hash(source))}"
    file = tmp_path / f"{module}.py"
    file.write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["validate", str(EVADE), "--plugin", module]) == 2
    assert one_error(capsys) == (
        f"behaviortk: error: plugin {module!r} failed to load: {reason.format(file=file)}"
    )


def test_a_plugin_interrupted_by_ctrl_c_is_an_interrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    (tmp_path / "ctrl_c_plugin.py").write_text("raise KeyboardInterrupt\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["validate", str(EVADE), "--plugin", "ctrl_c_plugin"]) == 130
    assert one_error(capsys) == "behaviortk: interrupted"


def test_every_check_window_fits_a_run() -> None:
    """check runs to the last to_tick: the format's bound must stay inside the run bound."""
    from behaviortk.format.limits import MAX_CHECK_TICK

    assert MAX_CHECK_TICK + 1 <= MAX_RUN_TICKS
