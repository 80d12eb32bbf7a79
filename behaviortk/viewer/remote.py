"""The viewer's side of ``behaviortk attach``: a running game's frames as recorded views.

``Remote(host, port, token)`` connects a ZeroMQ DEALER socket to a game's ``sim.serve``
(``sim/serve.py`` has the protocol), says hello and waits for its ``about``: the
definition, seed, dt, engine and tree paths a trace header holds, from which it builds
a ``Recording`` with no file behind it. Each frame then becomes a ``TickState``
(``sim/wire.tick_state``) shown as a ``RecordedView`` (``viewer/recorded.py``), so the
painter, the panels and the trace writers take a live game's tick as they take a
replayed one; the selected agents' facts (why, blackboard, leaf forces:
``sim/agent_facts.py``) ride on the view as ``facts``. ``pause``, ``resume``, ``step``,
``select`` and ``break_on`` (the arguments of ``sim.break_on``) are sent to the game;
``ping`` keeps the game from detaching a viewer that is only watching, and its ``pong``
says the game is there while it is held. ``gone`` says when it is not: it said it
stopped serving (``closed``), or nothing came for ``GONE_S`` seconds.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import zmq

from behaviortk.record.reader import Recording, TraceError, load_definition
from behaviortk.sim.serve import PING_S
from behaviortk.sim.tick_state import TickState
from behaviortk.sim.wire import WireError, decode, encode, tick_state, unarray
from behaviortk.viewer.recorded import RecordedView, RecordedWorld

CONNECT_S = 5.0
"""How long ``Remote`` waits for the game's ``about`` before saying nobody answers."""
GONE_S = 3.0 * PING_S
"""Seconds without a word from the game (frames, pongs) after which it is taken as gone."""


