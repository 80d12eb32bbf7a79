"""The game's side of ``behaviortk attach``: ``sim.serve()`` streams frames to viewers.

``port = sim.serve(port=0, host="127.0.0.1")`` binds a ZeroMQ ROUTER socket (Groot2
attaches to a running tree over ZeroMQ the same way) and starts one background thread
that owns it. The game keeps calling ``sim.step()``; after each step with a viewer
attached, ``Server.after_step`` copies the tick's ``TickState`` (``sim/tick_state.py``:
what traces record and the viewer draws), the step's events, the blackboards of the
agents the viewers selected and the breakpoint hit into a bounded queue, and returns.
The thread packs them (msgpack, ``sim/wire.py``: nothing that can execute code) and
sends them. A full queue, or a viewer that reads too slowly (ZeroMQ's send high-water
mark), drops the frame and counts it (``dropped``): a slow or vanished viewer never
blocks ``step()``.

**Security.** Loopback only unless ``host`` names another address; then a token
(``secrets.token_urlsafe``, or the one given) is printed to stderr, kept as
``sim.server.token``, and a viewer must present it in its ``hello``. A message that is
not a well-formed attach message, or a hello with a wrong token, is refused and counted
(``refused``), never raised in the game.

**Protocol** (viewer -> game): ``hello {token}`` (the reply is ``about``: the scenario,
seed, dt, engine, definition and tree paths a trace header holds), ``ping`` (the reply
``pong {paused, dropped}`` says the game is there even while it is held), ``bye``
(detach), ``select {ids}`` (whose blackboards and ``sim/agent_facts.facts``, the why,
blackboard entries and leaf forces the tree panel shows, frames carry), ``break {node,
status, event, blackboard, agent, group}`` (``sim.break_on``'s arguments; the reply
``breaks`` lists the viewer's breakpoints by number with what they wait for, ``error``
says why one was refused), ``unbreak {number}``, ``pause``, ``resume``, ``step`` (one
step, then paused). Game -> viewer: ``about``, ``frame`` (a ``TickState`` with
``events``, ``boards``, ``facts``, ``hit``, ``paused``, ``dropped``, and ``again``: true
for a frame of a tick already sent, the state a new viewer or a new selection is shown
while the game is held, which recordings skip), ``pong``, ``breaks``, ``error``,
``refused``, ``closed`` (the game stopped serving).

**Pausing.** A viewer's ``pause``, or a hit of one of its breakpoints, holds the
simulation: ``step()`` then returns at once without advancing, so the game's loop goes
on rendering the held state, until ``resume`` (or ``step``). If no attached viewer has
sent anything for ``SILENT_S`` seconds (viewers ping every ``PING_S``), it is detached,
and with no viewer left the simulation resumes: a vanished viewer never holds a game.
Control messages reach the simulation on the game's thread, at its next ``step()``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import queue
import secrets
import sys
import threading
import time
from typing import Any

import zmq

from behaviortk.errors import SimulationError
from behaviortk.sim.agent_facts import facts
from behaviortk.sim.tick_state import TickState
from behaviortk.sim.wire import WireError, decode, encode, frame

QUEUE = 64
"""Frames waiting for the sending thread; more are dropped and counted."""
PING_S = 1.0
"""How often an attached viewer pings."""
SILENT_S = 5.0
"""A viewer silent this long is detached (and a simulation it held resumes)."""
IDLE_MS = 100
"""How long the sending thread sleeps when nothing wakes it (then it looks for silent
viewers); a queued frame or reply wakes it at once (``_wake``), so it never polls."""
BREAK_KEYS = ("node", "status", "event", "blackboard", "agent", "group")
"""``sim.break_on``'s arguments, which a viewer's ``break`` message may carry."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine's loopback (``localhost``, 127.x, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def about(sim: Any) -> dict[str, Any]:
    """What a viewer needs before frames: the fields a trace header holds."""
    w = sim.world
    return {
        "op": "about",
        "scenario": sim.name,
        "seed": int(sim.seed),
        "dt": float(sim.dt),
        "engine": str(sim.engine.name),
        "world": {"width": float(w.width), "height": float(w.height), "edges": str(w.edges)},
        "trees": {g: [node.path for node in tree.nodes] for g, tree in sim.trees.items()},
        "definition": sim.scenario.raw,
    }


