"""The `utility` composite (Dave Mark's Infinite Axis Utility System), by hand.

Curve values and compensated scores are worked out from the formulas in
``format/utility.py``; the engine tests run both engines and expect the same statuses,
scores and memory, which tests/test_equivalence.py also checks on random trees.
"""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from engine_support import definition, statuses, wait
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiled import COMPILED_DURING_TICKS
from test_snapshot import check_continuations

import behaviortk
from behaviortk.format.loader import load_text
from behaviortk.format.utility import Exponential, Linear, Logistic, Logit, Quadratic, Step
from behaviortk.leaves.utility import compensated, consideration_score, normalised, pick
from behaviortk.plugin import InputOps, Model, NodeContext, Plugin
from behaviortk.record.jsonl import TraceWriter
from behaviortk.registry import Registries
from behaviortk.sim.simulation import Simulation
from behaviortk.studies.check_runs import run_checks
from behaviortk.tree.status import FAILURE, INVALID, RUNNING, SUCCESS
from behaviortk.viewer.agent_notes import AgentNotes
from behaviortk.viewer.layout import Rect
from behaviortk.viewer.tree_frame import frame_from_sim
from behaviortk.viewer.tree_panel import TreeView
from behaviortk.world.streams import uniforms

ENGINES = ("py_trees", "batch")


def curve(model: Any, x: float) -> float:
    return float(consideration_score(model, np.array([x]))[0])


# ------------------------------------------------------------------ the maths


@pytest.mark.parametrize(
    "model, x, expected",
    [
        (Linear(), 0.3, 0.3),
        (Linear(m=-1, b=1), 0.25, 0.75),
        (Linear(m=2), 0.75, 1.0),  # 1.5, clamped
        (Quadratic(), 0.5, 0.25),
        (Quadratic(m=-4, c=0.5, b=1), 0.25, 0.75),  # a bell: -4 * 0.0625 + 1
        (Quadratic(k=3, c=0.5), 0.25, 0.0),  # -0.015625, clamped
        (Logistic(), 0.5, 0.5),
        (Logistic(), 0.6, 1 / (1 + math.exp(-1))),
        (Logit(), 0.5, 0.5),
        (Logit(), 0.9, 0.5 + math.log(9) / 10),
        (Logit(), 0.0, 0.0),  # 0.5 + ln(0.0001 / 0.9999) / 10 < 0, clamped
        (Exponential(), 1.0, 1.0),
        (Exponential(), 0.8, math.exp(-1)),
        (Step(c=0.3), 0.3, 1.0),
        (Step(c=0.3), 0.29, 0.0),
    ],
)
def test_curve_values(model: Any, x: float, expected: float) -> None:
    assert curve(model, x) == pytest.approx(expected, abs=1e-12)


def test_inputs_are_normalised_by_their_range_and_nan_scores_zero() -> None:
    x = normalised(np.array([30.0, 100.0, 0.0, np.nan]), 20.0, 60.0)
    np.testing.assert_array_equal(x[:3], [0.25, 1.0, 0.0])
    assert curve(Linear(), float(x[3])) == 0.0


def test_compensation_lifts_each_consideration_by_its_count() -> None:
    # n = 2: modification 1/2; 0.5 -> 0.5 + 0.5 * 0.5 * 0.5 = 0.625, 0.8 -> 0.88
    two = compensated([np.array([0.5]), np.array([0.8])])
    assert float(two[0]) == pytest.approx(0.625 * 0.88)
    # n = 3: modification 2/3; each 0.5 -> 0.5 + 0.5 * 2/3 * 0.5 = 2/3
    three = compensated([np.array([0.5])] * 3)
    assert float(three[0]) == pytest.approx(8 / 27)
    # n = 1: nothing to compensate
    assert float(compensated([np.array([0.3])])[0]) == pytest.approx(0.3)


def test_pick_takes_the_best_ties_to_the_lower_index_and_never_a_zero() -> None:
    scores = np.array([[0.2, 0.5, 0.5], [0.0, 0.0, 0.0], [0.0, 0.0, 0.1]])
    assert pick(scores, 1, None).tolist() == [1, -1, 2]


def test_random_top_draws_among_the_k_best_by_u() -> None:
    scores = np.array([[0.1, 0.9, 0.5]] * 3 + [[0.0, 0.9, 0.5]])
    u = np.array([0.49, 0.5, 0.99, 0.9])
    # best first: 1, 2, 0; k = 2: u < 0.5 -> 1, else 2
    assert pick(scores[:3], 2, u[:3]).tolist() == [1, 2, 2]
    # k = 3 but only two score above 0: slot floor(0.9 * 2) = 1 -> child 2
    assert pick(scores[3:], 3, u[3:]).tolist() == [2]


