"""Example plugins, one file per kind of node (composites need engine builders: see the docs).

Run any of them from a checkout: ``.venv/bin/python -m examples.plugins.orbit``.
Each registers nothing on import; :func:`demo` installs it into the default
registries and runs a small definition that uses it on both engines.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

import behaviortk
from behaviortk.plugin import Plugin


def demo(
    plugin: Plugin, definition: dict[str, Any], ticks: int, report: Callable[..., str]
) -> None:
    """Install ``plugin``, run ``definition`` for ``ticks`` on each engine and print ``report(sim)``."""
    plugin.install()
    scenario = behaviortk.load_text(json.dumps(definition), f"{definition['name']}.json")
    positions = []
    for engine in ("py_trees", "batch"):
        sim = behaviortk.Simulation(scenario, engine=engine)
        sim.run(ticks)
        positions.append(sim.agents.pos.copy())
        print(f"{engine:>8}: {report(sim)}")
    same = np.array_equal(positions[0], positions[1])
    print(f"both engines agree: {same}")
