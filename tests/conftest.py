"""Test setup shared by all test files.

arcade opens a window (or fails without a display) unless ARCADE_HEADLESS is
set before it is first imported, so it is set here, before any test module.
"""

from __future__ import annotations

import os

os.environ["ARCADE_HEADLESS"] = "1"
