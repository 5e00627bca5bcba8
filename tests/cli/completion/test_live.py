"""`kraftsman completion bash`, sourced in a real bash, completes a sub-command, a flag and a fenced broker's id
from a live quorum (issue 19's acceptance)."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

import pytest

from ...controller.server.quorum_fixtures import loop_fixture, running_brokers, running_quorum, wait_for
from .test_complete import tool_programs

loop = loop_fixture()


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("completion"), loop) as q:
        yield q


@pytest.fixture(scope="module")
def script(tmp_path_factory) -> str:
    """The output of `kraftsman completion bash`, saved to a file, beside programs that run this checkout's tools
    (the scripts ask the tool itself for candidates)."""
    folder = tmp_path_factory.mktemp("completion-bin")
    done = subprocess.run([sys.executable, "-m", "kraftsman.cli.main", "completion", "bash"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    (folder / "all.bash").write_text(done.stdout)
    tool_programs(folder)
    return str(folder)


def complete(folder: str, line: str) -> list[str]:
    """Complete `line` (the cursor at its end) in bash after sourcing the script; return COMPREPLY."""
    if not shutil.which("bash"):
        pytest.skip("bash is not installed")
    words = shlex.split(line) + ([""] if line.endswith(" ") else [])
    code = (f"source {shlex.quote(folder + '/all.bash')}; COMP_WORDS=({' '.join(map(shlex.quote, words))}); "
            f"COMP_CWORD={len(words) - 1}; COMP_LINE={shlex.quote(line)}; COMP_POINT=${{#COMP_LINE}}; "
            f"$(complete -p {shlex.quote(words[0])} | sed -E 's/.*-F ([^ ]+) .*/\\1/') {shlex.quote(words[0])}; "
            "printf '%s\\n' \"${COMPREPLY[@]}\"")
    env = dict(os.environ, PATH=f"{folder}:{os.environ.get('PATH', '')}", KRAFTSMAN_COMPLETE_TIMEOUT="10")
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", code], capture_output=True, text=True,
                            timeout=60, env=env)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return [w for w in result.stdout.split("\n") if w]


def test_sub_command_and_flag(script):
    assert complete(script, "kafka-cluster un") == ["unregister"]
    assert complete(script, "kafka-cluster unregister --require") == ["--require-fenced"]
    assert "cluster" in complete(script, "kraftsman cl")


def test_a_fenced_brokers_id_from_the_live_quorum(quorum, loop, script):
    with running_brokers(quorum, loop, (301, 302)) as brokers:
        assert not _fenced(quorum, 302)
        brokers[1].crash()                               # no more heartbeats: the controller fences it
        wait_for(lambda: _fenced(quorum, 302), timeout=30)
        line = f"kafka-cluster unregister --bootstrap-controller {quorum.bootstrap()} --id 30"
        assert complete(script, line) == ["301", "302"]  # 302 is fenced: DescribeCluster would not list it


def _fenced(quorum, broker_id: int) -> bool:
    """Tell whether `broker_id` is registered and fenced, from kafka-cluster list-endpoints (unfenced only)."""
    done = subprocess.run([sys.executable, "-m", "kraftsman.cli.cluster.tool", "list-endpoints", "-b",
                           quorum.bootstrap(), "--output", "json"], capture_output=True, text=True, timeout=30)
    return done.returncode == 0 and f'"id": {broker_id}' not in done.stdout
