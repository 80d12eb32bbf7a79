"""The attach window: the live viewer's window on a running game's frames (``behaviortk attach``).

``AttachView`` is the live ``ViewerView`` with an ``AttachSession`` (``attached.py``) in
place of a local ``Session``, as the replay window puts a ``ReplaySession`` there: the
painter, the tree panel (statuses, the why beside each condition, time in status, the
breakpoint dots), the info tab (blackboard, requests), the History tab, the mouse routing
and the shared keys are the live viewer's. What differs is the clock (none: each update
takes the game's newest frame), the HUD (``attached to HOST:PORT`` and the frames the
game dropped), ``r`` and ``,`` (the game restarts itself and keeps no past to step back
to) and no Tune tab (the definition runs in the game). When the game goes, the banner says so and the window
stays on its last frame.
"""

from __future__ import annotations

from typing import Any

import arcade

from behaviortk.viewer.app import ViewerView
from behaviortk.viewer.attached import AttachSession
from behaviortk.viewer.hud import HudInfo, key_help
from behaviortk.viewer.painter import PanelState
from behaviortk.viewer.remote import Remote

WINDOW_SIZE = (1360, 800)
KEYS: tuple[tuple[str, str], ...] = (
    ("space", "pause / resume the game (held inside sim.step())"),
    (".", "one step of the game, then held"),
    ("b", "breakpoint in the game: RUNNING, SUCCESS, FAILURE, off"),
    ("tab", "select next agent (the game sends its why, board)"),
    ("click", "select agent (tree: select node, fold)"),
    ("r-click", "tree panel: breakpoint on the node, as b"),
    ("wheel", "zoom the world (the tree panel too; other tabs scroll)"),
    ("r-drag", "pan the world (drag in the tree panel pans it)"),
    ("0", "whole world / tree panel fitted again"),
    ("[ / ]", "side panel tab: tree, info, history"),
    ("pgup/dn", "status history (History tab): a page newer / older"),
    ("g", "colour by group / by action"),
    ("a", "all overlays on / off"),
    ("h", "this help"),
    ("esc", "detach and close (the game goes on)"),
)


class AttachView(ViewerView):
    """The live viewer's window showing, and driving, a game served with ``sim.serve()``."""

    def __init__(self, session: AttachSession, window: arcade.Window) -> None:
        super().__init__(
            session,  # type: ignore[arg-type]  # the Session API the window uses
            window,
            watch=False,
            panel=PanelState(tab="tree"),  # no session: tree and info tabs, no tuning
        )

    @property
    def attached(self) -> AttachSession:
        return self.session  # type: ignore[return-value]

    def on_fixed_update(self, delta_time: float) -> None:
        pass  # nothing simulates here: the game steps

    def on_update(self, delta_time: float) -> None:
        s = self.attached
        hit = s.hit
        s.poll()
        if s.hit is not None and s.hit != hit:
            self.show_hit(s.hit)

    def hud_info(self) -> HudInfo:
        s = self.attached
        return HudInfo(fps=self._fps, paused=s.paused, speed=1.0, source=s.source)

    def help_text(self) -> str:
        overlays = "Overlays (drawn from the game's frames)"
        return key_help("Attached keys", KEYS, overlays, self.attached.opts, 8)

    def on_key_press(self, symbol: int, modifiers: int) -> None:
        if symbol in (arcade.key.R, arcade.key.COMMA):
            return  # the game restarts itself, and keeps no past for its viewer to step back to
        super().on_key_press(symbol, modifiers)


def run_attach(remote: Remote, overlays: Any = ()) -> int:
    """Open the window on the game ``remote`` is attached to, until it is closed."""
    session = AttachSession(remote)
    session.opts.overlays = set(overlays)
    window = arcade.Window(*WINDOW_SIZE, f"behaviortk attach: {remote.where}", resizable=True)
    window.show_view(AttachView(session, window))
    arcade.run()
    return 0
