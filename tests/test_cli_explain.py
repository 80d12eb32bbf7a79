"""``behaviortk explain``: every registered tag explains itself from the registries; the list
by category; shell completion of commands, flags, node names and definition files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from behaviortk.cli import main
from behaviortk.commands.explain import first_sentence
from behaviortk.format.reference import tag_docs
from behaviortk.registry import default

ROOT = Path(__file__).resolve().parents[1]
ALL = tag_docs()
TAGS = sorted({d.tag for d in ALL})


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("tag", TAGS)
def test_explain_every_registered_tag(tag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", tag]) == 0
    out = capsys.readouterr().out
    for doc in [d for d in ALL if d.tag == tag]:
        assert f"{tag}: {doc.kind}   {doc.usage}" in out
        assert flat(doc.text) in flat(out)  # the docstring: formula and source
        for field in doc.fields:
            assert f"  {field.key} " in out or f"  {field.key}\n" in out
            summary = "required" if field.required else f"default {field.default or 'none'}"
            assert summary in out
            if field.unit:
                assert field.unit in out
            if field.bounds:
                assert field.bounds in out
            assert flat(field.description) in flat(out)


def test_explain_wait_by_hand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "wait"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('wait: action   {"type": "wait", ...}\n')
    assert "  duration  number or $param, seconds (simulated); default 1.0; >= 0, <= 1e9\n" in out
    assert "            How long to wait.\n" in out


def test_explain_subtree_the_file_only_node(capsys: pytest.CaptureFixture[str]) -> None:
    """The README lists ``subtree``; loading inlines it, so no registry has it, yet it explains."""
    assert main(["explain", "subtree"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('subtree: node type   {"type": "subtree", ...}\n')
    assert "  tree    string; required; length >= 1\n" in out
    assert main(["explain", "subtree", "--markdown"]) == 0
    section = capsys.readouterr().out
    assert (
        section.startswith("### subtree\n") and section in (ROOT / "docs" / "nodes.md").read_text()
    )
    assert main(["explain"]) == 0
    assert "Written in files\n  subtree" in capsys.readouterr().out


def test_explain_markdown_is_the_reference_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "seek", "--markdown"]) == 0
    out = capsys.readouterr().out
    committed = (ROOT / "docs" / "nodes.md").read_text()
    assert out.startswith("### seek\n") and out in committed


def test_explain_alone_lists_every_tag_by_category(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain"]) == 0
    lines = capsys.readouterr().out.splitlines()
    titles = [reg_title for reg_title in dict.fromkeys(d.title for d in ALL)]
    assert [line for line in lines if line in titles] == titles  # every category, in order
    listed = [line.split()[0] for line in lines if line.startswith("  ")]
    assert listed == [d.tag for d in ALL]  # every tag once, in registry order
    assert f"  seek{' ' * (max(map(len, TAGS)) - 4)}  {first_sentence(ALL[0].text)}" not in lines
    assert any(line.startswith("  seek ") and "Buckland ch. 3" in line for line in lines)


def test_unknown_node_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "persuit"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "behaviortk explain: error: unknown node type or target kind 'persuit'; "
        "did you mean 'pursuit'?"
    )
    assert f"closest of {len(TAGS)}" in err


def test_first_sentence_keeps_chapter_numbers() -> None:
    assert first_sentence('Seek (Buckland ch. 3 "Seek"). More.\n\nOther.') == (
        'Seek (Buckland ch. 3 "Seek").'
    )


def test_a_plugin_explains_itself() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "behaviortk",
            "explain",
            "fixed",
            "--plugin",
            "examples.plugins.fixed_lead",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == [
        'fixed: predictor   {"type": "fixed", ...}',
        "registered by the plugin examples.plugins.fixed_lead",
    ]
    assert "  seconds  number or $param, s; default 0.5; >= 0" in proc.stdout
    assert "fixed" not in default().predictors  # this process never loaded it


def complete(line: str, tmp_path: Path, cwd: Path = ROOT) -> list[str]:
    """What the shell would offer for ``line`` (argcomplete's protocol, as bash drives it)."""
    out = tmp_path / "completions"
    env = {
        **os.environ,
        "_ARGCOMPLETE": "1",
        "_ARGCOMPLETE_IFS": "\n",
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "_ARGCOMPLETE_STDOUT_FILENAME": str(out),
        "PYTHONPATH": str(ROOT),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "behaviortk"], env=env, cwd=cwd, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    # a single completion ends with a space (the shell moves on to the next word)
    return sorted(c.rstrip(" ") for c in out.read_text().split("\n")) if out.read_text() else []


def test_completion_of_commands_flags_nodes_and_files(tmp_path: Path) -> None:
    commands = complete("behaviortk ", tmp_path)
    assert {"new", "validate", "run", "render", "bench", "explain", "completion"} <= set(commands)
    assert complete("behaviortk exp", tmp_path) == ["explain"]
    assert complete("behaviortk run x.json --eng", tmp_path) == ["--engine"]
    assert complete("behaviortk run x.json --engine ", tmp_path) == ["auto", "batch", "py_trees"]
    assert complete("behaviortk explain purs", tmp_path) == ["pursuit"]
    assert complete("behaviortk explain nea", tmp_path) == ["nearest"]
    assert complete("behaviortk new x --template ", tmp_path) == [
        "chase",
        "crowd",
        "flock",
        "guard",
    ]
    (tmp_path / "scenes").mkdir()
    (tmp_path / "scenes" / "a.json").write_text("{}")
    (tmp_path / "scenes" / "notes.txt").write_text("")
    (tmp_path / "b.json").write_text("{}")
    offered = complete("behaviortk validate ", tmp_path, cwd=tmp_path)
    assert [c for c in offered if not c.startswith("-")] == ["b.json", "scenes/"]  # no .txt
    assert "--schema-only" in offered
    assert complete("behaviortk run scenes/", tmp_path, cwd=tmp_path) == ["scenes/a.json"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_shell_code(shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", shell]) == 0
    code = capsys.readouterr().out
    assert "behaviortk" in code and "_ARGCOMPLETE" in code