class Server:
    """One served Simulation: the socket's thread, the frame queue, the viewers' controls."""

    def __init__(self, sim: Any, port: int, host: str, token: str | None) -> None:
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise SimulationError(f"port must be a whole number in 0..65535, got {port!r}")
        if not isinstance(host, str) or not host:
            raise SimulationError(f"host must be an address such as '127.0.0.1', got {host!r}")
        if token is not None and (not isinstance(token, str) or not token):
            raise SimulationError(f"token must be a non-empty string, got {token!r}")
        self.token = token if token is not None or is_loopback(host) else secrets.token_urlsafe(16)
        self.about = encode(about(sim))
        self.dropped = 0
        """Frames not sent: the queue was full, or a viewer read too slowly."""
        self.refused = 0
        """Messages refused: malformed, or a hello with a wrong token."""
        self.sent = 0
        self.paused = False
        self._viewers: dict[bytes, float] = {}  # identity -> when last heard
        self.attached = 0
        """Viewers attached now."""
        self._frames: queue.Queue[dict[str, Any]] = queue.Queue(QUEUE)
        self._controls: queue.Queue[tuple[bytes, dict[str, Any]]] = queue.Queue()
        self._replies: queue.Queue[tuple[bytes, dict[str, Any]]] = queue.Queue()
        self._breaks: dict[int, Any] = {}  # number -> the viewer's Breakpoint
        self._numbers = 0
        self._selected: list[int] = []
        self._then_pause = False  # a viewer's ``step``: hold again after the next step
        self._again = False  # a viewer needs the current state again (hello, select)
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.ROUTER)
        self._socket.setsockopt(zmq.ROUTER_MANDATORY, 1)  # a full viewer: EAGAIN, counted
        self._socket.setsockopt(zmq.SNDHWM, QUEUE)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.MAXMSGSIZE, 1 << 20)  # viewers send small messages
        address = f"[{host}]" if ":" in host else host
        try:
            if ":" in host:
                self._socket.setsockopt(zmq.IPV6, 1)
            self.port = (
                self._socket.bind_to_random_port(f"tcp://{address}")
                if port == 0
                else self._bind(f"tcp://{address}:{port}", port)
            )
        except zmq.ZMQError as exc:
            self._socket.close()
            self._context.term()
            raise SimulationError(f"cannot serve on {host}:{port}: {exc}") from None
        self.host = host
        self._stop = threading.Event()
        # the game's thread wakes the socket's thread (a frame or a reply queued) over an
        # inproc pair: it sleeps until then instead of waking every few ms for the GIL
        where = f"inproc://behaviortk-serve-{id(self)}"
        self._woken = self._context.socket(zmq.PULL)
        self._woken.bind(where)
        self._wake = self._context.socket(zmq.PUSH)
        self._wake.setsockopt(zmq.LINGER, 0)
        self._wake.setsockopt(zmq.SNDHWM, 4)  # a wake pending is enough
        self._wake.connect(where)
        self._thread = threading.Thread(target=self._run, name="behaviortk-serve", daemon=True)
        self._thread.start()
        if self.token is not None and token is None:
            print(f"behaviortk: serving on {host}:{self.port}, token {self.token}", file=sys.stderr)

    def _bind(self, address: str, port: int) -> int:
        self._socket.bind(address)
        return port

    # ----------------------------------------------------------- the game's thread
    def holding(self, sim: Any) -> bool:
        """Apply the viewers' controls; True while the simulation is held (``step`` returns)."""
        while True:
            try:
                who, message = self._controls.get_nowait()
            except queue.Empty:
                break
            self._control(sim, who, message)
            self._wake_sender()
        if self.paused and self.attached == 0:
            self.paused = False  # every viewer left: nobody can resume a held game
        if self._again and self.attached:
            self._queue(sim, again=True)
        self._again = False
        return self.paused

    def after_step(self, sim: Any) -> None:
        """Queue the step's frame for the viewers (dropped and counted when the queue is full);
        hold the simulation when one of the viewers' breakpoints hit."""
        if self.attached == 0:
            return
        hit = sim.hit
        if self._then_pause or (
            hit is not None and any(hit.breakpoint is b for b in self._breaks.values())
        ):
            self.paused = True
        self._then_pause = False
        self._queue(sim, again=False)

    def _queue(self, sim: Any, again: bool) -> None:
        """The current state as a frame in the queue (``again``: a tick already sent)."""
        if self._frames.full():
            self.dropped += 1
            return
        hit = sim.hit
        extra = {
            "events": [] if again else [_event(e) for e in sim.events],
            "boards": {i: _board(sim, i) for i in self._selected},
            "facts": {i: facts(sim, i) for i in self._selected},
            "hit": None if hit is None else _hit(hit),
            "paused": self.paused,
            "dropped": self.dropped,
            "again": again,
        }
        try:
            self._frames.put_nowait(frame(TickState.of(sim), **extra))
        except queue.Full:
            self.dropped += 1
        self._wake_sender()

    def _wake_sender(self) -> None:
        """Wake the socket's thread: a frame or a reply waits (never blocks: one is enough)."""
        if self._stop.is_set():
            return  # closed
        with contextlib.suppress(zmq.Again):
            self._wake.send(b"", zmq.NOBLOCK)

    def _control(self, sim: Any, who: bytes, message: dict[str, Any]) -> None:
        op = message["op"]
        if op == "hello":
            self._again = True  # a new viewer: show it the state now, even when held
        elif op == "pause":
            self.paused = True
        elif op == "resume":
            self.paused = False
        elif op == "step":
            self._then_pause = True
            self.paused = False
        elif op == "select":
            ids = message.get("ids")
            if isinstance(ids, list) and all(isinstance(i, int) for i in ids):
                self._selected = [i for i in ids if _live(sim, i)]
                self._again = True
        elif op == "break":
            self._set_break(sim, who, message)
        elif op == "unbreak":
            point = self._breaks.pop(message.get("number"), None)  # type: ignore[arg-type]
            if point is not None:
                point.remove()
            self._replies.put((who, self._list_breaks()))

    def _set_break(self, sim: Any, who: bytes, message: dict[str, Any]) -> None:
        kwargs = {k: message[k] for k in BREAK_KEYS if message.get(k) is not None}
        if isinstance(kwargs.get("blackboard"), list):
            kwargs["blackboard"] = tuple(kwargs["blackboard"])
        try:
            point = sim.break_on(**kwargs)
        except SimulationError as exc:
            self._replies.put((who, {"op": "error", "message": str(exc)}))
            return
        self._numbers += 1
        self._breaks[self._numbers] = point
        self._replies.put((who, self._list_breaks()))

    def _list_breaks(self) -> dict[str, Any]:
        return {"op": "breaks", "breaks": {n: _point(b) for n, b in self._breaks.items()}}

    def close(self) -> None:
        """Stop serving: the thread ends, the socket closes, the viewers' breakpoints go
        (closing again does nothing; the game may go on stepping)."""
        if self._stop.is_set():
            return
        self._wake_sender()
        self._stop.set()
        self._wake.close(linger=0)  # before the thread ends the context, which waits for it
        self._thread.join(timeout=2.0)
        self.attached = 0
        for point in self._breaks.values():
            point.remove()
        self._breaks.clear()
        self.paused = False

    # --------------------------------------------------------- the socket's thread
    def _run(self) -> None:
        sock, woken = self._socket, self._woken
        poller = zmq.Poller()
        poller.register(sock, zmq.POLLIN)
        poller.register(woken, zmq.POLLIN)
        try:
            while not self._stop.is_set():
                ready = dict(poller.poll(IDLE_MS))
                if sock in ready:
                    self._receive(sock)
                if woken in ready:
                    with contextlib.suppress(zmq.Again):
                        while True:
                            woken.recv(zmq.NOBLOCK)
                self._send_replies(sock)
                self._send_frames(sock)
                self._forget_silent()
        finally:
            for who in list(self._viewers):
                self._send(sock, who, encode({"op": "closed"}))
            sock.close(linger=100)
            woken.close(linger=0)
            self._context.term()

    def _receive(self, sock: zmq.Socket) -> None:
        while True:
            try:
                parts = sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            if len(parts) != 2:
                self.refused += 1
                continue
            who, data = parts
            try:
                message = decode(data)
            except WireError:
                self.refused += 1
                continue
            op = message["op"]
            if op == "hello":
                self._hello(sock, who, message)
            elif who not in self._viewers:
                self.refused += 1  # a viewer must say hello (with its token) first
            elif op == "bye":
                self._detach(who)
            else:
                self._viewers[who] = time.monotonic()
                if op == "ping":
                    pong = {"op": "pong", "paused": self.paused, "dropped": self.dropped}
                    self._send(sock, who, encode(pong))
                else:
                    self._controls.put((who, message))

    def _hello(self, sock: zmq.Socket, who: bytes, message: dict[str, Any]) -> None:
        token = message.get("token")
        if self.token is not None and not (
            isinstance(token, str) and secrets.compare_digest(token, self.token)
        ):
            self.refused += 1
            self._send(sock, who, encode({"op": "refused", "reason": "wrong token"}))
            return
        if self._send(sock, who, self.about):
            self._viewers[who] = time.monotonic()
            self.attached = len(self._viewers)
            self._controls.put((who, {"op": "hello"}))

    def _detach(self, who: bytes) -> None:
        self._viewers.pop(who, None)
        self.attached = len(self._viewers)

    def _send(self, sock: zmq.Socket, who: bytes, data: bytes) -> bool:
        try:
            sock.send_multipart([who, data], zmq.NOBLOCK)
        except zmq.Again:  # this viewer's queue is full: it reads too slowly
            self.dropped += 1
            return True
        except zmq.ZMQError:  # gone (EHOSTUNREACH)
            self._detach(who)
            return False
        return True

    def _send_replies(self, sock: zmq.Socket) -> None:
        while True:
            try:
                who, message = self._replies.get_nowait()
            except queue.Empty:
                return
            self._send(sock, who, encode(message))

    def _send_frames(self, sock: zmq.Socket) -> None:
        while True:
            try:
                message = self._frames.get_nowait()
            except queue.Empty:
                return
            data = encode(message)
            for who in list(self._viewers):
                self._send(sock, who, data)
            self.sent += 1

    def _forget_silent(self) -> None:
        now = time.monotonic()
        for who, heard in list(self._viewers.items()):
            if now - heard > SILENT_S:
                self._detach(who)


