"""``behaviortk new``: every template is valid, runs the same on both engines, and moves;
nothing existing is ever overwritten."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from behaviortk.cli import main
from behaviortk.commands.new import FIRST_NODE, TEMPLATES, template_text
from behaviortk.format.loader import load
from behaviortk.format.schema import schema_text
from behaviortk.registry import default
from behaviortk.sim.simulation import Simulation

TICKS = {"chase": 60, "flock": 60, "guard": 60, "crowd": 4}
"""Ticks each template runs on both engines (crowd: 2,000 agents on py_trees too)."""


def nodes(tree: Any) -> list[dict[str, Any]]:
    """Every object with a ``type`` inside ``tree`` (nodes, and predictors if any)."""
    found, stack = [], [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("type"), str):
                found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_new_template_validates_runs_on_both_engines_and_moves(
    template: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"my_{template}.json"
    assert main(["new", str(tmp_path / f"my_{template}"), "--template", template]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"wrote {path} (template {template}: {TEMPLATES[template]})\n")
    assert f"behaviortk explain {FIRST_NODE[template]}" in out
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["$schema"] == "behaviortk.schema.json" and data["name"] == f"my_{template}"
    assert (tmp_path / "behaviortk.schema.json").read_text(encoding="utf-8") == schema_text()
    # explained by the format's own words: a description, described params, named nodes
    assert len(data["description"]) > 200 and "behaviortk explain" in data["description"]
    for tree in data["trees"].values():
        assert all(spec.get("description") for spec in tree.get("params", {}).values())
        assert all(node.get("name") for node in nodes(tree["root"]))
    for tag in {n["type"] for n in nodes(data["trees"])}:
        assert default().node(tag)  # only registered node types

    scenario = load(path)
    sims = [Simulation(scenario, engine=e) for e in ("py_trees", "batch")]
    start = sims[0].agents.pos.copy()
    for _ in range(TICKS[template]):
        for sim in sims:
            sim.step()
    assert np.array_equal(sims[0].agents.pos, sims[1].agents.pos)
    assert np.array_equal(sims[0].agents.vel, sims[1].agents.vel)
    moved = np.linalg.norm(sims[0].agents.pos - start, axis=1)
    assert np.median(moved) > 1.0  # most agents visibly moved (world units)
    engine = "batch" if template == "crowd" else "py_trees"
    assert Simulation(scenario, engine="auto").engine.name == engine


def test_the_crowd_is_exactly_the_auto_threshold() -> None:
    from behaviortk.engines.names import AUTO_BATCH_AGENTS

    data = json.loads(template_text("crowd"))
    assert sum(g["count"] for g in data["groups"]) == AUTO_BATCH_AGENTS


def test_new_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "scene.json"
    mine.write_text("my work", encoding="utf-8")
    schema = tmp_path / "behaviortk.schema.json"
    assert main(["new", str(tmp_path / "scene")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"behaviortk: error: refusing to overwrite definition {mine}: it exists "
        "(nothing was written)\n"
    )
    assert mine.read_text(encoding="utf-8") == "my work"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scene.json"]  # no temporary left
    schema.write_text("an older schema", encoding="utf-8")
    assert main(["new", str(tmp_path / "other.json"), "--template", "flock"]) == 0
    assert schema.read_text(encoding="utf-8") == "an older schema"  # kept as it was
    assert "behaviortk.schema.json" not in capsys.readouterr().out
    assert json.loads((tmp_path / "other.json").read_text())["name"] == "other"


def test_new_name_with_quotes_is_not_a_plain_name(tmp_path: Path) -> None:
    """Quotes (and spaces) are no file-name characters of ``new`` (tests/test_robust_cli.py)."""
    assert main(["new", str(tmp_path / 'say "hi"'), "--template", "guard"]) == 2
    assert list(tmp_path.iterdir()) == []


def test_new_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", "x", "--template", "zoo"]) == 2
    assert "invalid choice: 'zoo'" in capsys.readouterr().err
    assert main(["new"]) == 2


def test_next_hints_name_the_command_as_this_shell_types_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After ``make demo`` without activating, ``behaviortk`` is not on PATH: say the path."""
    from behaviortk.commands.new import typed_as

    script = tmp_path / ".venv" / "bin" / "behaviortk"
    script.parent.mkdir(parents=True)
    script.write_text("")
    monkeypatch.chdir(tmp_path)
    assert typed_as(str(script), on_path="") == os.path.join(".venv", "bin", "behaviortk")
    assert typed_as(str(script), on_path=str(script)) == "behaviortk"  # activated
    elsewhere = tmp_path / "other" / "behaviortk"
    assert typed_as(str(script), on_path=str(elsewhere)) == os.path.join(
        ".venv", "bin", "behaviortk"
    )
    monkeypatch.chdir(script.parent)
    assert typed_as(str(script), on_path="") == os.path.join(".", "behaviortk")
    assert typed_as("/somewhere/behaviortk/__main__.py", on_path="").endswith(" -m behaviortk")
