"""kafka-storage format's texts where a new user met a dead end: Kafka 3.9's own words in Kafka's order (the
listeners are parsed before zookeeper.connect is asked for), the I/O error lines before `No available log
directories to format.`, and one kraftsman hint line under a Kafka text that does not say what to do."""
from __future__ import annotations

import io

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.storage import tool as storage_tool

CID = "MkU3OEVBNTcwNTJENDM2Qg"


def storage(*argv):
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), env={})
    status = run_command(storage_tool.run, list(argv), env, prog="kafka-storage")
    return status, env.stdout.getvalue(), env.stderr.getvalue()


def write(tmp_path, text: str) -> str:
    path = tmp_path / "server.properties"
    path.write_text(text)
    return str(path)


def test_no_process_roles_and_a_listener_without_protocol_says_what_kafka_says(tmp_path):
    cfg = write(tmp_path, f"node.id=1\nlisteners=FOO://:9092\nlog.dirs={tmp_path}/d\n")
    assert storage("format", "-c", cfg, "-t", CID) == (
        1, "", "Error creating broker listeners from 'FOO://:9092': No security protocol defined for listener FOO\n")
    assert not (tmp_path / "d").exists()


def test_no_process_roles_with_good_listeners_still_asks_for_zookeeper(tmp_path):
    cfg = write(tmp_path, f"node.id=1\nlisteners=PLAINTEXT://:9092\nlog.dirs={tmp_path}/d\n")
    assert storage("format", "-c", cfg, "-t", CID) == (
        1, "", "Missing required configuration `zookeeper.connect` which has no default value.\n")


def test_node_id_mismatch_comes_after_the_listeners(tmp_path):
    cfg = write(tmp_path, f"process.roles=controller\nnode.id=1\nbroker.id=2\nlisteners=FOO://:9092\n"
                          f"log.dirs={tmp_path}/d\n")
    status, _, err = storage("format", "-c", cfg, "-t", CID)
    assert (status, err) == (1, "Error creating broker listeners from 'FOO://:9092': No security protocol defined "
                                "for listener FOO\n")


def test_every_directory_unreadable_prints_kafkas_lines_then_a_hint(tmp_path):
    (tmp_path / "afile").write_text("")   # a file where a log directory should be: reading it fails
    cfg = write(tmp_path, "process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093\n"
                          f"listeners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\nlog.dirs={tmp_path}/afile\n")
    status, out, err = storage("format", "-c", cfg, "-t", CID)
    assert status == 1
    assert out == f"I/O error trying to read log directory {tmp_path}/afile. Ignoring...\n"
    first, hint = err.splitlines()
    assert first == "No available log directories to format."
    assert hint.startswith("kafka-storage: hint: every log directory named by log.dirs") and "I/O error" in hint

