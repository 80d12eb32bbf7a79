"""Helpers for the viewer tests: one hidden arcade window for the whole session, pixel probes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from behaviortk.steering.debug import DebugBuffer
from behaviortk.viewer.hud import HudInfo
from behaviortk.viewer.painter import Overlay2D, Painter
from behaviortk.viewer.render import headless_window
from behaviortk.viewer.scene import ViewOptions
from behaviortk.world.state import World

WINDOW_SIZE = (1000, 600)


def window() -> Any:
    """The session's one hidden window (created on first use, then reused)."""
    return headless_window(WINDOW_SIZE)


_painter: list[Painter] = []


def painter() -> Painter:
    """One Painter (GL programs and buffers) for the session's window."""
    if not _painter:
        _painter.append(Painter(window()))
    return _painter[0]


def fake_sim(world: World, agents: Any, debug: DebugBuffer | None = None) -> SimpleNamespace:
    """The drawing layer reads only these attributes, so tests can hand-build states."""
    return SimpleNamespace(
        world=world,
        agents=agents,
        tick=0,
        time=0.0,
        trees={},
        decisions={},
        contributions={},
        debug=debug or DebugBuffer(enabled=True),
    )


def draw(
    sim: Any, opts: ViewOptions, errors: list[str] | None = None
) -> tuple[np.ndarray, Painter]:
    """Draw one frame and return its pixels ``(H, W, 3)`` (row 0 at the top) and the painter."""
    p = painter()
    p.draw(sim, opts, HudInfo(), Overlay2D(errors=errors or []))
    return p.snapshot(), p


def pixel_at(img: np.ndarray, screen_xy: np.ndarray) -> np.ndarray:
    """RGB at a screen point (y up), from an image whose row 0 is the top."""
    x, y = round(float(screen_xy[0])), round(float(screen_xy[1]))
    return img[img.shape[0] - 1 - y, x]


def count_color(img: np.ndarray, rgb: tuple[int, ...], tol: int = 8) -> int:
    """How many pixels are within ``tol`` of ``rgb`` on every channel."""
    diff = np.abs(img.astype(np.int16) - np.array(rgb[:3], dtype=np.int16))
    return int(np.all(diff <= tol, axis=-1).sum())
