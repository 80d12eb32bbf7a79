"""behaviortk: declarative game AI, steering behaviours and behaviour trees authored in JSON.

``behaviortk.load(path)`` validates a definition and returns a ``Scenario``.
"""

from __future__ import annotations

from behaviortk.spec.errors import DefinitionError, Issue
from behaviortk.spec.loader import Scenario, load, load_text

__all__ = ["DefinitionError", "Issue", "Scenario", "load", "load_text"]
__version__ = "0.1.0"
