"""sim.serve + behaviortk attach: a real attach over loopback, controls, refusals, detaching."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import numpy as np
import pytest
import zmq

from behaviortk.errors import SimulationError
from behaviortk.record.jsonl import TraceWriter
from behaviortk.record.reader import open_recording
from behaviortk.sim import Simulation, serve
from behaviortk.sim.agent_facts import facts
from behaviortk.sim.serve import is_loopback
from behaviortk.sim.wire import WireError, decode, encode, tick_state, unarray
from behaviortk.viewer import remote as remote_module
from behaviortk.viewer.remote import AttachError, Remote, RemoteHit, address, agent_facts

ROOT = Path(__file__).resolve().parent.parent
CHASE = str(ROOT / "examples/chase_game.json")
PY = sys.executable


def until(check, seconds: float = 10.0) -> bool:
    """Poll ``check`` until true or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


@pytest.fixture
def sim():
    s = Simulation(CHASE, "batch")
    yield s
    if s.server is not None:
        s.server.close()


def test_port_zero_binds_a_free_port_and_frames_record_the_games_own_trace(sim) -> None:
    port = sim.serve(port=0)
    assert port == sim.server.port and 1024 <= port <= 65535
    remote = Remote("127.0.0.1", port)
    assert until(lambda: sim.server.attached == 1)
    own = io.StringIO()
    writer = TraceWriter(own, sim)
    for _ in range(15):
        sim.step()
        writer.on_tick(sim)
    writer.finish(sim)
    states = []
    assert until(lambda: states.extend(remote.frames()) or len(states) == 15)
    views = [remote.view(s) for s in states]
    got = io.StringIO()
    copy = TraceWriter(got, views[0])
    for view in views:
        copy.on_tick(view)
    copy.finish(views[-1])
    assert got.getvalue() == own.getvalue()
    remote.close()
    assert until(lambda: sim.server.attached == 0)


def test_frames_waits_for_a_new_tick_past_replies_and_frames_sent_again(sim) -> None:
    """``frames(timeout)`` waits for the first NEW frame: a pong or the frame a new viewer is
    sent ``again`` arriving first is no new tick. (It returned [] at once, so `attach
    --headless` ended after a few ticks "because the game sent no frame for 10 s".)"""
    import threading

    remote = Remote("127.0.0.1", sim.serve())
    assert until(lambda: sim.server.attached == 1)
    sim.server.holding(sim)  # the game's thread takes the hello: the state is sent again
    assert until(lambda: remote._socket.poll(0) != 0)  # that frame is there, alone
    later = threading.Timer(0.4, sim.step)  # the game's next step, a moment later
    later.start()
    try:
        start = time.monotonic()
        states = remote.frames(5.0)
        assert [s.tick for s in states] == [0], time.monotonic() - start
        remote._pinged = 0.0  # a ping goes out now: its pong is the next message
        later = threading.Timer(0.4, sim.step)
        later.start()
        states = remote.frames(5.0)
        assert [s.tick for s in states] == [1]
    finally:
        later.join()
        remote.close()


def test_pause_holds_step_resume_and_step_release_it(sim) -> None:
    remote = Remote("127.0.0.1", sim.serve())
    assert until(lambda: sim.server.attached == 1)
    sim.step()
    remote.pause()
    assert until(lambda: (sim.step(), sim.server.paused)[1])
    held = sim.tick
    for _ in range(5):
        sim.step()
    assert sim.tick == held  # held: step returns without advancing
    remote.step()
    assert until(lambda: (sim.step(), sim.tick == held + 1)[1])
    for _ in range(5):
        sim.step()
    assert sim.tick == held + 1  # one step, then held again
    remote.resume()
    assert until(lambda: (sim.step(), sim.tick > held + 3)[1])
    remote.close()


def test_a_viewers_breakpoint_holds_the_game_at_its_hit(sim) -> None:
    remote = Remote("127.0.0.1", sim.serve())
    assert until(lambda: sim.server.attached == 1)
    remote.break_on(node="nowhere")  # refused: the game's own message comes back
    remote.break_on(event="caught")
    assert until(lambda: (sim.step(), remote.frames(), len(remote.breaks) == 1)[2])
    assert any("nowhere" in e for e in remote.errors)
    for _ in range(2000):
        sim.step()
        if sim.server.paused:
            break
    assert sim.hit is not None and sim.hit.event == "caught" and sim.server.paused
    tick = sim.tick
    sim.step()
    assert sim.tick == tick
    states = []
    assert until(lambda: states.extend(remote.frames()) or remote.last.get("hit") is not None)
    assert remote.last["hit"]["text"] == str(sim.hit) and remote.last["paused"]
    remote.close()  # the viewer leaves: nobody can resume, so the game goes on
    assert until(lambda: (sim.step(), sim.tick > tick)[1])
    assert sim.breakpoints[0].active  # the viewer's breakpoints stay until the server closes
    sim.server.close()
    assert not any(b.active for b in sim.breakpoints)


