"""The strict JSON parser: positions for every pointer, and what it refuses (RFC 8259)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from behaviortk.format.jsonparse import JsonSyntaxError, parse

TEXT = '{\n  "a": [1, {"b": 2.5}],\n  "c": {"d": null, "e/f": true}\n}'


def test_positions_of_pointers() -> None:
    parsed = parse(TEXT)
    assert parsed.data == {"a": [1, {"b": 2.5}], "c": {"d": None, "e/f": True}}
    assert parsed.position("") == (1, 1)
    assert parsed.position("/a") == (2, 8)
    assert parsed.position("/a/1/b") == (2, 18)
    assert parsed.position("/c/d") == (3, 14)
    assert parsed.position("/c/e~1f") == (3, 27)  # RFC 6901 escape of '/'
    assert parsed.position("/c/missing") == (3, 8)  # deepest existing value


@pytest.mark.parametrize(
    ("text", "kind", "offset"),
    [
        ("", "empty", 0),
        ('{"a": 1', "json_truncated", 7),
        ('{"a": 1,}', "json_trailing_comma", 8),
        ("[1, 2,]", "json_trailing_comma", 6),
        ('{"a": NaN}', "json_nan", 6),
        ('{"a": -Infinity}', "json_nan", 6),
        ('{"a": 1} // c', "json_comment", 9),
        ('{/* c */ "a": 1}', "json_comment", 1),
        ('{"a": 1e400}', "json_number", 6),
        ('{"a": 01}', "json_syntax", 6),
        ("{'a': 1}", "json_syntax", 1),
        ('{"a" 1}', "json_syntax", 5),
        ("{}{}", "json_syntax", 2),
    ],
)
def test_rejections(text: str, kind: str, offset: int) -> None:
    with pytest.raises(JsonSyntaxError) as info:
        parse(text)
    assert (info.value.kind, info.value.offset) == (kind, offset)


def test_duplicate_keys_are_all_collected() -> None:
    parsed = parse('{"a": 1, "b": {"x": 1, "x": 2}, "a": 3}')
    assert [(p, k) for p, _, k in parsed.duplicates] == [("/b", "x"), ("", "a")]


def test_deep_nesting_is_an_error_not_a_recursion_error() -> None:
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(JsonSyntaxError) as info:
        parse(text)
    assert info.value.kind == "json_too_deep"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_agrees_with_stdlib_json(value: object) -> None:
    """Property: on any JSON the stdlib writes, the parser returns the same value."""
    for text in (json.dumps(value), json.dumps(value, indent=2, ensure_ascii=False)):
        assert parse(text).data == json.loads(text)