def _event(event: Any) -> dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(event).items() if v is not None}


def _hit(hit: Any) -> dict[str, Any]:
    """A breakpoint hit: its line, its reason and where (the viewer selects the agent and
    shows the node)."""
    where = {"agent": hit.agent, "group": hit.group, "node": hit.node}
    return {"text": str(hit), "reason": hit.reason(), **where}


def _point(point: Any) -> dict[str, Any]:
    """A viewer's breakpoint: its text, and for a node breakpoint the group, node path and
    status it waits for (the tree panel marks the node)."""
    out = {"text": repr(point), "kind": point.kind, "group": point.group}
    if point.kind == "node":
        out.update(node=point.target[0], status=point.target[1])
    return out


def _live(sim: Any, agent: int) -> bool:
    with contextlib.suppress(SimulationError):
        sim.row_of(agent)
        return True
    return False


def _board(sim: Any, agent: int) -> dict[str, Any]:
    """The agent's blackboard as plain values (an agent despawned since: empty)."""
    with contextlib.suppress(SimulationError):
        return {str(k): _value(v) for k, v in dict(sim.blackboard(agent)).items()}
    return {}


def _value(value: Any) -> Any:
    """A blackboard value msgpack can carry (vectors as lists; anything else as its text)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_value(v) for v in value]
    return str(value)
