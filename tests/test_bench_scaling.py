"""Scaling a definition for ``bench --scale N [--grow GROUP]``: counts and positions, by hand."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from behaviortk.commands.scaling import (
    ScaleError,
    apportion,
    largest_group,
    positional_params,
    scale_definition,
)
from behaviortk.format.loader import load, load_text

ROOT = Path(__file__).resolve().parent.parent
EVADE = ROOT / "definitions" / "evade_or_flock.json"


# ------------------------------------------------------------------ counts


def test_evade_or_flock_every_group_in_proportion() -> None:
    """60 prey + 3 predators = 63 -> 630: 60 * 630 / 63 = 600 and 3 * 630 / 63 = 30 exactly;
    s = sqrt(630 / 63) = sqrt(10) = 3.16228, world 800 x 600 -> 2529.82 x 1897.37."""
    data, s = scale_definition(load(EVADE).raw, 630)
    assert [g["count"] for g in data["groups"]] == [600, 30]
    assert s == pytest.approx(math.sqrt(10.0))
    assert data["world"]["width"] == pytest.approx(2529.822, abs=1e-3)
    assert data["world"]["height"] == pytest.approx(1897.367, abs=1e-3)
    assert data["groups"][0]["spawn"]["max"] == pytest.approx([2529.822, 1897.367], abs=1e-3)


def test_evade_or_flock_grow_prey() -> None:
    """--grow prey --scale 1003: predators stay 3, prey 1003 - 3 = 1000; s = sqrt(1003 / 63)
    = 3.99008, world 800 x 600 -> 3192.06 x 2394.05."""
    data, s = scale_definition(load(EVADE).raw, 1003, grow="prey")
    assert [g["count"] for g in data["groups"]] == [1000, 3]
    assert s == pytest.approx(math.sqrt(1003 / 63))
    assert data["world"]["width"] == pytest.approx(3192.06, abs=1e-2)
    assert data["world"]["height"] == pytest.approx(2394.05, abs=1e-2)


@pytest.mark.parametrize(
    ("counts", "total", "expected"),
    [
        # exact quotas: 10 * 1000 / 100 = 100, 90 * 1000 / 100 = 900
        ([10, 90], 1000, [100, 900]),
        # quotas 60*10/63 = 9.524 and 3*10/63 = 0.476: whole parts 9, 0, the one left to the
        # larger remainder (33/63 > 30/63) gives [10, 0]; the predators take 1 back: [9, 1]
        ([60, 3], 10, [9, 1]),
        # quotas 5/3 each: whole parts 1, 1, 1, two left, equal remainders: earlier first
        ([1, 1, 1], 5, [2, 2, 1]),
        # quotas 0, 1.5, 1.5: [0, 1, 1], one left, tie, the earlier: [0, 2, 1]; 0 stays 0
        ([0, 5, 5], 3, [0, 2, 1]),
        # quotas 9.7, 0.2, 0.1: [9, 0, 0] + 1 to the first = [10, 0, 0]; the other two take
        # one each from the largest: [8, 1, 1]
        ([97, 2, 1], 10, [8, 1, 1]),
        # shrinking: 60*21/63 = 20, 3*21/63 = 1
        ([60, 3], 21, [20, 1]),
    ],
)
def test_apportion_by_hand(counts: list[int], total: int, expected: list[int]) -> None:
    assert apportion(counts, total) == expected


@given(
    st.lists(st.integers(0, 10_000), min_size=1, max_size=8).filter(lambda c: sum(c) > 0),
    st.integers(1, 1_000_000),
)
def test_apportion_properties(counts: list[int], total: int) -> None:
    """Exactly ``total``; a group with agents keeps >= 1, an empty one stays empty; when no
    group needs that floor, each count is its quota rounded down or up."""
    kept = sum(1 for c in counts if c > 0)
    if total < kept:
        with pytest.raises(ScaleError, match="each keeps at least 1"):
            apportion(counts, total)
        return
    out = apportion(counts, total)
    assert sum(out) == total
    assert all((o >= 1) if c > 0 else (o == 0) for c, o in zip(counts, out, strict=True))
    quotas = [Fraction(c * total, sum(counts)) for c in counts]
    if all(q >= 1 for q, c in zip(quotas, counts, strict=True) if c > 0):
        assert all(math.floor(q) <= o <= math.ceil(q) for q, o in zip(quotas, out, strict=True))


def test_grow_errors_name_the_groups() -> None:
    raw = load(EVADE).raw
    with pytest.raises(
        ScaleError, match=r"no group 'wolf' to grow; the groups are: prey, predator"
    ):
        scale_definition(raw, 100, grow="wolf")
    with pytest.raises(ScaleError, match=r"no group 'pray' to grow \(did you mean 'prey'\?\)"):
        scale_definition(raw, 100, grow="pray")
    with pytest.raises(ScaleError, match="--scale must be at least 4"):  # 3 predators + 1 prey
        scale_definition(raw, 3, grow="prey")
    assert largest_group(raw) == "prey"


# ------------------------------------------------------------------ positions


def everything() -> dict[str, Any]:
    """A definition with every kind of position the format has (and lengths that stay)."""
    return {
        "name": "all",
        "world": {"width": 400, "height": 100, "edges": "contain"},
        "obstacles": [{"at": [100, 50], "radius": 5}],
        "walls": [{"from": [10, 10], "to": [10, 90]}],
        "paths": [{"name": "loop", "points": [[20, 20], [80, 20], [80, 60]], "looped": True}],
        "zones": [
            {"name": "pen", "kind": "circle", "at": [300, 50], "radius": 20},
            {"name": "yard", "kind": "rect", "min": [0, 0], "max": [50, 40]},
        ],
        "groups": [
            {
                "name": "ringers",
                "count": 2,
                "spawn": {"kind": "ring", "center": [50, 50], "radius": 10},
                "view_distance": 70,
                "radius": 4,
                "tree": "go",
                "params": {"goal": [40, 20], "gap": [6, -3]},
            },
            {
                "name": "placed",
                "count": 2,
                "spawn": {"kind": "positions", "points": [[1, 2], [3, 4]]},
                "tree": "guard",
            },
        ],
        "trees": {
            "go": {
                "params": {
                    "goal": {"default": [1, 1]},
                    "gap": {"default": [2, 2]},
                    "near": {"default": 15},
                },
                "root": {
                    "type": "selector",
                    "memory": False,
                    "children": [
                        {
                            "type": "in_range",
                            "target": {"kind": "point", "at": "$goal"},
                            "radius": "$near",
                        },
                        {
                            "type": "seek",
                            "target": {
                                "kind": "offset",
                                "target": {"kind": "point", "at": [200, 80]},
                                "offset": "$gap",
                            },
                        },
                        {"type": "subtree", "tree": "reach", "params": {"spot": [60, 70]}},
                        {"type": "containment", "rect": [[10, 10], [390, 90]], "margin": 5},
                    ],
                },
            },
            "reach": {
                "params": {"spot": {"default": [30, 30]}},
                "root": {"type": "arrive", "target": {"kind": "point", "at": "$spot"}},
            },
            "guard": {
                "blackboard": {"home": {"type": "point", "default": [200, 20]}},
                "root": {
                    "type": "sequence",
                    "memory": False,
                    "children": [
                        {"type": "blackboard_set", "key": "home", "value": [120, 30]},
                        {"type": "blackboard_compare", "key": "home", "value": [120, 30]},
                        {"type": "seek", "target": {"kind": "pointer", "at": [5, 6]}},
                    ],
                },
            },
        },
    }


def test_positional_params_follow_subtrees() -> None:
    """`goal` is a point target's `at`; `spot` is one in `reach`; `gap` is an offset, `near` a
    radius: not positions."""
    found = positional_params(everything()["trees"])
    assert found == {"go": {"goal"}, "reach": {"spot"}, "guard": set()}


def test_every_position_scales_and_lengths_stay() -> None:
    """Total 4 -> 16 with every group in proportion (2 -> 8 each): s = sqrt(16 / 4) = 2, so
    every position doubles; radii, view distances, offsets and distances do not."""
    before = everything()
    load_text(json.dumps(before), "before.json")  # the fixture is a valid definition
    data, s = scale_definition(before, 16)
    assert s == 2.0
    assert [g["count"] for g in data["groups"]] == [8, 8]
    assert (data["world"]["width"], data["world"]["height"]) == (800, 200)
    assert data["obstacles"] == [{"at": [200, 100], "radius": 5}]
    assert data["walls"][0] == {"from": [20, 20], "to": [20, 180]}
    assert data["paths"][0]["points"] == [[40, 40], [160, 40], [160, 120]]
    assert data["zones"][0] == {"name": "pen", "kind": "circle", "at": [600, 100], "radius": 40}
    assert data["zones"][1] == {"name": "yard", "kind": "rect", "min": [0, 0], "max": [100, 80]}
    ringers, placed = data["groups"]
    assert ringers["spawn"] == {"kind": "ring", "center": [100, 100], "radius": 20}
    assert (ringers["radius"], ringers["view_distance"]) == (4, 70)
    assert ringers["params"] == {"goal": [80, 40], "gap": [6, -3]}  # gap is an offset
    # 2 positions cannot spawn 8 agents: the area they spanned, (1, 2)..(3, 4) times 2
    assert placed["spawn"] == {"kind": "area", "min": [2, 4], "max": [6, 8]}
    go = data["trees"]["go"]
    assert go["params"] == {
        "goal": {"default": [2, 2]},
        "gap": {"default": [2, 2]},
        "near": {"default": 15},
    }
    first, seek, sub, contain = go["root"]["children"]
    assert first["target"]["at"] == "$goal" and first["radius"] == "$near"
    assert seek["target"] == {
        "kind": "offset",
        "target": {"kind": "point", "at": [400, 160]},
        "offset": "$gap",
    }
    assert sub["params"] == {"spot": [120, 140]}
    assert contain["rect"] == [[20, 20], [780, 180]] and contain["margin"] == 5
    assert data["trees"]["reach"]["params"]["spot"]["default"] == [60, 60]
    guard = data["trees"]["guard"]
    assert guard["blackboard"]["home"]["default"] == [400, 40]
    set_, compare, seek_pointer = guard["root"]["children"]
    assert set_["value"] == [240, 60] and compare["value"] == [240, 60]
    assert seek_pointer["target"]["at"] == [10, 12]
    load_text(json.dumps(data), "after.json")  # and so is the scaled one
    assert everything() == before  # the input is not modified


def test_positions_kept_when_the_count_does_not_change() -> None:
    """--grow ringers --scale 6: placed keeps its 2 agents and its 2 positions, scaled by
    s = sqrt(6 / 4) = 1.2247."""
    data, s = scale_definition(everything(), 6, grow="ringers")
    assert [g["count"] for g in data["groups"]] == [4, 2]
    assert s == pytest.approx(math.sqrt(1.5))
    assert data["groups"][1]["spawn"] == {
        "kind": "positions",
        "points": [pytest.approx([1 * s, 2 * s]), pytest.approx([3 * s, 4 * s])],
    }


def test_names_are_cut_to_a_smaller_count() -> None:
    raw = everything()
    raw["groups"][0]["names"] = ["a", "b"]
    data, _ = scale_definition(raw, 2)  # 4 -> 2: 1 + 1
    assert data["groups"][0]["names"] == ["a"]
    load_text(json.dumps(data), "cut.json")
