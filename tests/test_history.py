"""The live viewer's step back (``viewer/history.py``, ``sim/snapshot_memory.py``), without a
window: stepping back shows the state the run had at that tick, and stepping forward again
gives the uninterrupted run's state byte for byte (positions, tree statuses, blackboards
and their stamps, wander and path memory), on both engines, whatever the mouse did
meanwhile; the ring is bounded; an edit while stepped back drops the future.

States are compared through ``Capture`` (everything ``sim.save`` writes), so a field a
continuation needs is compared as soon as the snapshot holds it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from behaviortk.format.loader import load_text
from behaviortk.sim.simulation import Simulation
from behaviortk.sim.snapshot_memory import Capture
from behaviortk.viewer.history import History

DEFINITIONS = Path(__file__).resolve().parents[1] / "definitions"
ENGINES = ("batch", "py_trees")

POINTER = {
    "name": "pointer and wander",
    "world": {"width": 400, "height": 300, "edges": "wrap", "dt": 0.05, "seed": 3},
    "obstacles": [{"at": [200, 150], "radius": 20}],
    "groups": [
        {
            "name": "followers",
            "count": 6,
            "spawn": {"kind": "area", "min": [20, 20], "max": [380, 280]},
            "max_speed": 60,
            "tree": "follow",
        },
        {
            "name": "wanderers",
            "count": 5,
            "spawn": {"kind": "area", "min": [20, 20], "max": [380, 280]},
            "max_speed": 40,
            "tree": "roam",
        },
    ],
    "trees": {
        "follow": {"root": {"type": "seek", "target": {"kind": "pointer", "at": [10, 10]}}},
        "roam": {
            "root": {
                "type": "parallel",
                "policy": "success_on_all",
                "children": [
                    {"type": "wander", "radius": 12, "distance": 20, "jitter": 40},
                    {"type": "obstacle_avoidance", "min_detection_length": 30},
                ],
            }
        },
    },
}


def build(source: str | dict, engine: str) -> Simulation:
    text = (DEFINITIONS / source).read_text() if isinstance(source, str) else json.dumps(source)
    return Simulation(load_text(text, "test"), engine=engine, debug=True)


def state(sim: Simulation) -> tuple[str, dict[str, tuple[str, tuple[int, ...], bytes]]]:
    """Everything a continuation reads, as bytes."""
    c = Capture(sim)
    arrays = {k: (str(v.dtype), v.shape, v.tobytes()) for k, v in c.arrays.items()}
    return json.dumps(c.manifest, sort_keys=True), arrays


def mouse(sim: Simulation) -> None:
    """The user's inputs before a step: the pointer follows a path, an obstacle is dragged."""
    t = sim.tick
    sim.pointer = np.array([30.0 + 7.0 * t, 40.0 + 3.0 * (t % 11)])
    if sim.world.obstacle_pos.shape[0]:
        sim.world.obstacle_pos[0] = (200.0 + (t % 5), 150.0)


def live(sim: Simulation, history: History, ticks: int) -> Simulation:
    """``ticks`` steps as the viewer takes them at the head, the mouse moving."""
    for _ in range(ticks):
        mouse(sim)
        sim = history.before_step(sim)
        sim.step()
        history.after_step(sim)
    return sim


def forward(sim: Simulation, history: History) -> Simulation:
    """One step as ``.`` takes it behind the head (the mouse elsewhere: ignored)."""
    sim.pointer = np.array([1.0, 1.0])
    sim = history.before_step(sim)
    sim.step()
    history.after_step(sim)
    return sim


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("source", "ticks", "back"),
    [("guard_patrol.json", 130, 32), (POINTER, 40, 23)],
    ids=["guard_patrol", "pointer"],
)
def test_back_then_forward_is_the_uninterrupted_run_byte_for_byte(
    source: str | dict, ticks: int, back: int, engine: str
) -> None:
    ref = build(source, engine)
    expected = {0: state(ref)}
    for _ in range(ticks + 5):
        mouse(ref)
        ref.step()
        expected[ref.tick] = state(ref)

    sim = build(source, engine)
    history = History(sim)
    sim = live(sim, history, ticks)
    assert state(sim) == expected[ticks]
    for n in range(1, back + 1):  # over keyframes (every 10 ticks) and, on guard_patrol,
        sim = history.step_back(sim)  # over tick ~106, where a guard first remembers
        assert sim.tick == ticks - n and history.back == n
        assert state(sim) == expected[ticks - n]
    for n in range(back - 1, -1, -1):
        sim = forward(sim, history)
        assert history.back == n
        assert state(sim) == expected[ticks - n]
    sim = live(sim, history, 5)  # at the head again: new ticks, the same as uninterrupted
    assert history.head == ticks + 5 and state(sim) == expected[ticks + 5]


