"""A new user's path in a real terminal (tmux): demo, --help, Tab completion, a shell session, dump-log.

Each step types into a bash running in a tmux pane and reads the screen back (capture-pane), as a person
would see it. Skips when tmux or the console scripts are not installed.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SESSION = f"kraftsman-test-{time.monotonic_ns()}"

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None or shutil.which("kraftsman-demo") is None,
                                reason="needs tmux and kraftsman's console scripts on PATH")


class Pane:
    """One tmux pane running bash, driven by keystrokes."""

    def __init__(self, name: str, cwd: Path):
        self.name = name
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", str(cwd),
                        "bash --norc --noprofile"], check=True)
        self.send("export PS1='$ ' HISTFILE=/dev/null KRAFTSMAN_SHELL_HISTORY=/dev/null TERM=xterm-256color")
        self.send("clear")

    def send(self, text: str, enter: bool = True) -> None:
        """Type `text` (literally), then Enter unless told otherwise."""
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)
        if enter:
            subprocess.run(["tmux", "send-keys", "-t", self.name, "Enter"], check=True)

    def key(self, *keys: str) -> None:
        """Press tmux key names (Tab, C-d, ...)."""
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def screen(self) -> str:
        """Return the pane's text, with its scrollback."""
        return subprocess.run(["tmux", "capture-pane", "-p", "-J", "-S", "-2000", "-t", self.name],
                              check=True, capture_output=True, text=True).stdout

    def wait_for(self, pattern: str, timeout: float = 30) -> str:
        """Wait until the regular expression `pattern` matches the screen; return the screen."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if re.search(pattern, screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{pattern!r} never appeared; the screen was:\n{self.screen()}")

    def clear(self) -> None:
        """Clear the screen and the scrollback."""
        self.send("clear")
        subprocess.run(["tmux", "clear-history", "-t", self.name], check=True)
        time.sleep(0.2)

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], check=False, capture_output=True)


@pytest.fixture
def pane(tmp_path):
    p = Pane(SESSION, tmp_path)
    yield p
    p.close()


def test_new_users_path_in_a_terminal(pane, tmp_path):
    demo_dir = tmp_path / "demo"
    pane.send(f"kraftsman-demo --directory {demo_dir}; echo demo-exit=$?")
    screen = pane.wait_for(r"demo-exit=\d", timeout=120)
    assert "demo-exit=0" in screen and "Traceback" not in screen
    assert "created topic orders" in screen and "unregistered broker 1003" in screen

    pane.clear()
    pane.send("kafka-storage --help")
    screen = pane.wait_for("random-uuid")
    assert "The Kafka storage tool." in screen and "format" in screen

    pane.clear()
    pane.send(f"source {REPO / 'completions' / 'kafka-storage.bash'}")
    pane.send("kafka-storage for", enter=False)
    pane.key("Tab")
    pane.wait_for("kafka-storage format")
    pane.key("C-u")

    log_dir = demo_dir / "node-1" / "metadata" / "__cluster_metadata-0"
    pane.clear()
    pane.send(f"kafka-metadata-shell --directory {log_dir}")
    pane.wait_for(r"(?m)^>>\s*$")              # Kafka's prompt (trailing space trimmed)
    pane.send("cd /ima", enter=False)
    pane.key("Tab")                             # completes to /image/
    pane.wait_for("cd /image/")
    pane.send("topics/byName")
    pane.send("ls")
    pane.wait_for(r"(?m)^orders")
    pane.send("exit")
    screen = pane.wait_for(r"(?m)^\$ $", timeout=10)   # back at bash's prompt
    assert "Traceback" not in screen

    pane.clear()
    segment = log_dir / "00000000000000000000.log"
    pane.send(f"kafka-dump-log --cluster-metadata-decoder --files {segment} | grep -c TOPIC_RECORD; "
              "echo dump-exit=${PIPESTATUS[0]}")
    screen = pane.wait_for(r"dump-exit=\d")
    assert "dump-exit=0" in screen
    counts = [line for line in screen.splitlines() if line.strip().isdigit()]
    assert counts and int(counts[-1]) >= 1, screen
