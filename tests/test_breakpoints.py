"""Breakpoints (issue 26): ``sim.break_on``, ``sim.run`` stopping at a hit, ``sim.hit``.

The reference is brute force over what a run recorded: a simulation runs with breakpoints
and a JSONL trace at once (``run`` continued after each hit until the ticks are used up);
then, from the trace's status digits alone, agent by agent and node by node, every tick
where some agent's node *became* the status a breakpoint waits for (it has it in this
tick's record and had another in the previous one, INVALID before an agent's first
record) gives the expected hit: the lowest id, and for that agent the breakpoint set
first. The two lists must be equal, on both engines, for nodes and statuses spread over
shipped definitions, with think-rate LOD, with agents spawned, despawned and re-sorted,
and for random trees (hypothesis). Events and blackboards have no trace columns: their
reference is a twin simulation stepped tick by tick and read agent by agent.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tests.test_equivalence as equivalence
from behaviortk.errors import SimulationError
from behaviortk.format.loader import load, load_text
from behaviortk.leaves.conditions import compare
from behaviortk.record.jsonl import TraceWriter, read
from behaviortk.sim.simulation import Simulation
from behaviortk.tree.status import STATUS_NAMES

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ("py_trees", "batch")
CODES = {name: str(code) for code, name in enumerate(STATUS_NAMES)}


# ------------------------------------------------------------------ the reference


def run_to_hits(sim: Simulation, ticks: int) -> tuple[list[tuple[Any, ...]], list[dict[str, Any]]]:
    """Run ``ticks`` ticks with a trace, continuing after every hit: the hits as
    ``(tick, agent, node, status)`` and the trace's (header, records)."""
    out = io.StringIO()
    writer = TraceWriter(out, sim)
    hits = []
    while sim.tick < ticks:
        hit = sim.run(ticks - sim.tick, writer.on_tick)
        if hit is None:
            break
        assert hit.tick == sim.tick - 1 and sim.hit is hit
        hits.append((hit.tick, hit.agent, hit.node, hit.status))
    writer.finish(sim)
    out.seek(0)
    header, records = read(out)
    return hits, [header, *records]


def hits_in_trace(
    trace: list[dict[str, Any]],
    wanted: list[tuple[str, str]],
    agent: int | None = None,
    since: dict[int, int] | None = None,
) -> list[tuple[Any, ...]]:
    """Brute force: ``wanted`` is ``[(path, status), ...]`` in the order set (``since``: the
    tick each was set before, 0 by default); each hit is the first (lowest id, then
    breakpoint) of a tick where a node became its status."""
    header, records = trace[0], trace[1:]
    paths = header["trees"]
    last: dict[int, str] = {}  # id -> status digits of its previous record
    expected = []
    for record in records:
        found = []
        for a in record["agents"]:
            now = a["status"]
            before = last.get(a["id"], "0" * len(now))
            last[a["id"]] = now
            if agent is not None and a["id"] != agent:
                continue
            for order, (path, status) in enumerate(wanted):
                if path not in paths.get(a["group"], []) or record["tick"] < (since or {}).get(
                    order, 0
                ):
                    continue
                k = paths[a["group"]].index(path)
                if now[k] == CODES[status] and before[k] != CODES[status]:
                    found.append((a["id"], order))
        if found:
            who, order = min(found)
            expected.append((record["tick"], who, *wanted[order]))
    return expected


