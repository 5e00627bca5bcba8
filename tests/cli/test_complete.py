"""kraftsman-complete: metadata paths from a snapshot or directory, node ids from a (fake) cluster, silence
on failure within bounded time, and the generated bash scripts calling it end to end."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kraftsman.cli import complete
from kraftsman.storage.log.snapshot import write_snapshot
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from ..controller.server.sync_fakes import FakeServer, body, silent_server

REPO = Path(__file__).resolve().parents[2]
RANGES = {18: (0, 4), 3: (0, 12), 60: (0, 1)}
SNAPSHOT_NAME = "00000000000000000002-0000000001.checkpoint"


def _record(record_type: str, **fields) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(codec.message_class(record_type)(**fields), 0)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    """A log directory holding one snapshot with metadata.version and the topic `orders`."""
    root = tmp_path_factory.mktemp("meta")
    records = [_record("FeatureLevelRecord", name="metadata.version", feature_level=21),
               _record("TopicRecord", name="orders", topic_id=Uuid(b"\x01" * 16))]
    (root / "__cluster_metadata-0").mkdir()
    write_snapshot(root / "__cluster_metadata-0" / SNAPSHOT_NAME, records)
    return root


@pytest.fixture(scope="module")
def snapshot(logdir) -> Path:
    return logdir / "__cluster_metadata-0" / SNAPSHOT_NAME


def run(*argv: str) -> list[str]:
    return complete.candidates(list(argv))


def describe_handler(ids=(4, 5, 12)):
    def handler(header, request):
        cls = body("DescribeClusterResponse").__class__
        nodes = [cls.DescribeClusterBroker(broker_id=i, host=f"h{i}", port=9092) for i in ids]
        return cls(cluster_id="abcdefghijklmnopqrstuv", controller_id=ids[0], brokers=nodes,
                   endpoint_type=getattr(request, "endpoint_type", 1))
    return handler


# ---------------------------------------------------------------- metadata paths


PATH_CASES = [
    ("ls /image/to", ["/image/topics/"]),
    ("ls /image/topics/", ["/image/topics/byId/", "/image/topics/byName/"]),
    ("cat /image/topics/byName/", ["/image/topics/byName/orders/"]),
    ("tree /image/topics/byName/orders/n", ["/image/topics/byName/orders/name"]),
    ("find /loc", ["/local/"]),
    ("cd /image/nope/", []),
    ("l", ["ls"]),
    ("", ["cat", "diff", "find", "ls", "tree"]),
]


@pytest.mark.parametrize("typed,expected", PATH_CASES, ids=[c[0] or "empty" for c in PATH_CASES])
def test_metadata_paths_from_a_snapshot(snapshot, typed, expected):
    line = f"kafka-metadata-shell --snapshot {snapshot} {typed}"
    word = typed.split(" ")[-1]
    assert run("metadata-path", word, "--line", line) == expected
    before = shlex.split(line)[:-1] if word else shlex.split(line)
    assert run("metadata-path", word, "--", *before) == expected


def test_metadata_paths_from_a_directory_and_through_the_umbrella(logdir):
    assert run("metadata-path", "/image/to", "--line", f"kafka-metadata-shell -d {logdir} ls /image/to") == \
        ["/image/topics/"]
    assert run("metadata-path", "/image/to", "--line", f"kraftsman --debug shell --directory={logdir} --offset 5 "
               "ls /image/to") == ["/image/topics/"]
    assert run("metadata-path", "/image/to", "--line", f"/usr/local/bin/kafka-metadata-shell -s '{logdir}' "
               "ls /image/to") == ["/image/topics/"]


def test_metadata_paths_need_a_readable_source(tmp_path, snapshot):
    assert run("metadata-path", "/im", "--line", "kafka-metadata-shell ls /im") == []
    assert run("metadata-path", "/im", "--line", f"kafka-metadata-shell -s {tmp_path}/nope ls /im") == []
    (tmp_path / "junk.checkpoint").write_bytes(b"\x00" * 100)
    assert run("metadata-path", "/im", "--line", f"kafka-metadata-shell -s {tmp_path}/junk.checkpoint ls /im") == []
    assert run("metadata-path", "/im", "--line", f"kafka-metadata-shell -C h:1 -s {snapshot} ls /im") == []


def test_partial_and_odd_lines_still_find_the_source(snapshot):
    assert run("metadata-path", "/image/to", "--line", f"kafka-metadata-shell -h -s {snapshot} ls /image/to") == \
        ["/image/topics/"]
    assert run("metadata-path", "/image/to", "--line", f'kafka-metadata-shell -s "{snapshot}" ls "/image/to') == \
        ["/image/topics/"]
    assert run("metadata-path", "x", "--line", f"kafka-metadata-shell -s {snapshot} --offset nope ls x") == []


def test_home_and_variables_in_the_source_are_expanded(logdir, monkeypatch):
    monkeypatch.setenv("HOME", str(logdir.parent))
    monkeypatch.setenv("META", str(logdir))
    assert run("metadata-path", "/image/to", "--line", f"kafka-metadata-shell -d ~/{logdir.name} ls /image/to") == \
        ["/image/topics/"]
    assert run("metadata-path", "/image/to", "--line", "kafka-metadata-shell -d $META ls /image/to") == \
        ["/image/topics/"]


def test_main_prints_one_candidate_per_line(snapshot, capsys):
    complete.main(["metadata-path", "/image/topics/", "--line",
                   f"kafka-metadata-shell -s {snapshot} ls /image/topics/"])
    assert capsys.readouterr() == ("/image/topics/byId/\n/image/topics/byName/\n", "")


# ---------------------------------------------------------------- node ids


def test_broker_ids_through_describe_cluster():
    """With --bootstrap-server: the unfenced brokers DescribeCluster lists (with --bootstrap-controller the
    metadata log gives fenced ones too: test_kraftsman_completion_bash_on_a_live_quorum)."""
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        assert run("broker-id", "", "--line", f"kafka-cluster unregister -b {server.address} --id ") == ["4", "5", "12"]
        assert run("broker-id", "1", "--", "kraftsman", "cluster", "unregister", "--bootstrap-server",
                   server.address, "-i") == ["12"]
        assert [r.endpoint_type for h, r in server.requests if h.request_api_key == 60] == [1, 1]


def test_controller_ids_through_describe_cluster():
    with FakeServer(describe_handler((1, 2, 3)), ranges=RANGES) as server:
        line = f"kafka-metadata-quorum --bootstrap-controller {server.address} remove-controller --controller-id "
        assert run("controller-id", "", "--line", line) == ["1", "2", "3"]
        assert [r.endpoint_type for h, r in server.requests if h.request_api_key == 60] == [2]


def test_node_ids_use_the_client_config(tmp_path):
    config = tmp_path / "admin.properties"
    config.write_text("client.id=completer\n")
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        assert run("broker-id", "4", "--line", f"kafka-cluster unregister -c {config} -b {server.address} --id 4") == \
            ["4"]
        assert {h.client_id for h, _ in server.requests} == {"completer"}


def test_node_ids_need_a_bootstrap_flag():
    assert run("broker-id", "", "--line", "kafka-cluster unregister --id ") == []
    assert run("controller-id", "", "--line", "kafka-metadata-quorum remove-controller --controller-id ") == []


def test_bash_splits_host_port_but_the_line_keeps_it():
    """bash's COMP_WORDS cuts at ':'; the word to replace is only what follows the last break."""
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        line = f"kafka-cluster unregister --bootstrap-server={server.address} --id 1"
        assert run("broker-id", "1", "--line", line) == ["12"]


