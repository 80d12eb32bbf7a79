"""Texts about the frame: the live HUD line or a render's caption, the legend, the help overlay."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from behaviortk.leaves.why import SIGHT_REASONS
from behaviortk.viewer import palette
from behaviortk.viewer.history import SECONDS
from behaviortk.viewer.overlays import OVERLAYS
from behaviortk.viewer.remembered import LEGEND, remembered
from behaviortk.viewer.scene import ViewOptions, action_color, action_names
from behaviortk.viewer.sight_cones import REASON_INKS, can_see_models

KEYS: tuple[tuple[str, str], ...] = (
    ("space", "pause / resume"),
    (".", "step one tick (pauses): replayed, then new ticks"),
    (",", f"step back one tick (last {SECONDS:g} s: --history-seconds)"),
    ("", "(a tune or drag while back drops the ticks after)"),
    ("+ / -", "simulation speed x2 / /2"),
    ("r", "restart with the same seed"),
    ("b", "breakpoint on the tree's selected node: RUNNING, SUCCESS, FAILURE, off"),
    ("tab", "select next agent"),
    ("click", "select agent / drag obstacle / set pointer (tree: select node, fold)"),
    ("r-click", "tree panel: breakpoint on the node, as b"),
    ("wheel", "zoom the world (the tree panel too; other tabs scroll)"),
    ("r-drag", "pan the world (drag in the tree panel pans it)"),
    ("0", "whole world / tree panel fitted again"),
    ("[ / ]", "side panel tab: tree, tune, info, history"),
    ("pgup/dn", "status history (History tab): a page newer / older"),
    ("g", "colour by group / by action"),
    ("a", "all overlays on / off"),
    ("h", "this help"),
    ("ctrl+s", "save the tuning panel's changes to the file"),
    ("esc", "quit (with unsaved tuning it asks: esc again discards, ctrl+s saves)"),
)


@dataclass
class HudInfo:
    """Runtime facts of the viewer that are not simulation state.

    ``caption``: a render's frame, which shows the scenario, tick and time
    instead of the live HUD (frames per second and pause mean nothing there).
    """

    fps: float = 0.0
    paused: bool = False
    speed: float = 1.0
    caption: bool = False
    history: tuple[int, int] | None = None  # (ticks stepped back, ticks one can step back)
    source: str = ""  # an attached game's state and address, said instead of pause and speed


def tick_label(sim: Any) -> str:
    """``tick 240``: the step just taken, 0-based, as traces, checks, breakpoints and
    ``replay --tick`` number it (``sim.tick`` counts steps taken: 241 here); ``start``
    before the first step."""
    return f"tick {sim.tick - 1}" if sim.tick > 0 else "start"


def hud_text(sim: Any, info: HudInfo) -> str:
    if info.caption:
        return caption_text(sim)
    engine = getattr(getattr(sim, "engine", None), "name", "?")
    state = "PAUSED" if info.paused else f"x{info.speed:g}"
    if info.source:
        state = info.source
    back = ""
    if info.history is not None:  # live: how far back one can go; stepped back: where
        stepped, kept = info.history
        back = f"back {stepped} of {kept}   " if stepped else f"history {kept} ticks (,)   "
    return (
        f"{tick_label(sim)}   t {sim.time:.2f}s   FPS {info.fps:.0f}   "
        f"agents {sim.agents.n}   engine {engine}   {state}   {back}(h: help)"
    )


def caption_text(sim: Any) -> str:
    """A render's caption: scenario, tick and simulated time."""
    name = getattr(sim, "name", None) or "scenario"
    return f"{name}   {tick_label(sim)}   t = {sim.time:.2f} s   {sim.agents.n} agents"


def legend(sim: Any, opts: ViewOptions) -> list[tuple[str, palette.Color]]:
    """Colour swatches: groups (their `colour`), or actions when colouring by action."""
    if opts.color_by == "action":
        entries = [(name, action_color(i)) for i, name in enumerate(action_names(sim))]
        return [
            *entries,
            ("(no force)", palette.IDLE),
            *memory_legend(sim, opts),
        ]
    names = list(sim.agents.group_names)
    entries = list(zip(names, palette.group_colours(sim), strict=True))
    return [
        *entries,
        *sight_legend(sim, opts),
        *memory_legend(sim, opts),
    ]


def memory_legend(sim: Any, opts: ViewOptions) -> list[tuple[str, palette.Color]]:
    """The remembered points' ink, while the selected agent has some (``remembered.py``)."""
    if remembered(sim, opts.selected) is None:
        return []
    return [(LEGEND, palette.REMEMBERED)]


def sight_legend(sim: Any, opts: ViewOptions) -> list[tuple[str, palette.Color]]:
    """The sight rays' inks, named by the reason they stand for (the why's words), while the
    sight overlay is on and some tree has a ``can_see``."""
    if "sight" not in opts.overlays:
        return []
    if not any(True for tree in getattr(sim, "trees", {}).values() for _ in can_see_models(tree)):
        return []
    return [(f"sight: {why}", ink) for why, ink in zip(SIGHT_REASONS, REASON_INKS, strict=True)]


def legend_title(opts: ViewOptions) -> str:
    return "Actions (first request with a force)" if opts.color_by == "action" else "Groups"


def key_help(
    title: str, keys: tuple[tuple[str, str], ...], overlays_title: str, opts: Any, width: int
) -> str:
    """A help box: ``keys`` under ``title``, then every overlay's key and whether it is on."""
    lines = [title]
    lines += [f"  {k:<{width}} {what}" for k, what in keys]
    lines += ["", overlays_title]
    for o in OVERLAYS:
        mark = "on " if o.name in opts.overlays else "off"
        lines.append(f"  {o.key:<{width}} [{mark}] {o.label}")
    return "\n".join(lines)


def help_text(opts: ViewOptions) -> str:
    return key_help("Keys", KEYS, "Overlays (on = all agents; the selected agent always)", opts, 7)
