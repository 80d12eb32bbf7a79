"""Loading: expansion of subtrees and parameters, Scenario contents, plugins, limits."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import behaviortk
from behaviortk.format.structure import EternalGuard, Repeat, Selector, Sequence, Timeout

VALID = Path(__file__).parent / "fixtures" / "valid" / "chase.json"
ROOT = Path(__file__).parent.parent


def test_scenario_trees_are_expanded_and_substituted() -> None:
    scenario = behaviortk.load(VALID)
    assert scenario.path == VALID
    assert [g.name for g in scenario.definition.groups] == ["sheep", "wolves"]
    sheep = scenario.trees["sheep"]
    assert isinstance(sheep, Selector)
    guard = sheep.children[0]
    assert isinstance(guard, EternalGuard) and guard.name == "wolf near"
    # "$scare" comes from the group's params (80), no default in the tree
    assert guard.condition.radius == 80.0  # type: ignore[attr-defined]
    # subtree "pause" with seconds="$rest" -> graze's default 1.5 -> wait.duration
    assert isinstance(guard.child, Timeout)
    assert guard.child.child.duration == 1.5  # type: ignore[attr-defined]
    # the second call of "pause" passes nothing: pause's own default 0.5
    assert sheep.children[1].child.duration == 0.5  # type: ignore[attr-defined]
    wolves = scenario.trees["wolves"]
    assert isinstance(wolves, Sequence) and isinstance(wolves.children[1], Repeat)
    assert wolves.children[1].child.child.duration == 2.0  # type: ignore[attr-defined]


def test_group_defaults_and_agent_ids() -> None:
    sheep, wolves = behaviortk.load(VALID).definition.groups
    assert sheep.agent_ids() == ["dolly", "sheep-1", "sheep-2"]
    assert (sheep.mass, sheep.max_speed, sheep.max_force, sheep.radius) == (1.0, 150.0, 300.0, 6.0)
    assert (sheep.fov, sheep.view_distance, sheep.heading, sheep.max_turn_rate) == (
        270.0,
        60.0,
        "random",
        None,
    )
    assert wolves.colour == (200, 40, 40)


def _base() -> dict[str, Any]:
    text = VALID.read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def _issues(data: dict[str, Any], **kw: Any) -> list[str]:
    try:
        behaviortk.load_text(json.dumps(data, indent=1), "t.json", **kw)
    except behaviortk.DefinitionError as exc:
        return [f"{i.pointer}: {i.message} [{i.kind}]" for i in exc.issues]
    return []


def test_all_errors_of_a_file_at_once() -> None:
    data = _base()
    data["world"]["width"] = 0
    data["groups"][0]["mass"] = -1
    data["groups"][1]["colr"] = "#ffffff"
    assert _issues(data) == [
        "/world/width: must be >= 1.0, got 0 [greater_than_equal]",
        "/groups/0/mass: must be >= 1e-06, got -1 [greater_than_equal]",
        "/groups/1/colr: unknown key 'colr'; did you mean 'colour'? "
        "closest of 23: colour, control, count, max_force, formation [extra_forbidden]",
    ]


def test_max_agents_is_overridable() -> None:
    data = _base()
    data["groups"][0]["count"] = 300_000
    assert _issues(data)[0].endswith("[too_many_agents]")
    assert _issues(data, max_agents=400_000) == []


def test_depth_limit_is_configurable() -> None:
    data = _base()
    node: dict[str, Any] = {"type": "wait"}
    for _ in range(10):
        node = {"type": "inverter", "child": node}
    data["trees"]["hunt"]["root"] = node
    assert _issues(data) == []
    # hunt root is 11 levels deep: inverter x10 + wait
    assert _issues(data, max_depth=10) == [
        "/groups/1/tree: group 'wolves': the tree is deeper than 10 levels after "
        "expanding subtrees [too_deep]"
    ]


def test_subtree_param_errors_point_into_the_subtree_definition() -> None:
    data = _base()
    data["trees"]["hunt"]["root"]["children"][1]["child"]["params"]["seconds"] = -2
    assert _issues(data) == [
        "/trees/pause/root/child/duration: group 'wolves': must be >= 0.0, got -2 [greater_than_equal]"
    ]


PLUGIN = """
from typing import Literal
import behaviortk
from behaviortk import registry
from behaviortk.format.fields import PNonNeg, doc
from behaviortk.format.nodes import NodeModel
from behaviortk.format.schema import json_schema

path = {path!r}
behaviortk.load(path)          # first use, before the plugin registers

class Zigzag(NodeModel):
    '''A user's own steering primitive.'''
    type: Literal["zigzag"] = "zigzag"
    amplitude: PNonNeg = doc("How far to swing", 10.0, unit="world units")

@registry.default().primitives.implements(Zigzag)
def zigzag(p, ctx):
    return None

import json
data = json.load(open(path))
data["trees"]["hunt"]["root"]["children"].append({{"type": "zigzag", "amplitude": 3}})
s = behaviortk.load_text(json.dumps(data), "x.json")
print(type(s.trees["wolves"].children[-1]).__name__, s.trees["wolves"].children[-1].amplitude)
data["trees"]["hunt"]["root"]["children"][-1] = {{"type": "zigzag", "amplitude": -1}}
try:
    behaviortk.load_text(json.dumps(data), "x.json")
except behaviortk.DefinitionError as e:
    print(e.issues[0].pointer, e.issues[0].message)
schema = json_schema()
print("Zigzag" in schema["$defs"], "zigzag" in schema["$defs"]["Node"]["properties"]["type"]["enum"])
"""


def test_plugin_registered_after_first_use_validates_like_a_builtin() -> None:
    """Run in a fresh interpreter: registries are process-global and the schema test needs them pristine."""
    code = textwrap.dedent(PLUGIN.format(path=str(VALID)))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout.splitlines()
    assert out == [
        "Zigzag 3.0",
        "/trees/hunt/root/children/2/amplitude must be >= 0.0, got -1",
        "True True",
    ]


def test_duplicate_tag_is_refused() -> None:
    from behaviortk import registry

    with pytest.raises(
        registry.RegistryError,
        match=r"already registered as a composite: first behaviortk\.format\.structure\.Sequence \(registered at .*builtins\.py:\d+\); again .*test_format_loader\.py",
    ):
        registry.default().composites.register(Sequence)


def test_parameters_are_substituted_once_at_load_running_models_hold_numbers() -> None:
    """Every `$param` of every shipped definition is a plain value in the trees that run."""
    from pydantic import BaseModel

    definitions = sorted((ROOT / "definitions").glob("*.json"))
    with_params = 0
    for path in definitions:
        if path.name == "behaviortk.schema.json":
            continue
        text = path.read_text()
        with_params += '"$' in text.replace('"$schema"', "")
        scenario = behaviortk.load(path)
        stack: list[object] = list(scenario.trees.values())
        while stack:
            item = stack.pop()
            if isinstance(item, BaseModel):
                stack.extend(getattr(item, f) for f in type(item).model_fields)
            elif isinstance(item, list | tuple):
                stack.extend(item)
            else:
                assert not (isinstance(item, str) and item.startswith("$")), (path.name, item)
    assert with_params >= 3


def test_an_expanded_tree_refuses_a_parameter_reference() -> None:
    from pydantic import ValidationError

    from behaviortk.format.adapters import validate_node
    from behaviortk.registry import default

    with pytest.raises(ValidationError, match="expected a number or a '\\$param' reference"):
        validate_node({"type": "wait", "duration": "$d"}, default())
    assert validate_node({"type": "wait", "duration": 2}, default()).duration == 2.0
