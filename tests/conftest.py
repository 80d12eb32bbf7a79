"""Test setup shared by all test files.

arcade opens a window (or fails without a display) unless ARCADE_HEADLESS is
set before it is first imported, so it is set here, before any test module.

The suite runs on the NumPy reference kernels unless a test asks for compiled
ones (``kernels="numba"``, tests/test_compiled.py): compiling them costs tens
of seconds on a clean checkout, and the engines are compared on the reference.
Subprocesses (the command-line tests) inherit the setting.
"""

from __future__ import annotations

import os

os.environ["ARCADE_HEADLESS"] = "1"
os.environ.setdefault("BEHAVIORTK_KERNELS", "numpy")
