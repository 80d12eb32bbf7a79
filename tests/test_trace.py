"""Traces: format of issue 4, byte-identical per seed, --every, and the evade rule read from the trace.

The evade rule from the trace alone: record ``t`` holds the state after tick
``t``'s integration, which is the state tick ``t + 1`` senses. So for every
``t >= 1`` a prey's `active` contains "evade" exactly when, in record
``t - 1``, its nearest predator (minimum-image distance on the wrapped world)
was within 100.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

import behaviortk
from behaviortk.record.jsonl import TraceWriter, read
from behaviortk.sim.simulation import Simulation
from behaviortk.world.overlap import overlap_fraction

REFERENCE = Path(__file__).resolve().parent.parent / "definitions" / "evade_or_flock.json"


@pytest.fixture(scope="module")
def reference() -> behaviortk.Scenario:
    return behaviortk.load(REFERENCE)


def overlap_of(scenario, ticks: int) -> dict:
    """The end line's overlap summary, measured apart: the figure after each of ``ticks``."""
    sim = Simulation(scenario)
    figures = []
    for _ in range(ticks):
        sim.step()
        figures.append(overlap_fraction(sim.world, sim.agents))
    last = figures[-1] if figures else 0.0
    mean = sum(figures) / len(figures) if figures else 0.0
    return {"ticks": ticks, "last": last, "max": max(figures, default=0.0), "mean": mean}


def trace_text(scenario, ticks: int, seed: int | None = None, every: int = 1) -> str:
    sim = Simulation(scenario, seed=seed)
    out = io.StringIO()
    writer = TraceWriter(out, sim, every=every)
    sim.run(ticks, writer.on_tick)
    return out.getvalue()


def test_header_and_record_layout(reference) -> None:
    lines = trace_text(reference, 3).splitlines()
    assert len(lines) == 4
    head = json.loads(lines[0])
    assert list(head) == [
        "format",
        "version",
        "scenario",
        "seed",
        "dt",
        "engine",
        "every",
        "world",
        "statuses",
        "trees",
        "definition",
    ]
    definition = head.pop("definition")
    assert definition == json.loads(REFERENCE.read_text(encoding="utf-8"))  # self-contained
    assert list(definition) == list(json.loads(REFERENCE.read_text(encoding="utf-8")))
    assert head == {
        "format": "behaviortk-trace",
        "version": 2,
        "scenario": "evade_or_flock",
        "seed": 7,
        "dt": 1 / 60,
        "engine": "py_trees",
        "every": 1,
        "world": {"width": 800.0, "height": 600.0, "edges": "wrap"},
        "statuses": ["INVALID", "RUNNING", "SUCCESS", "FAILURE"],
        # DFS pre-order of the expanded trees: the order of each agent's status digits
        "trees": {
            "prey": [
                "prey",
                "prey/threatened[0]",
                "prey/threatened[0]/evade",
                "prey/social[1]",
                "prey/social[1]/flock",
                "prey/wander[2]",
            ],
            "predator": ["pursue prey"],
        },
    }
    first = json.loads(lines[1])
    assert list(first) == ["tick", "time", "agents"]
    assert first["tick"] == 0 and first["time"] == 1 / 60
    assert json.loads(lines[3])["time"] == 3 * (1 / 60)
    agent = first["agents"][0]
    assert list(agent) == ["id", "name", "group", "pos", "vel", "active", "status"]
    assert agent["id"] == 0 and agent["name"] == "prey-0" and agent["group"] == "prey"
    assert len(first["agents"]) == 63
    assert first["agents"][-1]["active"] == ["pursue prey"]
    assert first["agents"][-1]["status"] == "1"  # pursuit with a prey in range: RUNNING
    for a in first["agents"][:60]:  # one digit per prey node; the selector runs one child
        assert len(a["status"]) == 6 and a["status"][0] == "1"
    assert ", " not in lines[1] and ": " not in lines[1]  # compact separators


def test_state_is_after_integration(reference) -> None:
    sim = Simulation(reference)
    out = io.StringIO()
    writer = TraceWriter(out, sim)
    sim.run(2, writer.on_tick)
    _, records = read(out.getvalue().splitlines())
    last = list(records)[-1]
    assert np.array_equal(np.array([a["pos"] for a in last["agents"]]), sim.agents.pos)
    assert np.array_equal(np.array([a["vel"] for a in last["agents"]]), sim.agents.vel)


