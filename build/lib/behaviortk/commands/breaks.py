"""``--break``: a breakpoint written on the command line, as ``Simulation.break_on`` takes it.

Three forms (``sim/breakpoints.py`` says when each hits)::

    --break PATH=STATUS          a node (trace path or unique name) became RUNNING,
                                 SUCCESS or FAILURE (any case)
    --break event=NAME           the step raised event NAME
    --break blackboard=KEY OP VALUE
                                 blackboard_compare's comparison became true; OP one of
                                 == != < <= > >=, VALUE as JSON (true, 3, "idle", [1, 2]),
                                 else the text as a string

``event=`` and ``blackboard=`` always mean those two forms: a tree's root named ``event`` or
``blackboard`` (whose path is that word) cannot be given here. Imported while the parser
is built: only the standard library and ``errors.shown``.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from behaviortk.errors import shown

NODE_STATUSES = ("RUNNING", "SUCCESS", "FAILURE")
"""What a node breakpoint waits for (``sim/breakpoints.STATUSES``; the parser imports no sim)."""
FORMS = "PATH=STATUS (RUNNING, SUCCESS, FAILURE), event=NAME or blackboard=KEY OP VALUE"
_COMPARISON = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(==|!=|<=|>=|<|>)\s*(.*?)\s*")


def break_spec(text: str) -> dict[str, Any]:
    """An argparse type: ``text`` as ``break_on`` keyword arguments (the names are checked
    against the definition later, when the simulation is built)."""
    kind, sep, rest = text.partition("=")
    if kind == "event" and sep:
        if not rest:
            raise argparse.ArgumentTypeError(f"event= needs an event name, got {shown(text)}")
        return {"event": rest}
    if kind == "blackboard" and sep:
        match = _COMPARISON.fullmatch(rest)
        if match is None or not match.group(3):
            raise argparse.ArgumentTypeError(
                f"expected blackboard=KEY OP VALUE (OP one of == != < <= > >=), got {shown(text)}"
            )
        key, op, value = match.groups()
        return {"blackboard": (key, op, _value(value))}
    path, sep, status = text.rpartition("=")
    if not sep or not path or status.upper() not in NODE_STATUSES:
        raise argparse.ArgumentTypeError(f"expected {FORMS}, got {shown(text)}")
    return {"node": path, "status": status.upper()}


def _value(text: str) -> Any:
    """JSON when it parses (``true``, ``3``, ``"idle"``, ``[1, 2]``), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def written(kwargs: dict[str, Any]) -> str:
    """The spec back as the user would write it (for messages)."""
    if "event" in kwargs:
        return f"event={kwargs['event']}"
    if "blackboard" in kwargs:
        key, op, value = kwargs["blackboard"]
        return f"blackboard={key}{op}{json.dumps(value)}"
    return f"{kwargs['node']}={kwargs['status']}"
