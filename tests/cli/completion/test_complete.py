"""Shell completion through click's machinery: metadata paths from a snapshot or directory, node ids from a
(fake) cluster, release versions, features and profiles; silence on failure within bounded time; the generated
scripts end to end in a real bash; `kraftsman --install-completion`."""
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

from kraftsman.cli.app import console_scripts
from kraftsman.cli.completion import completers
from kraftsman.storage.log.snapshot import write_snapshot
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from ...controller.server.sync_fakes import FakeServer, body, silent_server

REPO = Path(__file__).resolve().parents[3]
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


PROGRAMS = {script: entry.split(":")[0] for script, entry in console_scripts().items()}


def candidates(line: str, environ: dict | None = None) -> list[str]:
    """Ask the program `line` starts with for its completion of `line` (the cursor at its end), in-process,
    as the bash script does; return the candidates ('file'/'dir' answers as '<file>'/'<dir>')."""
    import importlib
    import io
    from unittest import mock

    from kraftsman.cli.common.environment import Environment
    from kraftsman.cli.common.shells import complete_variable

    prog = os.path.basename(line.split()[0])
    variables = {complete_variable(prog): "bash_complete", "COMP_LINE": line, "COMP_POINT": str(len(line)),
                 "COMP_WORDS": line, "COMP_CWORD": "0", **(environ or {})}
    out = io.StringIO()
    with mock.patch.dict(os.environ, variables):
        status = importlib.import_module(PROGRAMS[prog]).run([], Environment(stdout=out, env=dict(os.environ)))
    assert status == 0
    found = []
    for row in out.getvalue().splitlines():
        kind, _, value = row.partition(",")
        found.append(value if kind == "plain" else f"<{kind}>")
    return found


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
    assert candidates(f"kafka-metadata-shell --snapshot {snapshot} {typed}") == expected


def test_metadata_paths_from_a_directory_and_through_the_umbrella(logdir):
    assert candidates(f"kafka-metadata-shell -d {logdir} ls /image/to") == ["/image/topics/"]
    assert candidates(f"kraftsman shell --directory={logdir} --offset 5 ls /image/to") == ["/image/topics/"]
    assert candidates(f"/usr/local/bin/kafka-metadata-shell -s '{logdir}' ls /image/to") == ["/image/topics/"]


def test_metadata_paths_need_a_readable_source(tmp_path, snapshot):
    assert candidates("kafka-metadata-shell ls /im") == []
    assert candidates(f"kafka-metadata-shell -s {tmp_path}/nope ls /im") == []
    (tmp_path / "junk.checkpoint").write_bytes(b"\x00" * 100)
    assert candidates(f"kafka-metadata-shell -s {tmp_path}/junk.checkpoint ls /im") == []
    assert candidates(f"kafka-metadata-shell -C h:1 -s {snapshot} ls /im") == []


def test_partial_and_odd_lines_still_find_the_source(snapshot):
    assert candidates(f"kafka-metadata-shell -h -s {snapshot} ls /image/to") == ["/image/topics/"]
    assert candidates(f'kafka-metadata-shell -s "{snapshot}" ls "/image/to') == ["/image/topics/"]
    assert candidates(f"kafka-metadata-shell -s {snapshot} --offset nope ls x") == []


def test_home_and_variables_in_the_source_are_expanded(logdir, monkeypatch):
    monkeypatch.setenv("HOME", str(logdir.parent))
    monkeypatch.setenv("META", str(logdir))
    assert candidates(f"kafka-metadata-shell -d ~/{logdir.name} ls /image/to") == ["/image/topics/"]
    assert candidates("kafka-metadata-shell -d $META ls /image/to") == ["/image/topics/"]


# ---------------------------------------------------------------- flags, files, tables, profiles


def test_sub_commands_flags_and_files():
    assert candidates("kafka-storage fo") == ["format"]
    assert candidates("kafka-cluster unregister --require") == ["--require-fenced"]
    assert candidates("kafka-storage info --config ") == ["<file>"]
    assert "cluster" in candidates("kraftsman cl") and "--install-completion" in candidates("kraftsman --ins")
    assert candidates("kraftsman storage format --output ") == ["text", "json", "yaml"]


def test_release_versions_and_feature_levels():
    assert candidates("kafka-storage format --release-version 3.9") == ["3.9-IV0"]
    assert candidates("kafka-features -C h:1 upgrade --metadata 3.3-IV") == ["3.3-IV0", "3.3-IV1", "3.3-IV2",
                                                                             "3.3-IV3"]
    assert candidates("kafka-storage format -f kraft") == ["kraft.version="]
    assert candidates("kafka-storage format --feature kraft.version=") == ["0", "1"]   # bash replaces after '='
    assert candidates("kafka-features -b h:1 disable --feature gr") == ["group.version"]