def test_guard_patrol_remembers_within_the_ticks_stepped_over() -> None:
    """The test above steps back over a remembered point being stored (so blackboards and
    their stamps are compared while they change)."""
    sim = build("guard_patrol.json", "batch")
    stamps = set()
    for _ in range(130):
        sim.step()
        if sim.tick >= 130 - 32:
            stamps |= {sim.blackboard(a).stored_tick("last_seen") for a in sim.ids_of([0, 1])}
    assert len(stamps - {None}) > 1


def test_the_ring_keeps_its_capacity_and_no_more() -> None:
    sim = build(POINTER, "batch")  # dt 0.05
    history = History(sim, seconds=1.5, every=4)
    assert history.capacity == 30
    sim = live(sim, history, 100)
    assert history.span == 30
    assert len(history.keyframes) <= 30 // 4 + 2 and len(history.inputs) <= 30 + 4
    for n in range(30):
        sim = history.step_back(sim)
        assert sim.tick == 99 - n
    assert history.step_back(sim) is None  # the ring's start: nothing changes
    assert sim.tick == 70 and history.back == 30


def test_the_default_ring_covers_ten_seconds() -> None:
    sim = build("wander.json", "batch")
    assert History(sim).capacity == round(10 / sim.dt) == 600


def test_an_edit_while_stepped_back_drops_the_future_and_replays_pass_it() -> None:
    sim = build(POINTER, "batch")
    history = History(sim)
    sim = live(sim, history, 30)
    before = {}
    for _ in range(5):
        sim = history.step_back(sim)
        before[sim.tick] = state(sim)
    assert sim.tick == 25
    sim.agents.max_speed[:] *= 0.5  # a tune of the running simulation (retune.apply_physics)
    history.edited(sim)
    assert history.head == 25 and history.back == 0 and history.span == 24
    after = {}
    for _ in range(10):  # a new future from the edit
        sim = live(sim, history, 1)
        after[sim.tick] = state(sim)
    assert sim.tick == 35
    for _ in range(12):  # back over the edit, to 23
        sim = history.step_back(sim)
        if sim.tick in after:
            assert state(sim) == after[sim.tick]
        elif sim.tick in before and sim.tick < 25:
            assert state(sim) == before[sim.tick]
    assert sim.tick == 23
    for _ in range(12):
        sim = forward(sim, history)
        if sim.tick > 25:
            assert state(sim) == after[sim.tick]
    assert sim.tick == 35 and history.back == 0


def test_a_capture_shares_no_memory_with_the_simulation() -> None:
    sim = build(POINTER, "py_trees")
    for _ in range(3):
        sim.step()
    capture = Capture(sim)
    kept = state(sim)
    restored = capture.restore()
    for _ in range(4):
        sim.step()
        restored.step()
    assert state(capture.restore()) == kept
    assert state(restored) == state(sim)
    assert capture.nbytes == sum(v.nbytes for v in capture.arrays.values()) > 0


GUARDS = DEFINITIONS / "guard_patrol.json"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_paused_selection_explains_the_tick_shown(engine: str) -> None:
    """Paused after 40 ticks with nobody selected, then an agent selected: the viewer runs
    the tick shown again from the ring with it watched, so every why is that tick's own
    (no '(next tick)', each verdict the status shown) and the run is bit for bit as it
    was. A step back with it selected explains the tick it shows without a second run."""
    from behaviortk.sim.why import NEXT_TICK, why_shown
    from behaviortk.tree.status import SUCCESS
    from behaviortk.viewer.session import Session

    session = Session(GUARDS, engine=engine, sim=build("guard_patrol.json", engine))
    for _ in range(40):
        session.step_once()
    before = state(session.sim)
    agent = 0
    session.select_id(agent)
    assert session.explain_selected()
    assert state(session.sim) == before
    assert not session.explain_selected()  # recorded: nothing to run again
    whys = why_shown(session.sim, agent)
    assert whys and all(w is not None and not w.text.endswith(NEXT_TICK) for w in whys.values())
    status = session.sim.engine.node_status(session.sim.row_of(agent))
    for index, why in whys.items():
        assert why is not None and why.holds == (status[index] == SUCCESS), why.text
    assert session.step_back()
    assert session.sim.why_watch.tick == session.sim.tick - 1
    assert not session.explain_selected()