def test_selected_agents_blackboards_ride_on_frames() -> None:
    sim = Simulation(str(ROOT / "definitions/guard_patrol.json"), "batch")
    remote = Remote("127.0.0.1", sim.serve())
    try:
        assert until(lambda: sim.server.attached == 1)
        guard = int(sim.ids[sim.agents.slices["guards"]][0])
        remote.select([guard])
        assert until(lambda: (sim.step(), remote.frames(), remote.last.get("boards"))[2])
        sim.blackboard(guard)["last_seen"] = (12.5, -3.0)  # the game writes; the next frame has it
        sim.step()
        seen: list = []
        assert until(
            lambda: seen.extend(remote.frames()) or (bool(seen) and seen[-1].tick == sim.tick - 1)
        )
        board = dict(sim.blackboard(guard))
        assert "last_seen" in board
        assert remote.last["boards"] == {guard: {"last_seen": list(board["last_seen"])}}
    finally:
        remote.close()
        sim.server.close()


def test_a_wrong_token_and_malformed_messages_are_refused_and_the_game_goes_on(sim) -> None:
    port = sim.serve(token="s3cret")
    with pytest.raises(AttachError, match="wrong token"):
        Remote("127.0.0.1", port, token="guess", wait=3)
    context = zmq.Context()
    raw = context.socket(zmq.DEALER)
    raw.setsockopt(zmq.LINGER, 0)
    raw.connect(f"tcp://127.0.0.1:{port}")
    for junk in (
        b"\xc1\xff",
        msgpack.packb([1, 2]),
        msgpack.packb({"op": 3}),
        encode({"op": "pause"}),
    ):
        raw.send(junk)
    raw.send_multipart([b"a", b"b"])
    assert until(lambda: sim.server.refused >= 6)
    for _ in range(5):
        sim.step()
    assert sim.tick == 5 and not sim.server.paused and sim.server.attached == 0
    remote = Remote("127.0.0.1", port, token="s3cret")
    assert until(lambda: sim.server.attached == 1)
    remote.close()
    raw.close()
    context.term()


def test_bad_arguments_are_simulation_errors(sim) -> None:
    for kwargs in ({"port": -1}, {"port": "80"}, {"host": ""}, {"token": ""}):
        with pytest.raises(SimulationError):
            sim.serve(**kwargs)
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    with pytest.raises(AttachError):
        address("nohost")
    assert address("[::1]:5555") == ("::1", 5555)


def test_frames_are_checked_before_use(sim) -> None:
    sim.step()
    from behaviortk.sim.tick_state import TickState
    from behaviortk.sim.wire import frame

    for values in (np.zeros((3, 0), bool), np.zeros((0, 2)), np.arange(6, dtype="<i8")[::2]):
        back = unarray(decode(encode({"op": "x", "a": values}))["a"], values.dtype.str, values.ndim)
        assert back.shape == values.shape and np.array_equal(back, values)
    good = decode(encode(frame(TickState.of(sim))))
    assert tick_state(good, sim.trees).tick == 0
    bad = dict(good, pos=dict(good["pos"], shape=[1, 2]))
    with pytest.raises(WireError):
        tick_state(bad, sim.trees)
    with pytest.raises(WireError):
        tick_state(dict(good, ids=dict(good["ids"], dtype="|O")), sim.trees)
    hunter = int(sim.ids[sim.agents.slices["hunters"]][0])
    carried = decode(encode({"op": "frame", "facts": {hunter: facts(sim, hunter)}}))["facts"]
    checked = agent_facts(carried)[hunter]
    leaves = len(sim.trees["hunters"].steering)
    assert checked["forces"].shape == (leaves, 2) and checked["asked"].shape == (leaves,)
    for bad in (
        [1],
        {hunter: {"whys": {}, "board": [], "asked": carried[hunter]["asked"]}},  # no forces
        {hunter: dict(carried[hunter], board=[["k", "v"]])},  # an entry of two
        {hunter: dict(carried[hunter], asked=dict(carried[hunter]["asked"], shape=[99]))},
    ):
        with pytest.raises(WireError):
            agent_facts(bad)
    assert RemoteHit.of({"text": "t", "reason": "r", "agent": 3}).agent == 3
    with pytest.raises(WireError):
        RemoteHit.of({"reason": "no text"})