def test_a_flag_the_release_lacks_is_not_offered():
    """kafka-dump-log's --share-group-state-decoder is Kafka 4.0's: 3.9's tool refuses it, so 3.9 does not offer it
    (completion asks the program, which speaks the release KRAFTSMAN_KAFKA_VERSION names)."""
    assert candidates("kafka-dump-log --sh") == []
    assert candidates("kafka-dump-log --sh", {"KRAFTSMAN_KAFKA_VERSION": "4.0"}) == ["--share-group-state-decoder"]
    assert candidates("kafka-dump-log --sk") == ["--skip-record-metadata"]      # the release's own flags stay
    assert candidates("kafka-dump-log --sh") == []                              # and the hiding lasted one run


def test_profile_names(tmp_path):
    config = tmp_path / "kraftsman" / "config.yaml"
    config.parent.mkdir()
    config.write_text("profiles:\n  prod: {bootstrap-controller: 'h:1'}\n  stage: {bootstrap-controller: 'h:2'}\n")
    environ = {"XDG_CONFIG_HOME": str(tmp_path)}
    assert candidates("kafka-cluster cluster-id --profile ", environ) == ["prod", "stage"]
    assert candidates("kafka-metadata-shell --profile st", environ) == ["stage"]
    assert candidates("kraftsman profile use p", environ) == ["prod"]


# ---------------------------------------------------------------- node ids


def test_broker_ids_through_describe_cluster():
    """With --bootstrap-server: the unfenced brokers DescribeCluster lists (with --bootstrap-controller the
    metadata log gives fenced ones too: completion/test_live.py)."""
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        assert candidates(f"kafka-cluster unregister -b {server.address} --id ") == ["4", "5", "12"]
        assert candidates(f"kraftsman cluster unregister --bootstrap-server {server.address} -i 1") == ["12"]
        assert [r.endpoint_type for h, r in server.requests if h.request_api_key == 60] == [1, 1]


def test_controller_ids_through_describe_cluster():
    with FakeServer(describe_handler((1, 2, 3)), ranges=RANGES) as server:
        line = f"kafka-metadata-quorum --bootstrap-controller {server.address} remove-controller --controller-id "
        assert candidates(line) == ["1", "2", "3"]
        assert [r.endpoint_type for h, r in server.requests if h.request_api_key == 60] == [2]


def test_node_ids_use_the_client_config(tmp_path):
    config = tmp_path / "admin.properties"
    config.write_text("client.id=completer\n")
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        assert candidates(f"kafka-cluster unregister -c {config} -b {server.address} --id 4") == ["4"]
        assert {h.client_id for h, _ in server.requests} == {"completer"}


def test_node_ids_need_a_bootstrap_flag(tmp_path):
    environ = {"XDG_CONFIG_HOME": str(tmp_path)}            # no profile either
    assert candidates("kafka-cluster unregister --id ", environ) == []
    assert candidates("kafka-metadata-quorum remove-controller --controller-id ", environ) == []


def test_node_ids_from_the_current_profile(tmp_path):
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        config = tmp_path / "kraftsman" / "config.yaml"
        config.parent.mkdir()
        config.write_text(f"current-profile: prod\nprofiles:\n  prod: {{bootstrap-server: '{server.address}'}}\n")
        assert candidates("kafka-cluster unregister --id 1", {"XDG_CONFIG_HOME": str(tmp_path)}) == ["12"]


def test_bash_splits_host_port_but_the_line_keeps_it():
    """bash's COMP_WORDS cuts at ':' and '='; the line keeps `host:port` whole."""
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        assert candidates(f"kafka-cluster unregister --bootstrap-server={server.address} --id 1") == ["12"]


# ---------------------------------------------------------------- silence and bounded time


def tool_programs(folder: Path) -> Path:
    """Write a program on PATH for each tool, running this checkout (no reinstall needed); return the folder."""
    folder.mkdir(exist_ok=True)
    for prog, module in PROGRAMS.items():
        program = folder / prog
        program.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -c 'import sys; sys.argv[0] = "
                           f"\"{prog}\"; from {module} import main; main()' \"$@\"\n")
        program.chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> Path:
    return tool_programs(tmp_path_factory.mktemp("bin"))


