"""A predictor as a plugin: ``fixed`` always looks the same time ahead.

A predictor answers, for pursuit, evade, interpose and offset pursuit, how
many seconds ahead of a constant-velocity target to aim: here a constant, so
pursuit seeks ``target + velocity * seconds`` (Reynolds 1999, "Pursuit": the
prediction interval T is a parameter; Buckland ch. 3 derives it from
distance and speeds instead, our `linear` predictor).

From the command line (run from the project root, so ``examples`` imports; after
``make demo`` the command is ``.venv/bin/behaviortk``, or ``behaviortk`` once
``source .venv/bin/activate``)::

    .venv/bin/behaviortk validate examples/plugins/fixed_lead.json --plugin examples.plugins.fixed_lead
    .venv/bin/behaviortk run examples/plugins/fixed_lead.json --plugin examples.plugins.fixed_lead \
        --headless --ticks 200
    .venv/bin/behaviortk render examples/plugins/fixed_lead.json --plugin examples.plugins.fixed_lead \
        --ticks 100 --out fixed_lead.png --overlay crosshair
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import numpy as np

from behaviortk.plugin import Model, Plugin, PNonNeg, displacement, doc

plugin = Plugin(__name__)


class Fixed(Model):
    """Look `seconds` ahead, whatever the distance."""

    type: Literal["fixed"] = "fixed"
    seconds: PNonNeg = doc("Look-ahead", 0.5, unit="s")


@plugin.predictor(Fixed)
def fixed(
    p: Fixed, to_target: np.ndarray, own_vel: Any, max_speed: Any, target_vel: Any
) -> np.ndarray:
    return np.full(to_target.shape[0], p.seconds)


register = plugin.register

DEFINITION = json.loads(Path(__file__).with_suffix(".json").read_text(encoding="utf-8"))
"""examples/plugins/fixed_lead.json: the definition the command line runs with this plugin."""

if __name__ == "__main__":
    from examples.plugins import demo

    def report(sim: Any) -> str:
        gap = np.linalg.norm(displacement(sim.agents.pos[0], sim.agents.pos[1], sim.world))
        return f"hound {gap:.1f} units from the hare"

    demo(plugin, DEFINITION, 100, report)
