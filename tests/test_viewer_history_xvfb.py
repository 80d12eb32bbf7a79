"""In a real window: the History tab lists every status change kept of the selected agent
(issue 26: the last 200) and scrolls through them with the wheel, PgUp / PgDn and its
scrollbar.

An agent whose `chance` flips its branch most ticks runs under Xvfb; ``Tab`` selects it,
a click opens the History tab; xdotool turns the wheel over the list, presses PgDn /
PgUp (``Next`` / ``Prior``) and drags the thumb, and ImageMagick takes the screenshots
(``BEHAVIORTK_SHOTS=dir`` keeps them).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from engine_support import FLIPS, definition

from behaviortk.viewer import palette
from behaviortk.viewer.layout import PANEL_WIDTH, TABS, make_layout
from behaviortk.viewer.status_history import HEAD_LINES, LINE, PAD, SCROLL_W
from tests.test_viewer_xvfb import keep, region
from tests.xvfb_support import PATIENCE, ViewerProcess, XServer, xvfb_missing

pytestmark = [
    pytest.mark.xvfb,
    pytest.mark.skipif(xvfb_missing() is not None, reason=f"{xvfb_missing()} is not installed"),
]


def test_the_history_tab_scrolls_through_the_status_history(tmp_path: Path) -> None:
    path = tmp_path / "flips.json"
    path.write_text(json.dumps(definition(FLIPS, positions=[[100, 100]])))
    server = XServer()
    try:
        viewer = ViewerProcess(server, path)
        try:
            w, h = viewer.width, viewer.height
            lay = make_layout(w, h, 1, PANEL_WIDTH, TABS)
            tab = lay.tab_rect(TABS.index("history"))
            list_top = lay.content.y1 - HEAD_LINES * LINE - 2 * PAD  # the head above it
            strip = lambda img: region(img, w - SCROLL_W - 4, 0, w - 1, list_top)  # noqa: E731
            lines = lambda img: region(img, lay.content.x0 + 4, 0, w - SCROLL_W - 6, list_top)  # noqa: E731
            head = lambda img: region(img, lay.content.x0 + 4, list_top, w - 1, lay.content.y1)  # noqa: E731

            def thumb(img: np.ndarray) -> tuple[int, int] | None:
                """The thumb's top and bottom rows (from the list's top), None: no scrollbar."""
                ink = np.abs(strip(img).astype(int) - palette.SLIDER_FILL[:3]) <= 2
                rows = np.flatnonzero(np.all(ink, -1).any(1))
                return (int(rows.min()), int(rows.max())) if rows.size else None

            def pages(img: np.ndarray) -> float:
                """How many lists' worth of changes there are (the track over the thumb)."""
                found = thumb(img)
                return 0.0 if found is None else (list_top - 8) / (found[1] - found[0] + 1)

            deadline = time.monotonic() + PATIENCE
            while pages(viewer.screenshot()) < 4.0:  # the history grows past the list
                assert time.monotonic() < deadline, "the History tab never had 4 pages"
                viewer.key("Tab")  # select the agent (the only one: Tab keeps it)
                viewer.click((tab.x0 + tab.x1) / 2, (tab.y0 + tab.y1) / 2)
                time.sleep(2.0)
            viewer.key("space")  # pause: the list stands still
            time.sleep(1.0)
            img = viewer.screenshot()
            keep(img, "history_top")
            found = thumb(img)
            assert found is not None
            top = found[0]
            assert top <= 4  # at the top of its track

            viewer.wheel(w - PANEL_WIDTH / 2, list_top / 2, -5)  # five notches down
            wheeled = viewer.wait_for(
                lambda shot: (thumb(shot) or (0, 0))[0] > top, "the thumb moved down by the wheel"
            )
            keep(wheeled, "history_wheeled")
            assert not np.array_equal(lines(wheeled), lines(img))  # older changes shown
            assert not np.array_equal(head(wheeled), head(img))  # "changes 16-..." said
            after_wheel = thumb(wheeled)
            assert after_wheel is not None

            viewer.key("Next")  # PgDn: a page further
            paged = viewer.wait_for(
                lambda shot: (thumb(shot) or (0, 0))[0] > after_wheel[0], "the thumb moved by PgDn"
            )
            keep(paged, "history_paged")
            assert not np.array_equal(lines(paged), lines(wheeled))

            now = thumb(paged)
            assert now is not None
            grab = list_top - (now[0] + now[1]) / 2  # the thumb's middle, y up
            viewer.drag(w - SCROLL_W / 2 - 2, grab, w - SCROLL_W / 2 - 2, 1)  # to the bottom
            bottom = viewer.wait_for(
                lambda shot: (thumb(shot) or (0, 0))[1] >= list_top - 10,
                "the thumb dragged to the bottom of its track",
            )
            keep(bottom, "history_oldest")
            assert not np.array_equal(lines(bottom), lines(paged))

            viewer.key(*["Prior"] * 10)  # PgUp, page after page, back to the newest
            back = viewer.wait_for(
                lambda shot: (thumb(shot) or (h, h))[0] == top, "the thumb back at the top"
            )
            np.testing.assert_array_equal(lines(back), lines(img))
            np.testing.assert_array_equal(head(back), head(img))
        finally:
            viewer.stop()
    finally:
        server.stop()
