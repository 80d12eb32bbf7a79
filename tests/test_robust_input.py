"""Nothing crashes: every input gets a located DefinitionError or runs the same on both engines.

Bad-input classes each have a test; hypothesis throws arbitrary JSON (and mutated
valid definitions) at ``load_text`` and at the ``validate`` command.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_support import headlines
from engine_support import definition
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import behaviortk
from behaviortk.cli import main
from behaviortk.format.limits import MAX_MAGNITUDE
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.clock import MAX_TICKS, ticks_for

VALID = Path(__file__).parent / "fixtures" / "valid" / "chase.json"


def issues_of(data: Any) -> list[str]:
    text = data if isinstance(data, str) else json.dumps(data)
    with pytest.raises(behaviortk.DefinitionError) as err:
        behaviortk.load_text(text, "x.json")
    return [f"{i.pointer}: {i.message} [{i.kind}]" for i in err.value.issues]


def test_a_number_of_more_than_4300_digits_is_a_located_error() -> None:
    text = VALID.read_text().replace('"count": 3', '"count": ' + "9" * 5000, 1)
    (issue,) = issues_of(text)
    assert issue == ": number literal has 5,000 digits; at most 4,300 are read [json_number]"
    with pytest.raises(behaviortk.DefinitionError) as err:
        behaviortk.load_text(text, "x.json")
    assert err.value.issues[0].line > 1


def test_type_null_says_type_must_name_a_node_type() -> None:
    data = definition({"type": None})
    (issue,) = issues_of(data)
    assert issue.startswith(
        "/trees/main/root: 'type' must be a string naming a node type, got null; closest of"
    )


def test_a_condition_inside_blend_says_only_primitives_are_allowed_there() -> None:
    root = {
        "type": "blend",
        "children": [{"type": "in_range", "radius": 5, "target": {"kind": "self"}}],
    }
    (issue,) = issues_of(definition(root))
    assert issue.startswith(
        "/trees/main/root/children/0: 'in_range' is a condition, but only a steering primitive "
        "is allowed here; closest of "
    )
    root["children"] = [{"type": "seekk", "target": {"kind": "self"}}]
    (issue,) = issues_of(definition(root))
    assert "unknown steering primitive 'seekk'; did you mean 'seek'? closest of" in issue


@pytest.mark.parametrize("seconds", [1e6, MAX_MAGNITUDE])
def test_a_very_long_cooldown_runs_the_same_on_both_engines(seconds: float) -> None:
    assert ticks_for(1e300, 1e-300) == MAX_TICKS  # the clock caps what the format refuses
    root = {"type": "cooldown", "duration": seconds, "child": {"type": "wait", "duration": 0.1}}
    text = json.dumps(definition(root, count=2))
    sims = [
        Simulation(behaviortk.load_text(text, "x.json"), engine=e) for e in ("py_trees", "batch")
    ]
    for _ in range(5):
        for sim in sims:
            sim.step()
        assert np.array_equal(sims[0].decisions["a"].status, sims[1].decisions["a"].status)
    # cooling down: FAILURE without ticking the wait (which keeps its last SUCCESS)
    assert sims[0].decisions["a"].status[0].tolist() == [3, 2]


@pytest.mark.parametrize("key", ["/alarm", "a.b", "with space", "9lives", "", "x" * 65])
def test_blackboard_keys_are_plain_names(key: str) -> None:
    root = {"type": "blackboard_set", "key": key, "value": 1}
    (issue,) = issues_of(definition(root))
    assert issue.startswith("/trees/main/root/key: a blackboard key is 1 to 64 letters")


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_each_agent_has_its_own_blackboard_and_nothing_survives(engine: str) -> None:
    """Ids differing only in punctuation ("x y", "x_y") used to share one py_trees blackboard."""
    data = definition(
        {"type": "blackboard_set", "key": "seen", "value": 1},
        count=2,
        blackboard={"seen": "number"},
    )
    data["groups"][0]["names"] = ["x y", "x_y"]
    data["trees"]["main"]["root"] = {
        "type": "selector",
        "memory": False,
        "children": [
            {"type": "blackboard_compare", "key": "seen", "value": 1},
            {"type": "blackboard_set", "key": "seen", "value": 1},
        ],
    }
    scenario = behaviortk.load_text(json.dumps(data), "x.json")
    first = Simulation(scenario, engine=engine)
    first.step()  # both agents: compare fails (unset), then set
    assert first.decisions["a"].status[:, 1].tolist() == [3, 3]
    assert [first.engine.blackboard(r) for r in (0, 1)] == [{"seen": 1}, {"seen": 1}]
    second = Simulation(scenario, engine=engine)
    assert [second.engine.blackboard(r) for r in (0, 1)] == [{}, {}]
    second.step()
    assert second.decisions["a"].status[:, 1].tolist() == [3, 3]


def test_every_error_of_a_file_in_one_pass() -> None:
    """A duplicate key, a model error and an unknown tree name are reported together."""
    text = VALID.read_text()
    data = json.loads(text)
    data["world"]["width"] = -5
    data["groups"][0]["tree"] = "grazee"
    text = json.dumps(data, indent=2).replace('"name": "chase"', '"name": "chase", "name": "x"', 1)
    kinds = [i.split("[")[-1] for i in issues_of(text)]
    assert kinds == ["duplicate_key]", "greater_than_equal]", "unknown_tree]"]


# ------------------------------------------------------------------ properties
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
BASE = json.loads(VALID.read_text())


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(paths_of(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(paths_of(v, (*prefix, i)))
    return out


PATHS = paths_of(BASE)[1:]


@st.composite
def mutated(draw: Any) -> Any:
    """The valid fixture with one to three places replaced by arbitrary JSON or removed."""
    data = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        parent = data
        try:
            for part in path[:-1]:
                parent = parent[part]
            if draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = draw(json_values)
        except (KeyError, IndexError, TypeError):
            continue
    return data


def loads_or_refuses(data: Any) -> None:
    try:
        scenario = behaviortk.load_text(json.dumps(data), "x.json", max_agents=500)
    except behaviortk.DefinitionError as err:
        assert err.issues and all(i.line >= 1 and i.col >= 1 and i.message for i in err.issues)
        return
    assert scenario.trees


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_load_returns_a_scenario_or_raises_definition_error_for_any_json(data: Any) -> None:
    loads_or_refuses(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_load_of_a_mutated_definition_never_crashes(data: Any) -> None:
    loads_or_refuses(data)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.one_of(json_values, mutated()))
def test_validate_command_exits_0_or_1_with_located_lines(
    data: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps(data))
    code = main(["validate", "--max-agents", "500", str(path)])
    out, err = capsys.readouterr()
    assert code in (0, 1)
    assert "behaviortk: error" not in err  # the CLI's last line of defence never fired
    for line in headlines(out):  # each issue's one-line form, then its source excerpt
        assert line.startswith(f"{path}:")


def test_the_mutation_strategy_reaches_valid_and_invalid_files() -> None:
    """The property tests above are not vacuous: mutations give both outcomes."""
    outcomes = set()
    for seed in range(40):
        data = _mutate_with(seed)
        try:
            behaviortk.load_text(json.dumps(data), "x.json")
            outcomes.add("valid")
        except behaviortk.DefinitionError:
            outcomes.add("invalid")
    assert outcomes == {"valid", "invalid"}


def _mutate_with(seed: int) -> Any:
    """A deterministic mutation: drop one optional place or set it to null."""
    data = copy.deepcopy(BASE)
    path = PATHS[(seed * 7) % len(PATHS)]
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    if seed % 2 and isinstance(parent, dict):
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = None
    return data
