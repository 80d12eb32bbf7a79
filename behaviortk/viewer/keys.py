"""The keys the live viewer and the replay window share, said once.

Each window handles its own clock keys first (live: space, ``.``, ``,``, ``r``, ``b``; replay:
space, arrows, ``,`` ``.``, home, end) and passes any other key to
``shared_key``: ``+``/``-`` speed, tab select, ``h`` help, ``g`` colour by,
``a`` all overlays, ``[``/``]`` side panel tab, PgUp / PgDn the selected agent's status
history (the History tab, a page at a time), ``0`` fit, esc quit, and the
overlay letters (``overlays.BY_KEY``).
"""

from __future__ import annotations

from typing import Any, Protocol

import arcade

from behaviortk.viewer.overlays import BY_KEY, OVERLAYS
from behaviortk.viewer.scene import ViewOptions


class KeyView(Protocol):
    """What the shared keys touch of a window's view (``app.ViewerView``)."""

    show_help: bool
    panel: Any
    window: Any


class KeySession(Protocol):
    """What the shared keys call: a live ``Session`` or a ``ReplaySession``."""

    opts: ViewOptions

    def faster(self) -> None: ...
    def slower(self) -> None: ...
    def cycle_selection(self) -> None: ...
    def toggle_overlay(self, name: str) -> None: ...


def shared_key(view: KeyView, session: KeySession, symbol: int) -> bool:
    """Act on ``symbol`` if it is a shared key; False if it is not one (nothing done)."""
    k = arcade.key
    s = session
    if symbol in (k.PLUS, k.EQUAL, k.NUM_ADD):
        s.faster()
    elif symbol in (k.MINUS, k.NUM_SUBTRACT):
        s.slower()
    elif symbol == k.TAB:
        s.cycle_selection()
    elif symbol == k.H:
        view.show_help = not view.show_help
    elif symbol == k.G:
        s.opts.color_by = "action" if s.opts.color_by == "group" else "group"
    elif symbol == k.A:
        every = {o.name for o in OVERLAYS}
        s.opts.overlays = set() if s.opts.overlays >= every else every
    elif symbol == k.BRACKETRIGHT:
        view.panel.cycle(1)
    elif symbol == k.BRACKETLEFT:
        view.panel.cycle(-1)
    elif symbol == k.PAGEDOWN:
        view.panel.page_history(1)
    elif symbol == k.PAGEUP:
        view.panel.page_history(-1)
    elif symbol in (k.KEY_0, k.NUM_0):
        s.opts.region, s.opts.zoom = None, 1.0
        view.panel.tree.fit()
    elif symbol == k.ESCAPE:
        view.window.close()
    elif 0 < symbol < 128 and chr(symbol) in BY_KEY:
        s.toggle_overlay(BY_KEY[chr(symbol)].name)
    else:
        return False
    return True
