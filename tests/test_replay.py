"""``behaviortk replay``: the controller, the timeline, the window's events, headless frames, CLI.

The recorded run is ``trace_support``'s ``walk`` (hand-worked values) or the
reference scenario. A replayed tick must draw exactly what the live run drew at
that tick (same painter, same world rectangle); the file alone must be enough to
draw it; bad input is one line and exit code 1 with no window and no output file.
"""

from __future__ import annotations

import json
from pathlib import Path

import arcade
import numpy as np
import pytest
from PIL import Image
from trace_support import run_recorded, walk_sim, write_walk

import behaviortk
from behaviortk.cli import main
from behaviortk.record.jsonl import TraceWriter
from behaviortk.record.parquet import ParquetTraceWriter
from behaviortk.record.reader import TraceError, open_recording
from behaviortk.sim.simulation import Simulation
from behaviortk.viewer import palette
from behaviortk.viewer.hud import HudInfo, legend
from behaviortk.viewer.painter import Overlay2D
from behaviortk.viewer.recorded import tick_state
from behaviortk.viewer.render import RENDER_SIZE
from behaviortk.viewer.replay import ReplaySession
from behaviortk.viewer.replay_app import ReplayPainter, ReplayView, replay_frame
from behaviortk.viewer.timeline import HANDLE, PLAYED, Timeline
from tests.viewer_support import count_color, pixel_at, window

REFERENCE = Path(__file__).resolve().parents[1] / "definitions" / "evade_or_flock.json"


@pytest.fixture
def walk_trace(tmp_path: Path) -> Path:
    """``walk`` recorded for 6 ticks (Parquet, batch engine)."""
    path = tmp_path / "walk.parquet"
    sim = walk_sim("batch")
    run_recorded(sim, 6, ParquetTraceWriter(str(path), sim))
    return path


def session_of(path: Path, tick: int | None = None) -> ReplaySession:
    return ReplaySession(open_recording(path), tick)


# ---------------------------------------------------------------- controller
def test_seek_step_and_ends(walk_trace: Path) -> None:
    s = session_of(walk_trace)
    assert (s.index, s.tick) == (0, 0)
    s.step(+1)
    s.step(+1)
    assert s.tick == 2
    # the view is the recorded state: walker 1 after 3 ticks of seek from rest (F = 10 - v,
    # m = 1, dt 0.1): v = 1, 1.9, 1.9 + 8.1 * 0.1 = 2.71; x = 200 + 0.1 + 0.19 + 0.271
    assert s.sim.agents.pos[1, 0] == pytest.approx(200.561)
    assert s.sim.tick == 3 and s.sim.time == pytest.approx(0.3)  # steps taken, as a Simulation
    s.step(-5)
    assert s.tick == 0  # clamped at the first tick
    s.last()
    assert s.tick == 5
    s.step(+1)
    assert s.tick == 5
    s.seek(3)
    assert s.tick == 3
    s.first()
    assert s.tick == 0


def test_play_follows_simulated_time_at_the_chosen_speed(walk_trace: Path) -> None:
    """dt 0.1: recorded tick t shows the state at (t + 1) * 0.1 s."""
    s = session_of(walk_trace)
    assert not s.advance(1.0)  # paused: nothing moves
    s.toggle_pause()
    assert s.advance(0.25)  # clock 0.1 + 0.25 = 0.35: the last state at or before it is t = 2
    assert s.tick == 2
    s.faster()
    assert s.speed == 2.0
    s.advance(0.1)  # + 0.2 s: clock 0.55 -> t = 4
    assert s.tick == 4
    s.advance(1.0)  # past the end: stops on the last recorded tick
    assert s.tick == 5 and not s.playing
    s.toggle_pause()  # playing again from the end starts over
    assert s.playing and s.tick == 0