def spread(sim: Simulation, count: int) -> list[tuple[str, str]]:
    """``count`` (path, status) pairs spread over every group's nodes, statuses in turn."""
    paths = list(dict.fromkeys(n.path for tree in sim.trees.values() for n in tree.nodes))
    step = max(1, len(paths) // count)
    statuses = ("RUNNING", "SUCCESS", "FAILURE")
    return [(p, statuses[k % 3]) for k, p in enumerate(paths[::step][:count])]


SHIPPED = [
    "definitions/guard_patrol.json",
    "definitions/evade_or_flock.json",
    "definitions/hide.json",
    "definitions/pursuit_evade.json",
    "definitions/interpose.json",
    "examples/chase_game.json",
]


# ------------------------------------------------------------------ node breakpoints


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("path", SHIPPED)
def test_node_breakpoints_hit_where_the_trace_says(path: str, engine: str) -> None:
    sim = Simulation(ROOT / path, engine=engine)
    wanted = spread(sim, 6)
    for node, status in wanted:
        sim.break_on(node=node, status=status)
    hits, trace = run_to_hits(sim, 240)
    assert hits == hits_in_trace(trace, wanted)
    assert hits  # the spread finds something to stop at in each of these scenes


@pytest.mark.parametrize("engine", ENGINES)
def test_one_breakpoint_stops_at_the_first_tick_and_lowest_id(engine: str) -> None:
    """guard_patrol: both guards patrol until one sees the intruder; ``chase`` (a name)
    first runs on tick 106 for guard 0, then on tick 165 for guard 1."""
    sim = Simulation(ROOT / "definitions/guard_patrol.json", engine=engine)
    point = sim.break_on("chase")
    assert point.spec == "guard/decide[2]/chase[0]=RUNNING" and point.kind == "node"
    hits, trace = run_to_hits(sim, 300)
    assert hits == hits_in_trace(trace, [("guard/decide[2]/chase[0]", "RUNNING")])
    assert hits[:2] == [
        (106, 0, "guard/decide[2]/chase[0]", "RUNNING"),
        (165, 1, "guard/decide[2]/chase[0]", "RUNNING"),
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_agent_and_group_narrow_a_breakpoint(engine: str) -> None:
    sim = Simulation(ROOT / "definitions/evade_or_flock.json", engine=engine)
    node = spread(sim, 3)[0][0]
    group = next(g for g, tree in sim.trees.items() if node in [n.path for n in tree.nodes])
    agent = int(sim.ids[sim.agents.slices[group]][5])
    sim.break_on(node=node, status="RUNNING", agent=agent)
    sim.break_on(node=node, status="SUCCESS", group=group)
    hits, trace = run_to_hits(sim, 200)
    mine = [h for h in hits if h[3] == "RUNNING"]
    assert mine == hits_in_trace(trace, [(node, "RUNNING")], agent=agent)
    assert all(h[1] == agent for h in mine)


def lod_definition(path: str) -> str:
    """A shipped definition whose every tree group thinks every 3rd tick, and every 7th far
    from the world's middle (think-rate LOD, ``docs/lod.md``)."""
    raw = load(ROOT / path).raw
    w, h = raw["world"]["width"], raw["world"]["height"]
    for group in raw["groups"]:
        if group.get("control") != "external" and group.get("tree"):
            group["think_every"] = 3
            group["lod"] = {"focus": [[w / 2, h / 2]], "near": w / 4, "far_think_every": 7}
    return json.dumps(raw)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "path", ["definitions/evade_or_flock.json", "definitions/guard_patrol.json"]
)
def test_with_lod_hits_follow_the_trace_and_fall_on_thinking_ticks(path: str, engine: str) -> None:
    sim = Simulation(load_text(lod_definition(path)), engine=engine)
    wanted = spread(sim, 6)
    for node, status in wanted:
        sim.break_on(node=node, status=status)
    hits, trace = run_to_hits(sim, 240)
    assert hits and hits == hits_in_trace(trace, wanted)
    thought = {
        (r["tick"], a["id"]): a["thought"] for r in trace[1:] for a in r["agents"] if "thought" in a
    }
    assert all(thought[(tick, agent)] for tick, agent, _, _ in hits)
    assert not all(thought.values())  # some agents did not think: LOD was on


@pytest.mark.parametrize("engine", ENGINES)
def test_breakpoints_follow_agents_through_spawns_despawns_and_reordering(engine: str) -> None:
    """Rows move under the breakpoint: the game spawns and despawns every few ticks and the
    rows are permuted as the compiled path's cell order does (``_rearrange``); hits still
    name the agent the trace shows, and a new agent starts from INVALID."""
    sim = Simulation(ROOT / "definitions/evade_or_flock.json", engine=engine)
    wanted = spread(sim, 5)
    for node, status in wanted:
        sim.break_on(node=node, status=status)
    rng = np.random.default_rng(3)
    out = io.StringIO()
    writer = TraceWriter(out, sim)
    hits = []

    def shake(s: Simulation) -> None:
        writer.on_tick(s)
        if s.tick % 7 == 0:
            s.despawn(rng.choice(s.ids, 3, replace=False))
            s.spawn("prey", 4)
        if s.tick % 11 == 0:
            s._rearrange({g: rng.permutation(r.stop - r.start) for g, r in s.agents.slices.items()})

    while sim.tick < 200:
        hit = sim.run(200 - sim.tick, shake)
        if hit is None:
            break
        hits.append((hit.tick, hit.agent, hit.node, hit.status))
    out.seek(0)
    header, records = read(out)
    assert hits and hits == hits_in_trace([header, *records], wanted)
    assert any(agent >= 63 for _, agent, _, _ in hits)  # a spawned agent hit too


# ------------------------------------------------------------------ events and blackboards


def stepped(sim: Simulation, ticks: int, read_tick: Any) -> list[tuple[Any, ...]]:
    """Twin reference: step ``ticks`` times, ``read_tick(sim)`` -> hit tuple or None."""
    out = []
    for _ in range(ticks):
        sim.step()
        found = read_tick(sim)
        if found is not None:
            out.append(found)
    return out


def run_hits(sim: Simulation, ticks: int) -> list[tuple[Any, ...]]:
    hits = []
    while sim.tick < ticks:
        hit = sim.run(ticks - sim.tick)
        if hit is None:
            break
        hits.append((hit.tick, hit.agent, hit.event or hit.key, hit.value))
    return hits


@pytest.mark.parametrize("engine", ENGINES)
def test_event_breakpoints_stop_at_every_tick_with_the_event(engine: str) -> None:
    """chase_game: the hunters emit ``caught`` while they touch the player."""
    game = ROOT / "examples/chase_game.json"
    sim = Simulation(game, engine=engine)
    point = sim.break_on(event="caught")
    assert point.spec == "event=caught" and point.kind == "event"

    def caught(s: Simulation) -> tuple[Any, ...] | None:
        agents = [e.agent for e in s.events if e.name == "caught"]
        return (s.tick - 1, min(agents), "caught", None) if agents else None

    expected = stepped(Simulation(game, engine=engine), 400, caught)
    assert expected and run_hits(sim, 400) == expected


def board_reference(sim: Simulation, key: str, op: str, rhs: Any, group: str) -> Any:
    """Reference for a blackboard breakpoint set on ``sim`` now: after each step, read every
    agent's board; a hit where ``compare`` became true (lowest id), with that agent's value."""

    def truth(s: Simulation) -> dict[int, tuple[bool, Any]]:
        values = {a: s.blackboard(a).get(key) for a in s.ids[s.agents.slices[group]].tolist()}
        return {a: (compare(op, v, rhs), v) for a, v in values.items()}

    seen = {a: now for a, (now, _) in truth(sim).items()}

    def read_tick(s: Simulation) -> tuple[Any, ...] | None:
        found = []
        for agent, (now, value) in truth(s).items():
            if now and not seen[agent]:
                found.append((agent, value))
            seen[agent] = now
        return (s.tick - 1, found[0][0], key, found[0][1]) if found else None

    return read_tick


@pytest.mark.parametrize("engine", ENGINES)
def test_blackboard_breakpoint_stops_when_the_comparison_becomes_true(engine: str) -> None:
    """guard_patrol: a guard that sees the intruder notes where (``last_seen``, a point)."""
    path = ROOT / "definitions/guard_patrol.json"
    sim = Simulation(path, engine=engine)
    point = sim.break_on(blackboard=("last_seen", "!=", [0, 0]))
    assert point.spec == "blackboard=last_seen!=[0.0, 0.0]"
    twin = Simulation(path, engine=engine)
    expected = stepped(twin, 400, board_reference(twin, "last_seen", "!=", (0.0, 0.0), "guards"))
    hits = run_hits(sim, 400)
    assert hits and hits == expected
    assert isinstance(hits[0][3], tuple)  # the value the agent holds


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tree=equivalence.random_trees,
    seed=st.integers(0, 10_000),
    engine=st.sampled_from(ENGINES),
    every=st.sampled_from([1, 1, 3]),
    op=st.sampled_from(["==", "!=", ">="]),
)
def test_random_trees_hit_where_their_traces_say(
    tree: dict[str, Any], seed: int, engine: str, every: int, op: str
) -> None:
    scenario = load_text(equivalence.scenario_text(tree, seed, think_every=every))
    sim = Simulation(scenario, engine=engine)
    wanted = spread(sim, 4)
    for node, status in wanted:
        sim.break_on(node=node, status=status)
    hits, trace = run_to_hits(sim, 30)
    assert hits == hits_in_trace(trace, wanted)
    # the blackboard ("mood" is a number key, written by blackboard_set)
    board = Simulation(scenario, engine=engine)
    board.break_on(blackboard=("mood", op, 2))
    twin = Simulation(scenario, engine=engine)
    expected = stepped(twin, 30, board_reference(twin, "mood", op, 2, "a"))
    assert run_hits(board, 30) == expected


