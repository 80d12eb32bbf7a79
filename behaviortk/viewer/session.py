"""The viewer's controller: one simulation, its clock, selection, reloads and errors.

Independent of arcade so that the window class stays a thin mapping from
events to these methods. Nothing here raises to the window: a failing step
or an invalid reload becomes banner lines, and the last good simulation
keeps running (a failing step pauses it).

Breakpoints (``sim/breakpoints.py``): ``cycle_break(group, node)`` sets one on a node of a
group's tree for every agent of the group, then changes the status it waits for, then
removes it (RUNNING, SUCCESS, FAILURE, none; a condition never runs, so its cycle starts
at SUCCESS). When one hits, the session pauses after that step, selects the agent and
keeps ``hit`` and ``break_note`` (the status line) until the run resumes. A restart or a
reload sets the same breakpoints again on the new simulation (those whose node is gone
are dropped).

Step back (``history.py``): ``step_back`` (``,``) shows the tick before, restored from the
ring of past ticks; ``step_once`` (``.``) and running replay the ticks ahead exactly, then
simulate new ones. Tuning or dragging an obstacle while stepped back drops the ticks
after the one shown; a reload or a restart starts a new ring.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from behaviortk.registry import CONDITION
from behaviortk.tree.status import FAILURE, RUNNING, STATUS_NAMES, SUCCESS
from behaviortk.vec import Array
from behaviortk.viewer.history import SECONDS, History
from behaviortk.viewer.retune import apply_change
from behaviortk.viewer.scene import ViewOptions, pick_agent, pick_obstacle
from behaviortk.viewer.trails import Trails
from behaviortk.viewer.tuning import Knob, Tuner

MIN_SPEED, MAX_SPEED = 1.0 / 16.0, 16.0
STATUS_CODES = {name: code for code, name in enumerate(STATUS_NAMES)}
"""Status names -> codes (a breakpoint's ``target`` names its status)."""
MAX_STEPS_PER_UPDATE = 8  # a slow machine drops simulated time instead of spiralling
BREAK_CYCLE = (RUNNING, SUCCESS, FAILURE)
"""The statuses ``b`` steps a node's breakpoint through before removing it."""


def next_break_status(node: Any, now: str | None) -> str:
    """The status ``b`` moves the breakpoint of flat-tree ``node`` to from ``now`` (None: it
    has none yet): RUNNING, SUCCESS, FAILURE, then "" (removed); a condition never runs, so
    its cycle starts at SUCCESS."""
    cycle = BREAK_CYCLE[1:] if node.kind == CONDITION else BREAK_CYCLE
    at = -1 if now is None else cycle.index(STATUS_CODES[now])
    return "" if at + 1 >= len(cycle) else STATUS_NAMES[cycle[at + 1]]


def load_scenario(path: str | Path, registries: Any = None) -> tuple[Any, str]:
    """``(Scenario, the text it was read from)``; raises DefinitionError.

    ``registries``: the node types to validate against (default: the default bundle)."""
    from behaviortk.format.loader import load_text, read_text

    text = read_text(path)
    return load_text(text, str(path), path=Path(path), registries=registries), text


def build_simulation(scenario: Any, engine: str, seed: int | None) -> Any:
    """The viewer's Simulation of ``scenario``: debug geometry on."""
    from behaviortk.sim.simulation import Simulation

    return Simulation(scenario, engine=engine, seed=seed, debug=True)


def resume_simulation(snapshot: str | Path, engine: str) -> Any:
    """The viewer's Simulation continuing ``snapshot`` (``run --resume``): debug geometry on;
    engine ``auto`` continues on the engine it was saved on."""
    from behaviortk.sim.simulation import Simulation

    return Simulation.restore(snapshot, None if engine == "auto" else engine, debug=True)


def load_source(
    path: str | Path, engine: str, seed: int | None, registries: Any = None
) -> tuple[Any, str]:
    """``(Simulation, the text it was built from)``: debug-enabled; raises DefinitionError.

    ``registries``: the node types to validate against (default: the default bundle)."""
    scenario, text = load_scenario(path, registries)
    return build_simulation(scenario, engine, seed), text


def load_simulation(path: str | Path, engine: str, seed: int | None, registries: Any = None) -> Any:
    """Load and validate ``path`` and build a debug-enabled Simulation (raises DefinitionError)."""
    return load_source(path, engine, seed, registries)[0]


class Session:
    """One viewer's simulation of ``path``.

    A reload applies the whole new definition: it builds a fresh Simulation from
    it, so the world (size, edges, dt, heading_smoothing, obstacles, walls,
    paths), the groups and trees, and ``world.seed`` all come from the saved file.
    ``seed`` is the ``--seed`` of the command line: when given, it wins over the
    file's ``world.seed`` on the first load and on every reload; when None each
    load uses the seed its file names. ``restart`` replays the running simulation's
    own seed. Every reload validates against the registries of the first load
    (``registries``, else the default bundle), so the plugins loaded for the
    command line (``--plugin``, entry points) stay in force.
    """

    def __init__(
        self,
        path: str | Path,
        engine: str = "py_trees",
        seed: int | None = None,
        sim: Any = None,
        registries: Any = None,
        source: str | None = None,
        history_seconds: float = SECONDS,
    ) -> None:
        """``sim``: one built already (``source``: the text it was built from, else the
        file's); ``history_seconds``: simulated seconds ``,`` can step back."""
        self.path = Path(path)
        self.engine = engine
        self.seed = seed  # --seed, or None: the file's world.seed
        if sim is None:
            sim, self.source = load_source(path, engine, seed, registries)
        else:
            self.source = self._read() if source is None else source
        self.sim = sim
        self.history_seconds = history_seconds
        self.history = History(sim, history_seconds)
        self.trails = Trails()
        self.trails.record(self.sim)
        self._tuner: Tuner | None = None
        self.quit_prompt: str | None = None  # Esc with unsaved tuning: asked once
        self.registries = self.sim.scenario.registries  # plugins included; reloads reuse them
        self.opts = ViewOptions()
        self.paused = False
        self.speed = 1.0
        self.reload_errors: list[str] = []
        self.step_error: str | None = None
        self.dragging: int | None = None  # obstacle index being dragged
        self._acc = 0.0
        self._selection: tuple[int, int | None] | None = None  # (row, id) last shown
        self.breaks: dict[tuple[str, int], Any] = {}  # (group, node index) -> Breakpoint
        self.hit: Any = None  # the breakpoint hit that paused the run (sim/breakpoints.Hit)
        self.break_note = ""  # the status line saying why the run paused
        self.stepped: Callable[[Any, int | None], None] | None = None
        """Called after each step with the simulation and the selected row (the window
        keeps the selected agent's status history: no tick between two frames missed)."""

    # ------------------------------------------------------------ stepping
    def _step(self) -> bool:
        selected = self.selected_id
        try:
            sim = self.history.before_step(self.sim)
            if sim is not self.sim:  # a replay reaching a tune: its state after the tune
                self._swap(sim)
            self.sim.step()
            self.history.after_step(self.sim)
        except Exception as exc:  # shown in the window; the window must not die
            self.step_error = f"step {self.sim.tick + 1} failed: {type(exc).__name__}: {exc}"
            self.paused = True
            return False
        finally:
            self.select_id(selected)
        self.step_error = None
        self.trails.record(self.sim)
        if self.stepped is not None:
            self.stepped(self.sim, self.opts.selected)
        if self.sim.hit is not None:
            self._stop_at(self.sim.hit)
        return True

    def _stop_at(self, hit: Any) -> None:
        """Pause where a breakpoint hit, select its agent, say why."""
        self.paused = True
        self.hit = hit
        self.break_note = hit.reason()
        self.select_id(hit.agent)

    def _read(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    @property
    def selected_id(self) -> int | None:
        """The selected agent's id: the selection follows the agent when rows move
        (a game spawning or despawning around it), and ends when it is despawned.

        ``opts.selected`` (the row the drawing reads) is remembered with the id it
        showed, so a row that now holds another agent still means the old one."""
        row = self.opts.selected
        if row is None:
            return None
        if self._selection is not None and self._selection[0] == row:
            return self._selection[1]
        if not 0 <= row < self.sim.agents.n:
            return None
        self._selection = (row, int(self.sim.ids[row]))
        return self._selection[1]

    def select_id(self, agent: int | None) -> None:
        """Select agent ``agent`` (an id) wherever its row now is; None if it is gone."""
        rows: Any = np.flatnonzero(self.sim.ids == agent) if agent is not None else []
        self.opts.selected = int(rows[0]) if len(rows) else None
        self._selection = None if self.opts.selected is None else (self.opts.selected, agent)

    def advance(self, real_dt: float) -> int:
        """Called from on_fixed_update: run the ticks of ``real_dt * speed`` at the scenario's dt."""
        if self.paused:
            self._acc = 0.0
            return 0
        self._acc += real_dt * self.speed
        steps = 0
        dt = float(self.sim.dt)
        while self._acc >= dt and steps < MAX_STEPS_PER_UPDATE:
            self._acc -= dt
            if not self._step():
                return steps
            steps += 1
            if self.paused:  # a breakpoint hit: stop where it did
                self._acc = 0.0
                return steps
        if steps == MAX_STEPS_PER_UPDATE:
            self._acc = 0.0
        return steps

    def toggle_pause(self) -> None:
        self.paused = not self.paused
        if not self.paused:
            self.hit, self.break_note = None, ""

    # ------------------------------------------------------------ breakpoints
    def cycle_break(self, group: str, node: int) -> str:
        """Set, change or remove the breakpoint on node ``node`` of ``group``'s tree (see the
        module docstring); returns the status it now waits for, "" once removed."""
        key = (group, node)
        tree = self.sim.trees[group]
        old = self.breaks.pop(key, None)
        if old is not None:
            old.remove()
        status = next_break_status(tree.nodes[node], None if old is None else old.target[1])
        if status:
            self.breaks[key] = self.sim.break_on(
                node=tree.nodes[node].path, status=status, group=group
            )
        return status

    def break_marks(self, group: str) -> dict[int, int]:
        """The nodes of ``group``'s tree with a breakpoint -> the status code it waits for."""
        return {
            node: STATUS_CODES[point.target[1]]
            for (g, node), point in self.breaks.items()
            if g == group
        }

    def _carry_breaks(self, sim: Any) -> None:
        """Set this session's breakpoints on ``sim`` (a restart or reload); drop those whose
        node the new trees do not have."""
        from behaviortk.errors import SimulationError

        kept = {}
        for (group, node), point in self.breaks.items():
            path, status = point.target
            tree = sim.trees.get(group)
            if tree is None or node >= len(tree) or tree.nodes[node].path != path:
                continue
            try:
                kept[(group, node)] = sim.break_on(node=path, status=status, group=group)
            except SimulationError:
                continue
        self.breaks = kept
        self.hit, self.break_note = None, ""

    def step_once(self) -> None:
        """One tick while paused (the '.' key): replayed while behind the head, else new."""
        self.paused = True
        self._step()

    def step_back(self) -> bool:
        """The tick before, paused (the ',' key); False at the start of the ring."""
        self.paused = True
        try:
            past = self.history.step_back(self.sim, self.selected_id)
        except Exception as exc:  # shown in the window; the window must not die
            self.step_error = f"step back failed: {type(exc).__name__}: {exc}"
            return False
        if past is None:
            return False
        self._swap(past)
        return True

    def explain_selected(self) -> bool:
        """Paused on a tick that ran before the selected agent was asked why of (selected
        now, a breakpoint's agent, a step back): run that tick again from the ring with the
        agent watched, so its why is the tick's own, not the next tick's. True if it did."""
        agent, sim = self.selected_id, self.sim
        watch = getattr(sim, "why_watch", None)
        if agent is None or watch is None or not self.paused:
            return False
        if watch.tick == sim.tick - 1 and agent in watch.whys:
            return False
        try:
            again = self.history.again(sim, agent)
        except Exception as exc:  # shown in the window; the window must not die
            self.step_error = f"why of tick {sim.tick - 1} failed: {type(exc).__name__}: {exc}"
            return False
        if again is None:
            return False
        hit, note = self.hit, self.break_note
        self._swap(again)
        self.hit, self.break_note = hit, note
        return True

    def _swap(self, sim: Any) -> None:
        """Show ``sim``, the same run at another tick: breakpoints and selection carried
        over, trails cut back to its tick."""
        selected = self.selected_id
        self._carry_breaks(sim)
        self.sim = sim
        self.select_id(selected)
        self.trails.rewind(sim.tick)
        self.trails.record(sim)

    def faster(self) -> None:
        self.speed = min(self.speed * 2.0, MAX_SPEED)

    def slower(self) -> None:
        self.speed = max(self.speed / 2.0, MIN_SPEED)

    # ------------------------------------------------------- rebuild paths
    def restart(self) -> None:
        """Same definition, same seed, tick 0 (keeps the selection and overlays)."""
        self._replace(self._rebuild(self.sim.scenario))

    def _rebuild(self, scenario: Any) -> Any:
        return build_simulation(scenario, self.engine, self.sim.seed)

    def _replace(self, sim: Any) -> None:
        pointer = self.sim.pointer
        self._carry_breaks(sim)
        self.sim = sim
        if pointer is not None:  # kept inside the (maybe resized) world
            self.set_pointer(pointer)
        self.step_error = None
        self.dragging = None
        self._acc = 0.0
        self.history = History(sim, self.history_seconds)
        self.trails.clear()
        self.trails.record(sim)
        if self.opts.selected is not None and self.opts.selected >= sim.agents.n:
            self.opts.selected = None

    def reload(self) -> bool:
        """Re-validate the file; on success rebuild from all of it, else keep the last good world.

        The new Simulation takes every field of the saved definition, its
        ``world.seed`` included, unless ``--seed`` was given (``self.seed``).
        """
        from behaviortk.format.issues import DefinitionError

        if self._read() == self.running_text:
            # The file holds what runs: the tuning panel's own save, or a mistake undone.
            self.reload_errors = []
            return True
        try:
            sim, text = load_source(self.path, self.engine, self.seed, self.registries)
        except DefinitionError as exc:
            self.reload_errors = [
                f"{self.path.name} is invalid; still running the last good version:",
                *[str(i) for i in exc.issues],
            ]
            return False
        except Exception as exc:
            self.reload_errors = [
                f"{self.path.name} could not be reloaded: {type(exc).__name__}: {exc}"
            ]
            return False
        self.reload_errors = []
        self.source = text
        self._tuner = None
        self._replace(sim)
        return True

    # ------------------------------------------------------------ tuning
    @property
    def running_text(self) -> str:
        """The definition text the simulation runs: the file as loaded, with tuned values."""
        return self._tuner.text if self._tuner is not None else self.source

    @property
    def tuner(self) -> Tuner:
        if self._tuner is None:
            registries = getattr(self.sim.scenario, "registries", None)
            self._tuner = Tuner(self.path, self.source, registries)
        return self._tuner

    def tune(self, knob: Knob, value: Any) -> tuple[bool, str]:
        """Validate ``value`` for ``knob`` in the whole definition, then apply it to the running
        simulation; ``(False, why)`` and nothing changed when it is refused."""
        proposal = self.tuner.propose(knob, value)
        if proposal.refused is not None:
            return False, f"refused: {proposal.refused}"
        group = self.tuner.groups()[int(knob.pointer.split("/")[2])]
        self.tuner.accept(proposal)
        said = apply_change(self.sim, proposal.scenario, group, knob.source)
        self.history.edited(self.sim)  # the ticks after this one go; replays pass the tune
        return True, said

    @property
    def unsaved_tuning(self) -> bool:
        """Whether the tuning panel changed values that the file does not hold yet."""
        return self._tuner is not None and self._tuner.dirty

    def save_tuning(self) -> str:
        return self.tuner.save()

    @property
    def errors(self) -> list[str]:
        return [
            *self.reload_errors,
            *([self.step_error] if self.step_error else []),
            *([self.quit_prompt] if self.quit_prompt else []),
        ]

    # ------------------------------------------------------------ selection
    def cycle_selection(self) -> None:
        n = self.sim.agents.n
        if n == 0:
            self.opts.selected = None
            return
        sel = self.opts.selected
        self.opts.selected = 0 if sel is None else (sel + 1) % n

    def toggle_overlay(self, name: str) -> None:
        self.opts.overlays ^= {name}

    # ---------------------------------------------------------------- mouse
    def press(self, point: Array, slack: float) -> None:
        """Left click at a world point: select an agent, else grab an obstacle, else deselect."""
        self.set_pointer(point)
        agent = pick_agent(self.sim.agents, point, slack)
        if agent is not None:
            self.opts.selected = agent
            return
        self.dragging = pick_obstacle(self.sim.world, point)
        if self.dragging is None:
            self.opts.selected = None

    def drag(self, point: Array) -> None:
        """Move the grabbed obstacle (kept inside the world) and the pointer target."""
        self.set_pointer(point)
        if self.dragging is not None:
            self.history.truncate(self.sim)  # a new future from the tick shown
            w = self.sim.world
            if self.dragging < w.obstacle_pos.shape[0]:
                w.obstacle_pos[self.dragging] = np.clip(point, 0.0, w.size)

    def release(self) -> None:
        self.dragging = None

    def set_pointer(self, point: Array) -> None:
        w = self.sim.world
        self.sim.pointer = np.clip(np.asarray(point, dtype=np.float64), 0.0, w.size)
