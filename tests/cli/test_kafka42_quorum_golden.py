"""Golden: ../shared/fixtures/kafka-4.2/quorum/ replayed against a kraftsman quorum speaking Kafka 4.2.

The recording ran three 4.2 controllers (ids 1-3, static voters, CONTROLLER://127.0.0.1:30093-30095, cluster id
MkU3OEVBNTcwNTJENDM2Qg, formatted with 4.2's defaults) and one 4.2 broker (id 4 on 127.0.0.1:30092). Here: three
kraftsman controller processes formatted and run with KRAFTSMAN_KAFKA_VERSION=4.2 and a strict 4.2 simulated broker
4, whose advertised listener stands in for the broker's; kraftsman has no broker listener, so `--bootstrap-server
127.0.0.1:30092` goes to a controller (which answers those reads, as kraftsman's controllers do).

Compared: exit code, stdout and stderr, with the recorded ports mapped to ours and only what the README names as
varying masked (LeaderId, LeaderEpoch, HighWatermark, MaxFollowerLagTimeMs, LogEndOffset, the fetch timestamps, the
observer's directoryId, Epoch). Kafka's stack traces and log lines are kraftsman's one line; help screens are
click's (the options are compared).
"""
from __future__ import annotations

import io
import re
import shlex
import time
from pathlib import Path

import pytest

from kraftsman.cli.cluster import tool as cluster_tool
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.demo.local_quorum import free_ports
from kraftsman.cli.features import tool as features_tool
from kraftsman.cli.quorum import tool as quorum_tool
from kraftsman.cli.storage import tool as storage_tool

from ..controller.server.quorum_fixtures import loop_fixture, running_brokers, running_quorum, wait_for

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO.parent / "shared" / "fixtures" / "kafka-4.2" / "quorum"
CASES = sorted(p for p in FIXTURES.iterdir() if (p / "cmd.txt").is_file() and not p.name.startswith("format-")) \
    if FIXTURES.is_dir() else []
FORMATS = sorted(FIXTURES.glob("format-*")) if FIXTURES.is_dir() else []
TOOLS = {"kafka-features.sh": (features_tool.run, "kafka-features"),
         "kafka-cluster.sh": (cluster_tool.run, "kafka-cluster"),
         "kafka-metadata-quorum.sh": (quorum_tool.run, "kafka-metadata-quorum")}
K42 = {"KRAFTSMAN_KAFKA_VERSION": "4.2"}
VARYING = [(r"(?m)^(LeaderId|LeaderEpoch|HighWatermark|MaxFollowerLagTimeMs):( +)\d+$", r"\1:\2X"),
           (r'"directoryId": "[A-Za-z0-9_-]{22}"', '"directoryId": "X"'), (r"Epoch: \d+", "Epoch: X")]
loop = loop_fixture()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, loop):
    if not CASES:
        pytest.skip(f"Kafka 4.2 quorum recordings not found under {FIXTURES} (../shared absent)")
    with running_quorum(tmp_path_factory.mktemp("kafka42-golden"), loop, kafka_version="4.2") as q:
        port = free_ports(1)[0]
        with running_brokers(q, loop, (4,), kafka_version="4.2", host="127.0.0.1", port=port) as sims:
            wait_for(lambda: sims[0].metadata_offset > 0)
            time.sleep(1)                    # the observer's fetches reach every DescribeQuorum answer
            ports = {str(30093 + i): str(q.ports[i + 1]) for i in range(3)} | {"30092": str(port)}
            yield q, ports


def _ported(text: str, ports: dict) -> str:
    for recorded, ours in ports.items():
        text = text.replace(recorded, ours)
    return text


def _run(case: Path, quorum, ports: dict) -> tuple[int, str, str]:
    argv = shlex.split(_ported(case.joinpath("cmd.txt").read_text(), ports))
    run, prog = TOOLS[argv[0].rsplit("/", 1)[-1]]
    if "--bootstrap-server" in argv:             # no broker listener: a controller answers
        argv[argv.index("--bootstrap-server") + 1] = quorum.bootstrap().split(",")[0]
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, argv[1:], Environment(stdout=out, stderr=err, env=dict(K42)), prog=prog)
    return status, out.getvalue(), err.getvalue()


def _mask(text: str) -> str:
    for pattern, replacement in VARYING:
        text = re.sub(pattern, replacement, text)
    return text


def _replication_rows(text: str) -> list[tuple]:
    """The --replication table as (status, directory id kind) rows, sorted: ids, offsets and times vary."""
    rows = [line.split("\t") for line in text.splitlines()[1:]]
    return sorted((r[6].strip(), r[0].strip() == "4", r[1].strip() == "A" * 22) for r in rows)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_quorum_case_matches_kafka_4_2(case: Path, cluster):
    quorum, ports = cluster
    status, out, err = _run(case, quorum, ports)
    expected_out = _ported(case.joinpath("stdout.txt").read_text(), ports)
    expected_err = case.joinpath("stderr.txt").read_text()
    assert status == int(case.joinpath("rc.txt").read_text())
    if case.name.endswith("-help"):
        assert all(flag in out for flag in re.findall(r"--[a-z-]+", expected_out))
    elif "replication" in case.name:
        assert out.splitlines()[0] == expected_out.splitlines()[0]
        assert _replication_rows(out) == _replication_rows(expected_out)
    elif expected_err.lstrip().startswith(("[", "org.apache", "java.")):      # Kafka's log line and stack trace
        message = re.search(r"Exception: (.*)", expected_err).group(1)
        assert out == expected_out and message in err
    else:
        assert (_mask(out), err) == (_mask(expected_out), expected_err)


@pytest.mark.parametrize("case", FORMATS, ids=[c.name for c in FORMATS])
def test_the_controllers_format_as_kafka_4_2_did(case: Path, tmp_path):
    argv = shlex.split(case.joinpath("cmd.txt").read_text().replace("SCRATCH", str(tmp_path)))[1:]
    config = Path(argv[argv.index("-c") + 1])
    config.parent.mkdir()
    config.write_text(case.joinpath("server.properties").read_text().replace("SCRATCH", str(tmp_path)))
    out, err = io.StringIO(), io.StringIO()
    status = run_command(storage_tool.run, argv, Environment(stdout=out, stderr=err, env=dict(K42)),
                         prog="kafka-storage")
    expected = case.joinpath("stdout.txt").read_text().replace("SCRATCH", str(tmp_path))
    assert (status, out.getvalue(), err.getvalue()) == (0, expected, "")
