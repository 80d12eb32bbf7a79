"""What a viewer session that cannot change its world does with the mouse and keys: a replay
(a recording) and an attached game (the game owns its world) alike."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from behaviortk.vec import Array
from behaviortk.viewer.scene import pick_agent


class Watching(ABC):
    """Selection by click or Tab, overlays toggled; no obstacle to drag, no pointer target to
    move. The session supplies ``sim``, ``opts`` and ``select_row``."""

    sim: Any
    opts: Any

    @abstractmethod
    def select_row(self, row: int | None) -> None:
        """Select the agent in ``row`` (None: nobody), as the session keeps selections."""

    def cycle_selection(self) -> None:
        n = self.sim.agents.n
        row = self.opts.selected
        self.select_row(None if n == 0 else 0 if row is None else (row + 1) % n)

    def press(self, point: Array, slack: float) -> None:
        """A click in the world: select the agent there, else clear the selection."""
        self.select_row(pick_agent(self.sim.agents, point, slack))

    def drag(self, point: Array) -> None:
        return None  # nothing here is this viewer's to move

    def release(self) -> None:
        return None

    def set_pointer(self, point: Array) -> None:
        return None

    def toggle_overlay(self, name: str) -> None:
        self.opts.overlays ^= {name}
