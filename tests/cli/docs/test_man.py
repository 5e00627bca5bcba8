"""What a new user finds after the README's editable install: `kraftsman man` shows and installs the man pages
(an editable install brings none), the README's first screen says how to get them and the completion, and paths
complete after a shell variable (`$DATA/`) in a real bash, for flags and kafka-metadata-export's PATH alike."""
from __future__ import annotations

import io
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.docs.tool import NAMES, run
from kraftsman.cli.main import run as umbrella

from ..test_terminal_session import Pane

REPO = Path(__file__).resolve().parents[3]


def man(argv, environ=None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, list(argv), Environment(stdout=out, stderr=err, env=dict(environ or {})),
                         prog="kraftsman man")
    return status, out.getvalue(), err.getvalue()


def test_man_prints_a_tools_page_off_a_terminal():
    status, out, err = man(["kafka-storage"])
    assert (status, err) == (0, "")
    assert out.startswith('.TH "KAFKA\\-STORAGE" "1"') and out == (REPO / "man" / "kafka-storage.1").read_text()
    assert man([])[1].startswith('.TH "KRAFTSMAN" "1"')        # no tool: the umbrella's page


def test_man_refuses_an_unknown_page():
    status, out, err = man(["kafka-nope"])
    assert (status, out) == (64, "") and err.startswith("kraftsman man: no man page for 'kafka-nope' (pages: kraftsman")


def test_man_install_writes_every_page_where_man_looks(tmp_path):
    status, out, _ = man(["--install"], {"XDG_DATA_HOME": str(tmp_path)})
    folder = tmp_path / "man" / "man1"
    assert status == 0 and out == f"installed {len(NAMES)} man pages in {folder} (man kafka-storage, man kraftsman, ...)\n"
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{n}.1" for n in NAMES)
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    time.sleep(0.01)
    man(["--install"], {"XDG_DATA_HOME": str(tmp_path)})
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before     # a second run changes nothing
    if shutil.which("man"):
        found = subprocess.run(["man", "-w", "kafka-dump-log"], capture_output=True, text=True,
                               env={"MANPATH": str(tmp_path / "man"), "PATH": "/usr/bin:/bin"})
        assert found.stdout.strip() == str(folder / "kafka-dump-log.1")


def test_the_umbrella_lists_man():
    out = io.StringIO()
    assert umbrella(["--help"], Environment(stdout=out, stderr=io.StringIO(), env={})) == 0
    assert re.search(r"(?m)^  man\s+Show a tool's man page", out.getvalue())


def test_the_readme_first_screen_says_how_to_get_completion_and_man_pages():
    first_screen = "\n".join((REPO / "README.md").read_text().splitlines()[:25])
    assert "kraftsman --install-completion" in first_screen and "kraftsman man --install" in first_screen


@pytest.mark.skipif(shutil.which("tmux") is None or shutil.which("kafka-metadata-export") is None,
                    reason="needs tmux and kraftsman's console scripts on PATH")
@pytest.mark.parametrize("script, typed, completed", [
    ("kafka-metadata-export", "kafka-metadata-export $DATA/lo", "kafka-metadata-export $DATA/logs/"),
    ("kafka-dump-log", "kafka-dump-log --files $DATA/logs/0", "kafka-dump-log --files $DATA/logs/00000000000000000000.log"),
    ("kafka-storage", "kafka-storage info -c ${DATA}/ser", "kafka-storage info -c ${DATA}/server.properties"),
])
def test_paths_complete_after_a_shell_variable_in_bash(tmp_path, script, typed, completed):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "00000000000000000000.log").write_bytes(b"")
    (tmp_path / "server.properties").write_text("")
    pane = Pane(f"kraftsman-paths-{time.monotonic_ns()}", tmp_path)
    try:
        pane.send(f"source {REPO / 'completions' / (script + '.bash')}; export DATA={tmp_path}; clear")
        pane.send(typed, enter=False)
        pane.key("Tab")
        pane.wait_for(re.escape(completed), timeout=20)
    finally:
        pane.close()
