"""A test plugin: a metric whose first evaluation kills the worker process running it.

The first call (no marker file yet) creates the marker and exits the process at
once, as a crashed or killed worker would; later calls return 1.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from behaviortk.plugin import MetricModel, Plugin

plugin = Plugin(__name__)


class DiesOnce(MetricModel):
    """1, after killing the first worker that computes it."""

    metric: Literal["dies_once"] = "dies_once"


@plugin.metric(DiesOnce)
def dies_once(spec: DiesOnce, sim: Any, memory: dict[str, Any]) -> float:
    marker = Path(os.environ["BEHAVIORTK_TEST_MARKER"])
    if not marker.exists():
        marker.write_text("killed")
        os._exit(1)
    return 1.0


register = plugin.register
