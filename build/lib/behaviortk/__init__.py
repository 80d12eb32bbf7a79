"""behaviortk: declarative game AI, steering behaviours and behaviour trees authored in JSON.

``behaviortk.load(path)`` validates a definition and returns a ``Scenario``;
``behaviortk.Simulation(scenario)`` runs it. Every public name is imported on
first use (module ``__getattr__``), so ``import behaviortk`` loads nothing heavy
(not even pydantic) and ``behaviortk validate`` does not pay for the engines.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from behaviortk.errors import SimulationError, SnapshotError
    from behaviortk.format.issues import DefinitionError, Issue
    from behaviortk.format.loader import Scenario, load, load_text
    from behaviortk.registry import load_plugin
    from behaviortk.sim.embed import AgentView, Event
    from behaviortk.sim.simulation import Simulation
    from behaviortk.tree.blackboard import BlackboardError

__all__ = [
    "AgentView",
    "BlackboardError",
    "DefinitionError",
    "Event",
    "Issue",
    "Scenario",
    "Simulation",
    "SimulationError",
    "SnapshotError",
    "load",
    "load_plugin",
    "load_text",
]
__version__ = "0.1.0"

_LAZY = {
    "BlackboardError": "behaviortk.tree.blackboard",
    "DefinitionError": "behaviortk.format.issues",
    "Issue": "behaviortk.format.issues",
    "Scenario": "behaviortk.format.loader",
    "load": "behaviortk.format.loader",
    "load_text": "behaviortk.format.loader",
    "Simulation": "behaviortk.sim.simulation",
    "load_plugin": "behaviortk.registry",
    "Event": "behaviortk.sim.embed",
    "AgentView": "behaviortk.sim.embed",
    "SimulationError": "behaviortk.errors",
    "SnapshotError": "behaviortk.errors",
}
"""Public name -> module that defines it (imported by ``__getattr__`` on first use)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'behaviortk' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
