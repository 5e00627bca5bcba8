"""The README's two set-up commands stay true: CI runs the second one."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


def _run(command: str, cwd: Path, env: dict, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_readme_commands_succeed_in_a_fresh_clone_and_virtual_environment(tmp_path):
    """Run the demo command verbatim, and the test command with pytest only collecting, in a fresh clone
    inside a fresh virtual environment (the full suite under the test command is what CI itself runs)."""
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: nothing to clone")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=120)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH", "PYTEST_"))}
    env.update(PATH=f"{tmp_path / 'venv' / 'bin'}:{env.get('PATH', '')}", VIRTUAL_ENV=str(tmp_path / "venv"),
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    demo, tests = _commands()
    done = _run(demo, clone, env, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "kafka-metadata-shell" in done.stdout and "Traceback" not in done.stdout + done.stderr
    install, run = tests.split(" && ")
    done = _run(f"{install} && {run} --collect-only -q -p no:cacheprovider", clone, env, timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    collected = re.search(r"(\d+) tests? collected", done.stdout)
    assert collected and int(collected.group(1)) > 1000, done.stdout[-500:]
