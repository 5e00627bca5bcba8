"""How the tools are built: one typer function per sub-command that calls its implementation, no second dispatch on
the sub-command's name (no COMMANDS table, no `_run(ctx, "name", ...)`, no runner slot), Kafka's Admin calls in
controller/client/admin.py, tests that mirror cli/."""
from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
from pathlib import Path

import pytest

from kraftsman.cli.docs import pages

REPO = Path(__file__).resolve().parents[2]
TOOLS = [c for c in pages.commands() if c.subcommand is not None]


def sub_commands() -> list[tuple[str, str, object]]:
    """Return (tool, sub-command, typer function) for every sub-command of every tool."""
    found = []
    for command in TOOLS:
        group = pages.click_of(command)
        for name, sub in getattr(group, "commands", {}).items():
            found.append((command.name, name, inspect.unwrap(sub.callback)))
    return found


SUB_COMMANDS = sub_commands()


def _body(fn) -> list[ast.stmt]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    body = tree.body[0].body
    return body[1:] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else body


def test_the_tools_have_sub_commands():
    assert {tool for tool, _, _ in SUB_COMMANDS} >= {"kafka-storage", "kafka-cluster", "kafka-metadata-quorum",
                                                       "kafka-features"}


@pytest.mark.parametrize("tool, name, fn", SUB_COMMANDS, ids=[f"{t} {n}" for t, n, _ in SUB_COMMANDS])
def test_a_sub_command_names_itself_once(tool, name, fn):
    """The name is the decorator's: the function never hands it on to be dispatched again."""
    strings = [n.value for stmt in _body(fn) for n in ast.walk(stmt) if isinstance(n, ast.Constant)]
    assert name not in strings, f"{fn.__module__}.{fn.__qualname__} dispatches on {name!r}"


def _names(fn) -> dict:
    """Return the names the function's body can see: its module's, and those it imports itself (lazily)."""
    names = dict(fn.__globals__)
    for node in (n for stmt in _body(fn) for n in ast.walk(stmt) if isinstance(n, ast.ImportFrom)):
        module = importlib.import_module("." * node.level + (node.module or ""), fn.__module__.rsplit(".", 1)[0])
        names.update({alias.asname or alias.name: getattr(module, alias.name) for alias in node.names})
    return names


@pytest.mark.parametrize("tool, name, fn", SUB_COMMANDS, ids=[f"{t} {n}" for t, n, _ in SUB_COMMANDS])
def test_a_sub_command_calls_its_implementation(tool, name, fn):
    """The typer function hands a function of its own tool's package (not itself, not cli.common's) to the call
    that runs it (imported at the top of its module, or inside it to keep --help light)."""
    package = fn.__module__.rsplit(".", 1)[0]
    names, handed = _names(fn), []
    for node in (n for stmt in _body(fn) for n in ast.walk(stmt) if isinstance(n, ast.Call)):
        for arg in node.args:
            try:
                value = eval(compile(ast.Expression(arg), "<arg>", "eval"), names)  # names and attributes
            except Exception:  # noqa: BLE001 (locals(), literals: not a function reference)
                continue
            if inspect.isfunction(value) and value is not fn and value.__module__.startswith(package + "."):
                handed.append(value)
    assert handed, f"{fn.__module__}.{fn.__qualname__} calls no implementation of {package}"


def _cli_modules():
    return sorted((REPO / "cli").rglob("*.py"))


def test_no_table_maps_sub_command_names_to_functions():
    """No dict literal anywhere in cli/ is keyed by two or more sub-command names of one tool."""
    names = {}
    for tool, name, _ in SUB_COMMANDS:
        names.setdefault(tool, set()).add(name)
    tables = []
    for path in _cli_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
                if any(len(keys & tool_names) >= 2 for tool_names in names.values()):
                    tables.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert tables == []


def test_no_commands_table_or_runner_slot():
    """No module of cli/ defines COMMANDS or a `_runner` slot; no function takes a sub-command name to dispatch on."""
    found = []
    for path in _cli_modules():
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) else []
            found += [f"{path.relative_to(REPO)}: {t.id}" for t in targets
                      if isinstance(t, ast.Name) and t.id in ("COMMANDS", "_runner")]
            if isinstance(node, ast.FunctionDef) and {"command", "values"} <= {a.arg for a in node.args.args}:
                found.append(f"{path.relative_to(REPO)}: {node.name}(..., command, values)")
    assert found == []


def test_kafkas_admin_calls_live_in_the_client_not_in_the_tools():
    """No tool package has an ops module of its own; every Admin call is a method of controller.client.admin."""
    assert sorted(str(p.relative_to(REPO)) for p in (REPO / "cli").glob("*/ops.py")) == []
    from kraftsman.controller.client.admin import Admin

    calls = {name for name, _ in inspect.getmembers(Admin, inspect.isfunction) if not name.startswith("_")}
    assert calls >= {"describe_cluster", "unregister_broker", "describe_metadata_quorum", "add_raft_voter",
                     "remove_raft_voter", "describe_features", "update_features"}


def test_cli_tests_mirror_the_tool_packages():
    """tests/cli/<tool>/ holds a tool's tests; tests/cli/ itself only what spans the tools."""
    packages = {p.parent.name for p in (REPO / "cli").glob("*/__init__.py")}
    folders = {p.name for p in (REPO / "tests" / "cli").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders <= packages, folders - packages
    named = [p.name for p in (REPO / "tests" / "cli").glob("test_*.py")
             if any(p.name.startswith(f"test_{tool}_") or p.name == f"test_{tool}.py" for tool in packages)]
    assert named == [], "a tool's tests belong in tests/cli/<tool>/"