# ------------------------------------------------------------------ on both engines


def needs(a: float, b: float) -> dict[str, Any]:
    return {"a": {"type": "number", "default": a}, "b": {"type": "number", "default": b}}


def by(key: str) -> dict[str, Any]:
    return {"input": {"kind": "blackboard", "key": key}, "range": [0, 1]}


def two_waits(inertia: float) -> dict[str, Any]:
    return {
        "type": "utility",
        "inertia": inertia,
        "children": [
            {"child": wait(10, "A"), "considerations": [by("a")]},
            {"child": wait(10, "B"), "considerations": [by("b")]},
        ],
    }


def both(root: dict[str, Any], **kw: Any) -> list[Simulation]:
    text = json.dumps(definition(root, **kw))
    return [Simulation(load_text(text, "utility.json"), engine=e) for e in ENGINES]


@pytest.mark.parametrize("inertia, keeps", [(0.1, True), (0.0, False)])
def test_inertia_keeps_the_running_child_until_another_beats_it(
    inertia: float, keeps: bool
) -> None:
    """a = 0.5, b = 0.4: A runs. b = 0.55: with inertia 0.1, A scores 0.6 and stays; without,
    B takes over and A is stopped (INVALID). b = 0.65 beats 0.6: B either way."""
    for sim in both(two_waits(inertia), blackboard=needs(0.5, 0.4)):
        sim.step()
        assert statuses(sim) == [RUNNING, RUNNING, INVALID]
        sim.blackboard(0)["b"] = 0.55
        sim.step()
        ops = sim.engine.node_ops(sim.engine.groups["a"])[0]
        if keeps:
            assert statuses(sim) == [RUNNING, RUNNING, INVALID]
            assert ops.scores[0].tolist() == pytest.approx([0.6, 0.55])
        else:
            assert statuses(sim) == [RUNNING, INVALID, RUNNING]
        sim.blackboard(0)["b"] = 0.65
        sim.step()
        assert statuses(sim) == [RUNNING, INVALID, RUNNING]


@pytest.mark.parametrize("inertia", [0.0, 0.1])
def test_no_child_above_zero_fails_and_stops_the_running_one(inertia: float) -> None:
    """a drops to 0: A's consideration vetoes it, inertia or not; B scores 0 too: FAILURE."""
    for sim in both(two_waits(inertia), blackboard=needs(0.5, 0.0)):
        sim.step()
        assert statuses(sim) == [RUNNING, RUNNING, INVALID]
        sim.blackboard(0)["a"] = 0.0
        sim.step()
        assert statuses(sim) == [FAILURE, INVALID, INVALID]


NAP = {
    "type": "utility",
    "children": [
        {
            "child": wait(0.2, "nap"),
            "considerations": [
                {"input": {"kind": "since_success", "node": "nap"}, "range": [0, 10]}
            ],
        },
        {"child": wait(10, "idle"), "weight": 0.5},
    ],
}


def nap_statuses(sim: Simulation, ticks: int) -> list[list[int]]:
    out = []
    for _ in range(ticks):
        sim.step()
        out.append(statuses(sim))
    return out


def test_since_success_counts_ticks_since_the_node_last_succeeded() -> None:
    """dt 0.1: the 0.2 s nap runs on ticks 0 and 1 and succeeds on tick 2 (never napped:
    x = 1, 1 > 0.5). From tick 3 nap scores (t - 2) / 10 against idle's 0.5: idle on ticks
    3 to 6, and on tick 7 the tie (0.5) goes to the lower index, nap."""
    run, stop, done = (
        [RUNNING, RUNNING, INVALID],
        [RUNNING, INVALID, RUNNING],
        [SUCCESS, SUCCESS, INVALID],
    )
    expected = [run, run, done, stop, stop, stop, stop, run]
    for sim in both(NAP, dt=0.1):
        assert nap_statuses(sim, 8) == expected
        ops = sim.engine.node_ops(sim.engine.groups["a"])[0]
        assert ops.last_success[0].tolist() == [2]


def test_since_success_memory_continues_after_a_snapshot(tmp_path: Path) -> None:
    scenario = load_text(json.dumps(definition(NAP, dt=0.1, count=3)), "nap.json")
    for engine in ENGINES:
        check_continuations(scenario, engine, [4, 9], 16, tmp_path)


