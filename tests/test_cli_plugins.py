"""Plugins on the command line: ``--plugin MODULE`` on every command, installed entry points.

Every case that loads a plugin into the default registries runs the real
command in a fresh interpreter (``python -m behaviortk``), so this process's
default registries (and the committed schema compared with them) stay as
shipped. The plugin is ``examples/plugins/fixed_lead.py``, a predictor, with
its definition ``examples/plugins/fixed_lead.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from behaviortk.cli import build_parser
from behaviortk.format.loader import load
from behaviortk.record.jsonl import read
from behaviortk.registry import Registries, default, load_plugin
from behaviortk.sim.simulation import Simulation
from behaviortk.viewer.session import Session

ROOT = Path(__file__).resolve().parents[1]
DEFINITION = "examples/plugins/fixed_lead.json"
PLUGIN = "examples.plugins.fixed_lead"


def cli(
    *argv: str, cwd: Path = ROOT, path: list[Path] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m behaviortk ARGV`` in a fresh interpreter; this checkout's package first."""
    env = {**os.environ, "ARCADE_HEADLESS": "1", "NO_COLOR": "1"}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in [ROOT, *(path or [])])
    return subprocess.run(
        [sys.executable, "-m", "behaviortk", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def fixed_lead_registries() -> Registries:
    regs = Registries.with_builtins()
    load_plugin(PLUGIN, regs)
    return regs


def test_every_command_takes_plugin() -> None:
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"validate", "schema", "run", "render", "tree", "bench", "demo"} <= set(commands)
    for name, command in commands.items():
        [option] = [a for a in command._actions if "--plugin" in a.option_strings]
        assert (type(option).__name__, option.metavar, option.default) == (
            "_AppendAction",
            "MODULE",
            [],
        ), name


def test_a_plugin_predictor_validated_run_and_rendered_from_the_cli(tmp_path: Path) -> None:
    without = cli("validate", DEFINITION)
    assert without.returncode == 1
    assert "unknown predictor 'fixed'; valid: capped, intercept, linear" in without.stdout

    valid = cli("validate", DEFINITION, "--plugin", PLUGIN)
    assert (valid.returncode, valid.stdout) == (0, "")
    assert f"{DEFINITION}: ok" in valid.stderr

    trace = tmp_path / "fixed.jsonl"
    ran = cli(
        "run", DEFINITION, "--plugin", PLUGIN, "--headless", "--ticks", "20", "--trace", str(trace)
    )
    assert ran.returncode == 0, ran.stderr
    with trace.open(encoding="utf-8") as lines:
        _, records = read(lines)
        last = list(records)[-1]
    assert last["tick"] == 19
    # the same run in this process, with the plugin in a bundle of its own: the CLI ran the plugin
    sim = Simulation(load(ROOT / DEFINITION, registries=fixed_lead_registries()), engine="py_trees")
    sim.run(20)
    assert [a["pos"] for a in last["agents"]] == sim.agents.pos.tolist()

    image = tmp_path / "fixed.png"
    drawn = cli("render", DEFINITION, "--plugin", PLUGIN, "--ticks", "10", "--out", str(image))
    assert drawn.returncode == 0, drawn.stderr
    with Image.open(image) as png:
        assert png.format == "PNG" and png.size[0] > 100 and png.size[1] > 100
        assert len(set(png.convert("RGB").getdata())) > 5  # something was drawn


def test_schema_with_a_plugin_lists_its_nodes() -> None:
    def predictors(text: str) -> list[str]:
        return list(json.loads(text)["$defs"]["Predictor"]["properties"]["type"]["enum"])

    with_plugin = cli("schema", "--plugin", PLUGIN)
    assert with_plugin.returncode == 0, with_plugin.stderr
    assert "fixed" in predictors(with_plugin.stdout)
    assert "fixed" not in predictors(cli("schema").stdout)


def broken_modules(folder: Path) -> None:
    (folder / "boom.py").write_text('x = 1\nraise RuntimeError("no config found")\n')
    (folder / "typo.py").write_text("x = = 1\n")
    (folder / "needs.py").write_text("import no_such_dependency_xyz\n")
    (folder / "empty.py").write_text("VALUE = 1\n")


@pytest.mark.parametrize(
    ("module", "message"),
    [
        (
            "no_such_plugin",
            "plugin 'no_such_plugin' failed to load: no module named 'no_such_plugin' (is it "
            "installed, or is the folder that holds it the current directory?)",
        ),
        (
            "boom",
            "plugin 'boom' failed to load: RuntimeError: no config found (at {dir}/boom.py:2)",
        ),
        (
            "typo",
            "plugin 'typo' failed to load: syntax error: invalid syntax ({dir}/typo.py, line 1)",
        ),
        (
            "needs",
            "plugin 'needs' failed to load: it imports 'no_such_dependency_xyz', which is not installed",
        ),
        (
            "empty",
            "plugin 'empty' registered nothing: a plugin module defines register(registries) (see behaviortk.plugin)",
        ),
        (
            "plugins/boom.py",
            "--plugin takes a Python module name (a.b.c), not 'plugins/boom.py'; did you mean --plugin plugins.boom?",
        ),
    ],
)
def test_a_plugin_that_does_not_load_is_one_line_naming_it(
    tmp_path: Path, module: str, message: str
) -> None:
    """The module is looked up from the current directory, as ``python -m`` would."""
    broken_modules(tmp_path)
    definition = tmp_path / "x.json"
    definition.write_text((ROOT / DEFINITION).read_text())
    proc = cli("validate", str(definition), "--plugin", module, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    resolved = os.path.realpath(tmp_path)
    assert proc.stderr.splitlines() in (
        [f"behaviortk: error: {message.format(dir=tmp_path)}"],
        [f"behaviortk: error: {message.format(dir=resolved)}"],
    )


def fake_distribution(folder: Path, entry_points: str, name: str = "fakeplug") -> None:
    """An installed distribution as importlib.metadata finds it: a dist-info folder on the path."""
    info = folder / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[behaviortk.plugins]\n{entry_points}\n")


@pytest.mark.parametrize("value", [PLUGIN, f"{PLUGIN}:plugin", f"{PLUGIN}:register"])
def test_installed_entry_points_load_without_plugin(tmp_path: Path, value: str) -> None:
    """``name = module``, ``module:Plugin`` and ``module:register`` all work."""
    fake_distribution(tmp_path, f"lead = {value}")
    proc = cli("validate", DEFINITION, path=[tmp_path])
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    if value != PLUGIN:  # the same module named again on the command line: registered once
        both = cli("validate", DEFINITION, "--plugin", PLUGIN, path=[tmp_path])
        assert both.returncode == 0, both.stderr
        return
    schema = json.loads(cli("schema", path=[tmp_path]).stdout)
    assert "fixed" in schema["$defs"]["Predictor"]["properties"]["type"]["enum"]


def test_a_broken_entry_point_names_itself_and_its_distribution(tmp_path: Path) -> None:
    fake_distribution(tmp_path, "lost = gone_module_xyz", name="brokenplug")
    proc = cli("schema", path=[tmp_path])
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "behaviortk: error: plugin 'gone_module_xyz' (entry point 'lost' of "
        "brokenplug 1.0) failed to load: no module named 'gone_module_xyz' (is it installed, or is the "
        "folder that holds it the current directory?)"
    ]


def test_a_definition_cannot_load_code(tmp_path: Path) -> None:
    """No key of a definition names a module: naming one is an unknown key or type, never an import."""
    data = json.loads((ROOT / DEFINITION).read_text())
    data["plugins"] = [PLUGIN]
    data["trees"]["chase"]["root"]["predictor"] = {"type": PLUGIN}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data, indent=1))
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "behaviortk", "validate", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 1
    assert "unknown key 'plugins'" in proc.stdout
    assert f"unknown predictor '{PLUGIN}'" in proc.stdout
    assert "examples.plugins" not in proc.stderr  # -X importtime lists every import


def test_hot_reload_keeps_the_plugins_of_the_first_load(tmp_path: Path) -> None:
    regs = fixed_lead_registries()
    assert "fixed" not in default().predictors
    path = tmp_path / "scene.json"
    data = json.loads((ROOT / DEFINITION).read_text())
    path.write_text(json.dumps(data))
    session = Session(path, registries=regs)
    session.sim.run(5)
    data["trees"]["chase"]["root"]["predictor"]["seconds"] = 0.2
    path.write_text(json.dumps(data))
    assert session.reload() is True, session.errors
    assert session.sim.tick == 0 and session.sim.scenario.registries is regs
    session.sim.run(20)
    expected = Simulation(load(path, registries=regs), engine="py_trees")
    expected.run(20)
    assert np.array_equal(session.sim.agents.pos, expected.agents.pos)
