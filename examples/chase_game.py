"""A small playable game on top of behaviortk: run from the hunters defined in JSON.

    .venv/bin/python examples/chase_game.py          # arrow keys or WASD; R restarts; Esc quits
    .venv/bin/python examples/chase_game.py --serve  # the same, served to a viewer

With ``--serve`` the game calls ``sim.serve()`` and prints the port; attach from another
terminal while it runs. Without a display the scripted round waits (up to a minute) for
the first viewer, then plays in real time, 30 ticks a second, for about 7 s until a
hunter catches the player; a recording then ends with it (the game stops serving)::

    .venv/bin/behaviortk attach 127.0.0.1:PORT      # the viewer's window on the game
    .venv/bin/behaviortk attach 127.0.0.1:PORT --headless --ticks 150 --trace seen.jsonl
    .venv/bin/behaviortk replay seen.jsonl

In the window click a hunter to see its tree, why and blackboard; ``b`` on a node of its
tree sets a breakpoint that holds the game inside ``sim.step()`` until space.

The round starts when the player first presses a movement key (the hunters wait
until then). The world is drawn as the viewer draws it (``viewer.painter``: the
arena, bodies with their heading and rim, a legend), the score over it, and a
catch shows where it happened and which hunter made it.

The game owns the loop: each frame it moves the player (an agent of an
``"control": "external"`` group) with ``sim.move``, lets ``sim.advance`` run
the fixed ticks the elapsed time allows, spawns a new hunter every few seconds
with ``sim.spawn`` and ends the round when a hunter's ``emit`` node reports
``caught`` (``sim.on``). The hunters' behaviour is all in chase_game.json.
Without a display (``ARCADE_HEADLESS=1``) it plays a scripted round and prints
the score.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import behaviortk

DEFINITION = Path(__file__).with_name("chase_game.json")
PLAYER_SPEED = 120.0  # world units per second
SPAWN_EVERY = 4.0  # seconds of play between new hunters
KEYS = {"left": (-1, 0), "right": (1, 0), "up": (0, 1), "down": (0, -1)}


@dataclass
class ChaseGame:
    """The rules, apart from drawing: input in, simulation stepped, score out."""

    sim: behaviortk.Simulation
    player: int = 0
    score: float = 0.0  # seconds survived
    started: bool = False  # the first movement key starts the round
    over: bool = False
    catch: behaviortk.Event | None = None  # the hunter's "caught" event that ended it
    caught_at: Any = None  # the player's position then
    held: set[str] = field(default_factory=set)
    next_spawn: float = SPAWN_EVERY
    alpha: float = 0.0
    label: Any = None  # the score line's arcade.Text, made on the first draw

    @classmethod
    def new(cls, engine: str = "auto") -> ChaseGame:
        sim = behaviortk.Simulation(behaviortk.load(DEFINITION), engine=engine)
        game = cls(sim, player=int(sim.ids[sim.agents.slices["player"]][0]))
        sim.on("caught", game._caught)
        return game

    def _caught(self, event: behaviortk.Event) -> None:
        if not self.over:
            self.catch = event
            self.caught_at = self.sim.agents.pos[int(self.sim.rows_of([self.player])[0])].copy()
        self.over = True

    def press(self, key: str) -> None:
        """A movement key goes down: the round starts on the first one."""
        self.started = True
        self.held.add(key)

    def update(self, seconds: float) -> None:
        """One frame of ``seconds`` real time: move the player, run the simulation, spawn."""
        if self.over or not self.started:
            return
        step = np.sum([KEYS[k] for k in self.held] or [(0, 0)], axis=0).astype(float)
        norm = float(np.hypot(*step))
        vel = step / norm * PLAYER_SPEED if norm else np.zeros(2)
        row = int(self.sim.rows_of([self.player])[0])
        size = self.sim.world.size
        pos = np.clip(self.sim.agents.pos[row] + vel * seconds, 0.0, size)
        self.sim.move(self.player, pos, vel=vel)
        self.alpha = self.sim.advance(seconds)
        if self.over:
            return
        self.score += seconds
        if self.score >= self.next_spawn:
            self.next_spawn += SPAWN_EVERY
            corner = size * np.array([[0.05, 0.05], [0.95, 0.05], [0.05, 0.95], [0.95, 0.95]])
            self.sim.spawn("hunters", pos=corner[int(self.score) % 4])

    @property
    def hunters(self) -> int:
        rows = self.sim.agents.slices["hunters"]
        return rows.stop - rows.start


def play_scripted(
    game: ChaseGame,
    run_for: float = 6.0,
    seconds: float = 30.0,
    fps: float = 60.0,
    real_time: bool = False,
) -> ChaseGame:
    """A round with scripted input: run in a square for ``run_for`` s, then stand still
    until caught (or ``seconds`` pass); ``real_time``: one frame per 1/``fps`` s of the
    clock (a served game, so a viewer can follow)."""
    frame = 1.0 / fps
    t = 0.0
    game.started = True
    while not game.over and t < seconds:
        phase = int(t / 1.5) % 4
        game.held = {("right", "up", "left", "down")[phase]} if t < run_for else set()
        game.update(frame)
        t += frame
        if real_time:
            time.sleep(frame)
    return game


def served(game: ChaseGame) -> ChaseGame:
    """``game`` served to ``behaviortk attach`` (loopback, a free port, printed)."""
    port = game.sim.serve()
    print(f"serving: behaviortk attach 127.0.0.1:{port}", flush=True)
    return game


def wait_for_viewer(game: ChaseGame, seconds: float = 60.0) -> None:
    """Hold a served scripted round until a viewer attaches (at most ``seconds``)."""
    server = game.sim.server
    assert server is not None
    print(f"waiting up to {seconds:.0f} s for a viewer", flush=True)
    end = time.monotonic() + seconds
    while server.attached == 0 and time.monotonic() < end:
        time.sleep(0.05)


def window_main(new_game: Any) -> None:  # pragma: no cover - needs a display; the logic is tested
    import arcade

    key_names = {
        arcade.key.LEFT: "left",
        arcade.key.A: "left",
        arcade.key.RIGHT: "right",
        arcade.key.D: "right",
        arcade.key.UP: "up",
        arcade.key.W: "up",
        arcade.key.DOWN: "down",
        arcade.key.S: "down",
    }

    class ChaseWindow(arcade.Window):
        def __init__(self) -> None:
            super().__init__(1010, 640, "behaviortk chase")
            self.game = new_game()
            self.picture = Screen(self)

        def on_key_press(self, symbol: int, modifiers: int) -> None:
            if symbol == arcade.key.ESCAPE:
                self.close()
            elif symbol == arcade.key.R:
                if self.game.sim.server is not None:  # a viewer sees the old round end
                    self.game.sim.server.close()
                self.game = new_game()
            elif symbol in key_names:
                self.game.press(key_names[symbol])

        def on_key_release(self, symbol: int, modifiers: int) -> None:
            self.game.held.discard(key_names.get(symbol, ""))

        def on_update(self, delta_time: float) -> None:
            self.game.update(min(delta_time, 0.1))

        def on_draw(self) -> None:
            self.picture.draw(self.game)

    ChaseWindow()
    arcade.run()


PLATE = (12, 14, 20, 170)
"""Behind the game's status lines (the viewer's panel colour, translucent)."""


class Screen:
    """The world as the viewer draws it (its painter, in a render's layout: the arena, the
    bodies, a legend), with the game's lines over it and a ring where a catch happened."""

    def __init__(self, window: Any) -> None:
        from behaviortk.viewer.painter import Painter

        self.painter = Painter(window)
        self.labels: list[Any] = []

    def draw(self, game: ChaseGame) -> None:
        import arcade

        from behaviortk.viewer.hud import HudInfo
        from behaviortk.viewer.painter import Overlay2D
        from behaviortk.viewer.scene import ViewOptions

        opts = ViewOptions()
        self.painter.draw(game.sim, opts, HudInfo(caption=True), Overlay2D())
        lines = [f"survived {game.score:5.1f} s   hunters {game.hunters}   (Esc quits)"]
        if not game.started:
            lines.append("press an arrow key or WASD to start")
        if game.over and game.catch is not None:
            vp = self.painter.viewport(game.sim.world, opts)
            x, y = vp.to_screen(np.asarray(game.caught_at, dtype=np.float64))
            arcade.draw_circle_outline(float(x), float(y), 6.0 * vp.scale + 6.0, (255, 80, 80), 3)
            hunter = caught_by(game)
            lines.append(
                f"CAUGHT by {hunter} at {game.score:.1f} s (tick {game.catch.tick}) - press R"
            )
        while len(self.labels) < len(lines):
            self.labels.append(arcade.Text("", 0, 0, arcade.color.WHITE, 14, bold=True))
        shown = self.labels[: len(lines)]
        for i, (label, line) in enumerate(zip(shown, lines, strict=True)):
            label.text, label.x, label.y = line, 20, 40 + 26 * (len(lines) - 1 - i)
        # a plate behind the lines: agents passing under them stay faintly visible
        wide = max(label.content_width for label in shown)
        arcade.draw_lrbt_rectangle_filled(12, 28 + wide, 28, 62 + 26 * (len(lines) - 1), PLATE)
        for label in shown:
            label.draw()


def caught_by(game: ChaseGame) -> str:
    """The name of the hunter whose "caught" event ended the round (its id if gone)."""
    from behaviortk.errors import SimulationError

    if game.catch is None:
        return "?"
    try:
        return str(game.sim.agents.names[int(game.sim.rows_of([game.catch.agent])[0])])
    except SimulationError:  # despawned since
        return f"hunter {game.catch.agent}"


if __name__ == "__main__":
    serve = "--serve" in sys.argv[1:]

    def new_game() -> ChaseGame:
        return served(ChaseGame.new()) if serve else ChaseGame.new()

    if os.environ.get("ARCADE_HEADLESS") or not os.environ.get("DISPLAY"):
        game = new_game()
        if serve:
            wait_for_viewer(game)
        done = play_scripted(game, real_time=serve)
        print(f"caught: {done.over}; survived {done.score:.1f} s; hunters {done.hunters}")
    else:
        window_main(new_game)
