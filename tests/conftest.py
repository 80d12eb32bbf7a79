"""Shared test setup: arcade must run headless, so this is set before anything imports it."""

import os

os.environ.setdefault("ARCADE_HEADLESS", "1")
