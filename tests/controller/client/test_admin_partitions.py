"""Kafka's Admin calls on partitions (controller.client.admin_partitions) against in-test servers: what each request
carries, where it goes, and how the answers are read."""
from __future__ import annotations

import time

import pytest

from kraftsman.controller.client import admin_partitions as ap
from kraftsman.controller.client import sync_client as sc
from kraftsman.controller.client.admin import Admin, ServerError

from ..server.sync_fakes import FakeServer, body

RANGES = {18: (0, 4), 3: (0, 12), 43: (0, 2), 44: (0, 1), 45: (0, 0), 46: (0, 0), 60: (0, 1), 75: (0, 0)}


def admin_for(*servers: FakeServer, controllers: bool = False) -> Admin:
    config = sc.ClientConfig(bootstrap_controllers=controllers)
    return Admin([("127.0.0.1", s.port) for s in servers], config, time.monotonic() + 5)


def requests_of(server: FakeServer, api_key: int) -> list:
    return [r for h, r in server.requests if h.request_api_key == api_key]


def test_elect_leaders_groups_partitions_and_reads_each_outcome():
    def handler(header, request):
        cls = body("ElectLeadersResponse").__class__
        return cls(error_code=0, replica_election_results=[cls.ReplicaElectionResult(topic="t", partition_result=[
            cls.PartitionResult(partition_id=0, error_code=0, error_message=None),
            cls.PartitionResult(partition_id=1, error_code=84, error_message="Leader election not needed."),
            cls.PartitionResult(partition_id=2, error_code=80, error_message=None)])])

    with FakeServer(handler, RANGES) as server:
        got = ap.elect_leaders(admin_for(server), ap.UNCLEAN, [("t", 0), ("u", 3), ("t", 1)])
        sent = requests_of(server, 43)[0]
        assert sent.election_type == 1 and 0 < sent.timeout_ms <= 5000
        assert [(t.topic, list(t.partitions)) for t in sent.topic_partitions] == [("t", [0, 1]), ("u", [3])]
        assert got[("t", 0)] is None and got[("t", 1)].message == "Leader election not needed."
        assert (got[("t", 2)].code, got[("t", 2)].message) == (80, "The preferred leader was not available.")
        ap.elect_leaders(admin_for(server), ap.PREFERRED, None)
        assert requests_of(server, 43)[1].topic_partitions is None                   # every partition


def test_a_whole_answer_error_raises():
    with FakeServer(lambda h, r: body("ElectLeadersResponse", error_code=31), RANGES) as server:
        with pytest.raises(ServerError) as e:
            ap.elect_leaders(admin_for(server), ap.PREFERRED, None)
    assert (e.value.code, e.value.message) == (31, "Cluster authorization failed.")


def _list_answer(header, request):
    cls = body("ListPartitionReassignmentsResponse").__class__
    return cls(error_code=0, topics=[cls.OngoingTopicReassignment(name="t", partitions=[
        cls.OngoingPartitionReassignment(partition_index=1, replicas=[5, 4], adding_replicas=[5],
                                         removing_replicas=[4])])])


def test_list_reassignments_of_all_or_some_partitions():
    with FakeServer(_list_answer, RANGES) as server:
        assert ap.list_partition_reassignments(admin_for(server)) == {
            ("t", 1): ap.PartitionReassignment([5, 4], [5], [4])}
        ap.list_partition_reassignments(admin_for(server), [("t", 1), ("t", 0)])
        first, second = requests_of(server, 46)
        assert first.topics is None and [(t.name, list(t.partition_indexes)) for t in second.topics] == [("t", [1, 0])]


def test_alter_reassignments_start_cancel_and_count_check():
    def handler(header, request):
        cls = body("AlterPartitionReassignmentsResponse").__class__
        parts = [cls.ReassignablePartitionResponse(partition_index=p.partition_index,
                                                   error_code=0 if p.partition_index else 39, error_message=None)
                 for t in request.topics for p in t.partitions]
        return cls(error_code=0, responses=[cls.ReassignableTopicResponse(name="t", partitions=parts)])

    with FakeServer(handler, RANGES) as server:
        got = ap.alter_partition_reassignments(admin_for(server), {("t", 1): [5], ("t", 0): None})
        sent = requests_of(server, 45)[0]
        assert [(p.partition_index, p.replicas) for p in sent.topics[0].partitions] == [(0, None), (1, [5])]
        assert got[("t", 1)] is None and got[("t", 0)].code == 39
    with FakeServer(lambda h, r: body("AlterPartitionReassignmentsResponse", error_code=0, responses=[]),
                    RANGES) as server:
        with pytest.raises(ServerError) as e:
            ap.alter_partition_reassignments(admin_for(server), {("t", 1): [5]})
        assert e.value.message == "The server returned too less results.Expected 1 but received 0"


