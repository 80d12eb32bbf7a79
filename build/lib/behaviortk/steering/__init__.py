"""Steering: primitives (one vectorised kernel each), predictors, combiners and the act phase.

Built-ins are registered by ``behaviortk.builtins``; importing this package registers nothing.
"""
