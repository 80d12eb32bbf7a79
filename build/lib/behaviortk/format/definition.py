"""The root of a definition file."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from behaviortk.format.blackboard_keys import KeySpec
from behaviortk.format.fields import BlackboardKey, Model, doc
from behaviortk.format.group import Group
from behaviortk.format.nodes import Check, Node
from behaviortk.format.structure import ParamSpec
from behaviortk.format.world import Obstacle, PathDef, Wall, WorldDef, ZoneDef

FORMAT_VERSION = "1"
"""Bumped on incompatible changes to the file format."""


class TreeDef(Model):
    """A named, reusable behaviour tree with declared parameters."""

    params: dict[str, ParamSpec] = doc(
        "Parameters the tree uses as `$name`, with optional defaults", default_factory=dict
    )
    blackboard: dict[BlackboardKey, KeySpec] = doc(
        "Blackboard keys the tree's nodes read and write, each with its type (bool, number, "
        "string, point) and optional default. A group's tree may use the keys declared by "
        "its own tree and by every tree inlined into it as a subtree; nodes naming an "
        "undeclared key, or a value of another type, are refused when loading",
        default_factory=dict,
        json_schema_extra={"additionalProperties": False},  # a key must match the pattern
    )
    root: Node = doc("The root node")


class Definition(Model):
    """A behaviortk scenario: a world, groups of vehicles and the trees they run."""

    model_config = ConfigDict(title="behaviortk definition")

    schema_ref: str | None = Field(
        None,
        alias="$schema",
        description='JSON Schema for editors, usually "behaviortk.schema.json". Ignored when loading.',
    )
    format_version: Literal["1"] = doc("Version of this file format", FORMAT_VERSION)
    name: str = doc("Short name of the scenario", min_length=1)
    description: str = doc("What the scenario shows", "")
    world: WorldDef = doc("World size, edges, time step and seed")
    obstacles: list[Obstacle] = doc("Solid circles", default_factory=list)
    walls: list[Wall] = doc("Wall segments", default_factory=list)
    paths: list[PathDef] = doc("Named paths (unique names)", default_factory=list)
    zones: list[ZoneDef] = doc(
        "Named regions, circles or rectangles (unique names): `in_zone` conditions and "
        "`zone` targets refer to them",
        default_factory=list,
    )
    groups: list[Group] = doc("Groups of vehicles (unique names), at least 1", min_length=1)
    trees: dict[str, TreeDef] = doc("Named trees that groups and subtrees refer to")
    checks: list[Check] = doc(
        "What this scenario must do, checked headless by `behaviortk check`: each names a "
        "metric (with its arguments), a tick window, how to aggregate it and a comparison, "
        'e.g. {"name": "prey escape", "metric": "min_distance", "groups": ["prey", '
        '"predator"], "over": "min", "from_tick": 100, "op": ">", "value": 5}',
        default_factory=list,
    )
