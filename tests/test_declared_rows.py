"""A new primitive with a compiled path is its model (with ``ROWS``) and its formula.

``approach`` below is written the way a built-in is (issue 24, target 5): a
``@formula`` over components and a model whose ``ROWS`` declares it. Nothing
else: no kernel, no adapter, no dispatch entry. It must run on the NumPy path
(``primitives.by_rows``), compile on the numba path (``steering/jobs.py`` finds
the declaration, ``steering/row_loops.py`` writes the loop), and give the same
bits on both.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

import numpy as np
import pytest
from steering_support import node, run

from behaviortk.format.loader import load_text
from behaviortk.plugin import PNonNeg, TargetedModel, doc
from behaviortk.registry import Registries
from behaviortk.sim.simulation import Simulation
from behaviortk.steering import jobs
from behaviortk.steering.declared import Rows
from behaviortk.steering.primitives import by_rows
from behaviortk.vec import formula, normalize_xy
from behaviortk.world.factory import make_agents


@formula
def approach(
    px: Any, py: Any, vx: Any, vy: Any, tx: Any, ty: Any, top: Any, fraction: Any
) -> tuple[Any, Any]:
    """Seek at ``fraction`` of max speed: ``normalize(target - pos) * top * fraction - vel``."""
    ux, uy = normalize_xy(tx - px, ty - py)
    return ux * top * fraction - vx, uy * top * fraction - vy


class Approach(TargetedModel):
    """Head for the target at a fraction of max speed."""

    type: Literal["approach"] = "approach"
    fraction: PNonNeg = doc("Share of max speed", 0.5)
    ROWS: ClassVar[Rows] = Rows(approach, lambda p: {"fraction": float(p.fraction)})


def registries() -> Registries:
    regs = Registries.with_builtins()
    regs.primitives.register(Approach, by_rows)
    return regs


DEFINITION = {
    "name": "approach_demo",
    "world": {"width": 400, "height": 400, "edges": "wrap", "dt": 0.05, "seed": 3},
    "groups": [
        {
            "name": "walkers",
            "count": 40,
            "spawn": {"kind": "area", "min": [0, 0], "max": [400, 400]},
            "max_speed": 60,
            "tree": "go",
        }
    ],
    "trees": {"go": {"root": {"type": "approach", "target": {"kind": "point", "at": [200, 200]}}}},
}


def test_approach_by_hand_on_the_numpy_path() -> None:
    """Agent at (300, 200) at rest, target (200, 200), max speed 60, fraction 0.5:
    u = (-1, 0), force = u * 60 * 0.5 - 0 = (-30, 0)."""
    regs = registries()
    model = node({"type": "approach", "target": {"kind": "point", "at": [200, 200]}}, regs)
    agents = make_agents([[300.0, 200.0]], max_speed=60.0)
    assert run(model, agents, registries=regs).linear.tolist() == [[-30.0, 0.0]]


@pytest.mark.slow
def test_a_declared_primitive_compiles_and_equals_numpy() -> None:
    scenario = load_text(json.dumps(DEFINITION), "approach.json", registries=registries())
    model = scenario.definition.trees["go"].root
    assert jobs.supports(model)  # the compiled path takes it: no kernel was written for it
    sims = [Simulation(scenario, engine="batch", kernels=k) for k in ("numpy", "numba")]
    start = sims[0].agents.pos.copy()
    for sim in sims:
        sim.run(40)
    assert sims[1].kernel_name == "numba"
    assert not np.array_equal(sims[0].agents.pos, start)
    np.testing.assert_array_equal(sims[0].agents.pos, sims[1].agents.pos)
    np.testing.assert_array_equal(sims[0].agents.vel, sims[1].agents.vel)
