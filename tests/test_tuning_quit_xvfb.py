"""In a real window: Esc with unsaved tuning asks in the banner; Esc again discards and quits.

Xvfb, xdotool and ImageMagick as a person would use the viewer (``xvfb_support``): a
click on the Tune tab and on a knob's ``+`` leaves an unsaved change, the first Esc
puts the question in the red banner and the window stays, the second Esc closes it
and the file on disk is as it was.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from behaviortk.viewer import palette
from behaviortk.viewer.layout import Rect
from behaviortk.viewer.tuning import Tuner
from behaviortk.viewer.tuning_panel import BUTTON_W, FOOTER, HEADER, PAD, SCROLL_W, TuningPanel
from tests.test_viewer_xvfb import SCENE, TABS, count, geometry, keep, region
from tests.xvfb_support import PATIENCE, ViewerProcess, XServer, xvfb_missing

pytestmark = [
    pytest.mark.xvfb,
    pytest.mark.skipif(xvfb_missing() is not None, reason=f"{xvfb_missing()} is not installed"),
]


def test_esc_asks_before_unsaved_tuning_is_lost(tmp_path: Path) -> None:
    path = tmp_path / "guards.json"
    text = json.dumps(SCENE, indent=2)
    path.write_text(text)
    server = XServer()
    try:
        viewer = ViewerProcess(server, path)
        try:
            lay, _ = geometry(viewer)
            tab = lay.tab_rect(TABS.index("tune"))
            c = lay.content
            panel = lambda img: region(img, c.x0, c.y0, c.x1, c.y1)  # noqa: E731
            tuned = lambda img: count(panel(img), palette.SLIDER_FILL) > 500  # noqa: E731
            deadline = time.monotonic() + PATIENCE
            while not tuned(viewer.screenshot()) and time.monotonic() < deadline:
                # a click while the window still loads is lost: click until the tab shows
                viewer.click((tab.x0 + tab.x1) / 2, (tab.y0 + tab.y1) / 2)
                time.sleep(1.0)
            body = Rect(c.x0, c.y0 + FOOTER, c.x1, c.y1 - HEADER)
            knobs = Tuner("g.json", text).knobs(0)
            y = TuningPanel().slider_ys(knobs, body)[0]
            plus_x = c.x1 - PAD - SCROLL_W - BUTTON_W / 2
            banner = lambda img: region(img, 0, 0, lay.panel.x0, 40)  # noqa: E731
            viewer.wait_for(lambda img: count(banner(img), palette.ERROR_BG) == 0, "no banner")
            viewer.wait_for(tuned, "the tab")
            viewer.click(plus_x, y)  # one step up: a change the file does not hold
            time.sleep(1.0)
            viewer.key("Escape")
            img = viewer.wait_for(
                lambda img: count(banner(img), palette.ERROR_BG, tol=6) > 2_000,
                "the question in the red banner",
            )
            keep(img, "unsaved_tuning_question")
            assert viewer.proc.poll() is None  # asked, not quit
            viewer.key("Escape")
            deadline = time.monotonic() + PATIENCE
            while viewer.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert viewer.proc.poll() == 0, viewer.log.read_text()[-2000:]
            assert path.read_text() == text  # discarded: the file as it was
        finally:
            viewer.stop()
    finally:
        server.stop()
