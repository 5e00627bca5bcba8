"""controller/image opens no file: the import-linter contract forbids the file modules (os, io, mmap, pathlib, ...);
this test covers what import-linter cannot see, the builtin open() and its relatives called by name."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

IMAGE = Path(__file__).resolve().parents[3] / "controller" / "image"
FILE_BUILTINS = {"open", "__import__"}


def _calls_by_name(tree: ast.AST) -> list[tuple[int, str]]:
    return [(node.lineno, node.func.id) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FILE_BUILTINS]


@pytest.mark.parametrize("module", sorted(IMAGE.glob("*.py")), ids=lambda p: p.name)
def test_no_image_module_calls_open(module):
    assert _calls_by_name(ast.parse(module.read_text(), str(module))) == []


def test_the_check_finds_a_call_of_open():
    assert _calls_by_name(ast.parse("with open('x') as f:\n    f.read()\n")) == [(1, "open")]
