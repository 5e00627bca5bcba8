"""The README's two set-up commands stay true: CI runs the second one."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    return re.findall(r"```bash\n(.+?)\n```", text)[:2]


def test_readme_starts_with_demo_and_test_commands():
    demo, tests = _commands()
    assert demo.endswith("kraftsman-demo")
    assert tests.endswith("&& pytest")


def test_ci_runs_the_readme_test_command():
    _, tests = _commands()
    install, run = tests.split(" && ")
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert install in ci and run in ci
