"""Bad inputs across every console script: the documented exit code (README "Exit codes"), one error line on
stderr, never a Python traceback.

Bad flags print argparse's usage block before the error line, as Kafka's argparse4j / jopt-simple tools do;
the one-line rule counts the lines after that block. Kafka-compatible tools exit 1 for bad flags (Kafka's
code); kraftsman's own tools (kraftsman, kraftsman-demo, kafka-controller, kafka-metadata-export) exit 64.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import re
import shutil
import socket
import subprocess
import sys

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.docs import pages as docs

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"


def closed_port() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"127.0.0.1:{port}"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    base = tmp_path_factory.mktemp("bad-inputs")
    (base / "garbage.properties").write_bytes(b"a=\\u12\n\xff\xfe\x00garbage\n")      # malformed \uXXXX escape
    (base / "badnode.properties").write_text("process.roles=controller\nnode.id=x\n")
    (base / "badtls.properties").write_text(                       # an SSL listener without a keystore
        "process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@127.0.0.1:9093\n"
        "controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://127.0.0.1:9093\n"
        f"listener.security.protocol.map=CONTROLLER:SSL\nlog.dirs={base / 'tls-data'}\n")
    (base / "00000000000000000000.log").write_bytes(b"a=\\u12\n\xff\xfe\x00garbage\n")          # negative batch size
    (base / "a-directory").mkdir()                                                       # unreadable as a file
    return {"MISSING": str(base / "missing" / "server.properties"),
            "MISSING_LOG": str(base / "missing" / "00000000000000000000.log"),
            "GARBAGE": str(base / "garbage.properties"), "BADNODE": str(base / "badnode.properties"),
            "BADTLS": str(base / "badtls.properties"),
            "GARBAGE_LOG": str(base / "00000000000000000000.log"), "DIR": str(base / "a-directory"),
            "OUT": str(base / "out"), "CLOSED": closed_port()}


# (console script, argv with placeholders, exit code)
CASES = [
    ("kraftsman", ["--bogus"], 64),
    ("kraftsman", ["no-such-command"], 64),
    ("kafka-storage", ["--bogus"], 1),
    ("kafka-storage", ["info", "-c", "MISSING"], 1),
    ("kafka-storage", ["info", "-c", "GARBAGE"], 1),
    ("kafka-storage", ["info", "-c", "DIR"], 1),
    ("kafka-storage", ["format", "-t", CLUSTER_ID, "-c", "MISSING"], 1),
    ("kafka-storage", ["format", "-t", CLUSTER_ID, "-c", "BADNODE"], 1),
    ("kafka-dump-log", ["--bogus"], 1),
    ("kafka-dump-log", ["--files", "MISSING_LOG"], 1),
    ("kafka-dump-log", ["--cluster-metadata-decoder", "--files", "GARBAGE_LOG"], 2),
    ("kafka-metadata-shell", ["--bogus"], 1),
    ("kafka-metadata-shell", ["--snapshot", "MISSING_LOG", "ls", "/"], 1),
    ("kafka-metadata-shell", ["--directory", "MISSING", "ls", "/"], 1),
    ("kafka-metadata-shell", ["--snapshot", "GARBAGE_LOG", "ls", "/"], 1),
    ("kafka-metadata-shell", ["--bootstrap-controller", "CLOSED", "--timeout", "5", "ls", "/"], 69),
    ("kafka-metadata-shell", ["--controllers", "no-id-at-host", "ls", "/"], 1),
    ("kafka-metadata-shell", ["--bootstrap-controller", "CLOSED", "-c", "MISSING", "ls", "/"], 1),
    ("kafka-metadata-shell", ["--bootstrap-controller", "CLOSED", "-c", "GARBAGE", "ls", "/"], 1),
    ("kafka-metadata-shell", ["--bootstrap-controller", "CLOSED", "-c", "DIR", "ls", "/"], 1),
    ("kraftsman-demo", ["--bogus"], 64),
    ("kraftsman-demo", ["--voters", "2"], 64),
    ("kafka-controller", ["--bogus"], 64),
    ("kafka-controller", ["--config", "MISSING"], 1),
    ("kafka-controller", ["--config", "GARBAGE"], 1),
    ("kafka-controller", ["--config", "DIR"], 1),
    ("kafka-controller", ["--config", "BADNODE"], 1),
    ("kafka-controller", ["--config", "BADTLS"], 1),
    ("kafka-cluster", ["--bogus"], 1),
    ("kafka-cluster", ["cluster-id", "-b", "CLOSED"], 69),
    ("kafka-cluster", ["list-endpoints", "-C", "CLOSED"], 69),
    ("kafka-cluster", ["cluster-id", "-b", "no-port"], 1),
    ("kafka-cluster", ["cluster-id", "-b", "CLOSED", "-c", "MISSING"], 1),
    ("kafka-cluster", ["cluster-id", "-b", "CLOSED", "-c", "GARBAGE"], 1),
    ("kafka-cluster", ["cluster-id", "-b", "CLOSED", "-c", "DIR"], 1),
    ("kafka-cluster", ["unregister", "--id", "x", "-b", "CLOSED", "--output", "json"], 1),   # --output changes nothing
    ("kafka-metadata-quorum", ["--bogus"], 1),
    ("kafka-metadata-quorum", ["--bootstrap-server", "CLOSED", "describe", "--status"], 69),
    ("kafka-metadata-quorum", ["--bootstrap-controller", "CLOSED", "describe", "--replication"], 69),
    ("kafka-metadata-quorum", ["--bootstrap-server", "no-port", "describe", "--status"], 1),
    ("kafka-metadata-quorum", ["--bootstrap-server", "CLOSED", "--command-config", "MISSING", "describe",
                               "--status"], 1),
    ("kafka-metadata-quorum", ["--bootstrap-server", "CLOSED", "--command-config", "GARBAGE", "describe",
                               "--status"], 1),
    ("kafka-metadata-quorum", ["--bootstrap-server", "CLOSED", "--command-config", "DIR", "describe",
                               "--status"], 1),
    ("kafka-metadata-quorum", ["--bootstrap-controller", "CLOSED", "add-controller"], 1),
    ("kafka-metadata-quorum", ["--bootstrap-controller", "CLOSED", "--command-config", "BADNODE",
                               "add-controller"], 1),
    ("kafka-metadata-quorum", ["--bootstrap-controller", "CLOSED", "remove-controller", "-i", "x", "-d", "y"], 1),
    ("kafka-metadata-quorum", ["--bootstrap-controller", "CLOSED", "remove-controller", "-i", "1", "-d", "y"], 1),
    ("kafka-metadata-quorum", ["--bootstrap-controller", "CLOSED", "remove-controller", "-i", "1", "-d",
                               "AAAAAAAAAAAAAAAAAAAAAA"], 69),
    ("kafka-features", ["--bogus"], 1),
    ("kafka-features", ["--bootstrap-controller", "CLOSED", "describe"], 69),
    ("kafka-features", ["--bootstrap-server", "CLOSED", "upgrade", "--release-version", "3.9-IV0"], 69),
    ("kafka-features", ["--bootstrap-server", "no-port", "describe"], 1),
    ("kafka-features", ["--bootstrap-server", "CLOSED", "--command-config", "MISSING", "version-mapping"], 1),
    ("kafka-features", ["--bootstrap-server", "CLOSED", "--command-config", "GARBAGE", "describe"], 1),
    ("kafka-features", ["--bootstrap-server", "CLOSED", "--command-config", "DIR", "describe"], 1),
    ("kafka-features", ["--bootstrap-server", "CLOSED", "upgrade"], 1),
    ("kafka-features", ["--bootstrap-server", "CLOSED", "disable", "--feature", "x", "--feature", "x"], 1),
    ("kafka-features", ["--bootstrap-server", "CLOSED", "--output", "json", "upgrade", "--unsafe"], 1),
    ("kafka-topics", ["--bogus"], 1),
    ("kafka-topics", ["--bootstrap-server", "CLOSED", "--list"], 69),
    ("kafka-topics", ["--bootstrap-server", "no-port", "--list"], 1),
    ("kafka-topics", ["--bootstrap-server", "CLOSED", "--command-config", "MISSING", "--list"], 1),
    ("kafka-topics", ["--bootstrap-server", "CLOSED", "--command-config", "GARBAGE", "--list"], 1),
    ("kafka-topics", ["--bootstrap-server", "CLOSED", "--command-config", "DIR", "--list"], 1),
    ("kafka-topics", ["--bootstrap-server", "CLOSED", "--create"], 1),
    ("kafka-topics", ["--bootstrap-server", "CLOSED", "--create", "--topic", "t", "--partitions", "x"], 1),
    ("kafka-topics", ["--bootstrap-server", "CLOSED", "--create", "--topic", "t", "--replica-assignment", "4:4"], 1),
    ("kafka-topics", ["--bootstrap-server", "CLOSED", "--create", "--topic", "t", "--config", "retention.ms=x"], 1),
    ("kafka-topics", ["--bootstrap-server", "CLOSED", "--list", "--topic"], 1),
    ("kafka-configs", ["--bogus"], 1),
    ("kafka-configs", ["--bootstrap-server", "CLOSED", "--describe", "--topic", "t"], 69),
    ("kafka-configs", ["--bootstrap-server", "no-port", "--describe", "--topic", "t"], 1),
    ("kafka-configs", ["--bootstrap-server", "CLOSED", "--command-config", "MISSING", "--describe", "--topic", "t"], 1),
    ("kafka-configs", ["--bootstrap-server", "CLOSED", "--command-config", "GARBAGE", "--describe", "--topic", "t"], 1),
    ("kafka-configs", ["--bootstrap-server", "CLOSED", "--command-config", "DIR", "--describe", "--topic", "t"], 1),
    ("kafka-configs", ["--bootstrap-server", "CLOSED", "--describe"], 1),
    ("kafka-configs", ["--bootstrap-server", "CLOSED", "--describe", "--alter", "--topic", "t"], 1),
    ("kafka-configs", ["--bootstrap-server", "CLOSED", "--alter", "--topic", "t", "--add-config", "k"], 1),
    ("kafka-configs", ["--bootstrap-server", "CLOSED", "--describe", "--broker", "x"], 1),
    ("kafka-configs", ["--bootstrap-server", "CLOSED", "--alter", "--topic", "t", "--add-config-file", "MISSING"], 1),
    ("kafka-acls", ["--bogus"], 1),
    ("kafka-acls", ["--bootstrap-server", "CLOSED", "--list"], 69),
    ("kafka-acls", ["--bootstrap-server", "no-port", "--list"], 1),
    ("kafka-acls", ["--bootstrap-server", "CLOSED", "--command-config", "MISSING", "--list"], 1),
    ("kafka-acls", ["--bootstrap-server", "CLOSED", "--command-config", "GARBAGE", "--list"], 1),
    ("kafka-acls", ["--bootstrap-server", "CLOSED", "--command-config", "DIR", "--list"], 1),
    ("kafka-acls", ["--bootstrap-server", "CLOSED", "--add", "--topic", "t"], 1),
    ("kafka-acls", ["--bootstrap-server", "CLOSED", "--add", "--allow-principal", "alice", "--topic", "t"], 1),
    ("kafka-acls", ["--bootstrap-server", "CLOSED", "--list", "--resource-pattern-type", "bogus"], 1),
    ("kafka-acls", ["--list"], 1),
    ("kafka-broker-api-versions", ["--bogus"], 1),
    ("kafka-broker-api-versions", ["--command-config", "MISSING"], 1),
    ("kafka-broker-api-versions", ["--bootstrap-server", "no-port"], 1),
    ("kafka-broker-api-versions", ["--bootstrap-server", "CLOSED", "--bootstrap-controller", "CLOSED"], 1),
    ("kafka-broker-api-versions", ["--bootstrap-server", "CLOSED", "--command-config", "MISSING"], 1),
    ("kafka-broker-api-versions", ["--bootstrap-server", "CLOSED", "--command-config", "GARBAGE"], 1),
    ("kafka-broker-api-versions", ["--bootstrap-server", "CLOSED", "--command-config", "DIR"], 1),
    ("kafka-leader-election", ["--bogus"], 1),
    ("kafka-leader-election", ["--bootstrap-server", "CLOSED", "--election-type", "preferred",
                               "--all-topic-partitions"], 69),
    ("kafka-leader-election", ["--bootstrap-server", "CLOSED", "--all-topic-partitions"], 1),
    ("kafka-leader-election", ["--bootstrap-server", "CLOSED", "--election-type", "x", "--all-topic-partitions"], 1),
    ("kafka-leader-election", ["--bootstrap-server", "CLOSED", "--election-type", "preferred", "--topic", "t"], 1),
    ("kafka-leader-election", ["--bootstrap-server", "CLOSED", "--election-type", "preferred", "--topic", "t",
                               "--partition", "x"], 1),
    ("kafka-leader-election", ["--bootstrap-server", "CLOSED", "--election-type", "preferred",
                               "--path-to-json-file", "GARBAGE"], 1),
    ("kafka-leader-election", ["--bootstrap-server", "CLOSED", "--election-type", "preferred",
                               "--path-to-json-file", "MISSING"], 1),
    ("kafka-leader-election", ["--bootstrap-server", "CLOSED", "--admin.config", "MISSING", "--election-type",
                               "preferred", "--all-topic-partitions"], 1),
    ("kafka-reassign-partitions", ["--bogus"], 1),
    ("kafka-reassign-partitions", ["--bootstrap-server", "CLOSED"], 1),
    ("kafka-reassign-partitions", ["--bootstrap-server", "CLOSED", "--verify"], 1),
    ("kafka-reassign-partitions", ["--bootstrap-server", "CLOSED", "--generate", "--broker-list", "1"], 1),
    ("kafka-reassign-partitions", ["--bootstrap-server", "CLOSED", "--verify", "--reassignment-json-file", "GARBAGE",
                                   "--throttle", "5"], 1),
    ("kafka-metadata-export", ["--bogus"], 64),
    ("kafka-metadata-export", ["-o", "OUT"], 64),
    ("kafka-metadata-export", ["--conf", "no-equals-sign", "-o", "OUT", "GARBAGE_LOG"], 64),
]
COMMANDS = {c.name: c for c in docs.commands()}


JAVA_TRACE = re.compile(r"^(\tat |Caused by: | \(org\.apache\.kafka\.[\w.]+\)$)")
# a Java exception's toString, the first line of its stack trace (after kafka-configs' and kafka-acls' "Error while
# executing ..." line)
JAVA_EXCEPTION = re.compile(r"^(java|javax|org\.apache\.kafka|joptsimple)\.[\w.$]+(Exception|Error)(: .*)?$")


def error_lines(stderr: str) -> list[str]:
    """Return stderr's lines minus argparse's usage block (`usage: ...` and its indented continuation), minus what
    Kafka's jopt-simple tools print around their one message: the option table after it (printUsageAndExit), and
    a stack trace (the exception's `class: message` line repeating the message, its frames, a log line's
    closing ` (logger)`)."""
    lines, out, in_usage = stderr.splitlines(), [], False
    for line in lines:
        if re.match(r"^Option +Description", line):
            break
        if line.startswith("usage: "):
            in_usage = True
            continue
        if in_usage and line[:1].isspace():
            continue
        in_usage = False
        if JAVA_TRACE.match(line) or (out and re.match(r"^[\w.$]+: ", line) and line.endswith(": " + out[-1])):
            continue
        if out and out[-1].startswith("Error while executing ") and JAVA_EXCEPTION.match(line):
            continue
        if line.strip():
            out.append(line)
    return out


def run_in_process(name: str, argv: list[str]) -> tuple[int, str, str]:
    command = COMMANDS[name]
    module = importlib.import_module(command.module)
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, stdin=io.StringIO(""), env={})
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run_command(module.run, argv, env, prog=name)
    return status, out.getvalue(), err.getvalue()


def script(name: str) -> list[str]:
    """The installed console script, or its module's main() run by this interpreter."""
    path = shutil.which(name)
    if path is not None:
        return [path]
    return [sys.executable, "-c", f"from {COMMANDS[name].module} import main; main()"]


