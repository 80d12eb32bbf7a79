"""The game's side of ``behaviortk attach``: ``sim.serve()`` streams frames to viewers.

``port = sim.serve(port=0, host="127.0.0.1")`` binds a ZeroMQ ROUTER socket (Groot2
attaches to a running tree over ZeroMQ the same way). The game keeps calling
``sim.step()``; nothing is built while no viewer is attached. With one attached, after
each step ``Server.after_step`` packs the tick's ``TickState`` (``sim/tick_state.py``:
what traces record and the viewer draws) with the step's events, the selected agents'
blackboards and facts and the breakpoint hit (``sim/serve_messages.py``) as msgpack
(``sim/wire.py``: raw array bytes, nothing that can execute code) and hands it to ZeroMQ
without waiting; its I/O thread sends it. A viewer whose queue is full (ZeroMQ's send
high-water mark, ``QUEUE`` frames: it reads too slowly) loses the frame, counted
(``dropped``); a vanished one is detached: a slow or vanished viewer never blocks
``step()``.

**Threads.** The game's thread does the socket's work while it steps (reading the
viewers' messages, sending frames and replies, about 0.1 ms a tick at 1,000 agents), so
a frame costs no hand-over of Python's lock to another thread in the middle of the next
tick (on a loaded machine such a hand-over can stall the game for a scheduler slice).
One background thread answers instead whenever the game has not done so for ``IDLE_S``
(no viewer yet, a game that stopped stepping): hello, ping, bye. A lock keeps the two
apart; the game's thread never waits for more than one message's handling.

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
import ipaddress
import queue
import secrets
import sys
import threading
import time
from typing import Any

import zmq

from behaviortk.errors import SimulationError
from behaviortk.sim.serve_messages import about, frame_extras, point_values
from behaviortk.sim.tick_state import TickState
from behaviortk.sim.wire import WireError, decode, encode, frame

QUEUE = 64
"""Frames waiting for one viewer; more are dropped and counted."""
PING_S = 1.0
"""How often an attached viewer pings."""
SILENT_S = 5.0
"""A viewer silent this long is detached (and a simulation it held resumes)."""
IDLE_S = 0.1
"""How long the socket may go unserved by the game's thread before the background thread
answers (and how long it sleeps between looks)."""
LOOK_S = 0.5
"""How long the background thread sleeps while the game's thread serves the socket (each
wake takes Python's lock from the game for a moment)."""
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


