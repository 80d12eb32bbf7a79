"""The tick: ``Simulation`` (``simulation.py``), the game's side of it (``embed.py``) and the
allocator setting a run starts with (``allocator.py``).

``from behaviortk.sim import Simulation`` is public and keeps working; it is imported on first
use, so importing ``behaviortk.sim.embed`` alone loads no more than it did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from behaviortk.sim.simulation import Simulation

__all__ = ["Simulation"]


def __getattr__(name: str) -> Any:
    if name == "Simulation":
        from behaviortk.sim.simulation import Simulation

        return Simulation
    raise AttributeError(f"module 'behaviortk.sim' has no attribute {name!r}")
