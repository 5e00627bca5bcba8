"""controller/raft stays sans-I/O: no asyncio, socket, time, random or file access (import-linter
states the same contract; this test also catches open() and os/pathlib use)."""
from __future__ import annotations

import ast
from pathlib import Path

RAFT = Path(__file__).resolve().parents[3] / "controller" / "raft"
FORBIDDEN = {"asyncio", "socket", "time", "random", "os", "pathlib", "io", "threading", "select", "selectors"}


def _imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


def test_no_io_modules_imported():
    for path in RAFT.glob("*.py"):
        bad = FORBIDDEN.intersection(_imports(ast.parse(path.read_text())))
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_no_open_calls():
    for path in RAFT.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("open", "print", "input"), f"{path.name} calls {node.func.id}()"


def test_modules_are_small_and_start_with_rules():
    for path in RAFT.glob("*.py"):
        text = path.read_text()
        if path.name == "__init__.py":
            continue
        assert "Rules:" in text.split('"""')[1], f"{path.name} lacks a Rules: block"
        assert text.count("\n") <= 420, f"{path.name} has {text.count(chr(10))} lines"
