"""No import circles: every import in cli/, shell/, controller/ and storage/ is walked, function-level ones
included (import-linter sees only layers), and the strongly connected groups of modules are listed.

KNOWN is a ratchet, not a hiding place: it must equal what is found, so a new circle fails and so does a
removed one that is still listed. It is empty now.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = {"cli": "kraftsman.cli", "shell": "kraftsman.shell", "controller": "kraftsman.controller",
            "storage": "kraftsman.storage"}
KNOWN: dict[str, list[list[str]]] = {}   # none left: cli/ had five, controller/ two


def modules(folder: str, package: str) -> dict[str, Path]:
    """Return module name -> file for every .py under `folder`."""
    found = {}
    for path in (REPO / folder).rglob("*.py"):
        parts = list(path.relative_to(REPO / folder).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join([package, *parts])] = path
    return found


def imports(name: str, path: Path, known: dict) -> set[str]:
    """Return the modules of `known` that `name` imports anywhere in its file."""
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                target = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))
            found.update(f"{target}.{a.name}" if f"{target}.{a.name}" in known else target for a in node.names)
    return {m for m in found if m in known and m != name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected groups of more than one module (Tarjan), each sorted, sorted."""
    index, low, stack, on, groups, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(groups)


@pytest.mark.parametrize("folder", sorted(PACKAGES))
def test_no_import_circles(folder):
    known = modules(folder, PACKAGES[folder])
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert circles(graph) == KNOWN.get(folder, [])


def test_the_walk_finds_a_function_level_circle(tmp_path):
    a = {"p.a": {"p.b"}, "p.b": {"p.a"}, "p.c": {"p.a"}}
    assert circles(a) == [["p.a", "p.b"]]


@pytest.mark.parametrize("folder", sorted(PACKAGES))
def test_no_private_name_is_imported_from_another_module(folder):
    """A name starting with _ stays in its module: `from x import _y` (without `as`) is a private import."""
    found = []
    for name, path in modules(folder, PACKAGES[folder]).items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                found += [f"{name}: {alias.name}" for alias in node.names
                          if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert not found
