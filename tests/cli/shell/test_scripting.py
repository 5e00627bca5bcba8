"""The shell in scripts: one-shot and batch exit codes, batch mode on a pipe or -f FILE, --keep-going."""
from __future__ import annotations

from pathlib import Path

import pytest

from .shell_fixtures import generated_log, shell


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    return generated_log(tmp_path_factory.mktemp("scripting") / "small.log", topics=3, partitions=2)


ONE_SHOT = [
    (["ls", "/image/topics/byName"], 0, "bench-topic-00000\nbench-topic-00001\nbench-topic-00002\n"),
    (["cat", "/image/topics/byName/bench-topic-00001/name"], 0, "bench-topic-00001\n"),
    (["ls", "/nope"], 1, "ls: /nope: no such file or directory.\n"),
    (["cat", "/image"], 1, "cat: /image: Is a directory\n"),
    (["ls", "/image/provenance", "/nope"], 1, "ls: /nope: no such file or directory.\nprovenance\n"),
    (["frob"], 64, "invalid choice: 'frob' (choose from {cat,diff,find,ls,tree})\n"),
    (["pwd"], 64, "invalid choice: 'pwd' (choose from {cat,diff,find,ls,tree})\n"),
    (["cat"], 64, "too few arguments\n"),
    (["cat", "--output", "xml", "/image"], 64,
     "argument --output/-o: invalid choice: 'xml' (choose from {text,json,yaml})\n"),
]


@pytest.mark.parametrize("command, status, out", ONE_SHOT, ids=[" ".join(c[0]) for c in ONE_SHOT])
def test_one_shot_exit_codes(log, command, status, out):
    """One-shot mode prints Kafka's texts on stdout (as Kafka's shell) and exits with the command's status."""
    assert shell("--snapshot", str(log), *command) == (status, out, "")


BATCH = [
    ("ls /image/cluster\n", 0, "brokers\ncontrollers\n", ""),
    ("# a comment\n\ncd /image/topics\npwd\nls byName/bench-topic-00000\n", 0,
     "/image/topics\n0\n1\nid\nname\n", ""),
    ("ls /image/cluster\nls /nope\nls /image/cluster\n", 1, "brokers\ncontrollers\n",
     "ls: /nope: no such file or directory.\n"),
    ("frob\nls /image/cluster\n", 64, "", "invalid choice: 'frob' (choose from "
     "{cat,cd,clear,diff,exit,find,help,history,ls,man,mark,pwd,quit,tree})\n"),
    ("cat\n", 64, "", "too few arguments\n"),
    ("pwd\nexit\npwd\n", 0, "/\n", ""),
]


@pytest.mark.parametrize("script, status, out, err", BATCH, ids=[b[0].split("\n")[0] or "blank" for b in BATCH])
def test_batch_exit_codes_on_a_pipe(log, script, status, out, err):
    """Piped commands run with no prompt, no echo and no banner; the batch stops at the first failure."""
    assert shell("--snapshot", str(log), stdin=script) == (status, out, err)


def test_keep_going_runs_every_line_and_keeps_the_first_failure(log):
    script = "ls /nope\nfrob\nls /image/cluster\n"
    status, out, err = shell("--snapshot", str(log), "--keep-going", stdin=script)
    assert (status, out) == (1, "brokers\ncontrollers\n")
    assert err.splitlines()[0] == "ls: /nope: no such file or directory." and err.count("\n") == 2


def test_file_flag_runs_a_script(log, tmp_path):
    script = tmp_path / "commands.txt"
    script.write_text("cd /image/topics/byName\nls\n")
    assert shell("--snapshot", str(log), "-f", str(script)) == \
        (0, "bench-topic-00000\nbench-topic-00001\nbench-topic-00002\n", "")
    assert shell("--snapshot", str(log), "--file", "-", stdin="pwd\n") == (0, "/\n", "")


def test_file_flag_errors(log, tmp_path):
    status, out, err = shell("--snapshot", str(log), "-f", str(tmp_path / "missing.txt"))
    assert (status, out) == (1, "") and err == \
        f"kafka-metadata-shell: cannot read {tmp_path / 'missing.txt'}: No such file or directory\n"
    status, _, err = shell("--snapshot", str(log), "-f", str(tmp_path / "x"), "ls")
    assert status == 1 and err == "kafka-metadata-shell: give either a command or --file, not both\n"  # usage: 1


def test_piped_batch_in_a_real_process(log):
    """`printf 'ls /image\\nls /nope\\n' | kafka-metadata-shell --snapshot F`: the output only, exit 1."""
    import shutil
    import subprocess

    if shutil.which("kafka-metadata-shell") is None:
        pytest.skip("needs the kafka-metadata-shell console script on PATH")
    done = subprocess.run(["kafka-metadata-shell", "--snapshot", str(log)], input="ls /image\nls /nope\n",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == "acls" and done.stdout.splitlines()[-1] == "topics"
    assert done.stderr == "ls: /nope: no such file or directory.\n"
