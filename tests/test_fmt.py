"""``behaviortk fmt``: one canonical layout, every value kept, idempotent, never over an edit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from behaviortk.cli import main
from behaviortk.format import loader
from behaviortk.format.layout import canonical, formatted
from behaviortk.format.schema import json_schema

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(
    p
    for p in [
        *(ROOT / "definitions").glob("*.json"),
        *(ROOT / "behaviortk" / "templates").glob("*.json"),
        *(ROOT / "examples").rglob("*.json"),
    ]
    if not p.name.endswith(".schema.json")
)

MESSY = """{"groups": [{"tree": "t", "count": 2, "name": "a",
  "spawn": {"points": [[1, 2], [3.50, 4e1]], "kind": "positions"}}],
 "world": {"seed": 3, "width": 400, "height": 300},
 "name": "caf\u00e9 \U0001f98a", "$schema": "behaviortk.schema.json",
 "trees": {"t": {"root": {"target": {"point": [5, 6], "kind": "point"}, "name": "go", "type": "seek"}}}}"""

EXPECTED = """{
  "$schema": "behaviortk.schema.json",
  "name": "caf\u00e9 \U0001f98a",
  "world": {"width": 400, "height": 300, "seed": 3},
  "groups": [
    {
      "name": "a",
      "count": 2,
      "spawn": {"kind": "positions", "points": [[1, 2], [3.50, 4e1]]},
      "tree": "t"
    }
  ],
  "trees": {
    "t": {
      "root": {
        "type": "seek",
        "name": "go",
        "target": {"kind": "point", "point": [5, 6]}
      }
    }
  }
}
"""


def test_the_layout_worked_by_hand() -> None:
    """Schema order (tag and name first), two spaces, flat containers on one line, spelling kept."""
    assert formatted(MESSY, "messy.json") == EXPECTED
    assert formatted(EXPECTED, "messy.json") == EXPECTED


def test_a_long_flat_container_breaks_at_the_width() -> None:
    points = [[i * 100, i * 100] for i in range(12)]  # 12 points: longer than 100 columns
    text = json.dumps({"paths": [{"name": "p", "points": points}]})
    out = formatted(text, "p.json")
    assert '      "points": [\n        [0, 0],\n        [100, 100],' in out
    assert max(len(line) for line in out.splitlines()) < 100


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_definition_is_formatted(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert formatted(text, path.name) == text, f"run: behaviortk fmt {path.relative_to(ROOT)}"


def test_check_lists_what_would_change_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messy, tidy = tmp_path / "messy.json", tmp_path / "tidy.json"
    messy.write_text(MESSY)
    tidy.write_text(EXPECTED)
    assert main(["fmt", "--check", str(messy), str(tidy)]) == 1
    out = capsys.readouterr()
    assert out.out == f"would reformat {messy}\n" and "1 of 2 file(s) would be" in out.err
    assert messy.read_text() == MESSY
    assert main(["fmt", str(messy), str(tidy)]) == 0
    assert messy.read_text() == EXPECTED and tidy.read_text() == EXPECTED
    assert main(["fmt", "--check", str(messy), str(tidy)]) == 0
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_file_edited_while_formatting_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "scene.json"
    path.write_text(MESSY)
    real = loader.read_text
    reads = []

    def editor_saves_between_reads(p: Any, **kw: Any) -> str:
        reads.append(p)
        if len(reads) == 2:  # the editor saves after fmt read the file
            path.write_text(MESSY.replace('"go"', '"went"'))
        return real(p, **kw)

    monkeypatch.setattr(loader, "read_text", editor_saves_between_reads)
    assert main(["fmt", str(path)]) == 1
    assert "changed on disk while formatting; left alone" in capsys.readouterr().out
    assert path.read_text() == MESSY.replace('"go"', '"went"')


def test_bad_json_is_located_and_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    broken = '{"name": "x",\n "world": {"width": NaN}}'
    path.write_text(broken)
    assert main(["fmt", str(path)]) == 1
    assert f"{path}:2:21: /: NaN is not a JSON number" in capsys.readouterr().err
    assert path.read_text() == broken
    assert main(["fmt", str(tmp_path / "missing.json")]) == 1


def test_a_json_schema_is_skipped(tmp_path: Path) -> None:
    schema = tmp_path / "behaviortk.schema.json"
    text = (ROOT / "definitions" / "behaviortk.schema.json").read_text()
    schema.write_text(text)
    assert main(["fmt", "--check", str(schema)]) == 0 and schema.read_text() == text


SCHEMA = json_schema()
keys = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
numbers = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
)
values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, keys),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(keys, inner, max_size=5)),
    max_leaves=30,
)
documents = st.dictionaries(
    st.sampled_from(["name", "world", "groups", "trees", "paths", "other", "$schema"]),
    values,
    max_size=7,
)


@settings(max_examples=150, deadline=None)
@given(documents, st.sampled_from([None, 1, 3]))
def test_any_document_keeps_its_values_and_formats_once(doc: dict[str, Any], indent: Any) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    out = canonical(text, SCHEMA)
    assert json.loads(out) == json.loads(text) and out.endswith("\n")
    assert canonical(out, SCHEMA) == out
