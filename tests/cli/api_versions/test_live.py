"""kafka-broker-api-versions live on the fixture cluster (kraftsman controllers 1-3, simulated Kafka 3.9 brokers 4 and
5): the API versions of every broker (each printed as the real Kafka 3.9 broker's was recorded), of every controller
with --bootstrap-controller (each line what that controller answers to ApiVersions), a broker stopped (left out)
and one killed (an ERROR line until it is fenced), JSON and YAML valid against
cli/schemas/broker-api-versions.schema.json, profiles and -X, and the console script in a pipe closed early."""
from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kraftsman.cli.api_versions.tool import run
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment

from ...admin_cluster import BOOTSTRAP_CONTROLLER, BOOTSTRAP_SERVER, CONTROLLER_PORTS, FIXTURES, AdminCluster
from ..test_json_schemas import Checker

B, C = ("--bootstrap-server", BOOTSTRAP_SERVER), ("--bootstrap-controller", BOOTSTRAP_CONTROLLER)
LINE = re.compile(r"^\t(\w+)\((\d+)\): (?:UNSUPPORTED|(-?\d+)(?: to (-?\d+))?(?: \[.*\])?),?$")

if not FIXTURES.is_dir():
    pytest.skip("the shared fixtures are absent (the fixture cluster and the recorded 3.9 broker)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with AdminCluster(tmp_path_factory.mktemp("api-versions-live")) as started:
        yield started


def kb(*argv: str, env: dict | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, list(argv), Environment(stdout=out, stderr=err, env=env or {}),
                         prog="kafka-broker-api-versions")
    return status, out.getvalue(), err.getvalue()


def blocks(text: str) -> dict[str, str]:
    """Return each node's block by its head line (`host:port (id: N rack: R) -> (`)."""
    return {b.split("\n", 1)[0]: b.split("\n", 1)[1] for b in text.split("\n)\n") if b}


def recorded_body() -> str:
    """Return the APIs of broker 4 as the real Kafka 3.9 kafka-broker-api-versions printed them."""
    return blocks((FIXTURES / "apiversions-broker4" / "stdout.txt").read_text())[
        "127.0.0.1:31014 (id: 4 rack: null) -> ("]


def test_every_broker_as_kafka_39s_were_recorded(cluster):
    status, out, err = kb(*B)
    assert (status, err) == (0, "")
    found = blocks(out)
    assert list(found) == ["127.0.0.1:31014 (id: 4 rack: null) -> (", "127.0.0.1:31015 (id: 5 rack: null) -> ("]
    assert all(body == recorded_body() for body in found.values())
    assert kb("--bootstrap-server", "127.0.0.1:31015,127.0.0.1:31014")[1] == out          # any bootstrap broker


def test_bootstrap_controller_lists_each_controllers_own_apis(cluster):
    from kraftsman.controller.client import sync_client as sc

    status, out, err = kb(*C)
    assert (status, err) == (0, "")
    found = blocks(out)
    assert list(found) == [f"127.0.0.1:{port} (id: {i} rack: null) -> (" for i, port in CONTROLLER_PORTS.items()]
    for head, body in found.items():
        port = int(re.match(r"127\.0\.0\.1:(\d+) ", head).group(1))
        with sc.SyncConnection.open("127.0.0.1", port, sc.ClientConfig(), __import__("time").monotonic() + 10) as conn:
            served = conn.api_versions
        listed = {}
        for line in body.splitlines():
            _name, key, low, high = LINE.match(line).groups()[:4]
            if low is not None:
                listed[int(key)] = (int(low), int(high if high is not None else low))
        assert listed == served, head
        assert "\tVote(52): 0 to 2 [usable: 1],\n" in body          # kraftsman's v2, Kafka 3.9's client: v1
        assert "\tProduce(0): UNSUPPORTED,\n" in body


def test_a_broker_down(cluster):
    cluster.stop_broker(5)                         # SIGTERM: fenced, so Metadata lists broker 4 only
    try:
        status, out, err = kb(*B)
        assert (status, err) == (0, "")
        assert list(blocks(out)) == ["127.0.0.1:31014 (id: 4 rack: null) -> ("]
        status, out, err = kb("--bootstrap-server", "127.0.0.1:31015", "--timeout", "5")
        assert (status, out) == (69, "") and "Request METADATA failed on brokers List(127.0.0.1:31015" in err
    finally:
        cluster.start_broker(5)
    cluster.kill_broker(5)                         # SIGKILL: listed until its session times out
    try:
        status, out, err = kb(*B)
        assert status == 0
        assert "127.0.0.1:31015 (id: 5 rack: null) -> ERROR: org.apache.kafka.common.errors.DisconnectException\n" \
            in out, out
        assert "Connection to node 5 (/127.0.0.1:31015) could not be established. Node may not be available." in err
    finally:
        cluster.start_broker(5)


def test_json_and_yaml_follow_the_schema(cluster):
    check = Checker("broker-api-versions", one_line=True)
    doc = check(kb(*B, "--output", "json"), 0, "report")
    assert [n["id"] for n in doc["nodes"]] == [4, 5] and doc["endpoint_type"] == "broker"
    vote = {n["id"]: next(a for a in n["apis"] if a["api_key"] == 52)
            for n in check(kb(*C, "--output", "json"), 0, "report")["nodes"]}
    assert set(vote) == {1, 2, 3} and all(v["usable_version"] == 1 and v["max_version"] == 2 for v in vote.values())
    check(kb("--bootstrap-server", "127.0.0.1:31999", "--output", "json"), 69, "error")
    check(kb("--output", "json", "--timeout", "3"), 1, "error")
    check.all_seen()
    status, out, _ = kb(*B, "--output", "yaml")
    assert status == 0 and yaml.safe_load(out) == doc


def test_profile_and_client_settings(cluster, tmp_path):
    (tmp_path / "kraftsman").mkdir()
    (tmp_path / "kraftsman" / "config.yaml").write_text(
        f"current-profile: live\nprofiles:\n  live:\n    bootstrap-controller: {BOOTSTRAP_CONTROLLER}\n"
        "    output: json\n")
    status, out, _ = kb("--profile", "live", env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert status == 0 and json.loads(out)["endpoint_type"] == "controller"
    status, out, _ = kb(*B, "-X", "client.id=api-versions-live", "-X", "request.timeout.ms=5000",
                        env={"XDG_CONFIG_HOME": str(tmp_path)})         # the command line's bootstrap wins
    assert status == 0 and json.loads(out)["endpoint_type"] == "broker"     # the profile's output
    status, _, err = kb(*B, "-X", "request.timeout.ms=soon")
    assert status == 1 and "request.timeout.ms" in err and "Traceback" not in err


def test_the_console_script_in_a_pipe_closed_early(cluster):
    script = Path(sys.executable).parent / "kafka-broker-api-versions"
    if not script.exists():
        pytest.skip("the console script is not installed (pip install -e .)")
    done = subprocess.run(["bash", "-c", f"set -o pipefail; {script} --bootstrap-server {BOOTSTRAP_SERVER} | head -1"],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "127.0.0.1:31014 (id: 4 rack: null) -> (\n", "")
