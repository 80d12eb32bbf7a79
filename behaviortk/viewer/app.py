"""The interactive window: arcade events -> Session and panel methods; the simulation steps in
on_fixed_update.

The mouse goes to what is under it: the tabs, the side panel's content (the tree
panel selects, pans, zooms and folds, and a right-click on a node sets, changes or
removes its breakpoint as ``b`` does for the selected node; the tuning panel's sliders
and buttons), else the world (select an agent, drag an obstacle, set the pointer;
right-drag pans and the wheel zooms the world). When a breakpoint hits, the session
pauses and selects the agent; the view shows its tree with the node that hit selected. ``run_viewer(path)`` is what ``behaviortk run`` and
``behaviortk demo`` call.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import arcade
import numpy as np

from behaviortk.viewer.history import SECONDS
from behaviortk.viewer.hud import HudInfo
from behaviortk.viewer.idle import IdleWindow
from behaviortk.viewer.keys import shared_key
from behaviortk.viewer.layout import MIN_WINDOW_SIZE
from behaviortk.viewer.loading import Loading, LoadingView
from behaviortk.viewer.painter import Overlay2D, Painter, PanelState
from behaviortk.viewer.reload import FileWatcher
from behaviortk.viewer.session import Session, build_simulation, load_scenario, resume_simulation
from behaviortk.viewer.viewport import view_region

WINDOW_SIZE = (1360, 800)
CLICK_SLACK_PX = 6.0
WHEEL_ZOOM = 1.2


class ViewerView(arcade.View):
    def __init__(
        self,
        session: Session,
        window: arcade.Window,
        watch: bool = True,
        painter: Painter | None = None,
        panel: PanelState | None = None,
    ) -> None:
        """``painter`` and ``panel``: a window's own (the replay's); the live ones by default."""
        super().__init__(window)
        self.session = session
        self.painter = painter if painter is not None else Painter(window)
        self.panel = panel if panel is not None else PanelState(session=session)
        self.show_help = False
        self.watcher = FileWatcher(session.path) if watch else None
        self._fps = 0.0
        self._last_draw = time.perf_counter()
        self._grab: str | None = None  # what a press started dragging: world, tree, tune, pan
        session.stepped = self.painter.record  # the selected agent's history, every step

    # ----------------------------------------------------------- updates
    def on_fixed_update(self, delta_time: float) -> None:
        s = self.session
        hit = s.hit
        s.advance(delta_time)
        if s.hit is not None and s.hit is not hit:
            self.show_hit(s.hit)

    def show_hit(self, hit: Any) -> None:
        """The tree tab, with the node that hit selected (the session selected the agent)."""
        self.panel.tab = "tree"
        tree = self.session.sim.trees.get(hit.group)
        paths = [n.path for n in tree.nodes] if tree is not None else []
        if hit.node in paths:
            self.panel.tree.selected = paths.index(hit.node)

    def selected_group(self) -> str | None:
        """The group of the agent whose tree the panel shows (None: none, or no tree)."""
        sim = self.session.sim
        row = self.session.opts.selected
        if row is None or not 0 <= row < sim.agents.n:
            return None
        group = sim.agents.group_names[int(sim.agents.group[row])]
        return group if group in sim.trees else None

    def cycle_break(self, node: int | None) -> None:
        """``b`` / right-click: the breakpoint of ``node`` in the shown tree, set or changed or
        removed (``Session.cycle_break``)."""
        group = self.selected_group()
        if node is None or group is None or self.panel.frame is not None:
            return
        self.session.cycle_break(group, node)

    def on_update(self, delta_time: float) -> None:
        if self.watcher is not None and self.watcher.poll():
            self.session.reload()
            wake = getattr(self.window, "wake", None)
            if wake is not None:
                wake()  # the reload's result shows at once, paused or not

    def still(self) -> bool:
        """Nothing changes on screen without input (``idle.IdleWindow`` stops drawing)."""
        return self.session.paused

    def on_draw(self) -> None:
        self._count_frame()
        s = self.session
        explain = getattr(s, "explain_selected", None)  # a live run's (not an attached game)
        if explain is not None:
            explain()  # paused: the selected agent's why is the shown tick's own
        info = self.hud_info()
        extra = Overlay2D(
            errors=s.errors,
            show_help=self.show_help,
            trails=s.trails,
            panel=self.panel,
            note=s.break_note,
            help=self.help_text(),
        )
        group = self.selected_group()
        self.panel.tree.marks = s.break_marks(group) if group is not None else {}
        self.painter.draw(s.sim, s.opts, info, extra)

    def hud_info(self) -> HudInfo:
        """What the HUD says besides the simulation: frame rate, pause, speed, history."""
        s = self.session
        h = s.history
        return HudInfo(fps=self._fps, paused=s.paused, speed=s.speed, history=(h.back, h.span))

    def help_text(self) -> str:
        """The help box's text ("": the painter's, the live viewer's keys)."""
        return ""

    def _count_frame(self) -> None:
        """Smooth the frame rate the HUD shows over the last frames."""
        now = time.perf_counter()
        frame = now - self._last_draw
        self._last_draw = now
        if frame > 0.0:
            self._fps = 0.9 * self._fps + 0.1 / frame if self._fps else 1.0 / frame

    def on_hide_view(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()

    # ------------------------------------------------------------- input
    def on_key_press(self, symbol: int, modifiers: int) -> None:
        k = arcade.key
        s = self.session
        tunes = hasattr(s, "quit_prompt")  # a live session (an attached one has no tuning)
        asked = s.quit_prompt if tunes else None
        if tunes:
            s.quit_prompt = None  # any key but Esc answers "no"
        if tunes and symbol == k.ESCAPE and s.unsaved_tuning and asked is None:
            s.quit_prompt = (
                f"{s.path.name} has unsaved tuning: Esc again to discard it and quit, "
                "ctrl+s to save it"
            )
        elif tunes and symbol == k.S and modifiers & (k.MOD_CTRL | k.MOD_COMMAND):
            said = self.panel.tuning.status = s.save_tuning()
            if said.startswith("not saved"):  # seen whichever tab is open
                s.quit_prompt = said
        elif symbol == k.SPACE:
            s.toggle_pause()
        elif symbol in (k.PERIOD, k.NUM_DECIMAL):
            s.step_once()
        elif symbol == k.COMMA:
            s.step_back()
        elif symbol == k.R:
            s.restart()
        elif symbol == k.B:
            self.cycle_break(self.panel.tree.selected)
        else:
            shared_key(self, s, symbol)

    def _world_point(self, x: float, y: float) -> np.ndarray:
        vp = self.painter.viewport(self.session.sim.world, self.session.opts)
        return vp.to_world(np.array([x, y], float))

    def _where(self, x: float, y: float) -> str:
        lay = self.painter.layout
        if lay is None:
            return "world"
        if lay.tabs.contains(x, y):
            return "tabs"
        if lay.content.contains(x, y):
            return self.panel.tab
        if lay.panel.contains(x, y) or lay.hud.contains(x, y):
            return "chrome"
        return "world"

    def on_mouse_press(self, x: int, y: int, button: int, modifiers: int) -> None:
        where = self._where(x, y)
        self._grab = None
        if where == "tabs" and self.painter.layout is not None:
            tab = self.painter.layout.tab_at(x, y)
            if tab is not None and (tab != "tune" or self.panel.session is not None):
                self.panel.tab = tab
        elif where == "tree":
            left = button == arcade.MOUSE_BUTTON_LEFT
            node = None if left else self.panel.tree.node_at(x, y)
            if node is not None:  # a right-click on a node: its breakpoint
                self.panel.tree.selected = node
                self.cycle_break(node)
            elif not left or not self.panel.tree.click(x, y):  # a click folds, a drag pans
                self._grab = "tree"
        elif where == "tune":
            if button == arcade.MOUSE_BUTTON_LEFT and self.panel.tuning.press(self.session, x, y):
                self._grab = "tune"
        elif where == "info":
            if button == arcade.MOUSE_BUTTON_LEFT and self.panel.info.press(x, y):
                self._grab = "info"
        elif where == "history":
            if button == arcade.MOUSE_BUTTON_LEFT and self.panel.history.press(x, y):
                self._grab = "history"
        elif where == "world":
            if button == arcade.MOUSE_BUTTON_LEFT:
                vp = self.painter.viewport(self.session.sim.world, self.session.opts)
                self.session.press(self._world_point(x, y), CLICK_SLACK_PX / vp.scale)
                self._grab = "world"
            else:
                self._grab = "pan"

    def on_mouse_drag(self, x: int, y: int, dx: int, dy: int, buttons: int, modifiers: int) -> None:
        if self._grab == "tree":
            self.panel.tree.drag(dx, dy)
        elif self._grab == "tune":
            self.panel.tuning.drag(x, y)
        elif self._grab == "info":
            self.panel.info.drag(y)
        elif self._grab == "history":
            self.panel.history.drag(y)
        elif self._grab == "pan":
            self._pan_world(dx, dy)
        elif self._grab == "world":
            self.session.drag(self._world_point(x, y))

    def on_mouse_motion(self, x: int, y: int, dx: int, dy: int) -> None:
        if self._where(x, y) == "world":
            self.session.set_pointer(self._world_point(x, y))

    def on_mouse_release(self, x: int, y: int, button: int, modifiers: int) -> None:
        if self._grab == "tune":
            self.panel.tuning.release(self.session, x, y)
        self.panel.info.release()
        self.panel.history.release()
        self._grab = None
        self.session.release()

    def on_mouse_scroll(self, x: int, y: int, scroll_x: float, scroll_y: float) -> None:
        where = self._where(x, y)
        if where == "tree":
            self.panel.tree.wheel(x, y, scroll_y)
        elif where == "tune":
            self.panel.tuning.wheel(scroll_y)
        elif where == "info":
            self.panel.info.wheel(scroll_y)
        elif where == "history":
            self.panel.history.wheel(scroll_y)
        elif where == "world" and scroll_y:
            self._zoom_world(x, y, WHEEL_ZOOM**scroll_y)

    # ------------------------------------------------------------ world view
    def _shown(self) -> tuple[float, float, float, float]:
        s = self.session
        w = s.sim.world
        return view_region(w.width, w.height, s.opts.region, s.opts.zoom)

    def _zoom_world(self, x: float, y: float, factor: float) -> None:
        """Zoom by ``factor`` keeping the world point under the mouse where it is."""
        px, py = self._world_point(x, y)
        x0, y0, x1, y1 = self._shown()
        f = 1.0 / factor
        region = (px + (x0 - px) * f, py + (y0 - py) * f, px + (x1 - px) * f, py + (y1 - py) * f)
        self.session.opts.region, self.session.opts.zoom = region, 1.0

    def _pan_world(self, dx: float, dy: float) -> None:
        vp = self.painter.viewport(self.session.sim.world, self.session.opts)
        x0, y0, x1, y1 = self._shown()
        ux, uy = dx / vp.scale, dy / vp.scale
        self.session.opts.region, self.session.opts.zoom = (x0 - ux, y0 - uy, x1 - ux, y1 - uy), 1.0


def run_viewer(
    path: str | Path,
    engine: str = "py_trees",
    seed: int | None = None,
    overlays: Any = (),
    resume: str | Path | None = None,
    history_seconds: float = SECONDS,
    color_by: str = "group",
    select: str | None = None,
) -> int:
    """Open the window on ``path`` and run until it is closed (raises DefinitionError first).

    ``overlays``, ``color_by`` and ``select`` (an agent's name) set how it opens (the demo
    opens as its GIF looks).

    The Simulation is built on another thread while the window shows its kernels
    compiling (``loading.py``); an error building it is raised once the window closes.
    ``resume``: a snapshot to continue (``run --resume``) instead of a new run of ``path``
    (restored on that thread: ``session.resume_simulation``); a restart or reload starts
    ``path`` anew. ``history_seconds``: simulated seconds ``,`` can step back
    (``history.py``)."""
    scenario, text = load_scenario(path)
    window = IdleWindow(
        *WINDOW_SIZE,
        f"behaviortk: {Path(path).name}",
        fixed_rate=float(scenario.definition.world.dt),
        resizable=True,
    )
    window.set_minimum_size(*MIN_WINDOW_SIZE)
    views: list[ViewerView] = []

    def ready(sim: Any) -> None:
        session = Session(
            path, engine=engine, seed=seed, sim=sim, source=text, history_seconds=history_seconds
        )
        session.opts.overlays = set(overlays)
        session.opts.color_by = color_by
        if select is not None and select in sim.agents.names:
            session.opts.selected = sim.agents.index_of(select)
        views.append(ViewerView(session, window))
        window.show_view(views[0])

    name = str(scenario.definition.name)
    if resume is None:
        loading = Loading(name, lambda: build_simulation(scenario, engine, seed))
    else:
        loading = Loading(name, lambda: resume_simulation(resume, engine))
    window.show_view(LoadingView(window, loading, ready))
    try:
        arcade.run()
    finally:
        for view in views:
            if view.watcher is not None:
                view.watcher.stop()
    if loading.error is not None:
        raise loading.error
    return 0