def test_random_top_picks_from_the_agents_stream_uniformly_among_the_best() -> None:
    """20 agents, weights 3, 2, 1, random_top 2: each tick an agent runs child 0 where its
    number u(seed, id, tick, slot) < 0.5, else child 1; child 2 never runs."""
    root = {
        "type": "utility",
        "random_top": 2,
        "children": [{"child": wait(10), "weight": w} for w in (3, 2, 1)],
    }
    sims = both(root, count=20, positions=[[10.0 * i, 10.0] for i in range(20)])
    slot = sims[0].trees["a"].nodes[0].rand_slot
    first: list[np.ndarray] = []
    for sim in sims:
        chosen = []
        for _ in range(50):
            u = uniforms(sim.seed, sim.agents.ids, sim.tick, sim.n_rand)[:, slot]
            sim.step()
            status = sim.decisions["a"].status
            assert (status[:, 3] == INVALID).all()
            np.testing.assert_array_equal(status[:, 1] == RUNNING, u < 0.5)
            chosen.append(status[:, 1] == RUNNING)
        first.append(np.array(chosen))
    np.testing.assert_array_equal(first[0], first[1])
    assert 0.42 < first[0].mean() < 0.58  # 1,000 draws of a fair choice


# ------------------------------------------------------------------ plugins


def test_a_plugin_adds_an_input() -> None:
    from typing import Literal

    plugin = Plugin("half_input")

    class Half(Model):
        kind: Literal["half"] = "half"

    @plugin.utility_input(Half)
    class HalfOps(InputOps):
        def __init__(self, model: Half, ctx: NodeContext) -> None:
            pass

        def values(self, rows: np.ndarray) -> np.ndarray:
            return np.full(rows.size, 0.5)

    regs = Registries.with_builtins()
    plugin.install(regs)
    root = {
        "type": "utility",
        "children": [
            {"child": wait(10, "A"), "weight": 0.3},
            {
                "child": wait(10, "B"),
                "considerations": [{"input": {"kind": "half"}, "range": [0, 1]}],
            },
        ],
    }
    scenario = load_text(json.dumps(definition(root)), "plugin.json", registries=regs)
    for engine in ENGINES:
        sim = Simulation(scenario, engine=engine)
        sim.step()
        assert statuses(sim) == [RUNNING, INVALID, RUNNING]  # 0.5 beats 0.3


# ------------------------------------------------------------------ bad input


def issues(root: dict[str, Any], **kw: Any) -> list[str]:
    text = json.dumps(definition(root, **kw), indent=1)
    try:
        behaviortk.load_text(text, "t.json")
    except behaviortk.DefinitionError as exc:
        return [f"{i.pointer}: {i.message} [{i.kind}] line {i.line}" for i in exc.issues]
    return []


def option(consideration: dict[str, Any], weight: Any = 1) -> dict[str, Any]:
    return {"type": "utility", "children": [
        {"child": wait(1), "weight": weight, "considerations": [consideration]}
    ]}  # fmt: skip


SPEED = {"kind": "speed"}
WHERE = "/trees/main/root/children/0"


def test_a_range_that_does_not_rise_is_located() -> None:
    found = issues(option({"input": SPEED, "range": [5, 5]}))
    assert len(found) == 1
    assert found[0].startswith(f"{WHERE}/considerations/0/range: ")
    assert "[5.0, 5.0] does not rise: write [lo, hi] with lo < hi" in found[0]


def test_an_unknown_curve_kind_names_the_kinds() -> None:
    found = issues(option({"input": SPEED, "range": [0, 1], "curve": {"kind": "sigmoid"}}))
    assert len(found) == 1 and found[0].startswith(f"{WHERE}/considerations/0/curve")
    for kind in ("linear", "quadratic", "logistic", "logit", "exponential", "step"):
        assert kind in found[0]


def test_an_unknown_input_kind_names_the_inputs() -> None:
    found = issues(option({"input": {"kind": "hunger"}, "range": [0, 1]}))
    assert len(found) == 1 and found[0].startswith(f"{WHERE}/considerations/0/input")
    assert "unknown utility input 'hunger'" in found[0]
    assert "since_success" in found[0]


def test_empty_children_are_refused() -> None:
    found = issues({"type": "utility", "children": []})
    assert len(found) == 1 and found[0].startswith("/trees/main/root/children: ")


