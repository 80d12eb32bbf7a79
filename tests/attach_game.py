"""A game for tests/test_attach.py: serve, wait for a viewer, step N ticks writing its own trace.

    python tests/attach_game.py DEFINITION TICKS TRACE [--wait-viewer] [--real-time]

TRACE ending ``.parquet`` is written as Parquet (no leaf forces: frames carry none).

Prints ``port P`` (flushed) once serving, ``attached N`` when ``--wait-viewer`` stops
waiting, ``done T`` after the last step. ``--real-time``:
one ``step()`` call per ``dt`` of the clock, as a game's frame loop calls it.
"""

from __future__ import annotations

import sys
import time

from behaviortk.commands.run import is_parquet, trace_writer
from behaviortk.sim import Simulation


def main() -> None:
    definition, ticks, trace = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    sim = Simulation(definition, "batch")
    print(f"port {sim.serve()}", flush=True)
    server = sim.server
    assert server is not None
    if "--wait-viewer" in sys.argv:
        deadline = time.monotonic() + 20
        while server.attached == 0 and time.monotonic() < deadline:
            time.sleep(0.005)
        print(f"attached {server.attached}", flush=True)
    frame = float(sim.dt) if "--real-time" in sys.argv else 0.0
    columnar = is_parquet(trace)  # the format follows the extension, as `run --trace` does
    with open(trace, "wb" if columnar else "w") as out:
        writer = trace_writer(out, sim, 1, columnar, leaf_forces=False)
        while sim.tick < ticks:
            before = sim.tick
            sim.step()  # held (returns at once) while a viewer pauses it
            time.sleep(frame)  # the game would render here
            if sim.tick == before:
                time.sleep(0.001)
            else:
                writer.on_tick(sim)
        writer.finish(sim)
    print(f"done {sim.tick} dropped {server.dropped}", flush=True)
    time.sleep(0.3)  # the last frames leave before the process ends
    server.close()


if __name__ == "__main__":
    main()
