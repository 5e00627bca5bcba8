"""Packaging guards: every package folder is listed in pyproject, and the layering contracts hold."""
from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = {"cli": "kraftsman.cli", "controller": "kraftsman.controller", "shell": "kraftsman.shell",
         "storage": "kraftsman.storage"}


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_top_level_layout_is_fixed():
    allowed = {"pyproject.toml", "cli", "controller", "storage", "shell", "tests", "completions", "man",
               "README.md", ".ci", ".gitignore", ".git"}
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True).stdout.split()
    tops = {p.split("/")[0] for p in tracked}
    assert tops <= allowed, tops - allowed


def test_every_package_folder_is_listed():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = set()
    for folder, package in ROOTS.items():
        for init in (REPO / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / folder)
            found.add(".".join([package, *rel.parts]))
    assert found == listed


def test_console_scripts_point_at_existing_modules():
    for name, target in _pyproject()["project"]["scripts"].items():
        module = target.split(":")[0]
        parts = module.split(".")
        assert parts[1] in ROOTS, name
        assert (REPO.joinpath(*parts[1:]).with_suffix(".py")).is_file(), name


def test_import_contracts_hold():
    lint = shutil.which("lint-imports")
    if lint is None:
        pytest.skip("import-linter is not installed (pip install '.[test]')")
    result = subprocess.run([lint], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_console_scripts_are_the_registrys():
    """[project.scripts] lists exactly the tools of cli/app.py, the umbrella and the helper scripts."""
    from kraftsman.cli import app

    assert _pyproject()["project"]["scripts"] == app.console_scripts()


# the distribution of each module a test may import only when present (pytest.importorskip)
OPTIONAL_MODULES = {"confluent_kafka": "confluent-kafka", "cryptography": "cryptography", "pexpect": "pexpect",
                    "pyspark": "pyspark", "pyarrow": "pyarrow", "pandas": "pandas", "matplotlib": "matplotlib"}


def test_every_module_a_test_skips_without_is_in_an_extra_ci_installs():
    import re

    extras = _pyproject()["project"]["optional-dependencies"]
    installed = {re.split(r"[<>=!;\[ ]", spec, maxsplit=1)[0] for name in ("test", "spark") for spec in extras[name]}
    skipped_without = set()
    for path in (REPO / "tests").rglob("*.py"):
        skipped_without |= {m.split(".")[0] for m in re.findall(r'importorskip\("([\w.]+)"', path.read_text())}
    assert skipped_without, "no importorskip found: the pattern is stale"
    unknown = skipped_without - set(OPTIONAL_MODULES)
    assert not unknown, f"name the distribution of {sorted(unknown)} in OPTIONAL_MODULES"
    missing = {OPTIONAL_MODULES[m] for m in skipped_without} - installed
    assert not missing, f"CI would skip the tests needing {sorted(missing)}: add them to the test or spark extra"
