"""The `utility` composite's model: children scored by considerations, the best one ticked.

Dave Mark's Infinite Axis Utility System (GDC AI Summit 2010, "Improving AI Decision
Modeling Through Utility Theory", with Kevin Dill; 2013, "Architecture Tricks: Managing
Behaviors in Time, Space, and Depth", with Mike Lewis). Each consideration reads one input
(an open registry: ``leaves/utility_inputs.py``), normalises it by its ``range`` to
``x`` in [0, 1] and maps it through a response curve; a child's score is its weight times
the product of its considerations, each first raised by Mark's compensation factor. The
maths is ``leaves/utility.py``; the engines' control flow ``engines/utility.py`` and
``engines/batch/utility.py``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from behaviortk.format.fields import Finite, Model, Parameterisable, doc
from behaviortk.format.limits import MAX_COUNT
from behaviortk.format.nodes import Input, Node, NodeModel

_CLAMP = "The result is clamped to [0, 1]"


class Linear(Model):
    """``y = m * (x - c) + b``, clamped to [0, 1]."""

    kind: Literal["linear"] = "linear"
    m: Finite = doc("Slope", 1.0)
    c: Finite = doc("Horizontal shift: where the line crosses b", 0.0)
    b: Finite = doc("Vertical shift", 0.0)


class Quadratic(Model):
    """``y = m * (x - c) ** k + b`` (a polynomial of integer degree k), clamped to [0, 1]."""

    kind: Literal["quadratic"] = "quadratic"
    m: Finite = doc("Scale", 1.0)
    k: int = doc("Exponent, an integer 1 to 8 (2: a parabola)", 2, ge=1, le=8)
    c: Finite = doc("Horizontal shift: the parabola's vertex", 0.0)
    b: Finite = doc("Vertical shift", 0.0)


class Logistic(Model):
    """``y = m / (1 + exp(-k * (x - c))) + b``: an S rising around x = c, clamped to [0, 1]."""

    kind: Literal["logistic"] = "logistic"
    m: Finite = doc("Height of the S", 1.0)
    k: Annotated[float, Field(ge=-1000, le=1000, allow_inf_nan=False)] = doc(
        "Steepness (negative: a falling S), -1000 to 1000", 10.0
    )
    c: Finite = doc("Midpoint: where y = m / 2 + b", 0.5)
    b: Finite = doc("Vertical shift", 0.0)


class Logit(Model):
    """``y = m * (c + ln(x' / (1 - x')) / k) + b`` with ``x' = clamp(x, 0.0001, 0.9999)``: the
    logistic's inverse, steep at both ends and flat around x = 0.5; clamped to [0, 1]."""

    kind: Literal["logit"] = "logit"
    m: Finite = doc("Scale", 1.0)
    k: Annotated[float, Field(ge=0.001, le=1000, allow_inf_nan=False)] = doc(
        "Flatness: larger k, flatter middle; 0.001 to 1000", 10.0
    )
    c: Finite = doc("Value at x = 0.5 (before m and b)", 0.5)
    b: Finite = doc("Vertical shift", 0.0)


class Exponential(Model):
    """``y = m * exp(k * (x - c)) + b``, clamped to [0, 1] (defaults: e^-5 at 0 rising to 1 at 1)."""

    kind: Literal["exponential"] = "exponential"
    m: Finite = doc("Scale", 1.0)
    k: Annotated[float, Field(ge=-100, le=100, allow_inf_nan=False)] = doc(
        "Growth rate (negative: decay), -100 to 100", 5.0
    )
    c: Finite = doc("Horizontal shift: where y = m + b", 1.0)
    b: Finite = doc("Vertical shift", 0.0)


class Step(Model):
    """``y = m`` where ``x >= c``, else ``b``; clamped to [0, 1]."""

    kind: Literal["step"] = "step"
    c: Finite = doc("Threshold on the normalised input", 0.5)
    m: Finite = doc("Value at and above the threshold", 1.0)
    b: Finite = doc("Value below the threshold", 0.0)


CURVES = (Linear, Quadratic, Logistic, Logit, Exponential, Step)
Curve = Annotated[
    Linear | Quadratic | Logistic | Logit | Exponential | Step, Field(discriminator="kind")
]


