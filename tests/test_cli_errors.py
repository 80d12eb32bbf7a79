"""Definition errors with their source: snapshots of the rendering, colour only on a terminal.

Each snapshot is the exact plain text ``behaviortk validate`` prints for a bad
file: the one-line form first (unchanged, for editors and CI), then the line
of the file with a caret under the token, the key path naming groups and node
types, the fix, and which ``explain`` to read.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_support import headlines

from behaviortk.cli import main
from behaviortk.commands.diagnostics import excerpt, render_issues, token_length
from behaviortk.format.issues import Issue

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;]*m")

SEVERAL = """\
{
  "name": "several",
  "world": {"width": 400, "height": 300, "edges": "wrpa"},
  "groups": [
    {"name": "sheep", "count": 3, "spawn": {"kind": "area", "min": [0, 0], "max": [400, 300]},
     "tree": "graze", "max_sped": 90}
  ],
  "trees": {
    "graze": {"root": {"type": "sequence", "memory": false, "children": [
      {"type": "wait", "duration": -2},
      {"type": "wnader"}
    ]}}
  }
}
"""

SEVERAL_RENDERED = """\
several.json:3:51: /world/edges: expected 'wrap', 'bounce' or 'contain', got 'wrpa'; did you mean 'wrap'? [literal_error]
  |
3 |   "world": {"width": 400, "height": 300, "edges": "wrpa"},
  |                                                   ^^^^^^ expected 'wrap', 'bounce' or 'contain', got 'wrpa'
  = in: world > edges
  = help: did you mean 'wrap'?

several.json:6:35: /groups/0/max_sped: unknown key 'max_sped'; did you mean 'max_speed'? closest of 23: max_speed, speed, max_force, mass, max_turn_rate [extra_forbidden]
  |
6 |      "tree": "graze", "max_sped": 90}
  |                       ^^^^^^^^^^ unknown key 'max_sped'
  = in: groups[0] (sheep) > max_sped
  = help: did you mean 'max_speed'? closest of 23: max_speed, speed, max_force, mass, max_turn_rate

several.json:10:36: /trees/graze/root/children/0/duration: must be >= 0.0, got -2 [greater_than_equal]
   |
10 |       {"type": "wait", "duration": -2},
   |                                    ^^ must be >= 0.0, got -2
   = in: trees > graze > root > children[0] (wait) > duration
   = see: behaviortk explain wait

several.json:11:7: /trees/graze/root/children/1: unknown node type 'wnader'; did you mean 'wander'? closest of 65: wander, evade, inverter, wall_avoidance, wait [unknown_type]
   |
11 |       {"type": "wnader"}
   |                ^^^^^^^^ unknown node type 'wnader'
   = in: trees > graze > root > children[1] (wnader)
   = help: did you mean 'wander'? closest of 65: wander, evade, inverter, wall_avoidance, wait
   = see: behaviortk explain (lists every node type and target kind)

"""

MINIFIED = (
    '{"name": "mini", "world": {"width": 400, "height": 300}, "groups": [{"name": "a", '
    '"count": 1, "spawn": {"kind": "area", "min": [0, 0], "max": [10, 10]}, "tree": "t", '
    '"fov": 720}], "trees": {"t": {"root": {"type": "wander"}}}}'
)

# a line of 213 characters: 100 are shown, from 40 before the caret, "..." where it is cut
MINIFIED_RENDERED = """\
minified.json:1:174: /groups/0/fov: must be <= 360.0, got 720 [less_than_equal]
  |
1 | ...: [0, 0], "max": [10, 10]}, "tree": "t", "fov": 720}], "trees": {"t": {"root": {"type": "wander"}}}}
  |                                                    ^^^ must be <= 360.0, got 720
  = in: groups[0] (a) > fov

"""

COMMA = '{\n  "name": "comma",\n  "world": {"width": 1, "height": 1},\n}\n'

COMMA_RENDERED = """\
comma.json:4:1: /: trailing comma before '}' [json_trailing_comma]
  |
4 | }
  | ^ trailing comma before '}'

"""

# A tab is shown as 4 spaces, a control character as its escape: the caret still lines up.
TABBED = '{\n\t"name":\t"x\x1b[31mred",\n\t"world": 1}'

TABBED_RENDERED = """\
tabbed.json:2:10: /: invalid string: control character or bad escape inside quotes [json_syntax]
  |
2 |     "name":    "x\\x1b[31mred",
  |                ^^^^^^^^^^^^^^ invalid string: control character or bad escape inside quotes