def test_a_silent_viewer_is_detached(sim, monkeypatch) -> None:
    monkeypatch.setattr(serve, "SILENT_S", 0.2)
    remote = Remote("127.0.0.1", sim.serve())
    assert until(lambda: sim.server.attached == 1)
    assert until(lambda: sim.server.attached == 0, 5)  # it never pinged after hello
    remote.close()


def test_a_game_that_does_not_step_still_answers_and_says_when_it_stops_serving(
    sim, monkeypatch
) -> None:
    monkeypatch.setattr(remote_module, "PING_S", 0.05)
    monkeypatch.setattr(remote_module, "GONE_S", 0.4)
    remote = Remote("127.0.0.1", sim.serve())
    deadline = time.monotonic() + 1.2  # three times GONE_S without a step or a frame
    while time.monotonic() < deadline:
        remote.frames(0.02)
        assert not remote.gone  # the background thread answers its pings
    assert remote.received == 0 and "paused" in remote.last  # pongs, no frame
    sim.server.close()
    assert until(lambda: (remote.frames(), remote.closed)[1])
    assert remote.gone
    remote.close()


def test_nobody_answering_is_an_attach_error() -> None:
    with zmq.Context() as context, context.socket(zmq.ROUTER) as silent:
        port = silent.bind_to_random_port("tcp://127.0.0.1")  # listens, never answers
        with pytest.raises(AttachError, match="no game answered"):
            Remote("127.0.0.1", port, wait=0.3)


