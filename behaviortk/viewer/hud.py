"""Texts drawn over the world: HUD line, legend, help overlay, error banner."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from behaviortk.viewer import palette
from behaviortk.viewer.overlays import OVERLAYS
from behaviortk.viewer.scene import ViewOptions, action_color, action_names

KEYS: tuple[tuple[str, str], ...] = (
    ("space", "pause / resume"),
    (".", "step one tick (when paused)"),
    ("+ / -", "simulation speed x2 / /2"),
    ("r", "restart with the same seed"),
    ("tab", "select next agent"),
    ("click", "select agent / drag obstacle / set pointer"),
    ("g", "colour by group / by action"),
    ("a", "all overlays on / off"),
    ("h", "this help"),
    ("esc", "quit"),
)


@dataclass
class HudInfo:
    """Runtime facts of the viewer that are not simulation state."""

    fps: float = 0.0
    paused: bool = False
    speed: float = 1.0


def hud_text(sim: Any, info: HudInfo) -> str:
    engine = getattr(getattr(sim, "engine", None), "name", "?")
    state = "PAUSED" if info.paused else f"x{info.speed:g}"
    return (
        f"tick {sim.tick}   t {sim.time:.2f}s   FPS {info.fps:.0f}   "
        f"agents {sim.agents.n}   engine {engine}   {state}   (h: help)"
    )


def legend(sim: Any, opts: ViewOptions) -> list[tuple[str, palette.Color]]:
    """Colour swatches: groups, or actions when colouring by action."""
    if opts.color_by == "action":
        entries = [(name, action_color(i)) for i, name in enumerate(action_names(sim))]
        return [*entries, ("(no request)", palette.IDLE)]
    return [(name, palette.group_color(i)) for i, name in enumerate(sim.agents.group_names)]


def help_text(opts: ViewOptions) -> str:
    lines = ["Keys"]
    lines += [f"  {k:<6} {what}" for k, what in KEYS]
    lines += ["", "Overlays (on = all agents; the selected agent always)"]
    for o in OVERLAYS:
        mark = "on " if o.name in opts.overlays else "off"
        lines.append(f"  {o.key:<6} [{mark}] {o.label}")
    return "\n".join(lines)