def _partition(cls, index, replicas):
    return cls.DescribeTopicPartitionsResponsePartition(error_code=0, partition_index=index, leader_id=replicas[0],
                                                        replica_nodes=replicas, isr_nodes=replicas)


def test_describe_topics_follows_the_cursor_and_reports_missing_topics():
    def handler(header, request):
        cls = body("DescribeTopicPartitionsResponse").__class__
        if request.cursor is None:
            topic = cls.DescribeTopicPartitionsResponseTopic(error_code=0, name="a", partitions=[_partition(cls, 0, [4])])
            return cls(topics=[topic], next_cursor=cls.Cursor(topic_name="a", partition_index=1))
        topics = [cls.DescribeTopicPartitionsResponseTopic(error_code=0, name="a", partitions=[
                  _partition(cls, 1, [5, 4])]), cls.DescribeTopicPartitionsResponseTopic(error_code=3, name="nope")]
        return cls(topics=topics, next_cursor=None)

    with FakeServer(handler, RANGES) as server:
        got = ap.describe_topics(admin_for(server), ["nope", "a"])
        assert [(p.partition, p.replicas) for p in got["a"].partitions] == [(0, [4]), (1, [5, 4])]
        assert got["nope"].code == 3 and got["nope"].message == "This server does not host this topic-partition."
        second = requests_of(server, 75)[1]
        assert (second.cursor.topic_name, second.cursor.partition_index) == ("a", 1)


def test_describe_topics_through_metadata_where_describe_topic_partitions_is_missing():
    def handler(header, request):
        cls = body("MetadataResponse").__class__
        part = cls.MetadataResponsePartition(error_code=0, partition_index=0, leader_id=4, replica_nodes=[4, 5],
                                             isr_nodes=[4])
        return cls(topics=[cls.MetadataResponseTopic(error_code=0, name="a", partitions=[part])])

    ranges = {k: v for k, v in RANGES.items() if k != 75}
    with FakeServer(handler, ranges) as server:
        got = ap.describe_topics(admin_for(server), ["a"])
        assert got["a"].partitions == [ap.PartitionInfo(0, 4, [4, 5], [4])]
        assert requests_of(server, 3)[0].allow_auto_topic_creation is False


def _alter_answer(header, request):
    cls = body("IncrementalAlterConfigsResponse").__class__
    return cls(responses=[cls.AlterConfigsResourceResponse(error_code=0, error_message=None,
                                                           resource_type=r.resource_type,
                                                           resource_name=r.resource_name) for r in request.resources])


def test_broker_configs_go_to_that_broker_and_topic_configs_anywhere():
    with FakeServer(_alter_answer, RANGES) as broker4:
        def bootstrap(header, request):
            if header.request_api_key == 60:
                cls = body("DescribeClusterResponse").__class__
                return cls(cluster_id="c", controller_id=4, endpoint_type=1, brokers=[
                    cls.DescribeClusterBroker(broker_id=4, host="127.0.0.1", port=broker4.port)])
            return _alter_answer(header, request)

        with FakeServer(bootstrap, RANGES) as first:
            changes = {(ap.BROKER, "4"): [("leader.replication.throttled.rate", "1000", ap.SET)],
                       (ap.TOPIC, "t"): [("leader.replication.throttled.replicas", None, ap.DELETE)],
                       (ap.BROKER, "9"): [("follower.replication.throttled.rate", "1000", ap.SET)]}
            got = ap.incremental_alter_configs(admin_for(first), changes)
            assert got[(ap.BROKER, "4")] is None and got[(ap.TOPIC, "t")] is None
            assert got[(ap.BROKER, "9")].code == 8                                  # BROKER_NOT_AVAILABLE
            at_first, at_broker = requests_of(first, 44), requests_of(broker4, 44)
            assert [(r.resource_type, r.resource_name) for r in at_first[0].resources] == [(ap.TOPIC, "t")]
            assert [(r.resource_type, r.resource_name) for r in at_broker[0].resources] == [(ap.BROKER, "4")]
            assert at_first[0].resources[0].configs[0].config_operation == ap.DELETE
