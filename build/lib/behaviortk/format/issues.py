"""Issues found in a definition, and the exception that carries them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Issue:
    """One mistake: where it is (file, line, column, JSON Pointer), what it is, and its kind."""

    file: str
    line: int
    col: int
    pointer: str
    message: str
    kind: str

    def __str__(self) -> str:
        pointer = printable(self.pointer) or "/"
        message = printable(self.message)
        return f"{self.file}:{self.line}:{self.col}: {pointer}: {message} [{self.kind}]"


def printable(text: str) -> str:
    """``text`` with control characters escaped (``\\r``), so one issue stays one line
    whatever names the file uses."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class DefinitionError(Exception):
    """A definition could not be loaded; ``issues`` lists every mistake found."""

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = list(issues)
        super().__init__("\n".join(str(i) for i in self.issues))


def escape_token(token: str | int) -> str:
    """One JSON Pointer reference token (RFC 6901: '~' -> '~0', '/' -> '~1')."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer_of(parts: tuple[str | int, ...] | list[str | int]) -> str:
    return "".join("/" + escape_token(p) for p in parts)
