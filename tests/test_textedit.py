"""format/textedit: values changed in place, keys added indented like their siblings, and
nothing else touched (checked by hand and on random documents)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from behaviortk.format.textedit import EditError, dump, set_values

TEXT = """{
  "world": {"width": 800, "height": 600},
  "groups": [
    {
      "name": "a",
      "max_speed": 120.5,
      "spawn": {"kind": "area", "min": [0, 0], "max": [10, 10]}
    }
  ],
  "empty": {}
}
"""


def test_a_value_is_replaced_and_nothing_else_moves() -> None:
    out = set_values(TEXT, {"/groups/0/max_speed": 80.0})
    assert out == TEXT.replace("120.5", "80")


def test_a_missing_key_goes_last_with_its_siblings_indent() -> None:
    out = set_values(TEXT, {"/groups/0/params/scare": 3.5, "/empty/x": True})
    assert (
        '      "spawn": {"kind": "area", "min": [0, 0], "max": [10, 10]},\n      "params": {"scare": 3.5}\n'
        in out
    )
    assert '"empty": {"x": true}' in out
    assert json.loads(out)["groups"][0]["params"] == {"scare": 3.5}
    one_line = set_values('{"a": 1, "b": {"c": 2}}', {"/b/d": [1, 2]})
    assert one_line == '{"a": 1, "b": {"c": 2, "d": [1, 2]}}'


def test_containers_are_replaced_whole_and_bad_pointers_refused() -> None:
    out = set_values(TEXT, {"/groups/0/spawn/min": [5, 6.25]})
    assert '"min": [5, 6.25]' in out
    with pytest.raises(EditError, match="not an object"):
        set_values(TEXT, {"/world/width/x": 1})
    with pytest.raises(EditError, match="not strict JSON"):
        set_values('{"a": 1,}', {"/a": 2})
    assert dump(80.0) == "80" and dump(0.1) == "0.1" and dump(None) == "null"


keys = st.text(alphabet="abcxyz_/~", min_size=1, max_size=4)
scalars = st.one_of(
    st.integers(-1000, 1000),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.booleans(),
    st.text(max_size=5),
)
documents = st.recursive(
    scalars,
    lambda inner: st.dictionaries(keys, inner, max_size=4) | st.lists(inner, max_size=3),
    max_leaves=12,
).filter(lambda d: isinstance(d, dict))


def pointers(doc: dict) -> list[str]:
    out = []
    stack = [("", doc)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                p = path + "/" + k.replace("~", "~0").replace("/", "~1")
                out.append(p)
                stack.append((p, v))
    return out


@settings(max_examples=80, deadline=None)
@given(documents, st.integers(0, 2), st.floats(-100, 100, allow_nan=False), st.data())
def test_random_documents_change_only_where_asked(
    doc: dict, indent: int, value: float, data
) -> None:
    text = json.dumps(doc, indent=indent or None)
    targets = pointers(doc)
    pointer = data.draw(st.sampled_from(targets)) if targets else "/new"
    out = set_values(text, {pointer: value})
    after = json.loads(out)
    keys_path = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
    node = after
    for k in keys_path[:-1]:
        node = node[k]
    assert node[keys_path[-1]] == json.loads(dump(value))
    # everything before the changed value is byte for byte the same
    if targets:
        assert list(json.loads(out)) == list(doc)  # top-level key order kept