def game_process(
    tmp_path: Path, ticks: int, *flags: str, definition: str = CHASE
) -> tuple[subprocess.Popen, int]:
    """``tests/attach_game.py`` serving ``definition`` (its own trace in ``own.jsonl``), and
    the port it printed."""
    game = subprocess.Popen(
        [
            PY,
            str(ROOT / "tests/attach_game.py"),
            definition,
            str(ticks),
            str(tmp_path / "own.jsonl"),
            *flags,
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    line = game.stdout.readline()
    assert line.startswith("port "), line
    return game, int(line.split()[1])


def _attach(port: int, out: Path, ticks: int) -> subprocess.Popen:
    return subprocess.Popen(
        [
            PY,
            "-m",
            "behaviortk",
            "attach",
            f"127.0.0.1:{port}",
            "--headless",
            "--ticks",
            str(ticks),
            "--trace",
            str(out),
            "--wait",
            "10",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


@pytest.mark.slow  # two Python processes start
def test_a_real_attach_records_the_games_own_trace(tmp_path: Path) -> None:
    game, port = game_process(tmp_path, 40, "--wait-viewer")
    try:
        viewer = _attach(port, tmp_path / "seen.jsonl", 40)
        out, err = viewer.communicate(timeout=60)
        assert viewer.returncode == 0, err
        assert "0 missing" in out
        assert game.wait(timeout=30) == 0
    finally:
        game.kill()
    assert (tmp_path / "seen.jsonl").read_bytes() == (tmp_path / "own.jsonl").read_bytes()
    assert open_recording(tmp_path / "seen.jsonl").ticks.tolist() == list(range(40))


@pytest.mark.slow  # two Python processes start
def test_a_real_attach_records_a_parquet_trace_replay_opens(tmp_path: Path) -> None:
    """`attach --headless --trace out.parquet` (the issue's own command): it failed with
    "'RecordedView' object has no attribute 'think'" before writing a row. The recording
    holds the game's own ticks, statuses and positions, and `replay --out` renders it."""
    own = tmp_path / "own.parquet"
    game = subprocess.Popen(
        [PY, str(ROOT / "tests/attach_game.py"), CHASE, "30", str(own), "--wait-viewer"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        line = game.stdout.readline()
        assert line.startswith("port "), line
        viewer = _attach(int(line.split()[1]), tmp_path / "seen.parquet", 30)
        out, err = viewer.communicate(timeout=60)
        assert viewer.returncode == 0, err
        assert "0 missing" in out
        assert game.wait(timeout=30) == 0
    finally:
        game.kill()
    seen, mine = open_recording(tmp_path / "seen.parquet"), open_recording(own)
    assert seen.ticks.tolist() == mine.ticks.tolist() == list(range(30))
    for tick in (0, 17, 29):
        a, b = seen.state(tick), mine.state(tick)
        np.testing.assert_array_equal(a.ids, b.ids)
        np.testing.assert_array_equal(a.pos, b.pos)
        np.testing.assert_array_equal(a.vel, b.vel)
        assert a.status.keys() == b.status.keys()
        for group, codes in a.status.items():
            np.testing.assert_array_equal(codes, b.status[group])
    png = tmp_path / "frame.png"
    replay = [PY, "-m", "behaviortk", "replay", str(tmp_path / "seen.parquet")]
    shown = subprocess.run(
        [*replay, "--tick", "17", "--out", str(png)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert shown.returncode == 0 and png.stat().st_size > 0, shown.stderr


@pytest.mark.slow  # two Python processes start
def test_a_killed_viewer_never_blocks_the_game_and_another_attaches(tmp_path: Path) -> None:
    game, port = game_process(tmp_path, 10**6, "--wait-viewer")
    try:
        first = _attach(port, tmp_path / "first.jsonl", 10**6)
        assert game.stdout.readline().startswith("attached 1")  # the game steps from here
        time.sleep(0.5)
        first.kill()
        first.wait(timeout=10)
        second = _attach(port, tmp_path / "second.jsonl", 20)
        out, err = second.communicate(timeout=60)
        assert second.returncode == 0 and "20 ticks" in out and "0 missing" in out, err
        ticks = open_recording(tmp_path / "second.jsonl").ticks
        assert ticks[0] > 0 and ticks.tolist() == list(range(ticks[0], ticks[0] + 20))
        assert game.poll() is None  # it went on stepping with a dead viewer, and still does
    finally:
        game.kill()
        game.wait(10)


def test_a_frame_carries_the_utility_scores_the_tree_panel_shows() -> None:
    """A villager's `utility` options' scores travel in its facts (through the wire's
    msgpack) as the live viewer reads them (``option_scores``), and the attached viewer's
    notes show them; a frame from a game that sends no scores shows none."""
    from behaviortk.format.loader import load
    from behaviortk.sim.why import option_scores
    from behaviortk.viewer.agent_notes import _scores

    root = Path(__file__).resolve().parents[1]
    game = Simulation(load(root / "definitions" / "utility_villager.json"))
    game.run(30)
    villager = int(game.ids[game.agents.slices["villagers"]][0])
    live = option_scores(game, villager)
    assert len(live) == 4 and all(np.isfinite(list(live.values())))  # eat, work, flee, rest
    carried = agent_facts(
        decode(encode({"op": "frame", "facts": {villager: facts(game, villager)}}))["facts"]
    )
    assert carried[villager]["scores"] == live

    class Attached:  # what the attached viewer's simulation stand-in holds
        facts = carried

    assert _scores(Attached(), villager) == live
    older = {villager: {k: v for k, v in facts(game, villager).items() if k != "scores"}}
    Attached.facts = agent_facts(decode(encode({"op": "frame", "facts": older}))["facts"])
    assert _scores(Attached(), villager) == {}


@pytest.mark.slow  # two Python processes start; the round plays in real time (~7 s)
def test_the_chase_games_docstring_attach_records_the_round_from_its_first_tick(
    tmp_path: Path,
) -> None:
    """``chase_game.py --serve`` without a display waits for the first viewer, so the
    docstring's ``attach --headless --ticks 150`` records ticks 0..149 of the round."""
    import os

    env = {**os.environ, "ARCADE_HEADLESS": "1"}
    game = subprocess.Popen(
        [PY, str(ROOT / "examples/chase_game.py"), "--serve"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    try:
        line = game.stdout.readline()
        assert line.startswith("serving: behaviortk attach 127.0.0.1:"), line
        port = int(line.rsplit(":", 1)[1])
        assert "waiting" in game.stdout.readline()
        time.sleep(1.0)  # the game waits: nothing is missed
        viewer = _attach(port, tmp_path / "seen.jsonl", 150)
        out, err = viewer.communicate(timeout=60)
        assert viewer.returncode == 0, err
        assert "ticks 0..149; 0 missing" in out
        rest, _ = game.communicate(timeout=60)
        assert "caught: True" in rest
    finally:
        game.kill()
    assert open_recording(tmp_path / "seen.jsonl").ticks.tolist() == list(range(150))
