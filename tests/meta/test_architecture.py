"""The core's imports follow the pipeline: no import cycles, and no stage imports a later one.

Every ``import`` of every module of ``ldpbench/`` counts, those inside functions too (a function-level
import hides a cycle from Python, not from a reader). ``LAYERS`` lists the stage packages in
pipeline order (docs/architecture.md explains each); a module may import its own layer's modules
and lower layers', never a higher one: the library never imports the command line, the engine
never imports the leaderboard, the results folder or a report.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "ldpbench"

#: The stages, lowest first. A module belongs to the longest prefix that names it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("ldpbench.errors", "ldpbench.util", "ldpbench.stats", "ldpbench.privacy"),  # helpers every stage uses
    ("ldpbench.params", "ldpbench.types", "ldpbench.hookspecs"),  # the plugin contract
    ("ldpbench.boundary",),  # where the harness meets plugin code
    ("ldpbench.loading",),  # 1. find, load, register plugins
    ("ldpbench.spec",),  # 2. YAML -> Spec -> cells
    ("ldpbench.engine",),  # 3. one cell: everything that shapes a number
    ("ldpbench.results",),  # 4. the versioned results folder
    ("ldpbench.leaderboard",),  # 5. aggregate, rank, render, the gate
    ("ldpbench.report",),  # 6. reports for people
    ("ldpbench.runner", "ldpbench.api", "ldpbench"),  # the index and the public surface
    ("ldpbench.audit",),  # privacy audits of a plugin
    ("ldpbench.testing",),  # the conformance kit and the pytest gate
    ("ldpbench.scaffold",),  # new-plugin
    ("ldpbench.cli", "ldpbench.__main__"),  # the command line
)


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package at ``root``, by dotted name."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The modules of the package one module imports (any import statement, at any depth)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            candidates = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in known:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                yield candidate
                break


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    known = modules(root)
    return {name: set(_targets(name, path, known)) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def layer(module: str) -> int:
    matches = [
        (len(prefix), i)
        for i, names in enumerate(LAYERS)
        for prefix in names
        if module == prefix or module.startswith(prefix + ".")
    ]
    assert matches, f"{module} belongs to no layer: add its package to LAYERS (and to docs/architecture.md)"
    return max(matches)[1]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{importer} imports {imported}"
        for importer, targets in graph.items()
        for imported in targets
        if layer(imported) > layer(importer)
    )


def test_there_are_no_import_cycles():
    graph = import_graph()
    assert len(graph) > 100
    assert cycles(graph) == []


def test_no_stage_imports_a_later_stage():
    assert upward_imports(import_graph()) == []


def test_the_checks_find_what_they_look_for():
    # A test that cannot fail is a defect: planted cycles and an upward import are caught.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d2"}, "d2": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert upward_imports({"ldpbench.engine.cell": {"ldpbench.cli"}}) == ["ldpbench.engine.cell imports ldpbench.cli"]
    assert upward_imports({"ldpbench.cli": {"ldpbench.engine.cell"}}) == []
