"""The attach protocol's framing: msgpack messages that cannot execute code.

Every message is one msgpack map with an ``"op"`` (never pickle: decoding builds only
maps, lists, strings, numbers and bytes). Arrays travel as ``{"dtype", "shape", "data"}``
with a dtype from ``DTYPES`` (no object arrays), rebuilt with ``np.frombuffer``.
``decode`` turns anything else (bad bytes, a message too large, a wrong shape) into a
``WireError``, which the server counts and ignores (``sim/serve.py``).

A frame (``frame(state, ...)``) is a ``TickState`` (``sim/tick_state.py``): the same
state a trace records and the viewer draws, so a recording made from frames equals the
game's own trace.
"""

from __future__ import annotations

from typing import Any

import msgpack
import numpy as np

from behaviortk.sim.tick_state import TickState
from behaviortk.tree.flat import FlatTree

DTYPES = frozenset({"<f8", "<i8", "|i1", "|b1"})
"""The array dtypes a message may carry."""
MAX_MESSAGE = 64 << 20
"""Bytes a message may have (a 1,000,000-agent frame is about 50 MB)."""


class WireError(ValueError):
    """A message that is not a well-formed attach message."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as msgpack bytes (numpy arrays and scalars allowed as values)."""
    return msgpack.packb(message, default=_plain, use_bin_type=True)


def decode(data: bytes) -> dict[str, Any]:
    """A message from msgpack bytes: a map with a string ``op``, else ``WireError``."""
    if len(data) > MAX_MESSAGE:
        raise WireError(f"a message of {len(data)} bytes (at most {MAX_MESSAGE})")
    try:
        message = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise WireError(f"not msgpack: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("op"), str):
        raise WireError("not a map with a string 'op'")
    return message


def _plain(value: Any) -> Any:
    """What msgpack cannot pack itself: arrays as their bytes, numpy scalars as numbers."""
    if isinstance(value, np.ndarray):
        return array(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"cannot send a {type(value).__name__}")


def array(values: np.ndarray) -> dict[str, Any]:
    """An array as a map (its dtype one of ``DTYPES``, little-endian bytes: the array's own
    memory, which msgpack copies once into the message)."""
    values = np.ascontiguousarray(values)
    data = values.reshape(-1).view(np.uint8).data  # its bytes (an empty array too), not a copy
    return {"dtype": values.dtype.str, "shape": list(values.shape), "data": data}


def unarray(value: Any, dtype: str, ndim: int) -> np.ndarray:
    """The array a map holds, checked: dtype ``dtype``, ``ndim`` dimensions, bytes that fit."""
    if not isinstance(value, dict) or value.get("dtype") != dtype or dtype not in DTYPES:
        raise WireError(f"expected an array of {dtype}")
    shape, data = value.get("shape"), value.get("data")
    if (
        not isinstance(shape, list)
        or len(shape) != ndim
        or not all(isinstance(s, int) and s >= 0 for s in shape)
        or not isinstance(data, bytes)
    ):
        raise WireError("an array's shape or data is malformed")
    out = np.frombuffer(data, dtype=np.dtype(dtype))
    if out.size != int(np.prod(shape)):
        raise WireError(f"an array of shape {shape} with {out.size} values")
    return out.reshape(shape).copy()


def frame(state: TickState, **extra: Any) -> dict[str, Any]:
    """A ``TickState`` as a frame message, with ``extra`` keys (events, blackboards, hit)."""
    return {
        "op": "frame",
        "tick": state.tick,
        "time": state.time,
        "ids": state.ids,
        "group": state.group,
        "group_names": state.group_names,
        "pos": state.pos,
        "vel": state.vel,
        "heading": state.heading,
        "force": state.force,
        "status": state.status,
        "emitted": state.emitted,
        "thought": state.thought,
        **extra,
    }


def tick_state(message: dict[str, Any], trees: dict[str, FlatTree]) -> TickState:
    """The ``TickState`` a frame carries, every array checked (``WireError`` when not)."""
    try:
        tick, time, names = message["tick"], message["time"], message["group_names"]
        ids = unarray(message["ids"], "<i8", 1)
        n = ids.shape[0]
        group = unarray(message["group"], "<i8", 1)
        pos, vel, heading, force = (
            unarray(message[k], "<f8", 2) for k in ("pos", "vel", "heading", "force")
        )
        status = {g: unarray(v, "|i1", 2) for g, v in message["status"].items()}
        emitted = {g: unarray(v, "|b1", 2) for g, v in message["emitted"].items()}
        thought = message["thought"]
        thought = None if thought is None else unarray(thought, "|b1", 1)
    except (KeyError, TypeError, AttributeError) as exc:
        raise WireError(f"a frame without {exc}") from None
    if not isinstance(tick, int) or not isinstance(time, float) or not isinstance(names, list):
        raise WireError("a frame's tick, time or group names are malformed")
    if group.shape[0] != n or any(p.shape != (n, 2) for p in (pos, vel, heading, force)):
        raise WireError("a frame's arrays disagree on the number of agents")
    if n and (group.min() < 0 or group.max() >= len(names)):
        raise WireError("a frame's group index is out of range")
    if set(status) - set(trees) or set(emitted) - set(trees):
        raise WireError("a frame names a group without a tree")
    counts = np.bincount(group, minlength=len(names))
    for g, codes in status.items():
        rows = counts[names.index(g)] if g in names else -1
        if codes.shape != (rows, len(trees[g])) or emitted.get(g, codes).shape[0] != rows:
            raise WireError(f"a frame's statuses of group {g!r} do not fit its agents")
    return TickState(
        tick, time, ids, group, names, pos, vel, heading, force, status, emitted, trees, thought
    )
