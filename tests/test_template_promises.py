"""Every starter shows what its description promises within 30 simulated seconds.

Each template carries ``checks`` (the guard gives chase and the intruder reaches
the vault; the hunters catch prey; the flock aligns; the crowd leaves through
its gates), judged here as ``behaviortk check`` judges them. The small starters
run on both engines; the crowd of 2,000 on the batch engine (the engines' equality
on every template is ``test_equivalence``'s).
"""

from __future__ import annotations

import pytest

from behaviortk.commands.new import template_text
from behaviortk.format.loader import load_text
from behaviortk.studies.check_runs import run_checks, ticks_needed

CASES = [
    ("guard", "py_trees"),
    ("guard", "batch"),
    ("chase", "py_trees"),
    ("chase", "batch"),
    ("flock", "batch"),
    ("crowd", "batch"),
]


@pytest.mark.parametrize(("template", "engine"), CASES)
def test_the_starter_keeps_its_promise(template: str, engine: str) -> None:
    scenario = load_text(template_text(template), f"{template}.json")
    checks = scenario.definition.checks
    assert checks, f"the {template} template declares no checks"
    ticks = ticks_needed(scenario, 0)
    assert ticks * scenario.definition.world.dt <= 30.0 + 1e-9  # within 30 simulated seconds
    verdicts, _ = run_checks(
        scenario, seed=scenario.definition.world.seed, ticks=ticks, engine=engine
    )
    failed = [f"{v.check}: {v.over} = {v.value:.3g}, wants {v.expected}" for v in verdicts]
    assert all(v.passed for v in verdicts), failed