class Consideration(Model):
    """One axis of a child's score: an input, normalised by ``range``, through a curve."""

    input: Input = doc(
        "What to read: `distance` (to a target), `blackboard` (a number key), `speed`, "
        "`neighbours` or `since_success` (ticks since a named node last succeeded)"
    )
    range: Annotated[tuple[Finite, Finite], Field(strict=False)] = doc(
        "[lo, hi] with lo < hi: x = (input - lo) / (hi - lo), clamped to [0, 1]; "
        "an input with no value (NaN) scores 0"
    )
    curve: Curve = doc(
        "Response curve y(x), clamped to [0, 1]: linear m(x-c)+b, quadratic m(x-c)^k+b, "
        "logistic m/(1+e^(-k(x-c)))+b, logit m(c+ln(x/(1-x))/k)+b, exponential m e^(k(x-c))+b, "
        "step (m where x >= c, else b)",
        default_factory=Linear,
    )

    @field_validator("range")
    @classmethod
    def _range_rises(cls, value: tuple[float, float]) -> tuple[float, float]:
        lo, hi = value
        if not lo < hi:
            raise ValueError(f"[{lo}, {hi}] does not rise: write [lo, hi] with lo < hi")
        return value


class UtilityChild(Model):
    """One option of a `utility`: the node to tick, its weight and its considerations."""

    child: Node = doc("The node ticked while this option scores best")
    weight: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False), Parameterisable()] = doc(
        "Multiplies the option's score, 0 to 1,000,000", 1.0
    )
    considerations: list[Consideration] = doc(
        "Scores in [0, 1] multiplied together (with Mark's compensation); none: the weight alone",
        default_factory=list,
        max_length=64,
    )


class Utility(NodeModel):
    """Tick the child with the best score: Dave Mark's Infinite Axis Utility System (GDC AI
    Summit 2010, "Improving AI Decision Modeling Through Utility Theory"; 2013, "Architecture
    Tricks: Managing Behaviors in Time, Space, and Depth").

    Each option is `{"child": NODE, "weight": w, "considerations": [...]}`; a consideration
    is `{"input": INPUT, "range": [lo, hi], "curve": {"kind": ..., params}}`. Its score is
    `s = curve(x)` clamped to [0, 1], with `x = clamp((input - lo) / (hi - lo), 0, 1)` (an
    input with no value scores 0). Curves, with their parameters and defaults:
    linear `m (x - c) + b` (m 1, c 0, b 0); quadratic `m (x - c)^k + b`, k an integer 1 to 8
    (m 1, k 2, c 0, b 0); logistic `m / (1 + e^(-k (x - c))) + b` (m 1, k 10, c 0.5, b 0);
    logit `m (c + ln(x' / (1 - x')) / k) + b`, x' = x clamped to [0.0001, 0.9999] (m 1, k 10,
    c 0.5, b 0); exponential `m e^(k (x - c)) + b` (m 1, k 5, c 1, b 0); step `m` where
    `x >= c`, else `b` (c 0.5, m 1, b 0). An option scores `w * prod(s + (1 - s) (1 - 1/n) s)`
    over its n considerations (Mark's compensation factor, so more considerations do not
    sink a score); none: `w`. The child running since the last tick gets `inertia` added
    (unless it scores 0: a veto stays a veto);
    the best child is ticked (ties: the lower index); a child scoring 0 is never picked and
    when all do the utility fails. With `random_top` k it picks uniformly among the k best
    children from the agent's random stream. A new choice stops the child it replaces
    (INVALID), as py_trees' selectors stop what they interrupt. Inputs: `distance` (to a
    target), `blackboard` (a number key), `speed`, `neighbours`, `since_success`.
    """

    type: Literal["utility"] = "utility"
    inertia: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False), Parameterisable()] = doc(
        "Bonus added to the score of the child running since the last tick (unless it scores "
        "0), so small changes do not flip the choice",
        0.0,
    )
    random_top: int | None = doc(
        "Pick uniformly at random among this many best children (from the per-agent random "
        "stream); null: always the best",
        None,
        ge=1,
        le=MAX_COUNT,
    )
    children: list[UtilityChild] = doc("The options (at least 1)", min_length=1)

    @property
    def random_numbers(self) -> int:
        """Columns of the tick's random table this node reads (``tree/flat.random_numbers``)."""
        return 1 if self.random_top is not None and self.random_top > 1 else 0

    def child_nodes(self) -> list[Any]:
        """The tree nodes under this composite, in order (``tree/flat.child_models``)."""
        return [option.child for option in self.children]


COMPOSITES = (Utility,)
