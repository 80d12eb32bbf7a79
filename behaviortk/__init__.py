"""behaviortk: declarative game AI, steering behaviours and behaviour trees authored in JSON.

``behaviortk.load(path)`` validates a definition and returns a ``Scenario``;
``behaviortk.Simulation(scenario)`` runs it (imported on first use, so that
``behaviortk validate`` does not pay for the engines).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from behaviortk.format.errors import DefinitionError, Issue
from behaviortk.format.loader import Scenario, load, load_text

if TYPE_CHECKING:
    from behaviortk.sim import Simulation

__all__ = ["DefinitionError", "Issue", "Scenario", "Simulation", "load", "load_text"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "Simulation":
        from behaviortk.sim import Simulation

        return Simulation
    raise AttributeError(f"module 'behaviortk' has no attribute {name!r}")
