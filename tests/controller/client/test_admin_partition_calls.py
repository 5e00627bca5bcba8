"""The Admin calls of the leader-election and reassignment tools (controller.client.admin: elections,
reassignments, topics' describe_topics(each=True)) against in-test servers: what each request carries, where it
goes, and how the answers are read."""
from __future__ import annotations

import time

import pytest

from kraftsman.controller.client import sync_client as sc
from kraftsman.controller.client.admin import Admin, ServerError

from ..server.sync_fakes import FakeServer, body

RANGES = {18: (0, 4), 3: (0, 12), 43: (0, 2), 44: (0, 1), 45: (0, 0), 46: (0, 0), 60: (0, 1), 75: (0, 0)}


def serve(handler, node_id: int = 4, ranges=RANGES, nodes=None) -> FakeServer:
    """Return a server answering the admin client's routing Metadata (itself as node `node_id` and controller, plus
    `nodes` {id: server}), and everything else with handler(header, request)."""
    server = FakeServer(None, ranges)

    def answer(header, request):
        if header.request_api_key == 3 and not request.topics:
            cls = body("MetadataResponse").__class__
            listed = {node_id: server, **(nodes or {})}
            brokers = [cls.MetadataResponseBroker(node_id=i, host="127.0.0.1", port=s.port) for i, s in listed.items()]
            return cls(brokers=brokers, controller_id=node_id, topics=[])
        return handler(header, request)
    server.handler = answer
    return server


def admin_for(server: FakeServer) -> Admin:
    return Admin([("127.0.0.1", server.port)], sc.ClientConfig(), time.monotonic() + 5)


def requests_of(server: FakeServer, api_key: int) -> list:
    return [r for h, r in server.requests if h.request_api_key == api_key]


def test_elect_leaders_groups_partitions_and_reads_each_outcome():
    def handler(header, request):
        cls = body("ElectLeadersResponse").__class__
        return cls(error_code=0, replica_election_results=[cls.ReplicaElectionResult(topic="t", partition_result=[
            cls.PartitionResult(partition_id=0, error_code=0, error_message=None),
            cls.PartitionResult(partition_id=1, error_code=84, error_message="Leader election not needed."),
            cls.PartitionResult(partition_id=2, error_code=80, error_message=None)])])

    with serve(handler) as server, admin_for(server) as admin:
        got = admin.elect_leaders(1, [("t", 0), ("u", 3), ("t", 1)])
        sent = requests_of(server, 43)[0]
        assert sent.election_type == 1 and 0 < sent.timeout_ms <= 5000
        assert [(t.topic, list(t.partitions)) for t in sent.topic_partitions] == [("t", [0, 1]), ("u", [3])]
        assert got[("t", 0)] is None and got[("t", 1)].message == "Leader election not needed."
        assert (got[("t", 2)].code, got[("t", 2)].message) == (80, "The preferred leader was not available.")
        admin.elect_leaders(0, None)
        assert requests_of(server, 43)[1].topic_partitions is None                   # every partition


def test_a_whole_answer_error_raises():
    with serve(lambda h, r: body("ElectLeadersResponse", error_code=31)) as server, admin_for(server) as admin:
        with pytest.raises(ServerError) as e:
            admin.elect_leaders(0, None)
    assert (e.value.code, e.value.message) == (31, "Cluster authorization failed.")


def test_alter_reassignments_start_cancel_and_count_check():
    def handler(header, request):
        cls = body("AlterPartitionReassignmentsResponse").__class__
        parts = [cls.ReassignablePartitionResponse(partition_index=p.partition_index,
                                                   error_code=0 if p.partition_index else 39, error_message=None)
                 for t in request.topics for p in t.partitions]
        return cls(error_code=0, responses=[cls.ReassignableTopicResponse(name="t", partitions=parts)])

    with serve(handler) as server, admin_for(server) as admin:
        got = admin.alter_partition_reassignments({("t", 1): [5], ("t", 0): None})
        sent = requests_of(server, 45)[0]
        assert [(p.partition_index, p.replicas) for p in sent.topics[0].partitions] == [(0, None), (1, [5])]
        assert got[("t", 1)] is None and got[("t", 0)].code == 39
    empty = body("AlterPartitionReassignmentsResponse", error_code=0, responses=[])
    with serve(lambda h, r: empty) as server, admin_for(server) as admin:
        with pytest.raises(ServerError) as e:
            admin.alter_partition_reassignments({("t", 1): [5]})
        assert e.value.message == "The server returned too less results.Expected 1 but received 0"


def test_describe_topics_each_keeps_a_missing_topics_error():
    def handler(header, request):
        cls = body("DescribeTopicPartitionsResponse").__class__
        part = cls.DescribeTopicPartitionsResponsePartition(error_code=0, partition_index=0, leader_id=4,
                                                            replica_nodes=[4], isr_nodes=[4])
        return cls(topics=[cls.DescribeTopicPartitionsResponseTopic(error_code=0, name="a", partitions=[part]),
                           cls.DescribeTopicPartitionsResponseTopic(error_code=3, name="nope")], next_cursor=None)

    with serve(handler) as server, admin_for(server) as admin:
        got = admin.describe_topics(["a", "nope"], each=True)
        assert got["a"].partitions[0].replicas == [4] and got["nope"].code == 3
        with pytest.raises(ServerError):
            admin.describe_topics(["a", "nope"])