def test_a_nan_or_negative_weight_is_refused() -> None:
    found = issues(option({"input": SPEED, "range": [0, 1]}, weight=-1))
    assert len(found) == 1 and found[0].startswith(f"{WHERE}/weight: must be >= 0")
    text = json.dumps(definition(option({"input": SPEED, "range": [0, 1]}, weight=0.5)), indent=1)
    with pytest.raises(behaviortk.DefinitionError) as err:
        behaviortk.load_text(text.replace('"weight": 0.5', '"weight": NaN'), "t.json")
    nan = err.value.issues[0]
    assert text.splitlines()[nan.line - 1].strip() == '"weight": 0.5,'
    assert "NaN is not a JSON number" in nan.message


def test_since_success_must_name_a_node_of_the_tree() -> None:
    found = issues(option({"input": {"kind": "since_success", "node": "napp"}, "range": [0, 1]}))
    assert len(found) == 1
    assert f"{WHERE}/considerations/0/input/node" in found[0]
    assert "no node named 'napp'" in found[0] and "[unknown_node]" in found[0]


def test_a_blackboard_input_needs_a_declared_number_key() -> None:
    found = issues(
        option({"input": {"kind": "blackboard", "key": "mood"}, "range": [0, 1]}),
        blackboard={"mood": "string"},
    )
    assert len(found) == 1 and f"{WHERE}/considerations/0/input/key" in found[0]
    assert "number" in found[0]


# ------------------------------------------------------------------ the viewer


def test_the_tree_panel_shows_each_options_score() -> None:
    """The selected agent's notes carry each option's score (inertia included) beside its
    child's box: a = 0.5 runs A, then b = 0.55 against A's 0.5 + 0.1."""
    for sim in both(two_waits(0.1), blackboard=needs(0.5, 0.4)):
        notes = AgentNotes()
        for tick in range(2):
            sim.step()
            if tick == 0:
                sim.blackboard(0)["b"] = 0.55
            frame = frame_from_sim(sim, 0)
            assert frame is not None
            notes.observe(sim, 0, frame.tree, frame.status)
        texts = notes.notes(sim.tick)
        assert texts[1:] == ("score 0.60   1 ticks", "score 0.55   1 ticks")
        pictures = TreeView().build(replace(frame, notes=texts), Rect(0.0, 0.0, 500.0, 400.0))
        drawn = [label.text for pic in pictures for label in pic.labels]
        assert "score 0.60   1 ticks" in drawn and "score 0.55   1 ticks" in drawn
        assert "∑ utility" in drawn


def test_traces_record_the_chosen_child_like_any_composites() -> None:
    """The status digits of the trace (flat order: utility, A, B) show which option runs."""
    for sim in both(two_waits(0.0), blackboard=needs(0.5, 0.4)):
        out = io.StringIO()
        writer = TraceWriter(out, sim)
        for _ in range(2):
            sim.step()
            writer.on_tick(sim)
            sim.blackboard(0)["b"] = 0.9
        head, *ticks = (json.loads(line) for line in out.getvalue().splitlines())
        assert head["trees"]["a"] == ["utility", "utility/A[0]", "utility/B[1]"]
        assert [t["agents"][0]["status"] for t in ticks] == ["110", "101"]


# ------------------------------------------------------------------ the shipped villagers


@pytest.mark.slow
def test_utility_villager_checks_hold_on_five_seeds() -> None:
    """Each activity gets chosen and villagers near the wolf flee it, on the file's seed and
    the next four (`behaviortk check --seeds 5`)."""
    scenario = behaviortk.load(Path(__file__).parent.parent / "definitions/utility_villager.json")
    seed = scenario.definition.world.seed
    for s in range(seed, seed + 5):
        verdicts, _ = run_checks(scenario, seed=s, ticks=600, engine="batch")
        assert len(verdicts) == 4
        assert all(v.passed for v in verdicts), [(s, v) for v in verdicts if not v.passed]


def test_spawns_and_despawns_carry_each_agents_scores_and_memory() -> None:
    """Agents come and go between ticks: survivors keep their scores and when their nap last
    succeeded, newcomers start as never having napped, the same on both engines."""
    root = {**NAP, "random_top": 2}
    sims = both(root, dt=0.1, count=6)
    for t in range(30):
        for sim in sims:
            if t % 4 == 1:
                sim.spawn("a", 2)
            if t % 5 == 3:
                sim.despawn(int(sim.ids[1]))
            sim.step()
        a, b = (s.engine.node_ops(s.engine.groups["a"])[0] for s in sims)
        np.testing.assert_array_equal(sims[0].decisions["a"].status, sims[1].decisions["a"].status)
        np.testing.assert_array_equal(a.scores, b.scores)
        np.testing.assert_array_equal(a.last_success, b.last_success)
    assert (a.last_success >= 0).any() and len(a.scores) == sims[0].agents.n