# ------------------------------------------------------------------ handles, run, cost


def test_a_removed_breakpoint_stops_nothing_and_run_returns_none_after_max_ticks() -> None:
    sim = Simulation(ROOT / "definitions/guard_patrol.json", engine="batch")
    point = sim.break_on("chase")
    assert sim.breakpoints == (point,) and point.active
    point.remove()
    point.remove()  # twice: nothing more
    assert sim.breakpoints == () and not point.active
    assert sim.run(200) is None and sim.tick == 200 and sim.hit is None


@pytest.mark.parametrize("engine", ENGINES)
def test_a_breakpoint_set_mid_run_beside_another_counts_from_then(engine: str) -> None:
    """A second breakpoint of the same group, on another node, set after 60 ticks: its
    baseline is the statuses then (the group's shared comparison reads that node anew)."""
    sim = Simulation(ROOT / "definitions/evade_or_flock.json", engine=engine)
    first, second = ("prey/threatened[0]", "FAILURE"), ("prey/social[1]/flock", "RUNNING")
    sim.break_on(node=first[0], status=first[1])
    out = io.StringIO()
    writer = TraceWriter(out, sim)
    hits = []
    while sim.tick < 200:
        if sim.tick >= 60 and len(sim.breakpoints) == 1:
            sim.break_on(node=second[0], status=second[1])
            since = sim.tick
        hit = sim.run((60 if sim.tick < 60 else 200) - sim.tick, writer.on_tick)
        if hit is not None:
            hits.append((hit.tick, hit.agent, hit.node, hit.status))
    out.seek(0)
    header, records = read(out)
    expected = hits_in_trace([header, *records], [first, second], since={1: since})
    assert hits == expected and any(h[2] == second[0] for h in hits)


