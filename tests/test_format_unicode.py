"""Every string of a definition is Unicode text (issue 23, item 6).

A lone surrogate written as a JSON escape (``"\\ud800"``) is accepted by
``json`` but is no Unicode character: in a group name it crashed ``validate``
with ``UnicodeEncodeError``, in a node name it validated and crashed ``run
--trace`` and ``tree``. The parser refuses it, in any string or key, with the
file, line, column and pointer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from engine_support import definition
from hypothesis import given
from hypothesis import strategies as st

import behaviortk
from behaviortk.format.jsonparse import JsonSyntaxError, lone_surrogate, parse

LONE = "\\ud800"  # the six characters of the escape, as written in a file


def base_text() -> str:
    """A valid definition, one key a line (``json.dumps`` would escape what we plant)."""
    root = {"type": "wait", "duration": 1, "name": "NODE"}
    data = definition(root, blackboard={"KEY": "number"})
    data["description"] = "DESCRIPTION"
    return json.dumps(data, indent=1)


def issue_for(text: str) -> Any:
    with pytest.raises(behaviortk.DefinitionError) as err:
        behaviortk.load_text(text, "x.json")
    (issue,) = err.value.issues
    return issue


def position_of(text: str, needle: str) -> tuple[int, int]:
    offset = text.index(needle)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


@pytest.mark.parametrize(
    ("plant", "pointer", "what"),
    [
        (('"a"', f'"a{LONE}"'), "/groups/0/name", "string"),
        (('"NODE"', f'"NO{LONE}DE"'), "/trees/main/root/name", "string"),
        (('"DESCRIPTION"', f'"{LONE}"'), "/description", "string"),
        (('"KEY"', f'"K{LONE}"'), "/trees/main/blackboard", "key"),
        (('"idle"', '"id\\udfffle"'), "/trees", "key"),
    ],
    ids=["group name", "node name", "description", "blackboard key", "tree name (a key)"],
)
def test_a_lone_surrogate_is_a_located_one_line_error(
    plant: tuple[str, str], pointer: str, what: str
) -> None:
    old, new = plant
    text = base_text().replace(old, new, 1)
    issue = issue_for(text)
    escape = new[new.index("\\") : new.index("\\") + 6]
    assert (issue.line, issue.col) == position_of(text, escape)
    assert issue.pointer == pointer
    assert issue.kind == "json_unicode"
    assert issue.message.startswith(f"{what} holds {escape}, a lone surrogate: not Unicode text")
    shown = str(issue)
    assert "\n" not in shown
    shown.encode("utf-8")  # printable: what crashed validate is now an escape in the text
    assert shown.startswith(f"x.json:{issue.line}:{issue.col}: {pointer}: {what} holds")


def test_surrogate_pairs_and_escaped_backslashes_are_text() -> None:
    text = base_text().replace('"NODE"', '"\\ud83d\\ude00 \\\\ud800"', 1)
    scenario = behaviortk.load_text(text, "x.json")
    assert scenario.trees["a"].name == "\U0001f600 \\ud800"  # a smiley, then a backslash


def test_a_high_surrogate_followed_by_a_high_one_is_lone() -> None:
    with pytest.raises(JsonSyntaxError) as err:
        parse('{"k": "x\\ud83d\\ud83d\\ude00"}')
    assert err.value.offset == len('{"k": "x')
    assert err.value.pointer == "/k"


@given(st.lists(st.sampled_from(["a", "\\\\", "\\ud83d", "\\ude00", "\\u0041", "\\n"])))
def test_lone_surrogate_agrees_with_what_json_decodes(parts: list[str]) -> None:
    token = '"' + "".join(parts) + '"'
    decoded = json.loads(token)
    has_lone = any("\ud800" <= c <= "\udfff" for c in decoded)
    found = lone_surrogate(token)
    assert (found is not None) == has_lone
    if found is not None:
        index, escape = found
        assert token[index : index + 6] == escape
        with pytest.raises(JsonSyntaxError) as err:
            parse('{"s": ' + token + "}")
        assert err.value.offset == len('{"s": ') + index
    else:
        assert parse('{"s": ' + token + "}").data == {"s": decoded}


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    """The command line in a child process, so its output is a real UTF-8 stream (pytest's
    capture accepts any string, surrogates included)."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "ARCADE_HEADLESS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "behaviortk", *argv],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        env=env,
        timeout=120,
        check=False,
    )


def planted(tmp_path: Path, old: str, new: str) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(base_text().replace(old, new, 1), encoding="utf-8")
    return path


def test_validate_tree_and_run_trace_report_a_node_name_surrogate(tmp_path: Path) -> None:
    path = planted(tmp_path, '"NODE"', f'"{LONE}"')
    line, col = position_of(path.read_text(), LONE)
    trace = tmp_path / "t.parquet"
    for argv in (
        ["validate", str(path)],
        ["tree", str(path)],
        ["run", "--headless", "--ticks", "1", "--trace", str(trace), str(path)],
    ):
        done = cli(*argv)
        out = done.stdout + done.stderr
        assert done.returncode == 1, out
        assert f"bad.json:{line}:{col}: /trees/main/root/name: string holds \\ud800" in out
        assert "Error" not in out  # no UnicodeEncodeError, no traceback
    assert not trace.exists()


def test_validate_reports_a_group_name_surrogate(tmp_path: Path) -> None:
    path = planted(tmp_path, '"a"', f'"a{LONE}"')
    done = cli("validate", str(path))
    assert done.returncode == 1
    assert "/groups/0/name: string holds \\ud800" in done.stdout
    assert "Error" not in done.stdout + done.stderr
