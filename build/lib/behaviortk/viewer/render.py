"""Headless rendering: run a definition N ticks and write the last frame (PNG) or a GIF to a file.

Uses arcade's headless mode (EGL): ``ARCADE_HEADLESS=1`` is set here before
arcade is first imported, so importing this module never opens a window.
One hidden window is made on first use and reused; frames are drawn offscreen
at the requested ``size``. A render carries a caption (scenario, tick, time)
where the live window shows its HUD, keeps trails as the window does, and with
a selected agent shows its tree panel.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import IO, Any

os.environ.setdefault("ARCADE_HEADLESS", "1")

RENDER_SIZE = (1100, 640)
MAX_SIZE = 8192


def headless_window(size: tuple[int, int] = RENDER_SIZE) -> Any:
    """The current arcade window, or a new hidden one of ``size``."""
    import arcade

    try:
        window = arcade.get_window()
    except RuntimeError:
        window = None
    if window is None:
        window = arcade.Window(*size, "behaviortk render", visible=False, antialiasing=False)
    return window


def frame_image(
    sim: Any, painter: Any, opts: Any, show_help: bool = False, extra: Any = None
) -> Any:
    """Draw the simulation's current state and return it as a PIL RGB image."""
    from PIL import Image

    from behaviortk.viewer.hud import HudInfo
    from behaviortk.viewer.painter import Overlay2D

    info = HudInfo(fps=0.0, paused=True, caption=True)
    painter.draw(sim, opts, info, extra or Overlay2D(show_help=show_help))
    return Image.fromarray(painter.snapshot())


def render(
    sim: Any,
    out: IO[bytes],
    ticks: int,
    *,
    fmt: str = "png",
    every: int = 1,
    overlays: Iterable[str] = (),
    color_by: str = "group",
    selected: int | None = None,
    window: Any = None,
    on_tick: Callable[[int], Any] | None = None,
    size: tuple[int, int] = RENDER_SIZE,
    region: tuple[float, float, float, float] | None = None,
    zoom: float = 1.0,
) -> None:
    """Step ``sim`` ``ticks`` times and write to the binary file ``out``.

    ``fmt="gif"`` records every ``every``-th tick, ``"png"`` the last frame; ``size`` is the
    image in pixels, ``region`` the world rectangle shown (x0, y0, x1, y1; default all of
    it) and ``zoom`` magnifies around its centre. The caller opens ``out``
    (``behaviortk render`` writes through a temporary file renamed into place:
    ``behaviortk.files.atomic_output``). ``on_tick(t)`` is called after tick
    ``t`` (1-based) is drawn: progress.
    """
    from behaviortk.viewer.painter import Overlay2D, Painter, PanelState
    from behaviortk.viewer.scene import ViewOptions
    from behaviortk.viewer.trails import Trails

    if fmt not in ("png", "gif"):
        raise ValueError(f"fmt must be 'png' or 'gif', got {fmt!r}")
    w, h = int(size[0]), int(size[1])
    if not (64 <= w <= MAX_SIZE and 64 <= h <= MAX_SIZE):
        raise ValueError(f"size must be 64..{MAX_SIZE} pixels each way, got {w} x {h}")
    win = window if window is not None else headless_window()
    painter = Painter(win, size=(w, h))
    opts = ViewOptions(
        overlays=set(overlays), color_by=color_by, selected=selected, region=region, zoom=zoom
    )
    trails = Trails()
    extra = Overlay2D(trails=trails, panel=PanelState(tab="tree"))
    sim.debug.enabled = True
    trails.record(sim)
    gif = fmt == "gif"
    frames = [frame_image(sim, painter, opts, extra=extra)] if gif else []
    for t in range(1, ticks + 1):
        sim.step()
        trails.record(sim)
        if gif and t % max(every, 1) == 0:
            frames.append(frame_image(sim, painter, opts, extra=extra))
        if on_tick is not None:
            on_tick(t)
    if gif:
        ms = max(20, round(1000.0 * float(sim.dt) * max(every, 1)))
        pal = [f.convert("P", palette=1, colors=128) for f in frames]  # 1 = Image.ADAPTIVE
        pal[0].save(
            out,
            format="GIF",
            save_all=True,
            append_images=pal[1:],
            duration=ms,
            loop=0,
            optimize=True,
        )
    else:
        frame_image(sim, painter, opts, extra=extra).save(out, format="PNG")
