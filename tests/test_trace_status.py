"""Node statuses in traces (issue 15, part 2): one code per node, flat-tree order, both engines.

The values are ``trace_support``'s hand-worked ``walk`` rows; the order of the
digits is the header's ``trees`` (DFS pre-order paths). Both engines must write
the same statuses: on ``walk``, on random trees (hypothesis, the generator of
``test_equivalence``), and (``test_equivalence``) on every shipped scenario,
whose traces are compared byte for byte after the header.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_equivalence import random_trees, scenario_text
from trace_support import EXPECTED, WALK, WALK_PATHS, run_recorded, walk_sim

from behaviortk.format.loader import load_text
from behaviortk.record.jsonl import TraceWriter, read
from behaviortk.sim.simulation import Simulation
from behaviortk.sim.tick_state import TickState
from behaviortk.tree.status import FAILURE, INVALID, RUNNING, STATUS_NAMES, SUCCESS


def walk_trace(engine: str, ticks: int = 2) -> list[str]:
    sim = walk_sim(engine)
    out = io.StringIO()
    run_recorded(sim, ticks, TraceWriter(out, sim))
    return out.getvalue().splitlines()


@pytest.mark.parametrize("engine", ["py_trees", "batch"])
def test_status_digits_by_hand(engine: str) -> None:
    head, records = read(walk_trace(engine))
    assert head["statuses"] == list(STATUS_NAMES) == ["INVALID", "RUNNING", "SUCCESS", "FAILURE"]
    assert (INVALID, RUNNING, SUCCESS, FAILURE) == (0, 1, 2, 3)
    assert head["trees"] == {"walkers": WALK_PATHS}  # the external group has no tree
    assert head["definition"] == WALK  # the node order is recoverable from the file alone
    for rec in records:
        for agent in rec["agents"]:
            want = EXPECTED[rec["tick"]][agent["id"]]
            assert agent["status"] == want["status"], (rec["tick"], agent["id"])
            assert agent["active"] == want["active"]
    assert {k: v for k, v in records.end.items() if k != "overlap"} == {
        "end": "complete",
        "ticks": 2,
    }
    assert records.end["overlap"]["ticks"] == 2


def test_both_engines_write_the_same_statuses_on_walk() -> None:
    a, b = walk_trace("py_trees", 5), walk_trace("batch", 5)
    assert json.loads(a[0])["engine"] == "py_trees" and json.loads(b[0])["engine"] == "batch"
    assert a[1:] == b[1:]


def test_status_digits_follow_the_flat_order_of_the_header() -> None:
    """Digit k of an agent's status is node k of ``trees[group]``: read back by path."""
    head, records = read(walk_trace("batch"))
    walker1 = next(a for a in next(records)["agents"] if a["id"] == 1)
    by_path = dict(zip(head["trees"]["walkers"], walker1["status"], strict=True))
    # walker 1 is 100 from (100, 100): close fails, so near fails and the selector runs go
    assert by_path == {
        "pick": "1",
        "pick/near[0]": "3",
        "pick/near[0]/close[0]": "3",
        "pick/near[0]/stop[1]": "0",
        "pick/go[1]": "1",
    }


def test_status_strings_are_built_per_group_not_per_agent() -> None:
    """``TickState.status_strings`` equals the codes row by row (distinct patterns reused)."""
    sim = walk_sim("batch")
    sim.step()
    state = TickState.of(sim)
    codes = sim.decisions["walkers"].status
    assert state.status_strings() == ["".join(str(c) for c in row) for row in codes.tolist()] + [""]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(tree=random_trees, seed=st.integers(0, 10_000))
def test_random_trees_trace_the_same_statuses_on_both_engines(tree, seed: int) -> None:
    scenario = load_text(scenario_text(tree, seed))
    lines = []
    for engine in ("py_trees", "batch"):
        sim = Simulation(scenario, engine=engine)
        out = io.StringIO()
        run_recorded(sim, 15, TraceWriter(out, sim))
        lines.append(out.getvalue().splitlines())
        head, records = read(lines[-1])
        for rec in records:  # one digit per node of the group's tree
            for agent in rec["agents"]:
                assert len(agent["status"]) == len(head["trees"][agent["group"]])
                assert set(agent["status"]) <= set("0123")
    assert lines[0][1:] == lines[1][1:]


def test_decision_status_is_what_the_trace_holds() -> None:
    sim = walk_sim("py_trees")
    out = io.StringIO()
    writer = TraceWriter(out, sim)
    sim.step()
    writer.on_tick(sim)
    rec = json.loads(out.getvalue().splitlines()[1])
    digits = np.array([[int(c) for c in a["status"]] for a in rec["agents"][:2]])
    assert np.array_equal(digits, sim.decisions["walkers"].status)