# ---------------------------------------------------------------- silence and bounded time


def _subprocess(*argv: str, timeout_env: str | None = None) -> tuple[subprocess.CompletedProcess, float]:
    env = dict(os.environ)
    if timeout_env:
        env[complete.TIMEOUT_ENV] = timeout_env
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "kraftsman.cli.complete", *argv], capture_output=True,
                            text=True, timeout=30, env=env, cwd=REPO)
    return result, time.monotonic() - start


def test_closed_port_is_silent_and_quick():
    with FakeServer() as server:
        closed = server.address
    result, elapsed = _subprocess("broker-id", "", "--line", f"kafka-cluster unregister -b {closed} --id ")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert elapsed < complete.TIMEOUT + 3


def test_a_server_that_never_answers_is_cut_at_the_timeout():
    with silent_server() as server:
        result, elapsed = _subprocess("controller-id", "", "--line", f"kafka-metadata-quorum --bootstrap-controller "
                                      f"{server.address} remove-controller -i ", timeout_env="0.5")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert elapsed < 0.5 + 3


@pytest.mark.parametrize("argv", [[], ["nope", "x"], ["broker-id"], ["metadata-path", "x", "--line"],
                                  ["broker-id", "", "--line", "kafka-cluster unregister -b no-such-host.invalid:1 "
                                   "--id "], ["broker-id", "", "--line", "kafka-cluster unregister -b :: --id "]])
