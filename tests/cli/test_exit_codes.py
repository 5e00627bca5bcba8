"""One exit-code rule across every tool, table-tested: a bad flag, a missing required flag, an unreachable server,
success (README "Exit codes"; common.boundary.usage_exit for bad command lines).

Kafka's drop-ins exit 1 for a bad command line, kraftsman's own commands 64, whatever --output asks (issue 31:
--output json|yaml used to turn it into 64); an unreachable cluster is 69 everywhere; success is 0.
"""
from __future__ import annotations

import importlib
import io
import socket

import pytest

from kraftsman.cli import app
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.common.status import ExitStatus

from ..controller.server.sync_fakes import FakeServer
from .cluster.test_tool import RANGES, describe_handler
from .storage.test_tool import CID, config

BAD, MISSING, UNREACHABLE, OK = "bad flag", "missing required flag", "unreachable server", "success"


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def run(script: str, argv: list[str]) -> tuple[int, str]:
    module = importlib.import_module(app.by_script(script).module)
    err = io.StringIO()
    env = Environment(stdout=io.StringIO(), stderr=err, stdin=io.StringIO(), env={})
    return run_command(module.run, list(argv), env, prog=script), err.getvalue()


TABLE = [
    ("kafka-storage", BAD, ["info", "--bogus"], ExitStatus.ERROR),
    ("kafka-storage", MISSING, ["info"], ExitStatus.ERROR),
    ("kafka-storage", OK, ["random-uuid"], ExitStatus.OK),
    ("kafka-cluster", BAD, ["cluster-id", "--bogus", "-b", "h:1"], ExitStatus.ERROR),
    ("kafka-cluster", MISSING, ["cluster-id"], ExitStatus.ERROR),
    ("kafka-cluster", UNREACHABLE, ["cluster-id", "-b", "CLOSED", "--timeout", "2"], ExitStatus.UNAVAILABLE),
    ("kafka-cluster", OK, ["cluster-id", "-b", "SERVER"], ExitStatus.OK),
    ("kafka-metadata-quorum", BAD, ["--bogus"], ExitStatus.ERROR),
    ("kafka-metadata-quorum", MISSING, ["describe", "--status"], ExitStatus.ERROR),
    ("kafka-metadata-quorum", UNREACHABLE, ["-C", "CLOSED", "--timeout", "2", "describe", "--status"],
     ExitStatus.UNAVAILABLE),
    ("kafka-features", BAD, ["describe", "--bogus"], ExitStatus.ERROR),
    ("kafka-features", MISSING, ["describe"], ExitStatus.ERROR),
    ("kafka-features", UNREACHABLE, ["-b", "CLOSED", "--timeout", "2", "describe"], ExitStatus.UNAVAILABLE),
    ("kafka-topics", BAD, ["--bogus"], ExitStatus.ERROR),
    ("kafka-topics", MISSING, ["--list"], ExitStatus.ERROR),
    ("kafka-topics", UNREACHABLE, ["--bootstrap-server", "CLOSED", "--timeout", "2", "--list"], ExitStatus.UNAVAILABLE),
    ("kafka-topics", MISSING + " (json)", ["--bootstrap-server", "CLOSED", "--create", "--output", "json"],
     ExitStatus.ERROR),
    ("kafka-configs", BAD, ["--bogus"], ExitStatus.ERROR),
    ("kafka-configs", MISSING, ["--describe", "--topic", "t"], ExitStatus.ERROR),
    ("kafka-configs", UNREACHABLE, ["--bootstrap-server", "CLOSED", "--timeout", "2", "--describe", "--topic", "t"],
     ExitStatus.UNAVAILABLE),
    ("kafka-configs", MISSING + " (json)", ["--bootstrap-server", "CLOSED", "--alter", "--topic", "t", "--output",
                                            "json"], ExitStatus.ERROR),
    ("kafka-acls", BAD, ["--bogus"], ExitStatus.ERROR),
    ("kafka-acls", MISSING, ["--bootstrap-server", "CLOSED", "--add", "--topic", "t"], ExitStatus.ERROR),
    ("kafka-acls", UNREACHABLE, ["--bootstrap-server", "CLOSED", "--timeout", "2", "--list"], ExitStatus.UNAVAILABLE),
    ("kafka-broker-api-versions", BAD, ["--bogus"], ExitStatus.ERROR),
    ("kafka-broker-api-versions", MISSING, ["--timeout", "2"], ExitStatus.ERROR),
    ("kafka-broker-api-versions", UNREACHABLE, ["--bootstrap-server", "CLOSED", "--timeout", "2"],
     ExitStatus.UNAVAILABLE),
    ("kafka-broker-api-versions", MISSING + " (json)", ["--output", "json"], ExitStatus.ERROR),
    ("kafka-leader-election", BAD, ["--bogus"], ExitStatus.ERROR),
    ("kafka-leader-election", MISSING, ["--bootstrap-server", "CLOSED", "--all-topic-partitions"], ExitStatus.ERROR),
    ("kafka-leader-election", UNREACHABLE, ["--bootstrap-server", "CLOSED", "--timeout", "2", "--election-type",
                                            "preferred", "--all-topic-partitions"], ExitStatus.UNAVAILABLE),
    ("kafka-reassign-partitions", BAD, ["--bogus"], ExitStatus.ERROR),
    ("kafka-reassign-partitions", MISSING, ["--bootstrap-server", "CLOSED", "--verify"], ExitStatus.ERROR),
    ("kafka-reassign-partitions", UNREACHABLE, ["--bootstrap-server", "CLOSED", "--list"], ExitStatus.UNAVAILABLE),
    ("kafka-reassign-partitions", MISSING + " (json)", ["--bootstrap-server", "CLOSED", "--list", "--execute",
                                                        "--output", "json"], ExitStatus.ERROR),
    ("kafka-metadata-shell", BAD, ["--bogus"], ExitStatus.ERROR),
    ("kafka-metadata-shell", MISSING, ["ls"], ExitStatus.ERROR),
    ("kafka-metadata-shell", UNREACHABLE, ["-C", "CLOSED", "--timeout", "2", "ls"], ExitStatus.UNAVAILABLE),
    ("kafka-metadata-shell", OK, ["--snapshot", "SNAPSHOT", "ls", "/image"], ExitStatus.OK),
    ("kafka-dump-log", BAD, ["--bogus"], ExitStatus.ERROR),
    ("kafka-dump-log", MISSING, ["--cluster-metadata-decoder"], ExitStatus.ERROR),
    ("kafka-dump-log", OK, ["--cluster-metadata-decoder", "--files", "SNAPSHOT"], ExitStatus.OK),
    ("kafka-controller", BAD, ["--bogus"], ExitStatus.USAGE),
    ("kafka-controller", MISSING, [], ExitStatus.USAGE),
    ("kraftsman-demo", BAD, ["--bogus"], ExitStatus.USAGE),
    ("kafka-metadata-export", BAD, ["--bogus"], ExitStatus.USAGE),
    ("kafka-metadata-export", MISSING, ["x.log"], ExitStatus.USAGE),
    ("kafka-cluster", BAD + " (json)", ["cluster-id", "--bogus", "-b", "h:1", "--output", "json"], ExitStatus.ERROR),
    ("kafka-storage", MISSING + " (yaml)", ["info", "--output", "yaml"], ExitStatus.ERROR),
    ("kafka-metadata-quorum", MISSING + " (yaml)", ["--output", "yaml", "describe", "--status"], ExitStatus.ERROR),
    ("kafka-metadata-shell", BAD + " (json)", ["--output", "json", "--bogus"], ExitStatus.ERROR),
    ("kafka-metadata-export", BAD + " (jsonl)", ["--format", "jsonl", "--bogus"], ExitStatus.USAGE),
]


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    """Return the stand-ins of the table: a closed port, a fake Kafka server, a real bootstrap snapshot."""
    from kraftsman.cli.storage.tool import run as storage_run

    tmp = tmp_path_factory.mktemp("exit-codes")
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), env={})
    assert storage_run(["format", "-c", config(tmp), "-t", CID], env) == 0, env.stderr.getvalue()
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        yield {"CLOSED": closed_port(), "SERVER": server.address,
               "SNAPSHOT": str(tmp / "data" / "bootstrap.checkpoint")}


@pytest.mark.parametrize("script,situation,argv,expected", TABLE, ids=[f"{s} {w}" for s, w, _, _ in TABLE])
def test_the_same_situation_gives_the_same_code(places, script, situation, argv, expected):
    status, err = run(script, [places.get(word, word) for word in argv])
    assert status == expected, err
    assert "Traceback" not in err


def test_every_tool_is_in_the_table():
    assert {t.script for t in app.TOOLS} <= {row[0] for row in TABLE}
