"""The root of a definition file."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from behaviortk.format.fields import Model, doc
from behaviortk.format.group import Group
from behaviortk.format.nodes import Node
from behaviortk.format.tree import ParamSpec
from behaviortk.format.world import Obstacle, PathDef, Wall, WorldDef

FORMAT_VERSION = "1"
"""Bumped on incompatible changes to the file format."""


class TreeDef(Model):
    """A named, reusable behaviour tree with declared parameters."""

    params: dict[str, ParamSpec] = doc(
        "Parameters the tree uses as `$name`, with optional defaults", default_factory=dict
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
    groups: list[Group] = doc("Groups of vehicles (unique names), at least 1", min_length=1)
    trees: dict[str, TreeDef] = doc("Named trees that groups and subtrees refer to")
