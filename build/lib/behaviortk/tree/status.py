"""Node status codes (int8), shared by both engines, traces and the viewer."""

from __future__ import annotations

INVALID, RUNNING, SUCCESS, FAILURE = 0, 1, 2, 3
STATUS_NAMES = ("INVALID", "RUNNING", "SUCCESS", "FAILURE")
