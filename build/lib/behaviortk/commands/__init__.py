"""Subcommands of the ``behaviortk`` CLI, one module each (see ``behaviortk.cli``)."""
