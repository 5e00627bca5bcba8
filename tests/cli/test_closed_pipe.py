"""A closed pipe is success: `set -o pipefail; <tool> ... | head -1` exits 0, silently, for every tool that streams.

Each row runs the installed console script in a real bash with pipefail, its stdout read by `head -1`, which
exits after one line while the tool still has megabytes to write (EPIPE). Ansible's shell module and CI run
so; a success that exits 1 there fails the task.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .shell.shell_fixtures import generated_log

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    """Return a __cluster_metadata-0 folder whose one segment decodes to about 16 MB of text (46,500 records:
    more than one of dump-log's output chunks, so a write follows head's exit)."""
    folder = tmp_path_factory.mktemp("pipe") / "__cluster_metadata-0"
    folder.mkdir()
    generated_log(folder / "00000000000000000000.log", topics=1500, partitions=30)
    return folder


def _dump(*extra: str) -> str:
    return "kafka-dump-log --cluster-metadata-decoder --files {log} " + " ".join(extra)


STREAMING = [
    _dump(),
    _dump("--output jsonl"),
    _dump("--output json"),
    _dump("--output yaml"),
    "kafka-dump-log --files {log}",
    "kafka-dump-log --files {log} --deep-iteration --print-data-log",
    "kraftsman dump-log --cluster-metadata-decoder --files {log}",
    "kafka-metadata-shell --directory {dir} tree /",
    "kafka-metadata-shell --directory {dir} --output json tree /",
    "kafka-metadata-shell --directory {dir} find /",
    "kraftsman shell --directory {dir} tree /image/topics",
    "kraftsman-demo --voters 1",
]


@pytest.mark.parametrize("command", STREAMING)
def test_head_closing_the_pipe_leaves_exit_0_and_no_words(command, log_dir):
    line = command.format(log=log_dir / "00000000000000000000.log", dir=log_dir)
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", NO_COLOR="1")
    result = subprocess.run(["bash", "-c", f"set -o pipefail; {line} | head -1"], capture_output=True, text=True,
                            env=env, timeout=120)
    assert (result.returncode, result.stderr) == (0, ""), line
    assert result.stdout.count("\n") == 1 and result.stdout.strip(), result.stdout