def test_a_trace_recorded_every_k_plays_at_the_runs_pace(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    sim = walk_sim("py_trees")
    run_recorded(sim, 9, ParquetTraceWriter(str(path), sim, every=2))
    s = session_of(path)
    assert s.rec.ticks.tolist() == [0, 2, 4, 6, 8]
    s.toggle_pause()
    s.advance(0.1)  # clock 0.2: tick 2's state is at 0.3, not yet
    assert s.tick == 0
    s.advance(0.1)  # clock 0.3
    assert s.tick == 2
    s.seek(5)  # between recorded ticks: the last one at or before
    assert s.tick == 4


def test_the_selection_is_an_id_kept_across_ticks(walk_trace: Path) -> None:
    s = session_of(walk_trace)
    s.cycle_selection()
    s.cycle_selection()
    assert s.opts.selected == 1 and s.selected_id == 1
    s.step(+3)
    assert s.opts.selected == 1
    at = s.sim.agents.pos[1]
    s.press(at + np.array([0.5, 0.0]), slack=1.0)
    assert s.selected_id == 1
    s.press(np.array([390.0, 10.0]), slack=1.0)  # empty space: deselect
    assert s.selected_id is None and s.opts.selected is None


def test_recorded_view_answers_what_the_panel_asks(walk_trace: Path) -> None:
    s = session_of(walk_trace, 0)
    view = s.sim
    assert view.engine.node_status(1).tolist() == [1, 3, 3, 0, 1]  # "13301" by hand
    assert view.engine.node_status(2).tolist() == []  # the post has no tree
    assert view.active_names(0) == ["stop"] and view.active_table()[2] == []
    assert view.engine.blackboard(0) == {}  # not recorded
    assert view.agents.names == ["walkers-0", "walkers-1", "posts-0"]
    assert view.agents.radius.tolist() == [5.0, 5.0, 6.0]  # the group's constants
    assert tick_state(view) is view.state
    live = walk_sim("batch")
    live.step()
    assert tick_state(live).status_strings() == view.state.status_strings()


def test_a_damaged_tick_is_a_banner_and_the_last_good_tick_stays(walk_trace: Path) -> None:
    s = session_of(walk_trace)
    rec = s.rec

    def broken(tick: int):
        raise TraceError(f"{rec.path}: row group 0 cannot be read: boom")

    good = rec._reader
    rec._reader = broken
    s.step(+1)
    assert s.tick == 0 and s.errors == [f"{rec.path}: row group 0 cannot be read: boom"]
    rec._reader = good
    s.step(+1)
    assert s.tick == 1 and s.errors == []  # a tick decoded again: the banner goes


# ---------------------------------------------------------------- timeline
def test_timeline_maps_x_to_ticks_and_back() -> None:
    ticks = np.array([0, 2, 4, 6, 8])
    line = Timeline.of_window(1000, 360, 8, ticks)
    assert line.x_of(0) == line.x0 and line.x_of(4) == line.x1
    mid = (line.x0 + line.x1) / 2  # tick 4 sits half way
    assert line.index_at(mid) == 2
    assert line.index_at(line.x0 + 0.3 * (line.x1 - line.x0)) == 1  # 2.4 -> nearest 2
    assert line.index_at(line.x0 - 50) == 0 and line.index_at(line.x1 + 50) == 4
    for i in range(5):
        assert line.index_at(line.x_of(i)) == i
    assert line.hit(mid, line.y) and not line.hit(mid, 200)


# ---------------------------------------------------------------- drawing
def world_rect(painter: ReplayPainter, world) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = painter.viewport(world).world_rect()
    return int(np.ceil(x0)) + 1, int(np.ceil(y0)) + 1, int(x1) - 1, int(y1) - 1


def crop_around(img: np.ndarray, xy: np.ndarray, half: int) -> np.ndarray:
    """The square of ``2 * half`` pixels around screen point ``xy`` (y up)."""
    h = img.shape[0]
    x, y = round(float(xy[0])), round(float(xy[1]))
    return img[max(h - 1 - y - half, 0) : h - y + half, max(x - half, 0) : x + half]


def crop(img: np.ndarray, rect: tuple[int, int, int, int]) -> np.ndarray:
    x0, y0, x1, y1 = rect
    h = img.shape[0]
    return img[h - y1 : h - y0, x0:x1]


@pytest.mark.parametrize("kind", ["parquet", "jsonl"])
def test_a_replayed_tick_draws_what_the_live_run_drew(tmp_path: Path, kind: str) -> None:
    """Same painter, same state: the world rectangle's pixels agree, overlays and selection
    included (velocity for both formats; force only Parquet records)."""
    path = tmp_path / f"t.{kind}"
    sim = Simulation(behaviortk.load(REFERENCE), engine="batch", debug=True)
    painter = ReplayPainter(window())
    overlays = {"velocity", "force"} if kind == "parquet" else {"velocity"}
    with path.open("wb" if kind == "parquet" else "w") as fh:
        writer = ParquetTraceWriter(fh, sim) if kind == "parquet" else TraceWriter(fh, sim)
        run_recorded(sim, 25, writer)
    from behaviortk.viewer.scene import ViewOptions

    opts = ViewOptions(overlays=overlays, selected=7)
    painter.draw(sim, opts, HudInfo(), Overlay2D())
    live = crop(painter.snapshot(), world_rect(painter, sim.world))
    s = session_of(path, 24)
    s.opts = opts
    s.select_row(7)
    replayed = crop(replay_frame(s, painter), world_rect(painter, sim.world))
    assert live.shape == replayed.shape and live.size > 0
    # Headings come back from an angle (Parquet) or the velocity (JSONL), equal to the live
    # ones within 1e-15: that may move a triangle's edge pixel, nothing more.
    changed = np.any(live != replayed, axis=2)
    if kind == "jsonl":  # the selected agent's force shows live; JSONL does not record it
        red = np.abs(live.astype(int) - np.array(palette.FORCE[:3])).max(axis=2) <= 90
        changed &= ~red
    differ = int(changed.sum())
    assert differ <= 60, differ
    assert np.count_nonzero(np.any(live != live[0, 0], axis=2)) > 2_000  # agents + vectors drawn


def test_headless_frame_shows_agents_where_recorded_and_the_timeline(walk_trace: Path) -> None:
    s = session_of(walk_trace, 3)
    painter = ReplayPainter(window())
    img = replay_frame(s, painter)
    vp = painter.viewport(s.sim.world)
    colours = dict(legend(s.sim, s.opts))  # each group's swatch
    for row in range(3):  # each agent's colour is drawn where the trace puts it, nowhere else
        group = s.sim.agents.group_names[int(s.sim.agents.group[row])]
        x, y = vp.to_screen(s.sim.agents.pos[row])
        r = max(float(s.sim.agents.radius[row]) * vp.scale, 4.0)
        h = img.shape[0]
        near = img[round(h - 1 - y - r) : round(h - y + r), round(x - r) : round(x + r + 1)]
        assert count_color(near, colours[group], tol=2) > 0, row
    around = [crop_around(img, vp.to_screen(s.sim.agents.pos[row]), 12) for row in range(3)]
    assert count_color(around[2], colours["walkers"], tol=2) == 0  # each colour at its agents
    assert count_color(around[0], colours["posts"], tol=2) == 0
    assert count_color(around[1], colours["posts"], tol=2) == 0
    line = painter.timeline(s.rec.ticks)
    handle = line.x_of(3)  # 3 of 0..5: 60% along the track
    assert handle == pytest.approx(line.x0 + 0.6 * (line.x1 - line.x0))
    assert tuple(pixel_at(img, np.array([handle, line.y]))) == HANDLE[:3]
    assert tuple(pixel_at(img, np.array([(line.x0 + handle) / 2 - 4, line.y]))) == PLAYED[:3]
    assert tuple(pixel_at(img, np.array([line.x1 - 3, line.y]))) != PLAYED[:3]


# ---------------------------------------------------------------- window events
def send(v: ReplayView, *event: object) -> None:
    v.window.dispatch_event(*event)
    v.window.dispatch_events()


def test_window_keys_and_timeline_drag(walk_trace: Path) -> None:
    win = window()
    v = ReplayView(session_of(walk_trace), win)
    win.show_view(v)
    send(v, "on_key_press", arcade.key.RIGHT, 0)
    send(v, "on_key_press", arcade.key.PERIOD, 0)
    assert v.session.tick == 2
    send(v, "on_key_press", arcade.key.LEFT, 0)
    assert v.session.tick == 1
    send(v, "on_key_press", arcade.key.END, 0)
    assert v.session.tick == 5
    send(v, "on_key_press", arcade.key.HOME, 0)
    send(v, "on_key_press", arcade.key.SPACE, 0)
    assert v.session.playing
    send(v, "on_update", 0.2)  # clock 0.1 + 0.2 -> tick 2
    assert v.session.tick == 2
    line = v.painter.timeline(v.session.rec.ticks)
    send(v, "on_mouse_press", round(line.x_of(4)), round(line.y), arcade.MOUSE_BUTTON_LEFT, 0)
    assert v.session.tick == 4 and not v.session.playing  # grabbing the timeline pauses
    send(v, "on_mouse_drag", round(line.x0), round(line.y), -100, 0, arcade.MOUSE_BUTTON_LEFT, 0)
    assert v.session.tick == 0
    send(v, "on_mouse_release", round(line.x0), round(line.y), arcade.MOUSE_BUTTON_LEFT, 0)
    vp = v.painter.viewport(v.session.sim.world)
    x, y = vp.to_screen(v.session.sim.agents.pos[1])
    send(v, "on_mouse_press", round(x), round(y), arcade.MOUSE_BUTTON_LEFT, 0)
    assert v.session.selected_id == 1
    send(v, "on_key_press", arcade.key.V, 0)
    assert "velocity" in v.session.opts.overlays
    send(v, "on_key_press", arcade.key.H, 0)
    send(v, "on_draw")  # help drawn over the world without error
    assert v.show_help


# ---------------------------------------------------------------- command line
def png(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"))


def test_replay_renders_from_the_trace_alone(tmp_path: Path, capsys) -> None:
    """Record with the CLI, delete the definition, render: the trace is self-contained."""
    source = write_walk(tmp_path)
    trace = tmp_path / "run.parquet"
    assert main(["run", str(source), "--headless", "--ticks", "4", "--trace", str(trace)]) == 0
    source.unlink()
    out = tmp_path / "frames" / "t2.png"
    args = ["replay", str(trace), "--tick", "2", "--out", str(out), "--select", "walkers-1"]
    assert main(args) == 0
    assert f"wrote {out} (tick 2 of {trace})" in capsys.readouterr().out
    s = session_of(trace, 2)
    s.select_id(1)
    expected = replay_frame(s, ReplayPainter(window(), size=RENDER_SIZE))  # as --out draws
    assert np.array_equal(png(out), expected)
    # the default tick of --out is the last one recorded
    last = tmp_path / "last.png"
    assert main(["replay", str(trace), "--out", str(last)]) == 0
    assert f"(tick 3 of {trace})" in capsys.readouterr().out


def test_replay_a_jsonl_trace(tmp_path: Path, capsys) -> None:
    trace = tmp_path / "run.jsonl"
    sim = walk_sim("py_trees")
    with trace.open("w", encoding="utf-8") as fh:
        run_recorded(sim, 3, TraceWriter(fh, sim))
    out = tmp_path / "f.png"
    assert (
        main(["replay", str(trace), "--tick", "1", "--out", str(out), "--color-by", "action"]) == 0
    )
    assert png(out).shape[2] == 3


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.write_bytes(b"PAR1 and then nothing"), "not a readable Parquet file"),
        (lambda p: p.write_text("hello\n"), "not a behaviortk trace"),
        (lambda p: None, "no such file"),
        (
            lambda p: p.write_text(json.dumps({"scenario": "x", "dt": 0.1}) + "\n"),
            "trace format 1",
        ),
    ],
    ids=["truncated", "foreign", "missing", "old"],
)
def test_bad_traces_are_one_line_and_exit_1(tmp_path: Path, capsys, make, message: str) -> None:
    trace = tmp_path / "t.parquet"
    make(trace)
    out = tmp_path / "f.png"
    assert main(["replay", str(trace), "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("behaviortk replay: error: ") and message in err[0]
    assert "Traceback" not in err[0]
    assert not out.exists()


def test_cli_usage_errors(walk_trace: Path, tmp_path: Path, capsys) -> None:
    assert main(["replay", str(walk_trace), "--tick", "9", "--out", str(tmp_path / "f.png")]) == 1
    assert "tick 9 is not recorded; recorded ticks 0..5 (6 ticks)" in capsys.readouterr().err
    assert (
        main(["replay", str(walk_trace), "--select", "nobody", "--out", str(tmp_path / "f.png")])
        == 1
    )
    assert "no agent 'nobody' at tick 5" in capsys.readouterr().err
    assert main(["replay", str(walk_trace), "--out", str(tmp_path / "f.jpg")]) == 2
    assert "--out must end in .png" in capsys.readouterr().err
    assert main(["replay", str(walk_trace), "--tick", "-1"]) == 2
    # the output may never be the trace itself (told apart by content, a trace may be called x.png)
    odd = tmp_path / "trace.png"
    odd.write_bytes(walk_trace.read_bytes())
    assert main(["replay", str(odd), "--out", str(odd)]) == 2
    assert f"refusing to write image {odd}: it is the input file" in capsys.readouterr().err
    assert odd.read_bytes() == walk_trace.read_bytes()


def test_a_trace_without_ticks_has_nothing_to_replay(tmp_path: Path, capsys) -> None:
    trace = tmp_path / "empty.parquet"
    sim = walk_sim("batch")
    ParquetTraceWriter(str(trace), sim).interrupt(sim, KeyboardInterrupt())  # cut before tick 0
    assert main(["replay", str(trace), "--out", str(tmp_path / "f.png")]) == 1
    err = capsys.readouterr().err
    assert err == f"behaviortk replay: error: {trace}: no tick was recorded; nothing to replay\n"


def test_one_tick_number_in_the_hud_the_timeline_the_caption_and_the_trace(
    walk_trace: Path,
) -> None:
    """Recorded tick 3 is "tick 3" everywhere: the caption, the timeline (no live-only
    play state in an exported frame) and the live HUD after the same steps."""
    from behaviortk.viewer.hud import hud_text

    s = session_of(walk_trace, 3)
    painter = ReplayPainter(window(), size=RENDER_SIZE)
    replay_frame(s, painter)
    assert "   tick 3   " in painter.hud.text
    assert painter.timeline_text.text.startswith("tick 3 (4/")
    assert "paused" not in painter.timeline_text.text
    live = walk_sim("batch")
    assert hud_text(live, HudInfo()).startswith("start   ")  # before any step
    live.run(4)  # trace tick 3 is the state after the 4th step
    assert hud_text(live, HudInfo()).startswith("tick 3   ")