def test_bad_input_is_silent(argv):
    result, _ = _subprocess(*argv, timeout_env="0.5")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_slow_loading_is_cut(snapshot, monkeypatch):
    from kraftsman.controller.image import loader

    def slow(*args, **kwargs):
        time.sleep(5)
    monkeypatch.setattr(loader, "load", slow)
    monkeypatch.setattr(complete, "LOAD_SECONDS", 0.2)
    start = time.monotonic()
    assert run("metadata-path", "/", "--line", f"kafka-metadata-shell -s {snapshot} ls /") == []
    assert time.monotonic() - start < 2


# ---------------------------------------------------------------- the generated scripts, end to end


@pytest.fixture
def shim(tmp_path) -> Path:
    """A `kraftsman-complete` on PATH running this checkout (so no reinstall is needed)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "kraftsman-complete"
    program.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m kraftsman.cli.complete "$@"\n')
    program.chmod(0o755)
    return folder


def bash_complete(script: str, words: list[str], path: Path, line: str | None = None) -> list[str]:
    if not shutil.which("bash"):
        pytest.skip("bash is not installed")
    function = re.search(r"^complete -F (\S+) ", (REPO / script).read_text(), re.M)[1]
    comp_line = "" if line is None else f"COMP_LINE={shlex.quote(line)}; COMP_POINT=${{#COMP_LINE}}; "
    code = (f"source {shlex.quote(str(REPO / script))}; COMP_WORDS=({' '.join(map(shlex.quote, words))}); "
            f"COMP_CWORD={len(words) - 1}; {comp_line}{function}; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    env = dict(os.environ, PATH=f"{path}:{os.environ.get('PATH', '')}")
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", code], capture_output=True, text=True,
                            timeout=30, env=env, cwd=REPO)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return [w for w in result.stdout.split("\n") if w]


def test_bash_completes_metadata_paths(snapshot, shim):
    words = ["kafka-metadata-shell", "--snapshot", str(snapshot), "ls", "/image/to"]
    assert bash_complete("completions/kafka-metadata-shell.bash", words, shim) == ["/image/topics/"]
    assert bash_complete("completions/kafka-metadata-shell.bash", words, shim, line=shlex.join(words)) == \
        ["/image/topics/"]
    words = ["kafka-metadata-shell", "--snapshot", str(snapshot), "ls", "/image/topics/"]
    assert bash_complete("completions/kafka-metadata-shell.bash", words, shim) == \
        ["/image/topics/byId/", "/image/topics/byName/"]
    words = ["kraftsman", "shell", "-s", str(snapshot), "cat", "/image/topics/byName/"]
    assert bash_complete("completions/kraftsman.bash", words, shim) == ["/image/topics/byName/orders/"]


def test_bash_offers_commands_then_flags_without_a_source(snapshot, shim):
    words = ["kafka-metadata-shell", "-s", str(snapshot), ""]
    assert bash_complete("completions/kafka-metadata-shell.bash", words, shim) == ["cat", "diff", "find", "ls", "tree"]
    assert "--snapshot" in bash_complete("completions/kafka-metadata-shell.bash", ["kafka-metadata-shell", ""], shim)


def test_bash_completes_node_ids_with_colon_split_words(shim):
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        host, port = server.address.split(":")
        words = ["kafka-cluster", "unregister", "-b", host, ":", port, "--id", ""]
        line = f"kafka-cluster unregister -b {server.address} --id "
        assert bash_complete("completions/kafka-cluster.bash", words, shim, line=line) == ["4", "5", "12"]
        words = ["kafka-metadata-quorum", "--bootstrap-controller", server.address, "remove-controller",
                 "--controller-id", "1"]
        assert bash_complete("completions/kafka-metadata-quorum.bash", words, shim) == ["12"]


def test_bash_is_silent_without_the_program_or_the_cluster(tmp_path, shim):
    empty = tmp_path / "empty"
    empty.mkdir()
    words = ["kafka-cluster", "unregister", "-b", "127.0.0.1:1", "--id", ""]
    assert bash_complete("completions/kafka-cluster.bash", words, shim) == []
    if shutil.which("kraftsman-complete") is None:
        assert bash_complete("completions/kafka-cluster.bash", words, empty) == []


def test_fish_completes_metadata_paths(snapshot, shim):
    if not shutil.which("fish"):
        pytest.skip("fish is not installed")
    script = REPO / "completions/kafka-metadata-shell.fish"
    code = (f"set -x PATH {shlex.quote(str(shim))} $PATH; source {shlex.quote(str(script))}; "
            f"complete -C {shlex.quote(f'kafka-metadata-shell --snapshot {snapshot} ls /image/to')}")
    result = subprocess.run(["fish", "--no-config", "-c", code], capture_output=True, text=True, timeout=30)
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == ["/image/topics/"]


def test_fish_completes_node_ids(shim):
    if not shutil.which("fish"):
        pytest.skip("fish is not installed")
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        script = REPO / "completions/kafka-cluster.fish"
        line = f"kafka-cluster unregister -b {server.address} --id "
        code = (f"set -x PATH {shlex.quote(str(shim))} $PATH; source {shlex.quote(str(script))}; "
                f"complete -C {shlex.quote(line)}")
        result = subprocess.run(["fish", "--no-config", "-c", code], capture_output=True, text=True, timeout=30)
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == ["4", "5", "12"]


# Drive an interactive zsh through zpty: compinit with completions/ on fpath, Tab once, print what compadd got.
ZSH_CAPTURE = r"""
zmodload zsh/zpty
zpty z zsh -f -i
local line
zpty -w z "module_path=($module_path); fpath=($1 $fpath); PATH=$2:\$PATH; PROMPT="
zpty -w z 'autoload -U compinit; compinit -u -D; bindkey "^I" complete-word
null-line () { echo -E - $'"'"'\0'"'"' }
compprefuncs=( null-line ); comppostfuncs=( null-line exit )
compadd () {
    if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
    typeset -a hits; builtin compadd -A hits "$@"
    for h in $hits; do echo -E - "HIT:$h"; done
}
echo ok'
repeat 30; do zpty -r z line; [[ $line == ok* ]] && break; done
zpty -w z "$3"$'\t'
integer seen=0
while zpty -r z line; do
    if [[ $line == *$'\0'* ]]; then (( seen++ )) && break || continue; fi
    (( seen )) && [[ $line == HIT:* ]] && print -r -- "${${line#HIT:}%%$'\r'*}"