def _ask(shim: Path, line: str, timeout_env: str | None = None) -> tuple[subprocess.CompletedProcess, float]:
    """Run the tool as a completing bash runs it; return the process and its wall time."""
    from kraftsman.cli.common.shells import complete_variable

    prog = line.split()[0]
    env = dict(os.environ, COMP_LINE=line, COMP_POINT=str(len(line)), COMP_WORDS=line, COMP_CWORD="1")
    env[complete_variable(prog)] = "bash_complete"
    if timeout_env:
        env[completers.TIMEOUT_ENV] = timeout_env
    start = time.monotonic()
    result = subprocess.run([str(shim / prog)], capture_output=True, text=True, timeout=30, env=env, cwd=REPO)
    return result, time.monotonic() - start


def test_closed_port_is_silent_and_quick(shim):
    with FakeServer() as server:
        closed = server.address
    result, elapsed = _ask(shim, f"kafka-cluster unregister -b {closed} --id ")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert elapsed < completers.TIMEOUT + 3


def test_a_server_that_never_answers_is_cut_at_the_timeout(shim):
    with silent_server() as server:
        result, elapsed = _ask(shim, f"kafka-metadata-quorum --bootstrap-controller {server.address} "
                                     "remove-controller -i ", timeout_env="0.5")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert elapsed < 0.5 + 3


@pytest.mark.parametrize("line", ["kafka-cluster unregister -b no-such-host.invalid:1 --id ",
                                  "kafka-cluster unregister -b :: --id ", "kafka-cluster unregister --id=x --nope ",
                                  "kafka-metadata-shell -s /nope --offset -1 ls /im", "kafka-storage \"unclosed"])
def test_bad_input_is_silent(shim, line):
    result, _ = _ask(shim, line, timeout_env="0.5")
    assert (result.returncode, result.stderr) == (0, "")
    assert all(row.split(",")[0] in ("plain", "file", "dir") for row in result.stdout.splitlines())


def test_slow_loading_is_cut(snapshot, monkeypatch):
    from kraftsman.controller.image import loader

    def slow(*args, **kwargs):
        time.sleep(5)
    monkeypatch.setattr(loader, "load", slow)
    monkeypatch.setattr(completers, "LOAD_SECONDS", 0.2)
    start = time.monotonic()
    assert candidates(f"kafka-metadata-shell -s {snapshot} ls /") == []
    assert time.monotonic() - start < 2


# ---------------------------------------------------------------- the generated scripts, end to end


def bash_complete(script: str, words: list[str], path: Path, line: str | None = None) -> list[str]:
    """Source `script` in a real bash, set COMP_* as bash's completion does, run its function; return COMPREPLY."""
    if not shutil.which("bash"):
        pytest.skip("bash is not installed")
    function = re.search(r"^complete .*-F (\S+) ", (REPO / script).read_text(), re.M)[1]
    comp_line = "" if line is None else f"COMP_LINE={shlex.quote(line)}; COMP_POINT=${{#COMP_LINE}}; "
    code = (f"source {shlex.quote(str(REPO / script))}; COMP_WORDS=({' '.join(map(shlex.quote, words))}); "
            f"COMP_CWORD={len(words) - 1}; {comp_line}{function} {shlex.quote(words[0])}; "
            "printf '%s\\n' \"${COMPREPLY[@]}\"")
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
    assert "--snapshot" in bash_complete("completions/kafka-metadata-shell.bash", ["kafka-metadata-shell", "--"], shim)


def test_bash_completes_node_ids_with_colon_split_words(shim):
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        host, port = server.address.split(":")
        words = ["kafka-cluster", "unregister", "-b", host, ":", port, "--id", ""]
        line = f"kafka-cluster unregister -b {server.address} --id "
        assert bash_complete("completions/kafka-cluster.bash", words, shim, line=line) == ["4", "5", "12"]
        words = ["kafka-metadata-quorum", "--bootstrap-controller", server.address, "remove-controller",
                 "--controller-id", "1"]
        assert bash_complete("completions/kafka-metadata-quorum.bash", words, shim) == ["12"]


def test_bash_feature_level_after_the_equals_sign(shim):
    words = ["kafka-storage", "format", "--feature", "kraft.version", "=", ""]
    line = "kafka-storage format --feature kraft.version="
    assert bash_complete("completions/kafka-storage.bash", words, shim, line=line) == ["0", "1"]


def test_bash_is_silent_without_the_program_or_the_cluster(tmp_path, shim):
    words = ["kafka-cluster", "unregister", "-b", "127.0.0.1:1", "--id", ""]
    assert bash_complete("completions/kafka-cluster.bash", words, shim) == []
    empty = tmp_path / "empty"
    empty.mkdir()
    if shutil.which("kafka-cluster") is None:
        assert bash_complete("completions/kafka-cluster.bash", words, empty) == []


