"""Every module a header names exists: the docstring atop each module of cli/, controller/, shell/ and storage/ (its
"Rules:") names other modules as files (`wait.py`, `controller/image/nodes.py`), as dotted paths
(`kraftsman.controller.client.admin`) or, before the tools had packages, as `<tool>_<module>` (`cluster_ops`);
a renamed or removed module leaves such names stale."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("cli", "controller", "shell", "storage")
TOOLS = sorted(p.parent.name for p in (REPO / "cli").glob("*/__init__.py"))
FILE = re.compile(r"(?<![\w/.<>-])([A-Za-z][\w-]*(?:/[\w-]+)*\.py)\b")
DOTTED = re.compile(r"\bkraftsman((?:\.(?:cli|controller|shell|storage))(?:\.\w+)+)")
FLAT = re.compile(rf"\b({'|'.join(TOOLS)})_([a-z]\w*)\b")


def modules() -> list[Path]:
    return sorted(p for top in PACKAGES for p in (REPO / top).rglob("*.py"))


def header(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def _file_exists(path: Path, name: str) -> bool:
    """A path resolves from the module's folder or one above it; a bare file name may sit anywhere in its layer."""
    folders = [path.parent, *path.parent.parents]
    if any((folder / name).is_file() for folder in folders if REPO in (folder, *folder.parents)):
        return True
    top = REPO / path.relative_to(REPO).parts[0]
    return "/" not in name and any(top.rglob(name))


def _defines(module: Path, name: str) -> bool:
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _dotted_exists(parts: list[str]) -> bool:
    """kraftsman.<layer>.<package...>.<module>[.<name>]: the module exists (and defines the name)."""
    for k in range(len(parts), 0, -1):
        base = REPO.joinpath(*parts[:k])
        module = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if module.is_file():
            rest = parts[k:]
            return not rest or (len(rest) == 1 and _defines(module, rest[0]))
    return False


def stale_names(path: Path, text: str | None = None) -> list[str]:
    """Return the names in `path`'s header (or in `text`, as if it were that header) that name no module."""
    text, found = header(path) if text is None else text, []
    found += [f"{name} (no such file)" for name in FILE.findall(text) if not _file_exists(path, name)]
    found += [f"kraftsman{dotted} (no such module)" for dotted in DOTTED.findall(text)
              if not _dotted_exists(dotted.strip(".").split("."))]
    found += [f"{tool}_{module} (the module is cli/{tool}/{module}.py)" for tool, module in FLAT.findall(text)
              if (REPO / "cli" / tool / f"{module}.py").is_file()]
    return found


def test_the_headers_name_modules():
    assert sum("Rules:" in header(p) for p in modules()) > 100


@pytest.mark.parametrize("top", PACKAGES)
def test_every_module_a_header_names_exists(top):
    stale = {str(p.relative_to(REPO)): stale_names(p) for p in modules() if p.parts[len(REPO.parts)] == top}
    assert {k: v for k, v in stale.items() if v} == {}


def test_a_stale_name_is_found():
    """The check itself: each kind of stale name is reported, live ones are not."""
    text = ("Rules:\n- see docs.py, cluster_commands, kraftsman.cli.cluster.ops and kraftsman.cli.cluster.commands.nothing;"
            " but wait.py, cluster/brokers.py, kraftsman.cli.common.admin.admin_call, cluster_id.")
    assert stale_names(REPO / "cli" / "cluster" / "tool.py", text) == [
        "docs.py (no such file)", "kraftsman.cli.cluster.ops (no such module)",
        "kraftsman.cli.cluster.commands.nothing (no such module)",
        "cluster_commands (the module is cli/cluster/commands.py)"]
