"""In a real window: the Info tab lists every status change kept of the selected agent
(issue 26: the last 200) and scrolls through them with the wheel and its scrollbar.

An agent whose `chance` flips its branch most ticks runs under Xvfb; ``Tab`` selects it,
a click opens the Info tab; xdotool turns the wheel over the panel and ImageMagick
takes the screenshots (``BEHAVIORTK_SHOTS=dir`` keeps them).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from engine_support import definition

from behaviortk.viewer import palette
from behaviortk.viewer.layout import PANEL_WIDTH, TABS, make_layout
from behaviortk.viewer.text_scroll import SCROLL_W
from tests.test_viewer_xvfb import keep, region
from tests.xvfb_support import PATIENCE, ViewerProcess, XServer, xvfb_missing

pytestmark = [
    pytest.mark.xvfb,
    pytest.mark.skipif(xvfb_missing() is not None, reason=f"{xvfb_missing()} is not installed"),
]

FLIPS = {
    "type": "selector",
    "memory": False,
    "children": [
        {
            "type": "sequence",
            "memory": False,
            "children": [{"type": "chance", "probability": 0.5}, {"type": "wander"}],
        },
        {"type": "seek", "target": {"kind": "point", "at": [200, 200]}},
    ],
}


def test_the_info_tab_scrolls_through_the_status_history(tmp_path: Path) -> None:
    path = tmp_path / "flips.json"
    path.write_text(json.dumps(definition(FLIPS, positions=[[100, 100]])))
    server = XServer()
    try:
        viewer = ViewerProcess(server, path)
        try:
            w, h = viewer.width, viewer.height
            strip = lambda img: region(img, w - SCROLL_W - 4, 0, w - 1, h)  # noqa: E731

            def thumb(img: np.ndarray) -> tuple[int, int] | None:
                ink = np.abs(strip(img).astype(int) - palette.SLIDER_FILL[:3]) <= 2
                rows = np.flatnonzero(np.all(ink, -1).any(1))
                return (int(rows.min()), int(rows.max())) if rows.size else None

            info = make_layout(w, h, 1, PANEL_WIDTH, TABS).tab_rect(TABS.index("info"))
            deadline = time.monotonic() + PATIENCE
            while thumb(viewer.screenshot()) is None:  # the history grows past the panel
                assert time.monotonic() < deadline, "the Info tab never overflowed"
                viewer.key("Tab")  # select the agent (the only one: Tab keeps it)
                viewer.click((info.x0 + info.x1) / 2, (info.y0 + info.y1) / 2)
                time.sleep(2.0)
            viewer.key("space")  # pause: the text stands still
            time.sleep(1.0)
            img = viewer.screenshot()
            keep(img, "history_top")
            found = thumb(img)
            assert found is not None
            top = found[0]
            assert top <= h // 2  # at the top of its track
            panel = lambda img: region(img, w - PANEL_WIDTH + 4, 0, w - SCROLL_W - 6, h)  # noqa: E731
            viewer.wheel(w - PANEL_WIDTH / 2, h / 3, -5)  # five notches down
            moved = viewer.wait_for(
                lambda img: (thumb(img) or (0, 0))[0] > top, "the thumb moved down by the wheel"
            )
            keep(moved, "history_scrolled")
            assert not np.array_equal(panel(moved), panel(img))  # other lines shown
            viewer.wheel(w - PANEL_WIDTH / 2, h / 3, 5)  # and back up
            back = viewer.wait_for(
                lambda img: (thumb(img) or (h, h))[0] == top, "the thumb back at the top"
            )
            np.testing.assert_array_equal(panel(back), panel(img))
        finally:
            viewer.stop()
    finally:
        server.stop()