def test_set_between_steps_a_breakpoint_starts_from_the_statuses_now() -> None:
    """Set while a guard already chases: no hit for the past; the next is the other guard."""
    sim = Simulation(ROOT / "definitions/guard_patrol.json", engine="batch")
    sim.run(120)
    sim.break_on("chase")
    hit = sim.run(200)
    assert hit is not None and (hit.tick, hit.agent) == (165, 1)


def test_hit_text_and_reason() -> None:
    sim = Simulation(ROOT / "definitions/guard_patrol.json", engine="batch")
    sim.break_on("chase")
    hit = sim.run(300)
    assert str(hit) == "break: tick 106, agent 0, node guard/decide[2]/chase[0], RUNNING"
    assert hit is not None and hit.reason() == (
        "breakpoint: guard/decide[2]/chase[0] became RUNNING for agent 0 at tick 106"
    )


def test_no_breakpoint_no_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """With none set a step never calls the check (it costs one test of an empty list)."""
    from behaviortk.sim.breakpoints import Breakpoints

    def never(self: Any, sim: Any) -> None:
        raise AssertionError("checked with no breakpoint set")

    monkeypatch.setattr(Breakpoints, "check", never)
    sim = Simulation(ROOT / "definitions/guard_patrol.json", engine="batch")
    assert sim.run(5) is None
    sim.break_on("chase").remove()
    assert sim.run(5) is None


