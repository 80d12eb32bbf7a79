"""Import every module that registers built-in node types.

The node union, the JSON Schema and the loader import this first, so all
built-ins are known before any file is validated. Add one line per module.
"""

from __future__ import annotations

import behaviortk.actions
import behaviortk.conditions
import behaviortk.format.tree
import behaviortk.steering  # noqa: F401  (primitives, combiners, predictors)
