"""The JSON Schema: committed copy is current, and it accepts what the models produce."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from behaviortk.format.definition import Definition
from behaviortk.format.limits import MIN_WORLD_SIDE
from behaviortk.format.schema import json_schema, schema_text

ROOT = Path(__file__).parent.parent
COMMITTED = ROOT / "definitions" / "behaviortk.schema.json"


def test_committed_schema_is_current() -> None:
    assert COMMITTED.read_text() == schema_text(), (
        "definitions/behaviortk.schema.json is stale: run `make schema`"
    )


def test_schema_is_draft_2020_12_with_docs() -> None:
    schema = json_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    group = schema["$defs"]["Group"]["properties"]
    assert group["max_speed"]["default"] == 150.0
    assert "world units/s" in group["max_speed"]["description"]
    assert group["count"]["maximum"] == 10_000_000
    assert "sequence" in schema["$defs"]["Node"]["properties"]["type"]["enum"]


def test_shipped_definitions_pass_both_validators() -> None:
    from behaviortk.commands.validate import check

    for path in sorted((ROOT / "definitions").glob("*.json")):
        if path.name == COMMITTED.name:
            continue
        assert json.loads(path.read_text()).get("$schema") == "behaviortk.schema.json", path
        assert check(str(path), schema_only=False, max_agents=200_000) == [], path
        assert check(str(path), schema_only=True, max_agents=200_000) == [], path


finite = st.floats(-1e6, 1e6, allow_nan=False)
positive = st.floats(0.001, 1e6)
side = st.floats(MIN_WORLD_SIDE, 1e6)
point = st.tuples(finite, finite).map(list)
leaf = st.builds(lambda d: {"type": "wait", "duration": d}, st.floats(0, 100))


def _node(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(
            lambda kind, m, c: {"type": kind, "memory": m, "children": c},
            st.sampled_from(["sequence", "selector"]),
            st.booleans(),
            st.lists(children, min_size=1, max_size=3),
        ),
        st.builds(lambda c: {"type": "inverter", "child": c}, children),
        st.builds(lambda d, c: {"type": "timeout", "duration": d, "child": c}, positive, children),
        st.builds(
            lambda n, c: {"type": "repeat", "num_success": n, "child": c},
            st.one_of(st.just(-1), st.integers(1, 9)),
            children,
        ),
        st.builds(
            lambda options, inertia: {"type": "utility", "inertia": inertia, "children": options},
            st.lists(utility_option(children), min_size=1, max_size=3),
            st.floats(0, 10),
        ),
    )


def utility_option(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A `utility` option: a child, a weight, considerations of any input and curve kind."""
    curve = st.one_of(
        st.builds(
            lambda m, c, b: {"kind": "linear", "m": m, "c": c, "b": b}, finite, finite, finite
        ),
        st.builds(lambda k: {"kind": "quadratic", "k": k}, st.integers(1, 8)),
        st.builds(
            lambda k, c: {"kind": "logistic", "k": k, "c": c}, st.floats(-1000, 1000), finite
        ),
        st.builds(lambda k: {"kind": "logit", "k": k}, st.floats(0.001, 1000)),
        st.builds(lambda k: {"kind": "exponential", "k": k}, st.floats(-100, 100)),
        st.builds(lambda c: {"kind": "step", "c": c}, finite),
    )
    source = st.sampled_from([{"kind": "speed"}, {"kind": "neighbours", "of": "any"}])
    consideration = st.builds(
        lambda i, lo, width, c: {"input": i, "range": [lo, lo + width], "curve": c},
        source,
        st.floats(-1000, 1000),
        st.floats(0.001, 1000),
        curve,
    )
    return st.builds(
        lambda child, weight, cs: {"child": child, "weight": weight, "considerations": cs},
        children,
        st.floats(0, 1e6),
        st.lists(consideration, max_size=3),
    )


trees = st.recursive(leaf, _node, max_leaves=8)


@st.composite
def definitions(draw: st.DrawFn) -> dict[str, Any]:
    n_groups = draw(st.integers(1, 3))
    groups = []
    for i in range(n_groups):
        count = draw(st.integers(0, 50))
        spawn = draw(
            st.one_of(
                st.builds(
                    lambda lo: {"kind": "area", "min": lo, "max": [lo[0] + 1, lo[1] + 1]}, point
                ),
                st.builds(lambda c, r: {"kind": "ring", "center": c, "radius": r}, point, positive),
                st.builds(
                    lambda pts: {"kind": "positions", "points": pts},
                    st.lists(point, min_size=count, max_size=count),
                ),
            )
        )
        groups.append(
            {
                "name": f"g{i}",
                "count": count,
                "spawn": spawn,
                "heading": draw(st.one_of(st.just("random"), finite)),
                "max_speed": draw(positive),
                "fov": draw(st.floats(0.5, 360)),
                "colour": draw(
                    st.one_of(
                        st.just("#a0b1c2"), st.lists(st.integers(0, 255), min_size=3, max_size=3)
                    )
                ),
                "tree": "main",
            }
        )
    return {
        "name": "generated",
        "world": {
            "width": draw(side),
            "height": draw(side),
            "edges": draw(st.sampled_from(["wrap", "bounce", "contain"])),
            "seed": draw(st.integers(0, 2**31)),
        },
        "obstacles": draw(
            st.lists(st.builds(lambda a, r: {"at": a, "radius": r}, point, positive), max_size=3)
        ),
        "groups": groups,
        "trees": {"main": {"root": draw(trees)}},
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(definitions())
def test_model_dumps_are_accepted_by_jsonschema(raw: dict[str, Any]) -> None:
    """Property: what pydantic accepts, dumped back to JSON, is valid against the schema."""
    from behaviortk.format.adapters import validate_definition
    from behaviortk.registry import default

    model = validate_definition(raw, default())
    dumped = json.loads(model.model_dump_json(by_alias=True))
    dumped.pop("$schema", None)
    errors = list(Draft202012Validator(json_schema()).iter_errors(dumped))
    assert errors == []
    assert isinstance(model, Definition)