BAD = [
    ({}, "break_on takes one of node=PATH, event=NAME or blackboard=(KEY, OP, VALUE), got none"),
    ({"node": "chase", "event": "spawn"}, "got node and event"),
    ({"node": "chsae"}, "unknown node 'chsae'; closest paths: guard/decide[2]/chase[0] (guards)"),
    ({"node": "visit"}, "4 nodes of group 'intruder' are named 'visit' (sneak/rounds[2]/round/"),
    ({"node": 3}, "node must be a node path or name (a string), got 3"),
    ({"node": "chase", "status": "INVALID"}, "status must be one of RUNNING, SUCCESS, FAILURE"),
    ({"node": "chase", "group": "intruder"}, "unknown node 'chase' in group 'intruder'; closest"),
    ({"node": "chase", "group": "nope"}, "unknown group 'nope'; valid: guards, intruder"),
    ({"node": "chase", "agent": 2}, "unknown node 'chase' in group 'intruder'"),
    ({"node": "chase", "agent": 99}, "agent id 99 was never spawned; live ids: 0-2"),
    ({"node": "chase", "agent": "0"}, "agent ids are whole numbers, got '0'"),
    ({"node": "chase", "agent": 0, "group": "intruder"}, "agent 0 is in group 'guards', not"),
    ({"event": "boom"}, "no node raises event 'boom'; choose one of spawn, despawn, status"),
    ({"event": "spawn", "group": "guards"}, "an event breakpoint takes agent= (an id), not group="),
    ({"event": "spawn", "status": "RUNNING"}, "status= goes with node=, not with event="),
    ({"blackboard": "last_seen"}, "blackboard= takes (KEY, OP, VALUE), such as"),
    ({"blackboard": ("last_seen", "~", 1)}, "unknown comparison '~'; choose one of ==, !=, <"),
    ({"blackboard": ("last_sen", "==", 1)}, "no group declares blackboard key 'last_sen'; did"),
    ({"blackboard": ("last_seen", ">", 1)}, "'>' compares numbers only (use == or !=)"),
    ({"blackboard": ("last_seen", "==", 1)}, "blackboard key 'last_seen' is a point"),
    ({"blackboard": ("x", "==", 1), "group": "intruder"}, "undeclared blackboard key 'x' in"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD, ids=[m[:30] for _, m in BAD])
def test_a_bad_breakpoint_is_a_simulation_error_that_sets_nothing(
    kwargs: dict[str, Any], message: str
) -> None:
    sim = Simulation(ROOT / "definitions/guard_patrol.json", engine="batch")
    with pytest.raises(SimulationError) as err:
        sim.break_on(**kwargs)
    assert message in str(err.value)
    assert sim.breakpoints == ()


def test_run_checks_max_ticks() -> None:
    sim = Simulation(ROOT / "definitions/guard_patrol.json", engine="batch")
    with pytest.raises(SimulationError, match="max_ticks must be a whole number >= 0, got -1"):
        sim.run(-1)


def test_advance_stops_at_the_step_that_hits() -> None:
    """Five ticks of real time from tick 104: the hit on tick 106 ends the call there."""
    sim = Simulation(ROOT / "definitions/guard_patrol.json", engine="batch")
    sim.run(104)
    sim.break_on("chase")
    alpha = sim.advance(5 * sim.dt + 1e-9)
    assert sim.tick == 107 and sim.hit is not None and sim.hit.tick == 106
    assert 0.0 <= alpha < 1.0
    sim.advance(2 * sim.dt + 1e-9)  # the time left over was dropped: two more, no hit
    assert sim.tick == 109 and sim.hit is None
