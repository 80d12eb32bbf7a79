"""Every invalid fixture gives exactly its stored error lines, and fails --schema-only too.

Fixtures live in tests/fixtures/invalid/NAME.json with the expected output of
``behaviortk validate NAME.json`` (run from that folder) in NAME.expected: the
one-line form of each issue (older files hold only those; regenerated ones
also hold each issue's source excerpt, which the comparison skips).
Mistakes that JSON Schema cannot express (cross-field rules and semantic
checks: names, cycles, depth, totals, parameters, blackboard keys) are listed in
``PYDANTIC_ONLY``; for them --schema-only is expected to pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import GUTTER

from behaviortk.commands.validate import check

INVALID = Path(__file__).parent / "fixtures" / "invalid"
VALID = Path(__file__).parent / "fixtures" / "valid"
FIXTURES = sorted(p.stem for p in INVALID.glob("*.json"))

PYDANTIC_ONLY = {
    "zero_length_wall",
    "positions_count_mismatch",
    "selected_out_of_range",
    "unknown_tree",
    "unknown_group_in_target",
    "unknown_path_in_target",
    "unknown_agent_in_target",
    "subtree_cycle",
    "unknown_subtree",
    "tree_too_deep",
    "too_many_agents",
    "undeclared_param",
    "unknown_param_for_tree",
    "missing_required_param",
    "param_value_out_of_range",
    "duplicate_group_name",
    "reserved_group_name",
    "undeclared_blackboard_key",
    "blackboard_without_declarations",
    "blackboard_set_wrong_type",
    "blackboard_compare_wrong_type",
    "blackboard_order_on_bool",
    "blackboard_target_not_point",
    "blackboard_conflicting_declarations",
    "remember_unknown_key",
    "remember_into_bool_key",
    "remember_without_point_keys",
    "recall_undeclared_key",
    "flow_too_many_cells",
    "flow_goal_in_obstacle",
    "flow_unreachable_goal",
    "flow_spawn_enclosed",
    "flow_moving_target",
}


def test_enough_fixtures() -> None:
    assert len(FIXTURES) >= 30
    assert len(set(FIXTURES) - PYDANTIC_ONLY) >= 30
    assert set(FIXTURES) >= PYDANTIC_ONLY


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_gives_expected_lines(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(INVALID)
    text = (INVALID / f"{name}.expected").read_text()
    # the one-line form of each issue; a file regenerated with `validate` also holds their
    # source excerpts (gutter lines) and blank lines between them, which are skipped here
    expected = [line for line in text.splitlines() if line and not GUTTER.match(line)]
    assert expected, f"{name}.expected is empty"
    assert check(f"{name}.json", schema_only=False, max_agents=200_000) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_and_schema_only_agree(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(INVALID)
    lines = check(f"{name}.json", schema_only=True, max_agents=200_000)
    if name in PYDANTIC_ONLY:
        assert lines == []
    else:
        assert lines, f"--schema-only accepted {name}.json"
        assert all(line.startswith(f"{name}.json:") for line in lines)


@pytest.mark.parametrize("path", sorted(VALID.glob("*.json")), ids=lambda p: p.name)
def test_valid_fixture_passes_both(path: Path) -> None:
    assert check(str(path), schema_only=False, max_agents=200_000) == []
    assert check(str(path), schema_only=True, max_agents=200_000) == []


def test_error_line_format() -> None:
    """FILE:LINE:COL: /json/pointer: message [kind], with the suggestion of a near name."""
    line = (INVALID / "unknown_key_typo.expected").read_text().strip()
    assert line == (
        "unknown_key_typo.json:21:16: /groups/0/radus: unknown key 'radus'; "
        "did you mean 'radius'? closest of 23: radius, params, mass, names, heading "
        "[extra_forbidden]"
    )
