"""A snapshot kept in memory: ``Capture(sim)`` now, ``capture.restore()`` later.

The same state as ``sim.save`` writes (``snapshot.gather``) and the same restoring, checks
included (``snapshot.restore`` reads a ``SavedState``), without the zip and ``.npy``
steps: the arrays are copied once when captured and again when restored, so the captured
state never shares memory with a running Simulation. The scenario is kept as it ran (a
tuning change included) instead of its text, so restoring does not validate the
definition again. The viewer's step back (``viewer/history.py``) keeps a ring of these.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.sim.snapshot import gather, restore
from behaviortk.sim.snapshot_file import SavedState


class Capture(SavedState):
    """``sim``'s state at its current tick, copied (``snapshot.py`` lists what it holds)."""

    def __init__(self, sim: Any) -> None:
        manifest, arrays = gather(sim, definition=False)
        self.manifest = manifest
        self.arrays = {name: np.array(values, copy=True) for name, values in arrays.items()}
        self.scenario = sim.scenario
        self.tick = int(sim.tick)
        self.path = f"the capture of tick {self.tick}"

    @property
    def nbytes(self) -> int:
        """Bytes its arrays hold (the manifest's few scalars and names left out)."""
        return sum(values.nbytes for values in self.arrays.values())

    def raw(self, name: str) -> np.ndarray:
        values = self.arrays.get(name)
        if values is None:
            raise self.error(f"the array {name} is missing")
        return values.copy()

    def restore(self, *, debug: bool = False) -> Any:
        """A new Simulation in this state, on the engine and kernels it was captured on."""
        from behaviortk.sim.simulation import Simulation

        kernels = self.key("kernels", str)
        return restore(Simulation, self, kernels=kernels, debug=debug)
