"""The controller loads its own modules with import statements only, so every edge is seen (import-linter, the
circle walk), and every quorum part registers its handlers the same way."""
from __future__ import annotations

import ast
from pathlib import Path

from kraftsman.controller.quorum import controller

ROOT = Path(__file__).resolve().parents[2] / "controller"


def test_no_module_of_the_controller_is_loaded_through_importlib():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("import_module", "__import__") or \
                    isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found


def test_every_quorum_part_names_its_handlers_and_read_only_apis():
    q = controller.QuorumController()
    for part in (*controller.MODULES, q.cluster):
        assert isinstance(part.HANDLERS, dict) and isinstance(part.READ_ONLY, frozenset)
        assert part.READ_ONLY <= part.HANDLERS.keys()
    assert q.read_only <= q.handlers.keys()
