"""Steering: primitives (one vectorised kernel each), predictors, combiners and the act phase.

Importing the package registers every built-in primitive, predictor and combiner.
"""

from behaviortk.steering import combiners, predictors, primitives
from behaviortk.steering.context import Steering, SteeringContext
from behaviortk.steering.debug import DebugBuffer

__all__ = ["DebugBuffer", "Steering", "SteeringContext", "combiners", "predictors", "primitives"]
