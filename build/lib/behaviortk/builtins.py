"""The built-in plugin: registers every built-in node type, predictor and target kind.

Loaded by name (``registry.BUILTINS``) through the same door as any plugin:
``registry.load_plugin`` imports this module and calls :func:`register`.
Nothing in the package imports it, so no import loop can pass through it.
"""

from __future__ import annotations

from behaviortk.format.structure import COMPOSITES, DECORATORS
from behaviortk.leaves import actions, conditions, memory
from behaviortk.registry import Registries
from behaviortk.sense import derived_targets, target_kinds
from behaviortk.steering import combiners, flow, predictors, primitives
from behaviortk.studies import metrics


def register(registries: Registries) -> None:
    for composite in COMPOSITES:
        registries.composites.register(composite)
    for decorator in DECORATORS:
        registries.decorators.register(decorator)
    for module in (
        primitives,
        flow,
        combiners,
        conditions,
        actions,
        memory,
        predictors,
        target_kinds,
        derived_targets,
        metrics,
    ):
        module.register(registries)