# ------------------------------------------------------------------ against a scalar transcription


def scalar_curve(kind: str, p: dict[str, float], x: float) -> float:
    """The curves of ``format/utility.py`` written out with ``math``, one number at a time."""
    m, k, c, b = p.get("m", 1.0), p.get("k", 0.0), p.get("c", 0.0), p.get("b", 0.0)
    if kind == "linear":
        y = m * (x - c) + b
    elif kind == "quadratic":
        y = m * (x - c) ** int(k) + b
    elif kind == "logistic":
        t = -k * (x - c)
        y = b + (0.0 if t > 700 else m / (1 + math.exp(t)))
    elif kind == "logit":
        z = min(max(x, 1e-4), 1 - 1e-4)
        y = m * (c + math.log(z / (1 - z)) / k) + b
    elif kind == "exponential":
        t = k * (x - c)
        y = m * math.exp(t) + b if t < 700 else (math.inf if m > 0 else -math.inf)
    else:
        y = m if x >= c else b
    return 0.0 if math.isnan(y) else min(max(y, 0.0), 1.0)


CURVE_PARAMS = {
    "linear": ("m", "c", "b"),
    "quadratic": ("m", "k", "c", "b"),
    "logistic": ("m", "k", "c", "b"),
    "logit": ("m", "k", "c", "b"),
    "exponential": ("m", "k", "c", "b"),
    "step": ("m", "c", "b"),
}
MODELS = {
    "linear": Linear,
    "quadratic": Quadratic,
    "logistic": Logistic,
    "logit": Logit,
    "exponential": Exponential,
    "step": Step,
}


@st.composite
def curves(draw: Any) -> tuple[str, dict[str, float]]:
    kind = draw(st.sampled_from(sorted(CURVE_PARAMS)))
    finite = st.floats(-3, 3, allow_nan=False)
    params = {name: draw(finite) for name in CURVE_PARAMS[kind]}
    if kind == "quadratic":
        params["k"] = draw(st.integers(1, 8))
    elif kind == "logit":
        params["k"] = draw(st.floats(0.5, 20))
    elif "k" in params:
        params["k"] = draw(st.floats(-20, 20, allow_nan=False))
    return kind, params


@settings(max_examples=200, deadline=None)
@given(
    options=st.lists(
        st.tuples(
            st.floats(0, 5, allow_nan=False),
            st.lists(st.tuples(curves(), st.floats(-0.5, 1.5, allow_nan=False)), max_size=4),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_scores_equal_a_scalar_transcription(options: list[Any]) -> None:
    """weight * prod(s + (1 - s)(1 - 1/n) s) over each option's considerations, worked one
    number at a time with ``math``, against the vectorised scores."""
    got = []
    for weight, considerations in options:
        parts = [
            consideration_score(MODELS[kind](**p), normalised(np.array([x]), 0.0, 1.0))
            for (kind, p), x in considerations
        ]
        got.append(weight * float(compensated(parts)[0]) if parts else weight)
    for (weight, considerations), score in zip(options, got, strict=True):
        n = len(considerations)
        want = weight
        for (kind, p), x in considerations:
            s = scalar_curve(kind, p, min(max(x, 0.0), 1.0))
            want *= s + (1 - s) * (1 - 1 / n) * s
        assert score == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.slow
def test_random_top_on_compiled_kernels_compiles_nothing_the_plan_left_out(tmp_path: Path) -> None:
    """The villagers with `random_top`: the random table is planned (``sim/kernel_plan.py``),
    so ticking on compiled kernels compiles nothing more (``tests/test_compiled.py``)."""
    root = Path(__file__).resolve().parent.parent
    data = json.loads((root / "definitions/utility_villager.json").read_text())
    data.pop("$schema")
    data["trees"]["villager"]["root"]["children"][-1]["random_top"] = 2
    path = tmp_path / "villager_top.json"
    path.write_text(json.dumps(data))
    proc = subprocess.run(
        [sys.executable, "-c", COMPILED_DURING_TICKS, str(path), "batch", ""],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == ""
