"""The replay window and the headless replay frame: the viewer's painter on a recorded tick.

``run_replay(recording)`` opens a window (``behaviortk replay TRACE``);
``render_replay(recording, tick, out)`` writes one recorded tick as a PNG
(``--tick N --out frame.png``). Both draw a ``ReplaySession``'s ``RecordedView``
with the same ``Painter`` as a live run, in a world area raised by the timeline
band (``ReplayPainter``), then the timeline under it. The side panel is the live
viewer's: its Tree tab draws the selected agent's recorded statuses with the
graphical tree panel (``tree_frame.frame_from_sim`` reads the recorded
decisions), its Info tab the text panel, its History tab the status changes seen
since the agent was selected; there is no Tune tab (a recording
cannot be tuned). The window reuses the live viewer's mouse routing
(``app.ViewerView``): tabs, the tree panel's pan, zoom and folding, world zoom and
pan.

Keys: space play / pause, left / right (or , / .) one recorded tick back /
forward, home / end, + / - speed, tab / click select an agent, g colour by
group / action, overlay keys as in the live viewer, PgUp / PgDn the selected agent's
status history (History tab), h help, esc quit. Press or
drag on the timeline to go to any tick.
"""

from __future__ import annotations

import dataclasses
from typing import IO, Any

import arcade
import numpy as np

from behaviortk.record.reader import Recording
from behaviortk.viewer import palette
from behaviortk.viewer.app import ViewerView
from behaviortk.viewer.gpu import GpuBatch
from behaviortk.viewer.hud import HudInfo, key_help
from behaviortk.viewer.idle import IdleWindow
from behaviortk.viewer.keys import shared_key
from behaviortk.viewer.labels import MONO
from behaviortk.viewer.layout import MARGIN, MIN_WINDOW_SIZE, PANEL_WIDTH, Rect, make_layout
from behaviortk.viewer.painter import Overlay2D, Painter, PanelState
from behaviortk.viewer.replay import ReplaySession
from behaviortk.viewer.scene import ViewOptions
from behaviortk.viewer.timeline import BAND, Timeline, label
from behaviortk.viewer.viewport import Viewport

WINDOW_SIZE = (1280, 800)
CLICK_SLACK_PX = 6.0
KEYS: tuple[tuple[str, str], ...] = (
    ("space", "play / pause"),
    ("<- / ->", "one recorded tick back / forward (also , and .)"),
    ("home/end", "first / last recorded tick"),
    ("+ / -", "replay speed x2 / /2"),
    ("drag", "the timeline: go to any tick"),
    ("tab", "select next agent (or click it)"),
    ("[ / ]", "side panel tab: tree (recorded statuses), info, history"),
    ("pgup/dn", "status history (History tab): a page newer / older"),
    ("wheel", "zoom the world (the tree panel too; other tabs scroll)"),
    ("r-drag", "pan the world (drag in the tree panel pans it)"),
    ("0", "whole world / tree panel fitted again"),
    ("g", "colour by group / by action"),
    ("a", "all overlays on / off"),
    ("h", "this help"),
    ("esc", "quit"),
)


def help_text(opts: Any) -> str:
    """The replay's keys, then the overlays (those a trace cannot feed draw nothing)."""
    recorded = "Overlays (recorded: velocity, force, view, neighbours, waypoints, potential)"
    return key_help("Replay keys", KEYS, recorded, opts, 8)


def raised(vp: Viewport) -> Viewport:
    """The live viewer's world area less the timeline band at its bottom."""
    return dataclasses.replace(vp, bottom=vp.bottom + BAND, height=vp.height - BAND)


def replay_viewport(
    width: int, height: int, world: Any, panel_width: float = PANEL_WIDTH
) -> Viewport:
    """Where a replay window of this size draws the whole world (hit tests without GL)."""
    r = make_layout(width, height, 0, panel_width).world
    return raised(Viewport(world.width, world.height, r.x0, r.y0, r.width, r.height))


class ReplayPainter(Painter):
    """The live painter with the world raised by the timeline band, plus the timeline."""

    def __init__(self, window: Any, size: tuple[int, int] | None = None) -> None:
        super().__init__(window, size)
        self.timeline_batch = GpuBatch(window.ctx)
        self.timeline_text = arcade.Text(
            "", MARGIN, BAND / 2, palette.TEXT, 10, font_name=MONO, anchor_y="center"
        )

    def viewport(self, world: Any, opts: ViewOptions | None = None) -> Viewport:
        return raised(super().viewport(world, opts))

    def timeline(self, ticks: np.ndarray) -> Timeline:
        """The timeline under the world, left of the side panel as the last frame laid it out."""
        panel = self.width - (self.layout.panel.x0 if self.layout is not None else 0.0)
        if self.layout is None:
            panel = PANEL_WIDTH
        return Timeline.of_window(self.width, int(panel), MARGIN, ticks)

    def draw_replay(self, session: ReplaySession, info: HudInfo, extra: Overlay2D) -> None:
        """The recorded tick as the live viewer draws a tick, then the timeline (and help)."""
        self.draw(session.sim, session.opts, info, dataclasses.replace(extra, show_help=False))
        with self.canvas.drawing():
            line = self.timeline(session.rec.ticks)
            v, c = line.shapes(session.index).build()
            self.timeline_batch.draw(v, c)
            facts = session.describe()
            self.timeline_text.text = label(**facts, live=not info.caption)
            self.timeline_text.position = (MARGIN, BAND / 2)
            self.timeline_text.draw()
            if extra.show_help:
                self._help(session)

    def _help(self, session: ReplaySession) -> None:
        self.draw_help(
            help_text(session.opts), Rect(*self.viewport(session.sim.world).world_rect())
        )


