"""The kernel subset a scenario compiles (``sim/kernel_plan.py``), and how compiling says so.

The sets below are worked out by hand from each definition's nodes, following
the rules of ``kernel_plan``'s docstring (which kernel each node, target and
world option calls). Nothing here compiles a kernel: plans are made from
Simulations on the NumPy kernels, and the notice and its watch are driven by
fake compile steps that wait for them. ``tests/test_compiled.py`` checks, on
real kernels, that ticking compiles nothing the plan left out.
"""

from __future__ import annotations

import io
import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from behaviortk.commands import progress as progress_module
from behaviortk.format.loader import load_text
from behaviortk.sim import backend, choice, compile_ahead, compile_notice, kernel_plan
from behaviortk.sim.simulation import Simulation
from behaviortk.steering import primitives as pm

ROOT = Path(__file__).resolve().parents[1]
DEFINITIONS = ROOT / "definitions"


def plan_of(path: Path | str, engine: str = "batch", debug: bool = False) -> kernel_plan.Plan:
    sim = Simulation(path, engine=engine, kernels="numpy", debug=debug)
    return kernel_plan.plan(sim)


# ------------------------------------------------------------------ by hand
def test_evacuation_compiles_what_its_nodes_call() -> None:
    """queue: a `neighbours` condition (the neighbour query), a blend of arrive at `self`
    (a ROWS loop; `self` is agent facts) and separation (flock sums: the blend is not all
    flocking); assembled: in_zone (NumPy), a blend of wander (its kernel and the rows of the
    random table it reads), separation and containment (a ROWS loop); walk: flow (NumPy:
    no kernel, so AccumulateForce's turning variant too) and separation. A bounded world
    of 3,000 agents (under SORT_MIN: no cell order), heading_smoothing 1,
    non_penetration: its passes and candidate search, no fold (not wrapped)."""
    found = plan_of(DEFINITIONS / "evacuation.json")
    assert found.kernels == (
        "neighbour_query", "agent_facts", "uniforms_rows", "request_rows", "wander",
        "flock_sums", "blend", "accumulate_acted", "accumulate_rows", "integrate",
        "non_penetration", "close_pairs",
    )  # fmt: skip
    assert [type(m) for m in found.row_leaves] == [pm.Arrive, pm.Containment]
    assert found.fused


def test_evacuation_in_the_viewer_senses_on_kernels_and_steers_on_numpy() -> None:
    """Debug geometry on: the NumPy act draws, so no leaf kernel, no row loop, no act
    kernel; wander's NumPy implementation reads the whole random table."""
    found = plan_of(DEFINITIONS / "evacuation.json", debug=True)
    assert found.kernels == (
        "neighbour_query", "agent_facts", "uniforms", "integrate", "non_penetration",
        "close_pairs",
    )  # fmt: skip
    assert found.row_leaves == ()


def test_seek_and_arrive_needs_its_row_loops_and_the_act_phase_only() -> None:
    """Point targets (no kernel), seek and arrive (ROWS loops), py_trees: no fused tree."""
    found = plan_of(DEFINITIONS / "seek_and_arrive.json", engine="py_trees")
    assert found.kernels == ("request_rows", "accumulate_acted", "integrate")
    assert [type(m) for m in found.row_leaves] == [pm.Seek, pm.Arrive, pm.Arrive, pm.Arrive]
    assert not found.fused


CROWD = {
    "name": "crowd",
    "world": {
        "width": 2000, "height": 2000, "edges": "wrap", "dt": 0.02, "seed": 3,
        "heading_smoothing": 3, "non_penetration": True,
    },
    "groups": [
        {
            "name": "flock", "count": 4096, "spawn": {"kind": "area", "min": [0, 0],
            "max": [2000, 2000]}, "radius": 2, "tree": "flock",
        },
        {
            "name": "lone", "count": 1, "spawn": {"kind": "positions", "points": [[5, 5]]},
            "radius": 2, "tree": "still",
        },
    ],
    "trees": {
        "flock": {"root": {"type": "selector", "memory": False, "children": [
            {"type": "sequence", "memory": False, "children": [
                {"type": "chance", "probability": 0.5},
                {"type": "in_range", "radius": 50,
                 "target": {"kind": "nearest", "group": "lone"}},
                {"type": "blend", "children": [
                    {"type": "separation"}, {"type": "alignment"}, {"type": "cohesion", "normalize": False},
                ]},
            ]},
            {"type": "wander"},
        ]}},
        "still": {"root": {"type": "wait", "duration": 10}},
    },
}  # fmt: skip


def test_a_large_wrapped_flock_with_a_lone_target() -> None:
    """4,096 agents (SORT_MIN): cell order, and non-penetration's lists follow the rows
    (renumbered); wrapped: fold; a nearest of a 1-agent group: the brute-force search
    and agent facts; in_range's kernel; chance reads the random table; a blend of one
    `of`'s flocking on kernels (cohesion's `normalize` false: the kernel's sum) is one pass
    from the query's sums (flock_blend, no blend kernel); heading smoothing over 3 ticks. "still" has a tree without steering: request_rows."""
    sim = Simulation(load_text(json.dumps(CROWD), "crowd.json"), engine="batch", kernels="numpy")
    found = kernel_plan.plan(sim)
    assert found.kernels == (
        "cell_order", "neighbour_query", "nearest_small", "agent_facts", "in_range",
        "uniforms", "uniforms_rows", "request_rows", "wander", "flock_blend",
        "accumulate_acted", "integrate", "heading_smoothing", "non_penetration",
        "close_pairs", "fold", "renumbered",
    )  # fmt: skip
    assert found.row_leaves == ()