def test_same_seed_same_bytes_other_seed_other_bytes(reference) -> None:
    a = trace_text(reference, 40, seed=3)
    b = trace_text(reference, 40, seed=3)
    c = trace_text(reference, 40, seed=4)
    assert a == b
    assert a != c


def test_every_k_records_ticks_0_k_2k(reference) -> None:
    _, records = read(trace_text(reference, 10, every=4).splitlines())
    assert [r["tick"] for r in records] == [0, 4, 8]
    with pytest.raises(ValueError, match="every"):
        TraceWriter(io.StringIO(), Simulation(reference), every=0)


def test_evade_from_the_trace_matches_the_previous_records_distances(reference) -> None:
    head, records = read(trace_text(reference, 200).splitlines())
    size = np.array([head["world"]["width"], head["world"]["height"]])
    evade_count = 0
    previous = None
    for rec in records:
        if previous is not None:
            agents = previous["agents"]
            pos = np.array([a["pos"] for a in agents])
            prey = np.array([a["group"] == "prey" for a in agents])
            d = pos[~prey][None, :, :] - pos[prey][:, None, :]
            d = d - size * np.round(d / size)
            within = np.sqrt((d * d).sum(axis=2)).min(axis=1) <= 100.0
            evading = np.array(["evade" in a["active"] for a in rec["agents"]])[prey]
            assert evading.tolist() == within.tolist(), f"tick {rec['tick']}"
            evade_count += int(evading.sum())
        previous = rec
    assert evade_count > 50


def test_the_last_line_says_how_the_run_ended(reference) -> None:
    sim = Simulation(reference)
    out = io.StringIO()
    writer = TraceWriter(out, sim, every=2)
    sim.run(5, writer.on_tick)
    writer.finish(sim)
    lines = out.getvalue().splitlines()
    overlap = overlap_of(reference, 5)  # measured after every tick, also those not recorded
    assert overlap["max"] > 0  # evade_or_flock's prey do overlap
    assert lines[-1].startswith('{"end":"complete","ticks":5,"overlap":{"ticks":5,"last":')
    assert writer.lines == len(lines) == 5  # header, ticks 0 2 4, end
    _, records = read(lines)
    assert records.end is None  # not reached yet: records are read lazily
    assert [r["tick"] for r in records] == [0, 2, 4]
    assert records.end == {"end": "complete", "ticks": 5, "overlap": overlap}
    with pytest.raises(ValueError, match="ended"):
        writer.on_tick(sim)


def test_an_interrupted_trace_ends_with_where_and_why(reference) -> None:
    sim = Simulation(reference)
    out = io.StringIO()
    writer = TraceWriter(out, sim)
    sim.run(3, writer.on_tick)
    writer.interrupt(sim, KeyboardInterrupt())
    _, records = read(out.getvalue().splitlines())
    assert [r["tick"] for r in records] == [0, 1, 2]
    assert records.end == {
        "end": "interrupted",
        "tick": 3,
        "reason": "interrupted (SIGINT)",
        "overlap": overlap_of(reference, 3),
    }

    out = io.StringIO()
    writer = TraceWriter(out, Simulation(reference))
    writer.interrupt(sim, ZeroDivisionError("boom\nsecond line"))
    assert out.getvalue().splitlines()[-1] == (
        '{"end":"interrupted","tick":3,"reason":"ZeroDivisionError: boom",'
        '"overlap":{"ticks":0,"last":0.0,"max":0.0,"mean":0.0}}'
    )


def test_a_record_cut_mid_write_does_not_swallow_the_end_line(reference) -> None:
    class CutOnce(io.StringIO):
        cut = False

        def write(self, s: str) -> int:
            if s.startswith('{"tick":1,') and not self.cut:
                self.cut = True
                super().write(s[:40])
                raise KeyboardInterrupt
            return super().write(s)

    sim = Simulation(reference)
    out = CutOnce()
    writer = TraceWriter(out, sim)
    with pytest.raises(KeyboardInterrupt):
        sim.run(3, writer.on_tick)
    writer.interrupt(sim, KeyboardInterrupt())
    last = json.loads(out.getvalue().splitlines()[-1])
    assert last.pop("overlap")["ticks"] == 2  # measured before the cut write of tick 1
    assert last == {"end": "interrupted", "tick": 2, "reason": "interrupted (SIGINT)"}
