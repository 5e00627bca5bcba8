"""Every client reaches the active controller of a Kafka 3.9 quorum from one standby's address (issue 22).

The standbys answer with real Kafka 3.9 frames (tests/controller/server/kafka39_fakes.py): their refusals name
no leader, their DescribeCluster names the active controller and lists the controllers' endpoints. No test
passes --timeout: each must finish well under the default 30 s that a client looping on refusals would use.
"""
from __future__ import annotations

import io
import json
import time

import pytest

from kraftsman.cli.cluster import tool as cluster_tool
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.features import tool as features_tool
from kraftsman.cli.quorum import tool as metadata_quorum
from kraftsman.cli.shell import tool as metadata_shell
from kraftsman.controller.raft import records as R
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record

from ..controller.server.kafka39_fakes import ACTIVE, ACTIVE_EPOCH, kafka39_quorum

CLUSTER_ID = "Xq3mZ8tnT3ahbQ6c2Rj1Vw"      # the recorded cluster's id, carried by the real DescribeCluster frame
QUICK = 5.0                                # seconds: far below the 30 s default timeout
TOOLS = {"kafka-cluster": cluster_tool.run, "kafka-features": features_tool.run,
         "kafka-metadata-quorum": metadata_quorum.run, "kafka-metadata-shell": metadata_shell.run}


def tool(name: str, *argv: str) -> tuple[int, str, str, float]:
    """Run a tool in-process; return (status, stdout, stderr, seconds)."""
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    status = run_command(TOOLS[name], list(argv), Environment(stdout=out, stderr=err, env={}), prog=name)
    return status, out.getvalue(), err.getvalue(), time.monotonic() - started


@pytest.fixture
def quorum():
    with kafka39_quorum() as q:
        yield q


def topic_batch(name: str, offset: int):
    message = codec.message_class("TopicRecord")(name=name, topic_id=Uuid(bytes([offset + 1]) * 16))
    return R.data_batch([write_metadata_record(ApiMessageAndVersion(message, 0))], offset, 3)


# ---------------------------------------------------------------- one test per client


def test_metadata_quorum_describe_reaches_the_leader_through_a_standby(quorum):
    status, out, err, seconds = tool("kafka-metadata-quorum", "--bootstrap-controller", quorum.address(1),
                                     "describe", "--status")
    assert (status, err) == (0, "") and seconds < QUICK
    assert f"ClusterId:              {CLUSTER_ID}\n" in out and "LeaderId:               3\n" in out
    assert 55 in quorum.apis(ACTIVE) and 55 not in quorum.apis(1)      # the standby is only asked where it is


def test_cluster_id_and_list_endpoints_come_from_the_active_controller(quorum):
    status, out, err, seconds = tool("kafka-cluster", "cluster-id", "-C", quorum.address(1))
    assert (status, out, err) == (0, f"Cluster ID: {CLUSTER_ID}\n", "") and seconds < QUICK
    status, out, err, seconds = tool("kafka-cluster", "list-endpoints", "-C", quorum.address(2), "--output", "json")
    assert (status, err) == (0, "") and seconds < QUICK
    rows = json.loads(out)["endpoints"]
    assert [(r["id"], r["port"]) for r in rows] == [(i, quorum.servers[i].port) for i in (1, 2, 3)]
    assert quorum.apis(ACTIVE) == [60, 60] and quorum.apis(1) == [60] and quorum.apis(2) == [60]


def test_unregister_through_a_standby_goes_to_the_active_controller(quorum):
    status, out, err, seconds = tool("kafka-cluster", "unregister", "--id", "4", "-C", quorum.address(1))
    assert (status, out, err) == (0, "Broker 4 is no longer registered.\n", "") and seconds < QUICK
    assert quorum.apis(1) == [60] and quorum.apis(ACTIVE) == [64]


def test_unregister_through_a_refusing_bootstrap_server_asks_it_for_the_active_controller(quorum):
    status, out, err, seconds = tool("kafka-cluster", "unregister", "--id", "4", "-b", quorum.address(2))
    assert (status, out, err) == (0, "Broker 4 is no longer registered.\n", "") and seconds < QUICK
    assert quorum.apis(2) == [64, 60] and quorum.apis(ACTIVE) == [64]    # refused, then DescribeCluster


def test_features_describe_is_the_active_controllers(quorum):
    status, out, err, seconds = tool("kafka-features", "--bootstrap-controller", quorum.address(1), "describe")
    assert (status, err) == (0, "") and seconds < QUICK
    assert f"Epoch: {ACTIVE_EPOCH}" in out      # the standby's recorded answer says epoch 4