def test_every_planned_name_is_a_kernel_backend_can_warm() -> None:
    for path in sorted(DEFINITIONS.glob("*.json")):
        if path.name != "behaviortk.schema.json":
            for debug in (False, True):
                assert set(plan_of(path, debug=debug).kernels) <= set(backend.WARM)


# ------------------------------------------------------------- the notice
class Watch:
    """A watch that records what it heard, and lets a fake compile step go on."""

    def __init__(self) -> None:
        self.made: list[tuple[int, str]] = []
        self.updates: list[int] = []
        self.closed = False
        self.shown = threading.Event()

    def factory(self, total: int, description: str) -> Watch:
        self.made.append((total, description))
        self.shown.set()
        return self

    def update(self, done: int) -> None:
        self.updates.append(done)

    def close(self) -> None:
        self.closed = True


def slow_steps(watch: Watch, count: int) -> list[choice.Step]:
    """Compile steps whose first waits until the notice is out (a compile that is long)."""
    ran: list[int] = []

    def first() -> None:
        assert watch.shown.wait(10), "the notice never came"
        ran.append(0)

    return [(None, first)] + [(None, lambda: ran.append(1)) for _ in range(count - 1)]


def test_a_long_compile_prints_one_notice_line_and_feeds_the_watch(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(compile_notice, "NOTICE_AFTER", 0.01)
    watch = Watch()
    with compile_notice.watching(watch.factory):
        choice.run(slow_steps(watch, 3), "evacuation", 31)
    err = capsys.readouterr().err
    assert err == "compiling kernels for evacuation: 3 of 31 (first run only; cached after)\n"
    assert watch.made == [(3, "compiling kernels for evacuation")]
    assert watch.updates == [0, 1, 2, 3] and watch.closed


def test_a_quick_compile_says_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(compile_notice, "NOTICE_AFTER", 60.0)
    watch = Watch()
    with compile_notice.watching(watch.factory):
        choice.run([(None, lambda: None)] * 4, "wander", 31)
    assert capsys.readouterr().err == "" and watch.made == []


def test_without_a_cache_the_notice_says_every_run_compiles(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(compile_notice, "NOTICE_AFTER", 0.01)
    watch = Watch()
    with compile_notice.watching(watch.factory):
        choice.run(slow_steps(watch, 1), "hide", 30, cached=False)
    assert (
        capsys.readouterr().err == "compiling kernels for hide: 1 of 30 (not cached: every run)\n"
    )


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_command_lines_watch_is_a_bar_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The notice, then a rich bar under it counting kernels, erased when done."""
    term = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.delenv("TERM", raising=False)
    monkeypatch.setattr(compile_notice, "NOTICE_AFTER", 0.01)
    shown = threading.Event()

    def factory(total: int, description: str) -> Any:
        bar = progress_module.compile_bar(total, description)
        shown.set()
        return bar

    def first() -> None:
        assert shown.wait(10)

    with compile_notice.watching(factory):
        choice.run([(None, first), (None, lambda: None)], "evacuation", 31)
    text = term.getvalue()
    assert text.startswith("compiling kernels for evacuation: 2 of 31 (first run only")
    assert "2/2" in text  # the bar counted both


def test_a_simulation_on_compiled_kernels_compiles_its_plan_with_the_notice(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``Simulation(kernels="numba")`` readies exactly its plan's steps (each kernel and
    row loop replaced by a fake here), once per process: a second Simulation of the same
    definition readies nothing, one with other nodes only what it adds."""
    if choice.load()[0] is None:
        pytest.skip("numba is not available")
    monkeypatch.setattr(choice, "_ready", set())
    monkeypatch.setattr(compile_notice, "NOTICE_AFTER", 0.01)
    monkeypatch.setenv(compile_ahead.ENV, "0")  # no second process compiling the real ones
    readied: list[str] = []
    watch = Watch()
    fakes = {name: (lambda n=name: readied.append(n)) for name in backend.WARM}
    fakes["request_rows"] = lambda: (watch.shown.wait(10), readied.append("request_rows"))
    monkeypatch.setattr(backend, "WARM", fakes)
    monkeypatch.setattr(
        backend, "warm_row_loop", lambda model, *_: readied.append(type(model).__name__)
    )
    with compile_notice.watching(watch.factory):
        sim = Simulation(DEFINITIONS / "seek_and_arrive.json", engine="py_trees", kernels="numba")
    assert sim.kernel_name == "numba"
    # Seek and Arrive: two loops (the three arrives share one)
    assert readied == ["request_rows", "accumulate_acted", "integrate", "Seek", "Arrive"]
    of = len(backend.WARM) + 2
    assert capsys.readouterr().err == (
        f"compiling kernels for seek_and_arrive: 5 of {of} (first run only; cached after)\n"
    )
    readied.clear()
    Simulation(DEFINITIONS / "seek_and_arrive.json", engine="py_trees", kernels="numba")
    assert readied == []
    Simulation(DEFINITIONS / "wander.json", engine="py_trees", kernels="numba")
    assert readied == ["uniforms_rows", "wander"]
