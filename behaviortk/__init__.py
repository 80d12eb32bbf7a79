"""behaviortk: declarative game AI, steering behaviours and behaviour trees authored in JSON.

``behaviortk.load(path)`` validates a definition and returns a ``Scenario``.
"""

from __future__ import annotations

from behaviortk.spec.errors import DefinitionError, Issue
from behaviortk.spec.loader import Scenario, load, load_text

__all__ = ["DefinitionError", "Issue", "Scenario", "Simulation", "load", "load_text"]
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``behaviortk.Simulation`` without importing the engines until it is asked for."""
    if name == "Simulation":
        from behaviortk.sim import Simulation

        return Simulation
    raise AttributeError(f"module 'behaviortk' has no attribute {name!r}")