def test_fish_completes_metadata_paths(snapshot, shim):
    if not shutil.which("fish"):
        pytest.skip("fish is not installed")
    script = REPO / "completions/kafka-metadata-shell.fish"
    code = (f"set -x PATH {shlex.quote(str(shim))} $PATH; source {shlex.quote(str(script))}; "
            f"complete -C {shlex.quote(f'kafka-metadata-shell --snapshot {snapshot} ls /image/to')}")
    result = subprocess.run(["fish", "--no-config", "-c", code], capture_output=True, text=True, timeout=30)
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == ["/image/topics/"]


def test_zsh_completes_metadata_paths(snapshot, shim):
    if not shutil.which("zsh"):
        pytest.skip("zsh is not installed")
    script = REPO / "completions/_kafka-metadata-shell"
    code = (f"autoload -U compinit; compinit -u -D; PATH={shlex.quote(str(shim))}:$PATH; "
            f"source {shlex.quote(str(script))}; whence -w _kafka_metadata_shell_completion")
    result = subprocess.run(["zsh", "-f", "-c", code], capture_output=True, text=True, timeout=30)
    assert "function" in result.stdout, result.stderr


# ---------------------------------------------------------------- installing


def _environment(home: Path):
    from kraftsman.cli.common.environment import Environment

    return Environment(stdout=__import__("io").StringIO(), stderr=__import__("io").StringIO(),
                       env={"HOME": str(home), "SHELL": "/bin/bash"})


def test_install_completion_for_each_shell_twice(tmp_path):
    from kraftsman.cli import main as umbrella

    env = _environment(tmp_path)
    for shell in ("bash", "zsh", "fish"):
        assert umbrella.run(["--install-completion", shell], env) == 0
        assert umbrella.run(["--install-completion", shell], env) == 0
    bash_file = tmp_path / ".local/share/kraftsman/completion.bash"
    assert "_KAFKA_CLUSTER_COMPLETE=bash_complete" in bash_file.read_text()
    assert (tmp_path / ".bashrc").read_text().count(f"source '{bash_file}'") == 1
    assert (tmp_path / ".zfunc/_kafka-cluster").read_text().startswith("#compdef kafka-cluster")
    assert (tmp_path / ".zshrc").read_text().count("fpath+=~/.zfunc") == 1
    assert "kafka-storage" in (tmp_path / ".config/fish/completions/kafka-storage.fish").read_text()
    assert "installed in" in env.stdout.getvalue()


def test_install_completion_defaults_to_shell_and_refuses_others(tmp_path):
    from kraftsman.cli import main as umbrella
    from kraftsman.cli.common.boundary import run_command

    env = _environment(tmp_path)
    assert umbrella.run(["--install-completion"], env) == 0
    assert (tmp_path / ".bashrc").is_file()
    env.env["SHELL"] = "/bin/tcsh"
    assert run_command(umbrella.run, ["--install-completion"], env) == 64
    assert "cannot complete for shell 'tcsh'" in env.stderr.getvalue()
    assert umbrella.run(["--show-completion", "bash"], env) == 0
    assert "complete -o nosort -F" in env.stdout.getvalue()


def test_install_completion_into_an_unwritable_home_is_one_line(tmp_path):
    from kraftsman.cli import main as umbrella
    from kraftsman.cli.common.boundary import run_command

    home = tmp_path / "file-not-folder"
    home.write_text("")
    env = _environment(home)
    assert run_command(umbrella.run, ["--install-completion", "fish"], env) == 1
    err = env.stderr.getvalue()
    assert err.startswith("kraftsman: cannot install the fish completion: ") and err.count("\n") == 1, err


def test_installed_bash_completion_completes_in_a_new_shell(tmp_path, shim):
    if not shutil.which("bash"):
        pytest.skip("bash is not installed")
    from kraftsman.cli import main as umbrella

    assert umbrella.run(["--install-completion", "bash"], _environment(tmp_path)) == 0
    code = ("source ~/.bashrc; COMP_WORDS=(kafka-storage fo); COMP_CWORD=1; COMP_LINE='kafka-storage fo'; "
            "COMP_POINT=16; $(complete -p kafka-storage | sed -E 's/.*-F ([^ ]+) .*/\\1/') kafka-storage; "
            "printf '%s\\n' \"${COMPREPLY[@]}\"")
    env = dict(os.environ, HOME=str(tmp_path), PATH=f"{shim}:{os.environ.get('PATH', '')}")
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", code], capture_output=True, text=True,
                            timeout=30, env=env)
    assert result.stdout.split() == ["format"], result.stderr