"""

CASES = {
    "several.json": (SEVERAL, SEVERAL_RENDERED),
    "minified.json": (MINIFIED, MINIFIED_RENDERED),
    "comma.json": (COMMA, COMMA_RENDERED),
    "tabbed.json": (TABBED, TABBED_RENDERED),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rendering_snapshot(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text, rendered = CASES[name]
    (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", name]) == 1
    out = capsys.readouterr().out
    assert out == rendered
    assert "\x1b" not in out.replace("\\x1b", "")  # captured output is not a terminal


def test_several_files_each_issue_once_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, (text, _) in CASES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "comma.json", "several.json"]) == 1
    out = capsys.readouterr().out
    assert out == COMMA_RENDERED + SEVERAL_RENDERED
    assert [h.split(":")[1] for h in headlines(out)] == ["4", "3", "6", "10", "11"]


def test_a_file_that_cannot_be_read_has_no_excerpt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "gone.json"]) == 1
    assert capsys.readouterr().out == "gone.json:1:1: /: no such file [file_not_found]\n\n"


def test_json_format_for_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "comma.json").write_text(COMMA, encoding="utf-8")
    (tmp_path / "several.json").write_text(SEVERAL, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    good = str(ROOT / "definitions" / "wander.json")
    assert main(["validate", "--format", "json", "comma.json", good, "several.json"]) == 1
    out, err = capsys.readouterr()
    assert err == ""  # nothing but the JSON object, on stdout
    report = json.loads(out)
    assert report["valid"] is False
    assert [(f["file"], f["status"], len(f["issues"])) for f in report["files"]] == [
        ("comma.json", "invalid", 1),
        (good, "ok", 0),
        ("several.json", "invalid", 4),
    ]
    # the key 'max_sped' starts at column 23 of line 6 and is 10 characters with its quotes
    assert report["files"][2]["issues"][1] == {
        "file": "several.json",
        "line": 6,
        "col": 35,
        "pointer": "/groups/0/max_sped",
        "message": "unknown key 'max_sped'; did you mean 'max_speed'? closest of 23: max_speed, "
        "speed, max_force, mass, max_turn_rate",
        "kind": "extra_forbidden",
        "start_col": 23,
        "end_col": 33,
    }
    assert main(["validate", "--format", "json", good]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] is True


def test_token_lengths_and_wide_characters() -> None:
    line = '  "key": "a\\"b", "n": -1.5e3, "t": true, {'
    assert token_length(line, 2) == 5  # "key"
    assert token_length(line, 9) == 6  # "a\"b" with its escaped quote
    assert token_length(line, 22) == 6  # -1.5e3
    assert token_length(line, 35) == 4  # true
    assert token_length(line, len(line) - 1) == 1  # {
    # two East Asian wide characters before the caret take two columns each: 1 + 2 + 2 + 3
    assert excerpt('"名前": 5', 6) == ('"名前": 5', 8, 1)


def test_colour_adds_only_styles() -> None:
    issue = Issue("x.json", 1, 9, "/a", "unknown key 'a'; did you mean 'b'? valid: b", "k")
    sources = {"x.json": '{"b": 1, "a": 2}'}
    plain = render_issues([issue], color=False, sources=sources)
    coloured = render_issues([issue], color=True, sources=sources)
    assert "\x1b[" not in plain and "\x1b[31m" in coloured
    assert ANSI.sub("", coloured) == plain


def run_on_terminal(argv: list[str], env: dict[str, str]) -> str:
    """What ``python -m behaviortk ARGV`` writes when stdout and stderr are a terminal."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "behaviortk", *argv],
        stdout=follower,
        stderr=follower,
        cwd=ROOT,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed (Linux: EIO)
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


BAD = "tests/fixtures/invalid/unknown_key_typo.json"


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    return {**env, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT), **extra}


def test_coloured_on_a_terminal_plain_with_no_color_or_piped() -> None:
    on_terminal = run_on_terminal(["validate", BAD], clean_env())
    no_color = run_on_terminal(["validate", BAD], clean_env(NO_COLOR="1"))
    piped = subprocess.run(
        [sys.executable, "-m", "behaviortk", "validate", BAD],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=clean_env(),
    ).stdout
    forced = subprocess.run(
        [sys.executable, "-m", "behaviortk", "validate", BAD],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=clean_env(FORCE_COLOR="1"),
    ).stdout
    assert "\x1b[31m" in on_terminal and "\x1b[31m" in forced  # the caret line, in red
    assert "\x1b" not in no_color and "\x1b" not in piped
    expected = textwrap.dedent(
        """\
        unknown_key_typo.json:21:16: /groups/0/radus: unknown key 'radus'; did you mean 'radius'? closest of 23: radius, params, mass, names, heading [extra_forbidden]
           |
        21 |       "radus": 5
           |       ^^^^^^^ unknown key 'radus'
           = in: groups[0] (sheep) > radus
           = help: did you mean 'radius'? closest of 23: radius, params, mass, names, heading
        """
    )
    # the file as named on the command line, and its ok/error summary lines on stderr
    expected = expected.replace("unknown_key_typo.json:", f"{BAD}:", 1)
    assert piped == expected + "\n"
    assert no_color.startswith(expected)
    assert ANSI.sub("", on_terminal).startswith(expected)
