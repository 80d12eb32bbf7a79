"""Hot reload applies every field of the saved definition, ``world.seed`` included.

Tested on ``Session`` alone (no window, no file watcher): ``reload()`` is what
the window calls when the watcher sees the file change. The reference a
reload is compared with is a fresh ``Simulation`` of the saved file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import behaviortk
from behaviortk.sim.simulation import Simulation
from behaviortk.viewer.session import Session

REFERENCE = Path(__file__).resolve().parents[1] / "definitions" / "evade_or_flock.json"


@pytest.fixture
def definition(tmp_path: Path) -> Path:
    path = tmp_path / "scene.json"
    path.write_text(REFERENCE.read_text())
    return path


def save(path: Path, **world: Any) -> dict[str, Any]:
    """Rewrite ``path`` with these ``world`` fields changed (as an editor saves it)."""
    data = json.loads(path.read_text())
    data["world"].update(world)
    path.write_text(json.dumps(data, indent=2))
    return data


def fresh(path: Path, seed: int | None = None, ticks: int = 0) -> Simulation:
    sim = Simulation(behaviortk.load(path), seed=seed)
    sim.run(ticks)
    return sim


def stepped(session: Session, ticks: int) -> np.ndarray:
    session.sim.run(ticks)
    return session.sim.agents.pos.copy()


def test_a_reload_applies_a_changed_seed(definition: Path) -> None:
    session = Session(definition)
    assert session.sim.seed == 7
    session.sim.run(5)
    save(definition, seed=8)
    assert session.reload() is True
    assert session.sim.seed == 8 and session.sim.tick == 0
    at_reload = session.sim.agents.pos.copy()
    assert np.array_equal(at_reload, fresh(definition).agents.pos)
    assert not np.array_equal(at_reload, fresh(definition, seed=7).agents.pos)
    after = stepped(session, 30)
    assert np.array_equal(after, fresh(definition, ticks=30).agents.pos)
    assert not np.array_equal(after, fresh(definition, seed=7, ticks=30).agents.pos)


def test_the_command_line_seed_keeps_winning_over_the_files(definition: Path) -> None:
    session = Session(definition, seed=3)
    assert session.sim.seed == 3
    save(definition, seed=8)
    assert session.reload() is True
    assert session.seed == 3 and session.sim.seed == 3
    assert np.array_equal(stepped(session, 30), fresh(definition, seed=3, ticks=30).agents.pos)


def test_restart_after_a_reload_replays_the_new_seed(definition: Path) -> None:
    session = Session(definition)
    save(definition, seed=11)
    session.reload()
    session.sim.run(10)
    session.restart()
    assert session.sim.seed == 11 and session.sim.tick == 0
    assert np.array_equal(session.sim.agents.pos, fresh(definition).agents.pos)


def test_a_reload_applies_the_world_and_the_groups(definition: Path) -> None:
    session = Session(definition)
    session.opts.selected = 62  # the last predator: gone after the reload
    session.set_pointer(np.array([790.0, 590.0]))
    data = save(definition, width=500, height=400, edges="bounce", dt=1 / 30, heading_smoothing=4)
    data["groups"][0]["count"] = 10
    data["groups"][1]["count"] = 2
    data["groups"][1]["max_speed"] = 70
    data["obstacles"] = [{"at": [250.0, 200.0], "radius": 20.0}]
    definition.write_text(json.dumps(data, indent=2))
    assert session.reload() is True
    sim = session.sim
    assert (sim.world.width, sim.world.height, sim.world.edges) == (500.0, 400.0, "bounce")
    assert sim.dt == 1 / 30 and sim.heading_smoothing == 4
    assert sim.agents.n == 12 and sim.agents.names[-1] == "predator-1"
    assert sim.world.obstacle_pos.tolist() == [[250.0, 200.0]]
    assert session.opts.selected is None
    assert sim.pointer is not None and sim.pointer.tolist() == [500.0, 400.0]  # kept inside
    assert session.advance(0.1 + 1e-9) == 3  # steps at the new dt
    reference = fresh(definition, ticks=3)
    assert np.array_equal(sim.agents.pos, reference.agents.pos)
    assert np.array_equal(sim.agents.vel, reference.agents.vel)


def test_an_invalid_save_keeps_the_running_seed(definition: Path) -> None:
    session = Session(definition)
    save(definition, seed=-1)
    assert session.reload() is False
    assert session.sim.seed == 7 and "invalid" in session.errors[0]


def test_undoing_a_mistake_clears_the_banner_and_keeps_the_run(definition: Path) -> None:
    """Typo, then undo: the file holds the running text again, so the banner goes."""
    original = definition.read_text()
    session = Session(definition)
    session.sim.run(5)
    definition.write_text(original.replace('"world"', '"wrold"', 1))
    assert session.reload() is False and session.errors
    definition.write_text(original)
    assert session.reload() is True
    assert session.errors == [] and session.sim.tick == 5  # nothing rebuilt: it already runs


def test_the_selection_follows_the_agent_id_when_rows_move(definition: Path) -> None:
    """A game despawns a prey: the predators after it slide a row, the selection (the last
    predator) follows its id; once the selected agent itself is despawned, nothing is."""
    session = Session(definition)
    session.opts.selected = 62  # 60 prey, then 3 predators
    chosen = session.selected_id
    session.sim.despawn([int(session.sim.ids[0])])
    session.select_id(chosen)
    assert session.opts.selected == 61 and session.selected_id == chosen
    session.step_once()
    assert session.opts.selected == 61 and session.selected_id == chosen
    session.sim.despawn([int(session.sim.ids[0])])  # between frames: the row moves again
    session.step_once()
    assert session.opts.selected == 60 and session.selected_id == chosen
    session.sim.despawn([chosen])
    session.step_once()
    assert session.opts.selected is None and session.selected_id is None