class ReplayView(ViewerView):
    """The live viewer's window with a recording in place of a simulation.

    The mouse routing, tabs, tree panel and world zoom are the live viewer's
    (``ViewerView``); the clock, the keys and the timeline are the replay's.
    """

    painter: ReplayPainter

    def __init__(self, session: ReplaySession, window: arcade.Window) -> None:
        super().__init__(
            session,  # type: ignore[arg-type]  # the Session API the mouse uses
            window,
            watch=False,
            painter=ReplayPainter(window),
            panel=PanelState(tab="tree"),  # no session: tree and info tabs, no tuning
        )
        self.scrubbing = False

    @property
    def replay(self) -> ReplaySession:
        return self.session  # type: ignore[return-value]

    def on_fixed_update(self, delta_time: float) -> None:
        pass  # nothing simulates: the clock is on_update's

    def cycle_break(self, node: int | None) -> None:
        """A recording has no breakpoints: a right-click on a tree box only selects it."""

    def on_update(self, delta_time: float) -> None:
        self.replay.advance(delta_time)

    def still(self) -> bool:
        return not self.replay.playing and not self.scrubbing

    def on_draw(self) -> None:
        self._count_frame()
        s = self.replay
        info = HudInfo(fps=self._fps, paused=not s.playing, speed=s.speed)
        extra = Overlay2D(errors=s.errors, show_help=self.show_help, panel=self.panel)
        self.painter.draw_replay(s, info, extra)

    def on_key_press(self, symbol: int, modifiers: int) -> None:
        k = arcade.key
        s = self.replay
        if symbol == k.SPACE:
            s.toggle_pause()
        elif symbol in (k.RIGHT, k.PERIOD):
            s.step(+1)
        elif symbol in (k.LEFT, k.COMMA):
            s.step(-1)
        elif symbol == k.HOME:
            s.first()
        elif symbol == k.END:
            s.last()
        else:
            shared_key(self, s, symbol)

    def on_mouse_press(self, x: int, y: int, button: int, modifiers: int) -> None:
        line = self.painter.timeline(self.replay.rec.ticks)
        if button == arcade.MOUSE_BUTTON_LEFT and line.hit(x, y):
            self.scrubbing = True
            self.replay.playing = False
            self.replay.seek_index(line.index_at(x))
            return
        super().on_mouse_press(x, y, button, modifiers)

    def on_mouse_drag(self, x: int, y: int, dx: int, dy: int, buttons: int, modifiers: int) -> None:
        if self.scrubbing:
            self.replay.seek_index(self.painter.timeline(self.replay.rec.ticks).index_at(x))
            return
        super().on_mouse_drag(x, y, dx, dy, buttons, modifiers)

    def on_mouse_release(self, x: int, y: int, button: int, modifiers: int) -> None:
        if self.scrubbing:
            self.scrubbing = False
            return
        super().on_mouse_release(x, y, button, modifiers)


def replay_session(
    recording: Recording, tick: int | None, overlays: Any, color_by: str, select: int | None
) -> ReplaySession:
    """The session a replay window or frame shows: at ``tick``, these overlays and colours."""
    session = ReplaySession(recording, tick)
    session.opts.overlays = set(overlays)
    session.opts.color_by = color_by
    session.select_id(select)
    return session


def run_replay(
    recording: Recording,
    tick: int | None = None,
    *,
    overlays: Any = (),
    color_by: str = "group",
    select: int | None = None,
) -> int:
    """Open the replay window on ``recording`` (at ``tick``) and run until it is closed."""
    session = replay_session(recording, tick, overlays, color_by, select)
    window = IdleWindow(*WINDOW_SIZE, f"behaviortk replay: {recording.path.name}", resizable=True)
    window.set_minimum_size(*MIN_WINDOW_SIZE)
    window.show_view(ReplayView(session, window))
    arcade.run()
    return 0


def replay_frame(
    session: ReplaySession, painter: ReplayPainter, show_help: bool = False
) -> np.ndarray:
    """The shown tick drawn headless, as ``(H, W, 3) uint8`` pixels (row 0 at the top):
    a render's caption for the HUD, the selected agent's recorded tree in the panel."""
    info = HudInfo(fps=0.0, paused=True, speed=session.speed, caption=True)
    extra = Overlay2D(errors=session.errors, show_help=show_help, panel=PanelState(tab="tree"))
    painter.draw_replay(session, info, extra)
    return painter.snapshot()


def render_replay(
    recording: Recording,
    tick: int,
    out: IO[bytes],
    *,
    overlays: Any = (),
    color_by: str = "group",
    select: int | None = None,
    window: Any = None,
) -> None:
    """Write recorded ``tick`` as a PNG to the binary file ``out`` (``select``: an agent id)."""
    from PIL import Image

    from behaviortk.viewer.render import RENDER_SIZE, headless_window

    session = replay_session(recording, tick, overlays, color_by, select)
    win = window if window is not None else headless_window()
    painter = ReplayPainter(win, size=RENDER_SIZE)
    Image.fromarray(replay_frame(session, painter)).save(out, format="PNG")
