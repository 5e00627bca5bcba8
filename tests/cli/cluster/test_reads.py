"""kafka-cluster's reads against scripted servers: what a server below DescribeCluster v2 cannot tell, a Kafka 3.9
controller (lists no brokers) read through its log as a non-replica, health's partition counts from that log."""
from __future__ import annotations

import io
import json

from kraftsman.cli.cluster import tool as cluster_tool
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.controller.raft import messages as msg
from kraftsman.controller.raft import records as R
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record

from ...controller.server.kafka39_fakes import kafka39_quorum
from ...controller.server.sync_fakes import FakeServer, body

V1_RANGES = {18: (0, 4), 60: (0, 1), 64: (0, 0)}


def kc(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = run_command(cluster_tool.run, list(argv), Environment(stdout=out, stderr=err, env={}),
                         prog="kafka-cluster")
    return status, out.getvalue(), err.getvalue()


def unfenced_only(header, request):
    """A Kafka 3.9 broker's DescribeCluster: unfenced brokers, no kraftsman tag."""
    cls = body("DescribeClusterResponse").__class__
    return cls(cluster_id="abcdefghijklmnopqrstuv", controller_id=4, endpoint_type=1,
               brokers=[cls.DescribeClusterBroker(broker_id=4, host="h4", port=9092)])


def test_a_server_below_v2_lists_unfenced_brokers_only_and_says_so():
    with FakeServer(unfenced_only, ranges=V1_RANGES) as server:
        status, out, _ = kc("describe-brokers", "-b", server.address)
        assert status == 0 and out.endswith("(this server's DescribeCluster lists unfenced brokers only)\n")
        status, out, err = kc("wait", "--id", "4", "--state", "fenced", "-b", server.address, "--timeout", "3")
        assert (status, out) == (1, "") and "lists unfenced brokers only (below v2)" in err
        status, _, err = kc("wait", "--id", "4", "--state", "unfenced", "--incarnation-changed-from", "x", "-b",
                            server.address, "--timeout", "3")
        assert status == 1 and "tells no incarnation id" in err
        status, out, _ = kc("unregister", "--id", "5", "-b", server.address, "--dry-run", "--output", "json")
        assert (status, json.loads(out)["result"]) == (1, "not_active_unknown")
        status, out, _ = kc("unregister", "--id", "5", "-b", server.address, "--dry-run", "--missing-ok")
        assert status == 0 and "exit 0 either way" in out
        status, out, _ = kc("list-endpoints", "-b", server.address, "--include-fenced-brokers")
        assert status == 0 and "does not support DescribeCluster API version 2" in out


def test_a_dry_run_against_a_server_without_unregister_predicts_its_exit_0():
    with FakeServer(unfenced_only, ranges={18: (0, 4), 60: (0, 1)}) as server:
        status, out, _ = kc("unregister", "--id", "5", "-b", server.address, "--dry-run", "--output", "json")
        assert (status, json.loads(out)["result"]) == (0, "unsupported")
        assert kc("unregister", "--id", "5", "-b", server.address)[0] == 0


def _values(*records) -> list[bytes]:
    return [write_metadata_record(ApiMessageAndVersion(codec.message_class(name)(**fields), version))
            for name, version, fields in records]


def _broker(broker_id: int, fenced: bool):
    cls = codec.message_class("RegisterBrokerRecord")
    endpoint = cls.BrokerEndpoint(name="PLAINTEXT", host=f"b{broker_id}", port=9092, security_protocol=0)
    return ("RegisterBrokerRecord", 3, dict(broker_id=broker_id, broker_epoch=10 + broker_id, fenced=fenced,
                                            incarnation_id=Uuid(bytes([broker_id]) * 16), end_points=[endpoint],
                                            log_dirs=[Uuid(bytes([9]) * 16)], rack=None))


def _partition(pid: int, isr: list[int], leader: int):
    return ("PartitionRecord", 1, dict(partition_id=pid, topic_id=Uuid(bytes([7]) * 16), replicas=[1, 2], isr=isr,
                                       leader=leader, leader_epoch=0, partition_epoch=0,
                                       directories=[Uuid(bytes(16))] * 2))


def test_a_kafka_controller_that_lists_no_brokers_is_read_through_its_log_as_a_non_replica():
    records = _values(_broker(1, False), _broker(2, True),
                      ("TopicRecord", 0, dict(name="t", topic_id=Uuid(bytes([7]) * 16))),
                      _partition(0, [1, 2], 1), _partition(1, [1], 1), _partition(2, [1], -1))
    with kafka39_quorum() as quorum:
        quorum.log = [R.data_batch(records, 0, 3)]
        quorum.high_watermark = len(records)
        c = quorum.address(1)                      # a standby: the reads find the active controller themselves
        status, out, err = kc("describe-brokers", "-C", c, "--output", "json")
        doc = json.loads(out)
        assert status == 0 and doc["source"] == "metadata", err
        assert [(b["id"], b["fenced"], b["epoch"]) for b in doc["brokers"]] == [(1, False, 11), (2, True, 12)]
        assert kc("wait", "--id", "2", "--state", "fenced", "-C", c, "--timeout", "5")[0] == 0
        status, out, _ = kc("health", "-C", c, "--output", "json")
        doc = json.loads(out)
        assert status == 5 and doc["partitions"] == {"total": 3, "offline": ["t-2"], "under_replicated": ["t-1", "t-2"]}
        assert doc["brokers"]["fenced"] == [2]
        fetches = [r for h, r in quorum.servers[3].requests if h.request_api_key == 1]
        assert fetches and {msg.fetch_replica_id(r) for r in fetches} == {-1}     # no replica id: no observer row