def test_every_console_script_is_in_the_table():
    assert set(COMMANDS) == {name for name, _, _ in CASES}


@pytest.mark.parametrize("name,argv,code", CASES, ids=[f"{n} {' '.join(a)}" for n, a, _ in CASES])
def test_bad_input(name, argv, code, files):
    status, out, err = run_in_process(name, [files.get(a, a) for a in argv])
    assert "Traceback" not in out + err
    assert status == code, err
    lines = error_lines(err or out)       # kafka-acls prints a failure inside its action on stdout, as Kafka's
    if code == 2:  # kafka-dump-log ends a corrupt run with a summary line (how many batches failed, where)
        assert lines[-1].startswith(f"{name}: 1 batch failed: "), err
        lines = lines[:-1]
    assert len(lines) == 1, err
    assert "unexpected" not in lines[0], lines[0]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_bad_flag_through_the_console_script(name):
    code = next(c for n, a, c in CASES if n == name and a == ["--bogus"])
    result = subprocess.run(script(name) + ["--bogus"], capture_output=True, text=True, timeout=60,
                            stdin=subprocess.DEVNULL)
    assert "Traceback" not in result.stdout + result.stderr
    assert result.returncode == code, result.stderr
    assert len(error_lines(result.stderr)) == 1, result.stderr


UNREADABLE = [("kafka-storage", ["info", "-c", "FILE"]), ("kafka-controller", ["--config", "FILE"]),
              ("kafka-cluster", ["cluster-id", "-b", "CLOSED", "-c", "FILE"]),
              ("kafka-metadata-quorum", ["--bootstrap-server", "CLOSED", "--command-config", "FILE", "describe",
                                         "--status"]),
              ("kafka-features", ["--bootstrap-server", "CLOSED", "--command-config", "FILE", "describe"])]


@pytest.mark.skipif(not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() == 0,
                    reason="root reads files whatever their mode (the directory rows cover unreadable files)")
@pytest.mark.parametrize("name,argv", UNREADABLE, ids=[n for n, _ in UNREADABLE])
def test_config_without_read_permission(name, argv, files, tmp_path):
    path = tmp_path / "secret.properties"
    path.write_text("client.id=x\n")
    path.chmod(0)
    status, out, err = run_in_process(name, [str(path) if a == "FILE" else files.get(a, a) for a in argv])
    assert "Traceback" not in out + err
    assert status == 1 and len(error_lines(err)) == 1, err
