"""``behaviortk validate`` and ``schema`` from the command line: exit codes, one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import headlines

from behaviortk.cli import main
from behaviortk.format.schema import schema_text

VALID = Path(__file__).parent / "fixtures" / "valid" / "chase.json"
ROOT = Path(__file__).parent.parent


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    """Exit code, the one-line form of each issue printed, and stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, headlines(out), err


def test_valid_file_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "validate", str(VALID))
    assert (code, out) == (0, [])
    assert "ok" in err
    assert _run(capsys, "validate", "--schema-only", str(VALID))[:2] == (0, [])


BAD_BYTES: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "1:1: /: file is empty [empty]"),
    "blank": (b"  \n ", "1:1: /: file is empty [empty]"),
    "not_json": (
        b"hello",
        "1:1: /: unexpected word 'hello' (strings need double quotes) [json_syntax]",
    ),
    "truncated": (
        b'{"name": "x", "world": {',
        "1:25: /: unexpected end of file: missing '}' (truncated JSON?) [json_truncated]",
    ),
    "array": (b"[]", "1:1: /: the top level must be a JSON object, not an array [not_an_object]"),
    "string": (b'"x"', "1:1: /: the top level must be a JSON object, not a string [not_an_object]"),
    "comment": (b'{\n# note\n"a": 1}', "2:1: /: comments are not allowed in JSON [json_comment]"),
    "utf8": (b'{"name": "\xff"}', "1:11: /: invalid UTF-8 byte 0xff [not_utf8]"),
    "binary": (b"\x00\x01\x02", "1:1: /: binary data (NUL bytes), not a JSON text file [not_text]"),
    "duplicate": (b'{"a": 1,\n "a": 2}', "2:2: /: duplicate key 'a' [duplicate_key]"),
    "nan": (b'{"a": NaN}', "1:7: /: NaN is not a JSON number; use a finite number [json_nan]"),
    "infinity": (
        b'{"a": Infinity}',
        "1:7: /: Infinity is not a JSON number; use a finite number [json_nan]",
    ),
    "deep": (
        b"[" * 100_000 + b"]" * 100_000,
        "1:257: /: nesting is deeper than 256 levels [json_too_deep]",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_BYTES))
@pytest.mark.parametrize("schema_only", [False, True])
def test_bad_bytes_one_line_nonzero(
    case: str, schema_only: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, expected = BAD_BYTES[case]
    path = tmp_path / f"{case}.json"
    path.write_bytes(data)
    argv = ["validate", *(["--schema-only"] if schema_only else []), str(path)]
    code, out, _ = _run(capsys, *argv)
    assert code == 1
    assert out == [f"{path}:{expected}"]


def test_count_of_a_billion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = VALID.read_text().replace('"count": 3', '"count": 1000000000')
    path = tmp_path / "big.json"
    path.write_text(text)
    code, out, _ = _run(capsys, "validate", str(path))
    assert code == 1
    assert out[-1] == (
        f"{path}:11:32: /groups/0/count: must be <= 10000000, got 1000000000 [less_than_equal]"
    )
    assert "agents in total exceeds the limit of 200,000" in out[0]


def test_missing_file_directory_and_size_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (10 * 1024 * 1024 + 1))
    code, out, _ = _run(
        capsys, "validate", str(tmp_path / "nope.json"), str(tmp_path), str(big), str(VALID)
    )
    assert code == 1
    assert out == [
        f"{tmp_path / 'nope.json'}:1:1: /: no such file [file_not_found]",
        f"{tmp_path}:1:1: /: is a directory, not a definition file [is_a_directory]",
        f"{big}:1:1: /: file is 10,485,761 bytes; the limit is 10,485,760 [file_too_large]",
    ]


def test_usage_errors_exit_two(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "validate")[0] == 2
    assert _run(capsys, "validate", "--max-agents", "lots", str(VALID))[0] == 2
    assert _run(capsys, "no-such-command")[0] == 2
    assert _run(capsys)[0] == 2


def test_max_agents_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "validate", "--max-agents", "4", str(VALID))
    assert code == 1
    assert out == [
        f"{VALID}:10:13: /groups: 5 agents in total exceeds the limit of 4 (raise it with --max-agents) [too_many_agents]"
    ]


def test_schema_command_prints_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["schema"])
    assert code == 0
    assert capsys.readouterr().out == schema_text()


def test_subprocess_never_shows_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"a": 1,}')
    proc = subprocess.run(
        [sys.executable, "-m", "behaviortk", "validate", str(bad), str(tmp_path / "gone.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    assert headlines(proc.stdout) == [
        f"{bad}:1:9: /: trailing comma before '}}' [json_trailing_comma]",
        f"{tmp_path / 'gone.json'}:1:1: /: no such file [file_not_found]",
    ]


def test_shipped_folder_validates_and_skips_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    """`behaviortk validate definitions/*.json` exits 0; the schema file itself is skipped."""
    files = sorted(str(p) for p in (ROOT / "definitions").glob("*.json"))
    code, out, err = _run(capsys, "validate", *files)
    assert (code, out) == (0, [])
    assert "behaviortk.schema.json: skipped (a JSON Schema, not a definition)" in err