@dataclass(frozen=True)
class RemoteHit:
    """A breakpoint hit the game is held at, as its frame says it (``sim/breakpoints.Hit``'s
    line and reason; the agent, and for a node breakpoint its group and node path)."""

    text: str
    reason: str
    agent: int | None
    group: str | None
    node: str | None

    @classmethod
    def of(cls, raw: Any) -> RemoteHit | None:
        if raw is None:
            return None
        try:
            agent, group, node = raw.get("agent"), raw.get("group"), raw.get("node")
            return cls(
                str(raw["text"]),
                str(raw["reason"]),
                None if agent is None else int(agent),
                None if group is None else str(group),
                None if node is None else str(node),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise WireError(f"a malformed hit: {exc}") from None


class AttachError(Exception):
    """No game to attach to, or one that refused; ``str(exc)`` is one line."""


def address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as ``(host, port)``; ``AttachError`` if not."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise AttachError(f"expected HOST:PORT (such as 127.0.0.1:5555), got {text!r}")
    return host, int(port)


def agent_facts(raw: Any) -> dict[int, dict[str, Any]]:
    """A frame's ``facts`` (``sim/agent_facts.facts`` of the selected agents) checked:
    ``{id: {"whys": {node: (text, holds, reason)}, "scores": {node: score} (a game older than
    them sends none), "board": [(key, value, type, stored)],
    "asked": (leaves,) bool, "forces": (leaves, 2)}}``; an agent the game no longer has is
    left out."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise WireError("a frame's facts are not a map")
    out: dict[int, dict[str, Any]] = {}
    for agent, one in raw.items():
        if one is None:
            continue
        try:
            whys = {int(k): (str(t), bool(h), str(r)) for k, (t, h, r) in one["whys"].items()}
            board = [
                (str(k), str(v), str(t), None if s is None else int(s))
                for k, v, t, s in one["board"]
            ]
            scores = {int(k): float(v) for k, v in one.get("scores", {}).items()}
            forces = unarray(one["forces"], "<f8", 2)
            said = unarray(one["asked"], "|b1", 1)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise WireError(f"a frame's facts are malformed: {exc}") from None
        if forces.shape != (said.shape[0], 2):
            raise WireError("a frame's leaf forces and requests disagree")
        out[int(agent)] = {
            "whys": whys,
            "scores": scores,
            "board": board,
            "asked": said,
            "forces": forces,
        }
    return out


class Remote:
    """A connection to a served game: its recording-like description, frames, controls."""

    def __init__(
        self, host: str, port: int, token: str | None = None, wait: float = CONNECT_S
    ) -> None:
        self.where = f"{host}:{port}"
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.RCVHWM, 1000)
        if ":" in host:
            self._socket.setsockopt(zmq.IPV6, 1)
        self._socket.connect(f"tcp://[{host}]:{port}" if ":" in host else f"tcp://{host}:{port}")
        self.breaks: dict[int, dict[str, Any]] = {}
        """The breakpoints this viewer set, by number (the game's ``breaks`` reply): ``text``,
        ``kind``, ``group``, and for a node breakpoint ``node`` and ``status``."""
        self.errors: list[str] = []
        """The game's ``error`` replies (a refused breakpoint), oldest first."""
        self.last: dict[str, Any] = {}
        """The last frame's extras: ``events``, ``boards``, ``facts``, ``hit``, ``paused``,
        ``dropped`` (``paused`` and ``dropped`` also from pongs)."""
        self.latest: TickState | None = None
        """The game's state last sent: a new tick's, or one sent ``again``."""
        self.hit: RemoteHit | None = None
        """The breakpoint hit of ``latest``'s step, or None."""
        self.received = 0
        self.closed = False
        """The game said it stopped serving."""
        self._pinged = 0.0
        self._heard = time.monotonic()
        try:
            self.recording = self._hello(token, wait)
        except BaseException:
            self.close(say_bye=False)
            raise
        self.fixed = RecordedWorld(self.recording)

    def _hello(self, token: str | None, wait: float) -> Recording:
        self._send({"op": "hello", "token": token})
        if not self._socket.poll(int(wait * 1000)):
            raise AttachError(f"no game answered at {self.where} within {wait:g} s")
        message = decode(self._socket.recv())
        self._heard = time.monotonic()
        if message["op"] == "refused":
            raise AttachError(f"the game at {self.where} refused: {message.get('reason')}")
        if message["op"] != "about":
            raise AttachError(f"the game at {self.where} sent {message['op']!r} before 'about'")
        definition = message.get("definition")
        header = {k: v for k, v in message.items() if k not in ("op", "definition")}
        path = Path(self.where)
        try:
            scenario, trees = load_definition(path, json.dumps(definition), header.get("trees", {}))
        except TraceError as exc:
            raise AttachError(str(exc)) from None
        return Recording(
            path=path,
            kind="live",
            header=header,
            definition_text=json.dumps(definition),
            scenario=scenario,
            trees=trees,
            ticks=np.zeros(0, dtype=np.int64),
            end=None,
        )

    def _send(self, message: dict[str, Any]) -> None:
        # not connected yet, or the game is gone: nothing to wait for
        with contextlib.suppress(zmq.Again):
            self._socket.send(encode(message), zmq.NOBLOCK)

    @property
    def gone(self) -> bool:
        """The game stopped serving, or has said nothing for ``GONE_S`` seconds."""
        return self.closed or time.monotonic() - self._heard > GONE_S

    def frames(self, timeout: float = 0.0) -> list[TickState]:
        """The new ticks' frames that arrived (waiting up to ``timeout`` s for the first new
        one, pinging meanwhile; a reply or a frame sent ``again`` does not end the wait, the
        game's ``closed`` does), oldest first; a frame sent ``again`` only updates
        ``latest``; replies (breakpoints, errors, pongs) are kept in ``breaks``, ``errors``
        and ``last``."""
        deadline = time.monotonic() + timeout
        out: list[TickState] = []
        while True:
            now = time.monotonic()
            if now - self._pinged >= PING_S:
                self._send({"op": "ping"})
                self._pinged = now
            self._drain(out)
            left = deadline - time.monotonic()
            if out or self.closed or left <= 0:
                return out
            self._socket.poll(max(1, int(min(left, PING_S) * 1000)))

    def _drain(self, out: list[TickState]) -> None:
        """Take every message waiting, new frames into ``out``."""
        while True:
            try:
                data = self._socket.recv(zmq.NOBLOCK)
            except zmq.Again:
                return
            try:
                message = decode(data)
            except WireError:
                continue
            self._heard = time.monotonic()
            with contextlib.suppress(WireError):
                self._take(message, out)

    def _take(self, message: dict[str, Any], out: list[TickState]) -> None:
        op = message["op"]
        if op == "frame":
            state = tick_state(message, self.recording.trees)
            facts, hit = agent_facts(message.get("facts")), RemoteHit.of(message.get("hit"))
            self.latest, self.hit = state, hit
            if not message.get("again"):
                out.append(state)
            self.last = {k: message.get(k) for k in ("events", "boards", "hit")}
            self.last.update(facts=facts, paused=message.get("paused"))
            self.last["dropped"] = message.get("dropped")
            self.received += 1
        elif op == "pong":
            self.last.update(paused=message.get("paused"), dropped=message.get("dropped"))
        elif op == "breaks":
            breaks = message.get("breaks")
            if not isinstance(breaks, dict) or not all(
                isinstance(b, dict) for b in breaks.values()
            ):
                raise WireError("a malformed list of breakpoints")
            self.breaks = {int(k): b for k, b in breaks.items()}
        elif op == "error":
            self.errors.append(str(message.get("message")))
        elif op == "closed":
            self.closed = True

    def view(self, state: TickState) -> RecordedView:
        """``state`` dressed as a Simulation for the drawing layers and the trace writers."""
        return RecordedView(self.recording, self.fixed, state)

    def empty_state(self) -> TickState:
        """A tick with no agents, shown until the game's first frame arrives."""
        trees = self.recording.trees
        names = [str(g.name) for g in self.recording.scenario.definition.groups]
        none = np.zeros(0, dtype=np.int64)
        flat = np.zeros((0, 2))
        return TickState(
            -1,
            0.0,
            none,
            none.copy(),
            names,
            flat,
            flat.copy(),
            flat.copy(),
            flat.copy(),
            {g: np.zeros((0, len(t)), dtype=np.int8) for g, t in trees.items()},
            {g: np.zeros((0, len(t.steering)), dtype=bool) for g, t in trees.items()},
            trees,
        )

    def latest_view(self) -> RecordedView | None:
        """The game's state last sent, with the selected agents' facts it carried."""
        if self.latest is None:
            return None
        return RecordedView(self.recording, self.fixed, self.latest, self.last.get("facts") or {})

    def pause(self) -> None:
        self._send({"op": "pause"})

    def resume(self) -> None:
        self._send({"op": "resume"})

    def step(self) -> None:
        """One step of a held game, then held again."""
        self._send({"op": "step"})

    def select(self, ids: list[int]) -> None:
        """The agents whose blackboards frames carry."""
        self._send({"op": "select", "ids": [int(i) for i in ids]})

    def break_on(self, **where: Any) -> None:
        """A breakpoint in the game, by ``sim.break_on``'s arguments; the game holds when
        it hits (``breaks`` lists it, ``errors`` says why one was refused)."""
        self._send({"op": "break", **where})

    def unbreak(self, number: int) -> None:
        self._send({"op": "unbreak", "number": int(number)})

    def close(self, say_bye: bool = True) -> None:
        """Detach (the game goes on)."""
        if say_bye:
            self._send({"op": "bye"})
        self._socket.close(linger=100 if say_bye else 0)
        self._context.term()
