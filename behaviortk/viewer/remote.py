"""The viewer's side of ``behaviortk attach``: a running game's frames as recorded views.

``Remote(host, port, token)`` connects a ZeroMQ DEALER socket to a game's ``sim.serve``
(``sim/serve.py`` has the protocol), says hello and waits for its ``about``: the
definition, seed, dt, engine and tree paths a trace header holds, from which it builds
a ``Recording`` with no file behind it. Each frame then becomes a ``TickState``
(``sim/wire.tick_state``) shown as a ``RecordedView`` (``viewer/recorded.py``), so the
painter, the panels and the trace writers take a live game's tick as they take a
replayed one. ``pause``, ``resume``, ``step``, ``select`` and ``break_on`` (the
arguments of ``sim.break_on``) are sent to the game; ``ping`` keeps the game from
detaching a viewer that is only watching.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import zmq

from behaviortk.record.reader import Recording, TraceError, load_definition
from behaviortk.sim.serve import PING_S
from behaviortk.sim.tick_state import TickState
from behaviortk.sim.wire import WireError, decode, encode, tick_state
from behaviortk.viewer.recorded import RecordedView, RecordedWorld

CONNECT_S = 5.0
"""How long ``Remote`` waits for the game's ``about`` before saying nobody answers."""


class AttachError(Exception):
    """No game to attach to, or one that refused; ``str(exc)`` is one line."""


def address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as ``(host, port)``; ``AttachError`` if not."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise AttachError(f"expected HOST:PORT (such as 127.0.0.1:5555), got {text!r}")
    return host, int(port)


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
        self.breaks: dict[str, str] = {}
        """The breakpoints this viewer set, by number (the game's ``breaks`` reply)."""
        self.errors: list[str] = []
        """The game's ``error`` replies (a refused breakpoint), oldest first."""
        self.last: dict[str, Any] = {}
        """The last frame's extras: ``events``, ``boards``, ``hit``, ``paused``, ``dropped``."""
        self.received = 0
        self._pinged = 0.0
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

    def frames(self, timeout: float = 0.0) -> list[TickState]:
        """The frames that arrived (waiting up to ``timeout`` s for the first), oldest first;
        replies (breakpoints, errors) are kept in ``breaks`` and ``errors``."""
        now = time.monotonic()
        if now - self._pinged >= PING_S:
            self._send({"op": "ping"})
            self._pinged = now
        out: list[TickState] = []
        if timeout > 0 and not self._socket.poll(int(timeout * 1000)):
            return out
        while True:
            try:
                data = self._socket.recv(zmq.NOBLOCK)
            except zmq.Again:
                return out
            try:
                message = decode(data)
                if message["op"] == "frame":
                    out.append(tick_state(message, self.recording.trees))
                    self.last = {k: message.get(k) for k in ("events", "boards", "hit")}
                    self.last.update(paused=message.get("paused"), dropped=message.get("dropped"))
                    self.received += 1
                elif message["op"] == "breaks":
                    self.breaks = {str(k): str(v) for k, v in message.get("breaks", {}).items()}
                elif message["op"] == "error":
                    self.errors.append(str(message.get("message")))
            except WireError:
                continue

    def view(self, state: TickState) -> RecordedView:
        """``state`` dressed as a Simulation for the drawing layers and the trace writers."""
        return RecordedView(self.recording, self.fixed, state)

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
