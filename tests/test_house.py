"""The skeleton's rules, checked on the source: no import loops, a format package that stands alone.

Every ``import`` counts, including those inside functions: a loop kept alive
only by deferred imports is still a loop. The one edge the graph does not
show is ``registry.load_plugin``'s import by name of the built-in plugin,
the same door every plugin uses. The floors the package's units stand on
(every import goes down or sideways) are ``tests/test_layers.py``'s.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

PACKAGE = Path(__file__).resolve().parents[1] / "behaviortk"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


class Arrow(NamedTuple):
    """One ``import`` of a behaviortk module by another, where it is written."""

    source: str
    target: str
    path: Path
    line: int
    text: str


def import_arrows() -> list[Arrow]:
    """Every import of a behaviortk module in the package, with its file, line and text."""
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    arrows: list[Arrow] = []
    for name, path in sorted(files.items()):
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [
                    f"{node.module}.{alias.name}"
                    if f"{node.module}.{alias.name}" in files
                    else node.module
                    for alias in node.names
                ]
            resolved = []
            for target in targets:
                while target not in files and "." in target:
                    target = target.rsplit(".", 1)[0]
                resolved.append(target)
            for target in dict.fromkeys(resolved):  # one arrow per module a statement names
                if target in files and target != name and target != "behaviortk":
                    text = " ".join((ast.get_source_segment(source, node) or "").split())
                    arrows.append(Arrow(name, target, path, node.lineno, text))
    return arrows


def import_graph() -> dict[str, set[str]]:
    """behaviortk module -> behaviortk modules it imports anywhere in its source."""
    graph: dict[str, set[str]] = {module_name(p): set() for p in PACKAGE.rglob("*.py")}
    for arrow in import_arrows():
        graph[arrow.source].add(arrow.target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import loop as a list of modules, or [] (iterative DFS)."""
    state: dict[str, int] = {}
    for start in sorted(graph):
        if start in state:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        chain = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                chain.pop()
                stack.pop()
            elif state.get(child) == 1:
                return [*chain[chain.index(child) :], child]
            elif child not in state:
                state[child] = 1
                chain.append(child)
                stack.append((child, iter(sorted(graph[child]))))
    return []


def test_the_graph_is_read_from_the_source() -> None:
    graph = import_graph()
    assert "behaviortk.registry" in graph["behaviortk.format.nodes"]
    assert "behaviortk.engines.base" in graph["behaviortk.engines.batch.engine"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_loops_even_through_imports_inside_functions() -> None:
    assert find_cycle(import_graph()) == []


def test_format_imports_only_itself_the_registry_and_vector_helpers() -> None:
    allowed = {"behaviortk.registry", "behaviortk.vec"}
    for name, imported in import_graph().items():
        if name.startswith("behaviortk.format"):
            above = {m for m in imported if not m.startswith("behaviortk.format")} - allowed
            assert not above, f"{name} imports {sorted(above)}"


def test_nothing_imports_the_builtins_module() -> None:
    """It is loaded by name as a plugin, so it can import everything without a loop."""
    importers = [n for n, imported in import_graph().items() if "behaviortk.builtins" in imported]
    assert importers == []
