"""The node reference (docs/nodes.md): committed copy is current, complete, and right in detail."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from behaviortk import registry
from behaviortk.format.fields import PNonNeg, doc
from behaviortk.format.nodes import NodeModel
from behaviortk.format.reference import reference_markdown

ROOT = Path(__file__).parent.parent
COMMITTED = ROOT / "docs" / "nodes.md"


def _section(text: str, tag: str) -> str:
    """The text of ``### tag`` up to the next heading."""
    match = re.search(rf"^### {re.escape(tag)}\n(.*?)(?=^#{{2,3}} |\Z)", text, re.M | re.S)
    assert match, f"no section for {tag!r}"
    return match.group(1)


def _row(text: str, tag: str, key: str) -> list[str]:
    """The cells of field ``key``'s row in ``tag``'s table."""
    for line in _section(text, tag).splitlines():
        if line.startswith(f"| `{key}` |"):
            return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
    raise AssertionError(f"{tag} has no row for {key!r}")


def test_committed_reference_is_current() -> None:
    assert COMMITTED.read_text() == reference_markdown(), (
        "docs/nodes.md is stale: run `make reference`"
    )


def test_every_registered_tag_has_a_section_in_its_category() -> None:
    text = reference_markdown()
    headings = re.findall(r"^(##|###) (.+)$", text, re.M)
    category = None
    placed: dict[str, list[str]] = {}
    for level, title in headings:
        if level == "##":
            category = title
        else:
            placed.setdefault(str(category), []).append(title)
    titles = {
        "composites": "Composites",
        "decorators": "Decorators",
        "primitives": "Steering primitives",
        "combiners": "Combiners",
        "conditions": "Conditions",
        "actions": "Actions",
        "predictors": "Predictors",
        "targets": "Target kinds",
        "metrics": "Metrics",
        "inputs": "Utility inputs",
    }
    regs = registry.default()
    for name, reg in regs.all().items():
        assert placed[titles[name]] == reg.tags(), name
    assert placed["Written in files"] == ["subtree"]  # inlined when loading: no registry
    assert list(placed) == [*titles.values(), "Written in files"]
    for reg in regs.all().values():
        for tag in reg.tags():
            assert f"[{tag}](#{tag})" in text  # table of contents links to it


def test_seek_weight_row() -> None:
    _key, kind, _unit, default, bounds, required, description = _row(
        reference_markdown(), "seek", "weight"
    )
    assert kind == "number or $param"
    assert default == "`1.0`"
    assert bounds == ">= 0, <= 1e9"
    assert required == "no"
    assert "Default:" not in description and description.startswith("Multiplies")
    assert "| `type` |" not in reference_markdown()  # the discriminator is the heading
    assert "| `kind` |" not in reference_markdown()


def test_units_defaults_and_bounds_come_from_the_models() -> None:
    text = reference_markdown()
    duration = _row(text, "wait", "duration")
    assert duration[2] == "seconds (simulated)"
    assert "Unit:" not in duration[6]
    assert _row(text, "timeout", "duration")[4:6] == [">= 1e-6, <= 1e9", "yes"]
    assert _row(text, "chance", "probability")[4] == ">= 0, <= 1"
    assert _row(text, "face", "target_radius")[4] == ">= 0, <= 360"
    assert _row(text, "sequence", "children")[1:] == [
        "list of nodes",
        "—",
        "—",
        "length >= 1",
        "yes",
        "Children, ticked in order (at least 1).",
    ]
    assert _row(text, "eternal_guard", "condition")[1] == "a condition"
    assert _row(text, "blend", "children")[1] == "list of steering primitives"
    assert _row(text, "pursuit", "predictor")[1:4] == ["a predictor", "—", '`{"type": "linear"}`']
    assert _row(text, "seek", "target")[1] == "a target"
    assert _row(text, "point", "at")[1] == "point [x, y] or $param"
    assert (
        _row(text, "arrive", "deceleration")[1] == "one of 'slow' \\| 'normal' \\| 'fast' or null"
    )
    assert _row(text, "repeat", "num_success")[1] == "whole number or -1"
    assert _row(text, "prioritized_dither", "probabilities")[4] == "each >= 0, <= 1"


def test_docstrings_appear_as_written() -> None:
    import inspect

    text = reference_markdown()
    for name, reg in registry.default().all().items():
        # a metric or utility input may share a tag with a node (in_zone, neighbours) or a
        # target kind (blackboard): look in its own category
        own = {"metrics": "Metrics", "inputs": "Utility inputs"}.get(name)
        part = text.split(f"\n## {own}\n")[1] if own else text
        for entry in reg:
            doc_text = inspect.cleandoc(entry.model.__doc__ or "")
            assert doc_text in _section(part, entry.tag), entry.tag


def test_only_registered_things_are_documented() -> None:
    text = reference_markdown()
    assert "### group" not in text
    assert "| `max_neighbours` |" not in text  # a group field, not a node's


class Orbit(NodeModel):
    """Circle the target counter-clockwise at max speed."""

    type: Literal["orbit"] = "orbit"
    pull: PNonNeg = doc("How strongly to also close in on the target", 0.2, unit="world units")


def test_plugin_node_appears_in_its_category() -> None:
    regs = registry.Registries.with_builtins()
    regs.primitives.register(Orbit, lambda p, ctx: None)
    text = reference_markdown(regs)
    primitives = text.index("## Steering primitives")
    combiners = text.index("## Combiners")
    assert primitives < text.index("### orbit\n") < combiners
    assert "[orbit](#orbit)" in text
    assert "Circle the target counter-clockwise at max speed." in _section(text, "orbit")
    assert _row(text, "orbit", "pull")[1:6] == [
        "number or $param",
        "world units",
        "`0.2`",
        ">= 0, <= 1e9",
        "no",
    ]
    assert "orbit" not in registry.default().primitives
    assert "### orbit" not in reference_markdown()


def test_output_is_deterministic() -> None:
    assert reference_markdown() == reference_markdown(registry.Registries.with_builtins())