class Server:
    """One served Simulation: the socket, the viewers, their controls and breakpoints."""

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
        """Frames not sent to a viewer: its queue was full (it reads too slowly)."""
        self.refused = 0
        """Messages refused: malformed, or a hello with a wrong token."""
        self.sent = 0
        """Frames sent (to every viewer attached)."""
        self.paused = False
        self._viewers: dict[bytes, float] = {}  # identity -> when last heard
        self.attached = 0
        """Viewers attached now."""
        self._controls: queue.Queue[tuple[bytes, dict[str, Any]]] = queue.Queue()
        self._breaks: dict[int, Any] = {}  # number -> the viewer's Breakpoint
        self._numbers = 0
        self._selected: list[int] = []
        self._then_pause = False  # a viewer's ``step``: hold again after the next step
        self._again = False  # a viewer needs the current state again (hello, select)
        self._lock = threading.Lock()  # who uses the socket now: the game's thread or ours
        self._served = time.monotonic()  # when the game's thread last served the socket
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
        self._thread = threading.Thread(target=self._run, name="behaviortk-serve", daemon=True)
        self._thread.start()
        if self.token is not None and token is None:
            print(f"behaviortk: serving on {host}:{self.port}, token {self.token}", file=sys.stderr)

    def _bind(self, address: str, port: int) -> int:
        self._socket.bind(address)
        return port

    # ----------------------------------------------------------- the game's thread
    def holding(self, sim: Any) -> bool:
        """Read the viewers' messages and apply their controls; True while the simulation is
        held (``step`` then returns at once)."""
        if self.attached:
            with self._lock:
                self._served = time.monotonic()
                self._receive()
                self._forget_silent()
        while not self._controls.empty():  # only the game's thread takes from it
            who, message = self._controls.get_nowait()
            self._control(sim, who, message)
        if self.paused and self.attached == 0:
            self.paused = False  # every viewer left: nobody can resume a held game
        if self._again and self.attached:
            self._send_frame(sim, again=True)
        self._again = False
        return self.paused

    def after_step(self, sim: Any) -> None:
        """Send the step's frame to the viewers (dropped and counted for a viewer whose queue
        is full); hold the simulation when one of the viewers' breakpoints hit."""
        if self.attached == 0:
            return
        hit = sim.hit
        if self._then_pause or (
            hit is not None and any(hit.breakpoint is b for b in self._breaks.values())
        ):
            self.paused = True
        self._then_pause = False
        self._send_frame(sim, again=False)

    def _send_frame(self, sim: Any, again: bool) -> None:
        """The current state as a frame to every viewer (``again``: a tick already sent)."""
        extra = frame_extras(sim, self._selected, again)
        state = TickState.of(sim, copy=False)  # packed at once: no copy of the arrays
        data = encode(frame(state, paused=self.paused, dropped=self.dropped, **extra))
        with self._lock:
            for who in list(self._viewers):
                self._send(who, data)
        self.sent += 1

    def _reply(self, who: bytes, message: dict[str, Any]) -> None:
        with self._lock:
            self._send(who, encode(message))

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
            self._reply(who, self._list_breaks())

    def _set_break(self, sim: Any, who: bytes, message: dict[str, Any]) -> None:
        kwargs = {k: message[k] for k in BREAK_KEYS if message.get(k) is not None}
        if isinstance(kwargs.get("blackboard"), list):
            kwargs["blackboard"] = tuple(kwargs["blackboard"])
        try:
            point = sim.break_on(**kwargs)
        except SimulationError as exc:
            self._reply(who, {"op": "error", "message": str(exc)})
            return
        self._numbers += 1
        self._breaks[self._numbers] = point
        self._reply(who, self._list_breaks())

    def _list_breaks(self) -> dict[str, Any]:
        return {"op": "breaks", "breaks": {n: point_values(b) for n, b in self._breaks.items()}}

    def close(self) -> None:
        """Stop serving: the viewers are told, the socket closes, their breakpoints go
        (closing again does nothing; the game may go on stepping)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(timeout=2.0)
        with self._lock:
            for who in list(self._viewers):
                self._send(who, encode({"op": "closed"}))
            self._viewers.clear()
            self.attached = 0
            self._socket.close(linger=100)
            self._context.term()
        for point in self._breaks.values():
            point.remove()
        self._breaks.clear()
        self.paused = False

    # ---------------------------------------------- either thread, holding the lock
    def _receive(self) -> None:
        sock = self._socket
        while int(sock.get(zmq.EVENTS)) & zmq.POLLIN:  # cheaper than a recv that raises
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
                self._hello(who, message)
            elif who not in self._viewers:
                self.refused += 1  # a viewer must say hello (with its token) first
            elif op == "bye":
                self._detach(who)
            else:
                self._viewers[who] = time.monotonic()
                if op == "ping":
                    pong = {"op": "pong", "paused": self.paused, "dropped": self.dropped}
                    self._send(who, encode(pong))
                else:
                    self._controls.put((who, message))

    def _hello(self, who: bytes, message: dict[str, Any]) -> None:
        token = message.get("token")
        if self.token is not None and not (
            isinstance(token, str) and secrets.compare_digest(token, self.token)
        ):
            self.refused += 1
            self._send(who, encode({"op": "refused", "reason": "wrong token"}))
            return
        if self._send(who, self.about):
            self._viewers[who] = time.monotonic()
            self.attached = len(self._viewers)
            self._controls.put((who, {"op": "hello"}))

    def _detach(self, who: bytes) -> None:
        self._viewers.pop(who, None)
        self.attached = len(self._viewers)

    def _send(self, who: bytes, data: bytes) -> bool:
        try:
            self._socket.send_multipart([who, data], zmq.NOBLOCK)
        except zmq.Again:  # this viewer's queue is full: it reads too slowly
            self.dropped += 1
            return True
        except zmq.ZMQError:  # gone (EHOSTUNREACH)
            self._detach(who)
            return False
        return True

    def _forget_silent(self) -> None:
        now = time.monotonic()
        for who, heard in list(self._viewers.items()):
            if now - heard > SILENT_S:
                self._detach(who)

    # ------------------------------------------------------- the background thread
    def _run(self) -> None:
        """Answer the viewers while the game's thread does not (see the module docstring)."""
        wait = IDLE_S
        while not self._stop.wait(wait):
            if time.monotonic() - self._served < IDLE_S:
                wait = LOOK_S  # the game's thread serves the socket: look again later
                continue
            wait = IDLE_S
            with self._lock:
                if self._stop.is_set():
                    return
                self._receive()
                self._forget_silent()


def _live(sim: Any, agent: int) -> bool:
    with contextlib.suppress(SimulationError):
        sim.row_of(agent)
        return True
    return False
