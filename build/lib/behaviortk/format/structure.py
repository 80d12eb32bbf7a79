"""Built-in tree structure nodes: composites and decorators (``subtree`` is in ``nodes``).

Models only, registered by ``behaviortk.builtins``: the engines give them py_trees semantics. Leaves (steering,
conditions, actions) live with their implementations and register themselves.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from behaviortk.format.fields import POSITIVE_RANGE, Model, ParamValue, Positive, doc
from behaviortk.format.limits import MAX_COUNT
from behaviortk.format.nodes import Condition, Node, NodeModel

# --- composites ----------------------------------------------------------------------------


class Sequence(NodeModel):
    """Tick children in order until one does not succeed (py_trees Sequence)."""

    type: Literal["sequence"] = "sequence"
    memory: bool = doc(
        "true: resume from the RUNNING child; false: restart from the first child every tick"
    )
    children: list[Node] = doc("Children, ticked in order (at least 1)", min_length=1)


class Selector(NodeModel):
    """Tick children in order until one does not fail: a priority list (py_trees Selector)."""

    type: Literal["selector"] = "selector"
    memory: bool = doc(
        "true: resume from the RUNNING child; false: re-check higher priorities every tick"
    )
    children: list[Node] = doc("Children in priority order (at least 1)", min_length=1)


class Parallel(NodeModel):
    """Tick every child each tick; the policy decides success (py_trees Parallel)."""

    type: Literal["parallel"] = "parallel"
    policy: Literal["success_on_all", "success_on_one", "success_on_selected"] = doc(
        "When the parallel succeeds: all children, any one, or the `selected` ones succeeded"
    )
    synchronise: bool = doc("Do not re-tick children that already succeeded", False)
    selected: list[Annotated[int, Field(ge=0, le=MAX_COUNT)]] = doc(
        "Child indices for success_on_selected (required and non-empty only then)",
        default_factory=list,
    )
    children: list[Node] = doc("Children, all ticked every tick (at least 1)", min_length=1)

    @model_validator(mode="after")
    def _selected_fits(self) -> Parallel:
        if self.policy == "success_on_selected":
            if not self.selected:
                raise ValueError("policy success_on_selected needs a non-empty 'selected' list")
            bad = [i for i in self.selected if not 0 <= i < len(self.children)]
            if bad:
                raise ValueError(
                    f"selected index {bad[0]} is out of range for {len(self.children)} children"
                )
        elif self.selected:
            raise ValueError("'selected' is only allowed with policy success_on_selected")
        return self


COMPOSITES = (Sequence, Selector, Parallel)


# --- decorators ----------------------------------------------------------------------------


class DecoratorModel(NodeModel):
    """A node with exactly one child whose status it transforms."""

    child: Node = doc("The decorated node")


class Inverter(DecoratorModel):
    """SUCCESS <-> FAILURE; RUNNING unchanged."""

    type: Literal["inverter"] = "inverter"


class SuccessIsFailure(DecoratorModel):
    """SUCCESS becomes FAILURE."""

    type: Literal["success_is_failure"] = "success_is_failure"


class FailureIsSuccess(DecoratorModel):
    """FAILURE becomes SUCCESS."""

    type: Literal["failure_is_success"] = "failure_is_success"


class FailureIsRunning(DecoratorModel):
    """FAILURE becomes RUNNING."""

    type: Literal["failure_is_running"] = "failure_is_running"


class RunningIsFailure(DecoratorModel):
    """RUNNING becomes FAILURE."""

    type: Literal["running_is_failure"] = "running_is_failure"


class RunningIsSuccess(DecoratorModel):
    """RUNNING becomes SUCCESS."""

    type: Literal["running_is_success"] = "running_is_success"


class SuccessIsRunning(DecoratorModel):
    """SUCCESS becomes RUNNING."""

    type: Literal["success_is_running"] = "success_is_running"


class Timeout(DecoratorModel):
    """FAILURE if the child is still RUNNING after `duration` of simulated time."""

    type: Literal["timeout"] = "timeout"
    duration: Positive = doc(f"Time allowed, {POSITIVE_RANGE}", unit="s (simulated)")


class Cooldown(DecoratorModel):
    """After the child completes, FAILURE without ticking it for `duration`."""

    type: Literal["cooldown"] = "cooldown"
    duration: Positive = doc(f"Rest time after completion, {POSITIVE_RANGE}", unit="s (simulated)")


class Repeat(DecoratorModel):
    """Restart the child on SUCCESS until it succeeded `num_success` times."""

    type: Literal["repeat"] = "repeat"
    num_success: Annotated[int, Field(ge=1, le=MAX_COUNT)] | Literal[-1] = doc(
        f"Successes needed, 1 to {MAX_COUNT:,}, or -1 to repeat forever"
    )


class Retry(DecoratorModel):
    """Restart the child on FAILURE until it failed `num_failures` times."""

    type: Literal["retry"] = "retry"
    num_failures: int = doc(f"Failures tolerated, 1 to {MAX_COUNT:,}", ge=1, le=MAX_COUNT)


class OneShot(DecoratorModel):
    """Run the child to completion once, then keep returning that result."""

    type: Literal["one_shot"] = "one_shot"
    policy: Literal["on_completion", "on_successful_completion"] = doc(
        "Latch on any completion, or only on SUCCESS", "on_completion"
    )


class EternalGuard(DecoratorModel):
    """Check `condition` every tick; while it fails, stop the child and return FAILURE."""

    type: Literal["eternal_guard"] = "eternal_guard"
    condition: Condition = doc("A condition leaf re-checked every tick")


DECORATORS = (
    Inverter,
    SuccessIsFailure,
    FailureIsSuccess,
    FailureIsRunning,
    RunningIsFailure,
    RunningIsSuccess,
    SuccessIsRunning,
    Timeout,
    Cooldown,
    Repeat,
    Retry,
    OneShot,
    EternalGuard,
)


class ParamSpec(Model):
    """Declaration of a tree parameter."""

    default: ParamValue | None = doc(
        "Value used when the caller passes none (null = required)", None
    )
    description: str = doc("What the parameter means, for people reading the file", "")