def test_features_upgrade_through_a_standby(quorum):
    status, out, err, seconds = tool("kafka-features", "--bootstrap-controller", quorum.address(2), "upgrade",
                                     "--feature", "group.version=1")
    assert (status, out, err) == (0, "group.version was upgraded to 1.\n", "") and seconds < QUICK
    assert 57 not in quorum.apis(2) and quorum.apis(ACTIVE).count(57) == 1


def test_live_shell_follows_the_leader_a_standby_names_in_its_fetch_refusal(quorum):
    quorum.log = [topic_batch("orders", 0), topic_batch("payments", 1)]
    quorum.high_watermark = 2
    status, out, err, seconds = tool("kafka-metadata-shell", "--bootstrap-controller", quorum.address(1),
                                     "ls", "/image/topics/byName")
    assert (status, out, err) == (0, "orders\npayments\n", "") and seconds < QUICK
    assert quorum.apis(1) == [55, 1] and quorum.apis(ACTIVE) == [1]   # DescribeQuorum names no one; Fetch does


def test_live_shell_with_one_standby_voter_follows_the_leader_endpoint(quorum):
    quorum.log, quorum.high_watermark = [topic_batch("orders", 0)], 1
    status, out, err, seconds = tool("kafka-metadata-shell", "--controllers", f"2@{quorum.address(2)}",
                                     "ls", "/image/topics/byName")
    assert (status, out, err) == (0, "orders\n", "") and seconds < QUICK


def test_live_shell_looks_up_a_leader_named_without_endpoint_in_describe_cluster(quorum):
    quorum.log, quorum.high_watermark, quorum.fetch_endpoints = [topic_batch("orders", 0)], 1, False
    status, out, err, seconds = tool("kafka-metadata-shell", "--bootstrap-controller", quorum.address(2),
                                     "ls", "/image/topics/byName")
    assert (status, out, err) == (0, "orders\n", "") and seconds < QUICK
    assert quorum.apis(2) == [55, 1, 60] and quorum.apis(ACTIVE) == [1]


def test_observer_waits_out_an_election_and_then_follows_the_new_leader(quorum):
    import threading

    from kraftsman.controller.client import sync_client as sc
    from kraftsman.controller.client.observer import Observer

    quorum.log, quorum.high_watermark, quorum.election = [topic_batch("orders", 0)], 1, True
    def elected():
        quorum.leader_epoch, quorum.election = 4, False     # node 3 won the election in epoch 4
    threading.Timer(0.5, elected).start()
    observer = Observer(sc.ClientConfig(), bootstrap=[("127.0.0.1", quorum.servers[1].port)], backoff_ms=50)
    started = time.monotonic()
    view = observer.catch_up(started + 10)
    assert view.leader_id == ACTIVE and sorted(view.image.topics.by_name) == ["orders"]
    assert 0.5 <= time.monotonic() - started < QUICK
    observer.close()


# ---------------------------------------------------------------- refusals until the deadline


def test_only_refusals_until_the_deadline_say_so_and_exit_69(quorum):
    quorum.election = True          # ControllerId -1: the standbys name no one
    standby = quorum.address(1)
    status, out, err, seconds = tool("kafka-cluster", "unregister", "--id", "4", "-C", standby, "--timeout", "1")
    assert (status, out) == (69, "") and seconds < 2
    assert err == ("every controller answered NOT_CONTROLLER to UnregisterBroker and none named the active "
                   f"controller within 1 s (last answer from {standby})\n")
    status, out, err, _ = tool("kafka-metadata-quorum", "--bootstrap-controller", standby, "--timeout", "1",
                               "describe", "--replication")
    assert (status, out) == (69, "") and err.startswith("every controller answered NOT_LEADER_OR_FOLLOWER to "
                                                        "DescribeQuorum and none named the active controller")
    status, out, err, _ = tool("kafka-metadata-shell", "--bootstrap-controller", standby, "--timeout", "1", "ls")
    assert (status, out) == (69, "")
    assert err == ("kafka-metadata-shell: every controller answered NOT_LEADER_OR_FOLLOWER and none named the "
                   f"leader within 1 s (last answer from {standby})\n")


def test_an_unreachable_active_controller_is_named_in_the_error(quorum):
    active = quorum.address(ACTIVE)
    quorum.servers[ACTIVE].close()
    status, out, err, seconds = tool("kafka-features", "--bootstrap-controller", quorum.address(1), "--timeout",
                                     "1", "upgrade", "--feature", "group.version=1")
    assert (status, out) == (69, "") and seconds < 2 and err.count("\n") == 1
    assert err.startswith(f"cannot connect to {active}: Connection refused (node 3 at {active}, named the "
                          f"active controller by {quorum.address(1)})")