done
"""


def zsh_complete(line: str, shim: Path) -> list[str]:
    if not shutil.which("zsh"):
        pytest.skip("zsh is not installed")
    result = subprocess.run(["zsh", "-f", "-c", ZSH_CAPTURE, "zsh", str(REPO / "completions"), str(shim), line],
                            capture_output=True, text=True, timeout=60)
    return [w for w in result.stdout.split("\n") if w]


def test_zsh_completes_metadata_paths_and_node_ids(snapshot, shim):
    assert zsh_complete(f"kafka-metadata-shell --snapshot {snapshot} ls /image/to", shim) == ["/image/topics/"]
    assert zsh_complete(f"kraftsman shell -s {snapshot} cat /image/topics/byName/", shim) == \
        ["/image/topics/byName/orders/"]
    with FakeServer(describe_handler((1, 2, 3)), ranges=RANGES) as server:
        line = f"kafka-metadata-quorum --bootstrap-controller {server.address} remove-controller --controller-id "
        assert zsh_complete(line, shim) == ["1", "2", "3"]


def test_every_dynamic_kind_is_known_to_kraftsman_complete():
    from kraftsman.cli import docs

    assert set(docs.DYNAMIC.values()) == set(complete.KINDS) == set(complete.TOOLS)
    assert "kraftsman-complete" in docs.HELPERS
