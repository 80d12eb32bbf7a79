"""``behaviortk completion bash|zsh|fish``: the shell code that completes behaviortk commands.

Completion is argcomplete's: the shell calls ``behaviortk`` with the words typed
so far, ``behaviortk.cli.main`` builds its parser and lets argcomplete answer
(commands, flags and their choices, node names for ``explain``, ``*.json``
files and folders for FILE arguments). Install it once, e.g. in ``~/.bashrc``::

    eval "$(behaviortk completion bash)"            # bash
    eval "$(behaviortk completion zsh)"             # zsh (after compinit)
    behaviortk completion fish | source             # fish (config.fish)

``register-python-argcomplete behaviortk`` (argcomplete's own tool) prints the
same code.
"""

from __future__ import annotations

import argparse
from typing import Any

SHELLS = ("bash", "zsh", "fish")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "completion",
        help="print the shell code for tab completion (bash, zsh, fish)",
        description="Print the code that makes your shell complete behaviortk's commands, "
        'flags, node names and definition files. bash: eval "$(behaviortk completion bash)" '
        'in ~/.bashrc; zsh: eval "$(behaviortk completion zsh)" in ~/.zshrc after compinit; '
        "fish: behaviortk completion fish | source in ~/.config/fish/config.fish.",
    )
    parser.add_argument("shell", choices=SHELLS, help="your shell")
    return parser


def run(args: argparse.Namespace) -> int:
    import argcomplete

    print(argcomplete.shellcode(["behaviortk"], shell=args.shell))
    return 0
